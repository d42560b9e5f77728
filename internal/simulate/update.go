package simulate

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/hitchdev/hitch/internal/transaction"
)

// Update returns a copy of t as the merchant would report it later: the
// next step of its status (ORDERED→SHIPPED→DELIVERED, BILLED→COMPLETED,
// DELIVERED→RETURNED or REFUNDED with a REFUND adjustment, a tip added to a
// ride...), with the same ExternalID and Datetime and the price invariants
// kept. The copy always differs from t, and the change is deterministic in
// (seed, t.ExternalID). t itself is not modified.
func Update(seed Seed, t transaction.Transaction, now time.Time) transaction.Transaction {
	r := callRand(seed, purposeUpdate, t.ExternalID)
	u := cloneTransaction(t)
	shipped := u.Shipping != nil && !strings.Contains(u.URL, deliveryQuery)
	switch u.OrderStatus {
	case transaction.StatusOrdered:
		switch {
		case shipped:
			u.OrderStatus = transaction.StatusShipped
		case u.Shipping != nil:
			u.OrderStatus = transaction.StatusDelivered
		default:
			u.OrderStatus = transaction.StatusPickedUp
		}
	case transaction.StatusShipped:
		u.OrderStatus = transaction.StatusDelivered
	case transaction.StatusBilled:
		u.OrderStatus = transaction.StatusCompleted
	case transaction.StatusDelivered:
		if shipped {
			u.OrderStatus = transaction.StatusReturned
			refundItem(r, &u, "Return: ", false)
		} else {
			u.OrderStatus = transaction.StatusRefunded
			refundItem(r, &u, "Refund: missing item — ", true)
		}
	case transaction.StatusPickedUp:
		u.OrderStatus = transaction.StatusRefunded
		refundItem(r, &u, "Refund: returned in store — ", true)
	case transaction.StatusCompleted:
		switch {
		case tippable(&u):
			// Riders tip after the trip; the receipt is reissued.
			changeTotal(&u, "TIP", "Tip", pick(r, []int64{100, 200, 300, 500}))
		case isRide(&u):
			u.OrderStatus = transaction.StatusRefunded
			changeTotal(&u, "REFUND", "Fare adjustment", -percent(totalCents(&u), float64(between(r, 10, 40))))
		default:
			u.OrderStatus = transaction.StatusRefunded
			changeTotal(&u, "REFUND", "Refund", -totalCents(&u))
		}
	case transaction.StatusReturned:
		u.OrderStatus = transaction.StatusRefunded // the returned items arrived back
	case transaction.StatusFailed:
		if u.Shipping != nil {
			u.OrderStatus = transaction.StatusCancelled // still nothing charged
		} else if len(u.PaymentMethods) > 0 {
			// The retried charge went through, on the card.
			u.OrderStatus = transaction.StatusCompleted
			pm := u.PaymentMethods[len(u.PaymentMethods)-1]
			pm.TransactionAmount = u.Price.Total
			u.PaymentMethods = []transaction.PaymentMethod{pm}
		}
	case transaction.StatusCancelled:
		if charged(&u) {
			changeTotal(&u, "REFUND", "Refund: order canceled", -totalCents(&u))
		}
	case transaction.StatusRefunded:
		changeTotal(&u, "REFUND", "Refund: remaining balance", -totalCents(&u))
	}
	if reflect.DeepEqual(u, cloneTransaction(t)) {
		settled(&u, now)
	}
	return u
}

