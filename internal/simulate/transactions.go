package simulate

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/hitchdev/hitch/internal/merchant"
	"github.com/hitchdev/hitch/internal/transaction"
)

// history is an account's history at one merchant as of now: who, what
// they hold, and when they ordered.
type history struct {
	seed    Seed
	a       *account
	p       profile
	now     time.Time
	entries []entry
}

func newHistory(seed Seed, m merchant.Merchant, now time.Time) *history {
	now = now.UTC().Truncate(time.Second)
	seed.Call = 0 // a history belongs to the account, not to a call
	h := &history{seed: seed, a: newAccount(seed, m), p: profileFor(m), now: now}
	h.entries = timeline(seed, h.a, h.p, now)
	return h
}

// History returns the orders of the seed's account at merchant m, a catalog
// entry, placed after from and at or before now, oldest first. How many
// there are, when, what and how much follow m's profile and the account
// (docs/simulator.md); a merchant with plans bills each plan on its
// billing dates. The history belongs to the account: seed.Call is ignored,
// and an order is the same whatever now is, except that a recent order may
// still be on its way. Every Datetime is in UTC, in whole seconds; ID
// fields are left empty for the service to assign.
func History(seed Seed, m merchant.Merchant, from, now time.Time) []transaction.Transaction {
	h := newHistory(seed, m, now)
	out := []transaction.Transaction{}
	for _, e := range h.entries {
		if e.when.After(from) {
			out = append(out, h.build(e))
		}
	}
	return out
}

// build makes the order of entry e. Each order draws from its own stream,
// so it does not depend on the orders before it.
func (h *history) build(e entry) transaction.Transaction {
	s := h.seed
	kind := "order"
	if e.billing() {
		kind = "billing/" + strconv.Itoa(e.plan)
	}
	r := newRand(purposeOrders, s.ClientID, s.ExternalUserID, strconv.FormatInt(s.MerchantID, 10), kind,
		strconv.FormatInt(e.n, 10), e.forced, strconv.Itoa(e.variant))
	// How far an order on its way has got is drawn apart, once, so that
	// the main stream is the same whenever the order is observed.
	u := newRand(purposeOrders+"/in-flight", s.ClientID, s.ExternalUserID, strconv.FormatInt(s.MerchantID, 10), kind,
		strconv.FormatInt(e.n, 10), e.forced, strconv.Itoa(e.variant)).Float64()
	g := &gen{r: r, a: h.a, now: h.now}
	p := h.p
	d := &draft{when: e.when, path: p.path, fulfil: p.fulfil, giftOdds: p.giftOdds, taxBP: h.a.city.taxBP}
	prefix := idPrefix(h.a.m.Domain)
	var id string
	if e.billing() {
		pl := &h.a.plans[e.plan]
		d.fulfil = fulfilDigital
		d.status = billingStatus(r, h.now.Sub(e.when))
		bill(g, d, pl, e.n)
		id = fmt.Sprintf("%s-%d%04d-%s", prefix, e.plan+1, e.n, randString(r, digits, 6))
	} else {
		if p.altOdds > 0 && chance(r, p.altOdds) {
			d.fulfil = p.alt
		}
		if e.forced != "" {
			d.fulfil = e.fulfil
		}
		d.status = h.status(r, e, d.fulfil, u)
		fulfil := d.fulfil
		if p.cadence.kind == billed {
			oneOff(g, d)
		} else {
			p.build(g, d)
		}
		if d.fulfil != fulfil {
			// A physical good at a digital store: an order that ships.
			d.status = h.status(r, e, d.fulfil, u)
			d.path = "orders"
		}
		if d.fulfil == fulfilShip && p.gifts && chance(r, 0.08) {
			d.recipient = giftRecipient(r)
		}
		id = fmt.Sprintf("%s-%06d-%s", prefix, e.n, randString(r, digits, 6))
	}
	t := g.assemble(d, id)
	settle(r, &t, d.fulfil, e.variant)
	return t
}

