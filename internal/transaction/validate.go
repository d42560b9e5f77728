package transaction

import (
	"fmt"
	"slices"

	"github.com/hitchdev/hitch/internal/field"
)

const (
	maxExternalID = 255
	maxText       = 2048
)

// validateTransactions checks a batch as a connector sends it. It checks
// forms (ids, enumerations, decimal amounts), not arithmetic: a merchant's
// own rounding is reported as the merchant shows it.
func validateTransactions(batch []Transaction) error {
	if err := batchSize("transactions", len(batch)); err != nil {
		return err
	}
	seen := make(map[string]bool, len(batch))
	for i := range batch {
		t := &batch[i]
		at := fmt.Sprintf("transactions[%d]", i)
		if err := externalID(at+".external_id", t.ExternalID, seen); err != nil {
			return err
		}
		if t.Datetime.IsZero() {
			return invalid(at+".datetime", "is required")
		}
		if !slices.Contains(OrderStatuses, t.OrderStatus) {
			return invalid(at+".order_status", "must be one of the order statuses")
		}
		if len(t.URL) > maxText {
			return invalid(at+".url", "is too long")
		}
		if err := amount(at+".price.sub_total", t.Price.SubTotal); err != nil {
			return err
		}
		if err := amount(at+".price.total", t.Price.Total); err != nil {
			return err
		}
		if err := currency(at+".price.currency", t.Price.Currency); err != nil {
			return err
		}
		for j, a := range t.Price.Adjustments {
			p := fmt.Sprintf("%s.price.adjustments[%d]", at, j)
			if !slices.Contains(AdjustmentTypes, a.Type) {
				return invalid(p+".type", "must be one of the adjustment types")
			}
			if err := amount(p+".amount", a.Amount); err != nil {
				return err
			}
		}
		for j, m := range t.PaymentMethods {
			p := fmt.Sprintf("%s.payment_methods[%d]", at, j)
			if !slices.Contains(PaymentTypes, m.Type) {
				return invalid(p+".type", "must be one of the payment method types")
			}
			if err := amount(p+".transaction_amount", m.TransactionAmount); err != nil {
				return err
			}
		}
		for j, pr := range t.Products {
			p := fmt.Sprintf("%s.products[%d]", at, j)
			if pr.Quantity < 1 {
				return invalid(p+".quantity", "must be at least 1")
			}
			for name, v := range map[string]string{"sub_total": pr.Price.SubTotal, "total": pr.Price.Total, "unit_price": pr.Price.UnitPrice} {
				if err := amount(p+".price."+name, v); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func validateSubscriptions(batch []Subscription) error {
	if err := batchSize("subscriptions", len(batch)); err != nil {
		return err
	}
	seen := make(map[string]bool, len(batch))
	for i := range batch {
		s := &batch[i]
		at := fmt.Sprintf("subscriptions[%d]", i)
		if err := externalID(at+".external_id", s.ExternalID, seen); err != nil {
			return err
		}
		if s.Name == "" || len(s.Name) > maxText {
			return invalid(at+".name", "is required and at most 2048 bytes")
		}
		if !slices.Contains(SubscriptionStatuses, s.Status) {
			return invalid(at+".status", "must be one of the subscription statuses")
		}
		if !slices.Contains(BillingCycles, s.BillingCycle) {
			return invalid(at+".billing_cycle", "must be one of the billing cycles")
		}
		if err := amount(at+".price.total", s.Price.Total); err != nil {
			return err
		}
		if err := currency(at+".price.currency", s.Price.Currency); err != nil {
			return err
		}
		if s.StartDate.IsZero() {
			return invalid(at+".start_date", "is required")
		}
	}
	return nil
}

func batchSize(field string, n int) error {
	if n < 1 || n > MaxBatch {
		return invalid(field, fmt.Sprintf("must hold 1 to %d items", MaxBatch))
	}
	return nil
}

func externalID(field, v string, seen map[string]bool) error {
	if v == "" || len(v) > maxExternalID {
		return invalid(field, "is required and at most 255 bytes")
	}
	if seen[v] {
		return invalid(field, "appears twice in the batch")
	}
	seen[v] = true
	return nil
}

func amount(field, v string) error {
	if _, err := ParseCents(v); err != nil {
		return invalid(field, "must be a decimal amount as a string, such as \"12.34\"")
	}
	return nil
}

func currency(field, v string) error {
	if len(v) != 3 || v[0] < 'A' || v[0] > 'Z' || v[1] < 'A' || v[1] > 'Z' || v[2] < 'A' || v[2] > 'Z' {
		return invalid(field, "must be an ISO 4217 code such as USD")
	}
	return nil
}

func invalid(name, msg string) error { return field.Invalid(name, msg) }