// settle applies to a new order the money side of its status. A FAILED
// order, and an order CANCELLED before it was charged, keep their payment
// methods at 0.00: nothing was charged. What was returned, refunded or
// canceled after the charge is refunded with REFUND adjustments, and the
// payment methods keep what they were left with, 0.00 when refunded in
// full. variant chooses for a test user's order: 1 a partial refund or a
// cancellation never charged, 2 a full refund or a charged one; 0 draws.
func settle(r *rand.Rand, t *transaction.Transaction, f fulfilment, variant int) {
	switch t.OrderStatus {
	case transaction.StatusFailed:
		uncharged(t)
	case transaction.StatusReturned:
		refundItem(r, t, "Return: ", false)
	case transaction.StatusRefunded:
		partial := variant == 1 || variant == 0 && (f == fulfilDeliver || f == fulfilPickup || isRide(t) ||
			f == fulfilShip && chance(r, 0.3))
		switch {
		case !partial:
			changeTotal(t, "REFUND", "Refund", -totalCents(t))
		case isRide(t):
			changeTotal(t, "REFUND", "Fare adjustment", -percent(totalCents(t), float64(between(r, 10, 40))))
		case f == fulfilDeliver:
			refundItem(r, t, "Refund: missing item — ", true)
		case f == fulfilPickup:
			refundItem(r, t, "Refund: returned in store — ", true)
		case len(t.Products) == 1 && t.Products[0].Quantity == 1:
			// One item: a partial credit, not the item.
			changeTotal(t, "REFUND", "Refund: partial credit", -percent(totalCents(t), float64(between(r, 20, 50))))
		default:
			refundItem(r, t, "Refund: ", false)
		}
	case transaction.StatusCancelled:
		switch {
		case isRide(t):
			// The cancellation fee is the whole order, and is charged.
		case f == fulfilService:
			// Bookings are charged when made; canceling costs a fee.
			total := totalCents(t)
			fee := min(total/2, between(r, 2500, 10000))
			changeTotal(t, "REFUND", "Refund: reservation canceled, less cancellation fee", fee-total)
		case variant == 1 || variant == 0 && f == fulfilShip && chance(r, 0.5):
			uncharged(t) // canceled before it was charged
		default:
			changeTotal(t, "REFUND", "Refund: order canceled", -totalCents(t))
		}
	}
}

// uncharged sets every payment method of t to 0.00: the charge was
// declined or never made. The price still shows what the order was.
func uncharged(t *transaction.Transaction) {
	for i := range t.PaymentMethods {
		t.PaymentMethods[i].TransactionAmount = "0.00"
	}
}

// charged reports whether any payment method of t was charged.
func charged(t *transaction.Transaction) bool {
	for _, pm := range t.PaymentMethods {
		if cents(pm.TransactionAmount) > 0 {
			return true
		}
	}
	return false
}

// refundItem refunds one product line (or one unit of it) at the price the
// customer paid for it: its share of the goods after discounts and tax.
// Fees and tips are not refunded.
func refundItem(r *rand.Rand, t *transaction.Transaction, label string, oneUnit bool) {
	if len(t.Products) == 0 {
		return
	}
	p := t.Products[r.IntN(len(t.Products))]
	value := cents(p.Price.Total)
	if oneUnit || p.Quantity > 1 && chance(r, 0.5) {
		value = cents(p.Price.UnitPrice)
	}
	sub := cents(t.Price.SubTotal)
	goods := sub
	for _, a := range t.Price.Adjustments {
		if a.Type == "TAX" || a.Type == "DISCOUNT" {
			goods += cents(a.Amount)
		}
	}
	amount := value
	if sub > 0 {
		amount = value * goods / sub
	}
	amount = min(max(amount, 1), totalCents(t))
	changeTotal(t, "REFUND", label+p.Name, -amount)
}

// changeTotal adds an adjustment of amount cents and moves the total and
// the payment methods with it. A zero amount changes nothing.
func changeTotal(t *transaction.Transaction, typ, label string, amount int64) {
	if amount == 0 {
		return
	}
	t.Price.Adjustments = append(t.Price.Adjustments, transaction.Adjustment{Type: typ, Label: label,
		Amount: transaction.FormatCents(amount)})
	total := totalCents(t) + amount
	t.Price.Total = transaction.FormatCents(total)
	t.PaymentMethods = rebalance(t.PaymentMethods, amount)
}