// status is the status of an order of fulfilment f: the one a test user's
// order must take, or a final status drawn for the order, which a recent
// order has not reached yet.
func (h *history) status(r *rand.Rand, e entry, f fulfilment, u float64) string {
	if e.forced != "" {
		sts := statusesOf(f, h.p.travel)
		for _, st := range sts {
			if st == e.forced {
				return st
			}
		}
		return sts[len(sts)-1]
	}
	final := finalStatus(r, f, h.p.travel)
	return inFlight(u, final, f, h.p.travel, h.now.Sub(e.when))
}

// finalStatus draws where an order of fulfilment f ends. It does not
// depend on now, so an order keeps its fate whenever it is observed.
func finalStatus(r *rand.Rand, f fulfilment, travel bool) string {
	switch f {
	case fulfilShip:
		return pickWeighted(r, []choice[string]{{transaction.StatusDelivered, 87}, {transaction.StatusReturned, 6},
			{transaction.StatusRefunded, 3}, {transaction.StatusCancelled, 2}, {transaction.StatusFailed, 2}})
	case fulfilDeliver:
		return pickWeighted(r, []choice[string]{{transaction.StatusDelivered, 93},
			{transaction.StatusRefunded, 5}, {transaction.StatusCancelled, 2}})
	case fulfilPickup:
		return pickWeighted(r, []choice[string]{{transaction.StatusPickedUp, 95},
			{transaction.StatusRefunded, 3}, {transaction.StatusCancelled, 2}})
	case fulfilService:
		if travel {
			return pickWeighted(r, []choice[string]{{transaction.StatusCompleted, 91},
				{transaction.StatusRefunded, 5}, {transaction.StatusCancelled, 4}})
		}
		return pickWeighted(r, []choice[string]{{transaction.StatusCompleted, 95},
			{transaction.StatusCancelled, 3}, {transaction.StatusRefunded, 2}})
	}
	return pickWeighted(r, []choice[string]{{transaction.StatusCompleted, 96},
		{transaction.StatusRefunded, 2}, {transaction.StatusFailed, 2}})
}

// inFlight returns the status an order bound for final shows age after it
// was placed: a parcel is ORDERED, then SHIPPED; a booking is BILLED until
// the trip. Failed and canceled orders end at once. u, in [0, 1), is the
// order's own draw of how fast it moves on: the same at every age, so the
// status only ever moves forward.
func inFlight(u float64, final string, f fulfilment, travel bool, age time.Duration) string {
	const day = 24 * time.Hour
	if final == transaction.StatusFailed || final == transaction.StatusCancelled {
		return final
	}
	switch f {
	case fulfilShip:
		switch {
		case age < 2*day:
			return transaction.StatusOrdered
		case age < 7*day && u < float64(7*day-age)/float64(5*day):
			return transaction.StatusShipped
		case age < 7*day:
			return transaction.StatusDelivered
		}
	case fulfilDeliver:
		if age < 90*time.Minute {
			return transaction.StatusOrdered
		}
	case fulfilPickup:
		if age < 3*time.Hour {
			return transaction.StatusOrdered
		}
	case fulfilService:
		if travel && age < 7*day {
			return transaction.StatusBilled // booked, trip still ahead
		}
	case fulfilDigital:
		if age < 3*day && u < 0.6 {
			return transaction.StatusBilled
		}
	}
	return final
}

// billingStatus is the status of a plan's billing: charged, now and then
// declined or refunded.
func billingStatus(r *rand.Rand, age time.Duration) string {
	st := pickWeighted(r, []choice[string]{{transaction.StatusCompleted, 975},
		{transaction.StatusFailed, 15}, {transaction.StatusRefunded, 10}})
	if st == transaction.StatusCompleted && age < 24*time.Hour {
		return transaction.StatusBilled
	}
	return st
}

// giftRecipient is someone else the account holder ships a present to.
func giftRecipient(r *rand.Rand) *transaction.Location {
	return &transaction.Location{
		Address:   randomAddress(r, pick(r, cities)),
		FirstName: pick(r, firstNames),
		LastName:  pick(r, lastNames),
	}
}
