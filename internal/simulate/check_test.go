package simulate

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hitchdev/hitch/internal/merchant"
	"github.com/hitchdev/hitch/internal/transaction"
)

// The invariant checkers below restate the rules of the simulator's data
// independently of the generator, and report every broken rule at once.

var cardBrandNames = []string{"VISA", "MASTERCARD", "AMEX", "DISCOVER"}

// noShippingCategories never ship anything.
var noShippingCategories = []string{"rides", "streaming", "telecom", "utilities", "travel"}

// checker collects the broken rules of one record.
type checker struct {
	what string
	errs []error
}

func (c *checker) failf(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("%s: %s", c.what, fmt.Sprintf(format, args...)))
}

// money parses an amount, reporting it when it is not a decimal string.
func (c *checker) money(field, s string) int64 {
	v, err := transaction.ParseCents(s)
	if err != nil {
		c.failf("%s %q: %v", field, s, err)
	}
	return v
}

func fourDigits(s string) bool {
	if len(s) != 4 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// checkTransaction returns every rule t breaks as an order generated (or
// updated) at merchant m at time now.
func checkTransaction(t transaction.Transaction, m merchant.Merchant, now time.Time) []error {
	c := &checker{what: fmt.Sprintf("%s order %s (%s)", m.Name, t.ExternalID, t.OrderStatus)}
	if t.ID != "" {
		c.failf("id %q, want empty", t.ID)
	}
	if t.ExternalID == "" {
		c.failf("empty external_id")
	}
	if t.Datetime.Location() != time.UTC {
		c.failf("datetime %v not UTC", t.Datetime)
	}
	if t.Datetime.Nanosecond() != 0 {
		c.failf("datetime %v not whole seconds", t.Datetime)
	}
	if t.Datetime.After(now) {
		c.failf("datetime %v after now %v", t.Datetime, now)
	}
	if !strings.HasPrefix(t.URL, "https://") || !strings.Contains(t.URL, m.Domain+"/") {
		c.failf("url %q not on %s", t.URL, m.Domain)
	}
	if !slices.Contains(transaction.OrderStatuses, t.OrderStatus) || t.OrderStatus == transaction.StatusUnrecognized {
		c.failf("order_status %q", t.OrderStatus)
	}
	switch t.OrderStatus {
	case transaction.StatusOrdered, transaction.StatusShipped, transaction.StatusBilled:
		if age := now.Sub(t.Datetime); age > 7*24*time.Hour {
			c.failf("still %s after %v", t.OrderStatus, age.Round(time.Hour))
		}
	}

	// Products.
	if len(t.Products) == 0 {
		c.failf("no products")
	}
	var sum int64
	for i, p := range t.Products {
		what := fmt.Sprintf("product %d %q", i, p.Name)
		if p.ExternalID == "" || p.Name == "" {
			c.failf("%s: empty external_id or name", what)
		}
		for _, u := range []string{p.URL, p.ImageURL} {
			if !strings.HasPrefix(u, "https://") || !strings.Contains(u, m.Domain+"/") {
				c.failf("%s: url %q not on %s", what, u, m.Domain)
			}
		}
		if p.Quantity < 1 {
			c.failf("%s: quantity %d", what, p.Quantity)
		}
		unit := c.money(what+" unit_price", p.Price.UnitPrice)
		sub := c.money(what+" sub_total", p.Price.SubTotal)
		total := c.money(what+" total", p.Price.Total)
		if unit <= 0 {
			c.failf("%s: unit_price %s not positive", what, p.Price.UnitPrice)
		}
		if sub != total || total != int64(p.Quantity)*unit {
			c.failf("%s: sub_total %s, total %s, want both %d × %s", what, p.Price.SubTotal, p.Price.Total, p.Quantity, p.Price.UnitPrice)
		}
		sum += total
		if p.Eligibility == nil {
			c.failf("%s: eligibility is nil, want []", what)
		}
		for _, e := range p.Eligibility {
			if e != "FSA/HSA" {
				c.failf("%s: eligibility %q", what, e)
			}
		}
		if p.Seller != nil && (p.Seller.Name == "" || !strings.HasPrefix(p.Seller.URL, "https://") ||
			!strings.Contains(p.Seller.URL, m.Domain+"/")) {
			c.failf("%s: seller %+v", what, *p.Seller)
		}
	}

	// Price.
	pr := t.Price
	if pr.Currency != "USD" {
		c.failf("currency %q", pr.Currency)
	}
	sub := c.money("sub_total", pr.SubTotal)
	if sub != sum {
		c.failf("sub_total %s, want the products' sum %s", pr.SubTotal, transaction.FormatCents(sum))
	}
	if pr.Adjustments == nil {
		c.failf("adjustments is nil, want []")
	}
	want := sub
	for _, a := range pr.Adjustments {
		v := c.money("adjustment "+a.Label, a.Amount)
		want += v
		if !slices.Contains(transaction.AdjustmentTypes, a.Type) || a.Type == "UNRECOGNIZED" {
			c.failf("adjustment type %q", a.Type)
		}
		if a.Label == "" {
			c.failf("adjustment %s without label", a.Type)
		}
		switch a.Type {
		case "DISCOUNT", "REFUND":
			if v >= 0 {
				c.failf("%s %q amount %s not negative", a.Type, a.Label, a.Amount)
			}
		default:
			if v <= 0 {
				c.failf("%s %q amount %s not positive", a.Type, a.Label, a.Amount)
			}
		}
	}
	total := c.money("total", pr.Total)
	if total != want {
		c.failf("total %s, want sub_total + adjustments = %s", pr.Total, transaction.FormatCents(want))
	}
	if total < 0 {
		c.failf("total %s negative", pr.Total)
	}

	// Payment methods.
	if t.PaymentMethods == nil {
		c.failf("payment_methods is nil, want []")
	}
	if total > 0 && len(t.PaymentMethods) == 0 {
		c.failf("total %s with no payment method", pr.Total)
	}
	var paid int64
	for _, pm := range t.PaymentMethods {
		v := c.money("payment "+pm.Type, pm.TransactionAmount)
		paid += v
		if v <= 0 {
			c.failf("payment %s amount %s not positive", pm.Type, pm.TransactionAmount)
		}
		if !slices.Contains(transaction.PaymentTypes, pm.Type) || pm.Type == "UNRECOGNIZED" {
			c.failf("payment type %q", pm.Type)
		}
		if pm.ExternalID == "" {
			c.failf("payment %s without external_id", pm.Type)
		}
		if pm.LastFour != "" && !fourDigits(pm.LastFour) {
			c.failf("payment %s last_four %q", pm.Type, pm.LastFour)
		}
		switch pm.Type {
		case "CARD", "APPLE_PAY", "GOOGLE_PAY":
			if !slices.Contains(cardBrandNames, pm.Brand) || !fourDigits(pm.LastFour) {
				c.failf("%s brand %q last_four %q", pm.Type, pm.Brand, pm.LastFour)
			}
		case "GIFT_CARD":
			if !fourDigits(pm.LastFour) {
				c.failf("gift card last_four %q", pm.LastFour)
			}
		}
	}
	if paid != total {
		c.failf("payments sum to %s, want total %s", transaction.FormatCents(paid), pr.Total)
	}

	// Shipping.
	if s := t.Shipping; s != nil {
		a := s.Location.Address
		if a.Line1 == "" || a.City == "" || len(a.Region) != 2 || a.Country != "US" ||
			len(a.PostalCode) != 5 || strings.Trim(a.PostalCode, "0123456789") != "" ||
			s.Location.FirstName == "" || s.Location.LastName == "" {
			c.failf("incomplete shipping %+v", *s)
		}
	}
	switch t.OrderStatus {
	case transaction.StatusShipped, transaction.StatusDelivered, transaction.StatusReturned:
		if t.Shipping == nil {
			c.failf("no shipping address")
		}
	case transaction.StatusPickedUp, transaction.StatusCompleted, transaction.StatusBilled:
		if t.Shipping != nil {
			c.failf("shipping address on an order that was not shipped")
		}
	}
	if slices.Contains(noShippingCategories, m.Category) && t.Shipping != nil {
		c.failf("shipping address at a %s merchant", m.Category)
	}
	if t.LoyaltyMembership != nil && t.LoyaltyMembership.Tier == "" {
		c.failf("loyalty membership without tier")
	}
	return c.errs
}

// addCycle adds one billing cycle to t.
func addCycle(t time.Time, cycle string) time.Time {
	switch cycle {
	case "DAILY":
		return t.AddDate(0, 0, 1)
	case "WEEKLY":
		return t.AddDate(0, 0, 7)
	case "BIWEEKLY":
		return t.AddDate(0, 0, 14)
	case "QUARTERLY":
		return t.AddDate(0, 3, 0)
	case "SEMIANNUALLY":
		return t.AddDate(0, 6, 0)
	case "ANNUALLY":
		return t.AddDate(1, 0, 0)
	}
	return t.AddDate(0, 1, 0)
}

// checkSubscription returns every rule s breaks as a subscription of m
// observed at now.
func checkSubscription(s transaction.Subscription, m merchant.Merchant, now time.Time) []error {
	c := &checker{what: fmt.Sprintf("%s subscription %s %q", m.Name, s.ExternalID, s.Name)}
	if s.ID != "" {
		c.failf("id %q, want empty", s.ID)
	}
	if s.ExternalID == "" || s.Name == "" || s.Description == "" {
		c.failf("empty external_id, name or description")
	}
	if s.Merchant != (transaction.SubscriptionRef{ID: m.ID, Name: m.Name}) {
		c.failf("merchant %+v", s.Merchant)
	}
	if !slices.Contains(transaction.SubscriptionStatuses, s.Status) || s.Status == "UNRECOGNIZED" {
		c.failf("status %q", s.Status)
	}
	if !slices.Contains(transaction.BillingCycles, s.BillingCycle) || s.BillingCycle == "UNRECOGNIZED" {
		c.failf("billing_cycle %q", s.BillingCycle)
	}
	for name, d := range map[string]time.Time{"start": s.StartDate, "last": s.LastBillingDate,
		"next": s.NextBillingDate, "renewal": s.NextRenewalDate} {
		if d.Location() != time.UTC || d.Nanosecond() != 0 {
			c.failf("%s date %v not UTC whole seconds", name, d)
		}
	}
	if s.StartDate.After(s.LastBillingDate) || s.LastBillingDate.After(now) || !now.Before(s.NextBillingDate) {
		c.failf("dates out of order: start %v, last %v, now %v, next %v", s.StartDate, s.LastBillingDate, now, s.NextBillingDate)
	}
	if want := addCycle(s.LastBillingDate, s.BillingCycle); !s.NextBillingDate.Equal(want) {
		c.failf("next billing %v, want last + one %s cycle = %v", s.NextBillingDate, s.BillingCycle, want)
	}
	if !s.NextRenewalDate.Equal(s.NextBillingDate) {
		c.failf("next renewal %v, want next billing %v", s.NextRenewalDate, s.NextBillingDate)
	}
	switch {
	case s.Status == "ACTIVE_CANCELLATION" && (s.ExpirationDate == nil || !s.ExpirationDate.Equal(s.NextBillingDate)):
		c.failf("canceled plan expires %v, want next billing %v", s.ExpirationDate, s.NextBillingDate)
	case s.Status != "ACTIVE_CANCELLATION" && s.ExpirationDate != nil:
		c.failf("expiration %v on a %s plan", *s.ExpirationDate, s.Status)
	}
	price := c.money("price", s.Price.Total)
	if s.Price.Currency != "USD" {
		c.failf("currency %q", s.Price.Currency)
	}
	if s.IsPaid && price <= 0 || !s.IsPaid && s.Price.Total != "0.00" {
		c.failf("is_paid %v with price %q", s.IsPaid, s.Price.Total)
	}
	return c.errs
}