// rebalance moves the payment methods' amounts by delta cents: an increase
// goes on the card, a refund goes back to the card first and to gift cards
// and points last. A method refunded in full stays, at 0.00: the order was
// paid with it.
func rebalance(pms []transaction.PaymentMethod, delta int64) []transaction.PaymentMethod {
	if len(pms) == 0 {
		return []transaction.PaymentMethod{}
	}
	amounts := make([]int64, len(pms))
	for i, pm := range pms {
		amounts[i] = cents(pm.TransactionAmount)
	}
	// Cards before stored value, in the order the methods were listed.
	order := make([]int, 0, len(pms))
	for pass := range 2 {
		for i, pm := range pms {
			if storedValue(pm.Type) == (pass == 1) {
				order = append(order, i)
			}
		}
	}
	if delta > 0 {
		amounts[order[0]] += delta
	}
	for _, i := range order {
		if delta >= 0 {
			break
		}
		take := min(amounts[i], -delta)
		amounts[i] -= take
		delta += take
	}
	out := make([]transaction.PaymentMethod, 0, len(pms))
	for i, pm := range pms {
		pm.TransactionAmount = transaction.FormatCents(amounts[i])
		out = append(out, pm)
	}
	return out
}

func storedValue(typ string) bool {
	return typ == "GIFT_CARD" || typ == "LOYALTY_POINTS"
}

// settled is the last change left to an order that is done: the merchant
// marks its refund completed. Called again the same day it toggles a
// confirmation, so an update always differs.
func settled(t *transaction.Transaction, now time.Time) {
	for i := len(t.Price.Adjustments) - 1; i >= 0; i-- {
		a := &t.Price.Adjustments[i]
		if a.Type == "REFUND" {
			label := "Refund completed " + now.UTC().Format("Jan 2, 2006")
			if a.Label == label {
				label += " (confirmed)"
			}
			a.Label = label
			return
		}
	}
	// Not an order of ours: note the update on its first product.
	if len(t.Products) > 0 {
		const note = " · Order details updated"
		d := &t.Products[0].Description
		if s, ok := strings.CutSuffix(*d, note); ok {
			*d = s
		} else {
			*d += note
		}
		return
	}
	t.URL += "#updated"
}

// tippable reports whether t is a ride by a driver that was not tipped yet.
func tippable(t *transaction.Transaction) bool {
	return isRide(t) && !hasAdjustment(t, "TIP") && len(t.PaymentMethods) > 0 &&
		slices.ContainsFunc(t.Price.Adjustments, func(a transaction.Adjustment) bool {
			return a.Type == "FEE" && (a.Label == "Booking fee" || a.Label == "Service fee")
		})
}

func isRide(t *transaction.Transaction) bool {
	return strings.Contains(t.URL, "/"+ridePath+"/")
}

func hasAdjustment(t *transaction.Transaction, typ string) bool {
	return slices.ContainsFunc(t.Price.Adjustments, func(a transaction.Adjustment) bool { return a.Type == typ })
}

func totalCents(t *transaction.Transaction) int64 {
	return cents(t.Price.Total)
}

// cents reads an amount this package wrote; anything unreadable counts as 0.
func cents(s string) int64 {
	c, err := transaction.ParseCents(s)
	if err != nil {
		return 0
	}
	return c
}

// cloneTransaction returns a deep copy of t, so an update never changes
// the caller's transaction.
func cloneTransaction(t transaction.Transaction) transaction.Transaction {
	u := t
	if t.Shipping != nil {
		s := *t.Shipping
		u.Shipping = &s
	}
	if t.LoyaltyMembership != nil {
		l := *t.LoyaltyMembership
		u.LoyaltyMembership = &l
	}
	u.PaymentMethods = slices.Clone(t.PaymentMethods)
	if u.PaymentMethods == nil {
		u.PaymentMethods = []transaction.PaymentMethod{}
	}
	u.Price.Adjustments = slices.Clone(t.Price.Adjustments)
	if u.Price.Adjustments == nil {
		u.Price.Adjustments = []transaction.Adjustment{}
	}
	u.Products = slices.Clone(t.Products)
	for i, p := range u.Products {
		if p.Seller != nil {
			s := *p.Seller
			u.Products[i].Seller = &s
		}
		u.Products[i].Eligibility = slices.Clone(p.Eligibility)
		if u.Products[i].Eligibility == nil {
			u.Products[i].Eligibility = []string{}
		}
	}
	return u
}
