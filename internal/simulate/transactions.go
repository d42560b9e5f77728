package simulate

import (
	"math/rand/v2"
	"time"

	"github.com/hitchdev/hitch/internal/merchant"
	"github.com/hitchdev/hitch/internal/transaction"
)

// history is how far back generated orders go.
const history = 730 * 24 * time.Hour

// Transactions generates n orders of the seed's account at merchant m, a
// catalog entry, spread over the two years before now: every Datetime is at
// or before now, in UTC, in whole seconds. The baskets, fees, statuses and
// payments follow m's category. External ids carry seed.Call, so they are
// unique per account across calls; ID fields are left empty for the service
// to assign. Every order keeps the price invariants of transaction.Price and
// transaction.PaymentMethod.
func Transactions(seed Seed, m merchant.Merchant, n int, now time.Time) []transaction.Transaction {
	if n <= 0 {
		return []transaction.Transaction{}
	}
	now = now.UTC().Truncate(time.Second)
	g := &gen{r: callRand(seed, purposeOrders), a: newAccount(seed, m), now: now}
	p := profileFor(m)
	prefix := idPrefix(m.Domain)
	out := make([]transaction.Transaction, 0, n)
	for i := range n {
		d := &draft{
			when:     g.orderTime(p, i, n),
			path:     p.path,
			fulfil:   p.fulfil,
			giftOdds: p.giftOdds,
			taxBP:    g.a.city.taxBP,
		}
		if p.altOdds > 0 && chance(g.r, p.altOdds) {
			d.fulfil = p.alt
		}
		d.status = pickStatus(g.r, d.fulfil, p.travel, now.Sub(d.when))
		fulfil := d.fulfil
		p.build(g, d)
		if d.fulfil != fulfil {
			// A physical good at a digital store: an order that ships.
			d.status = pickStatus(g.r, d.fulfil, p.travel, now.Sub(d.when))
			d.path = "orders"
		}
		if d.fulfil == fulfilShip && p.gifts && chance(g.r, 0.08) {
			d.recipient = giftRecipient(g.r)
		}
		t := g.assemble(d, orderID(g.r, prefix, seed.Call, i))
		settle(g.r, &t, d.fulfil)
		out = append(out, t)
	}
	return out
}

// orderTime spreads order i of n over the history window: each order falls
// in its own slice of the window, at a local hour when people place that
// kind of order, and never after now.
func (g *gen) orderTime(p profile, i, n int) time.Time {
	r := g.r
	slot := float64(history) / float64(n)
	at := g.now.Add(-history).Add(time.Duration((float64(i) + r.Float64()) * slot))
	offset := time.Duration(g.a.city.utcOffset) * time.Hour
	y, mo, day := at.Add(offset).Date()
	span := max(p.hours[1]-p.hours[0], 1)
	tod := time.Duration(p.hours[0]+r.IntN(span))*time.Hour +
		time.Duration(r.IntN(60))*time.Minute + time.Duration(r.IntN(60))*time.Second
	t := time.Date(y, mo, day, 0, 0, 0, 0, time.UTC).Add(tod - offset)
	if t.After(g.now) {
		t = g.now.Add(-time.Duration(60+r.IntN(3*3600)) * time.Second)
	}
	return t.Truncate(time.Second)
}

// pickStatus draws a status plausible for an order of fulfilment f placed
// age ago: recent orders may still be on their way, old ones are done.
func pickStatus(r *rand.Rand, f fulfilment, travel bool, age time.Duration) string {
	const day = 24 * time.Hour
	switch f {
	case fulfilShip:
		switch {
		case age < 2*day:
			return transaction.StatusOrdered
		case age < 7*day && chance(r, float64(7*day-age)/float64(5*day)):
			return transaction.StatusShipped
		case age < 7*day:
			return transaction.StatusDelivered
		}
		return pickWeighted(r, []choice[string]{{transaction.StatusDelivered, 86}, {transaction.StatusReturned, 7},
			{transaction.StatusRefunded, 3}, {transaction.StatusCancelled, 2}, {transaction.StatusFailed, 2}})
	case fulfilDeliver:
		if age < 90*time.Minute {
			return transaction.StatusOrdered
		}
		return pickWeighted(r, []choice[string]{{transaction.StatusDelivered, 92},
			{transaction.StatusRefunded, 5}, {transaction.StatusCancelled, 3}})
	case fulfilPickup:
		if age < 3*time.Hour {
			return transaction.StatusOrdered
		}
		return pickWeighted(r, []choice[string]{{transaction.StatusPickedUp, 94},
			{transaction.StatusRefunded, 4}, {transaction.StatusCancelled, 2}})
	case fulfilService:
		if travel {
			if age < 7*day {
				return transaction.StatusBilled // booked, trip still ahead
			}
			return pickWeighted(r, []choice[string]{{transaction.StatusCompleted, 90},
				{transaction.StatusRefunded, 6}, {transaction.StatusCancelled, 4}})
		}
		return pickWeighted(r, []choice[string]{{transaction.StatusCompleted, 94},
			{transaction.StatusCancelled, 3}, {transaction.StatusRefunded, 3}})
	}
	if age < 3*day && chance(r, 0.6) {
		return transaction.StatusBilled
	}
	return pickWeighted(r, []choice[string]{{transaction.StatusCompleted, 95},
		{transaction.StatusRefunded, 3}, {transaction.StatusFailed, 2}})
}

// giftRecipient is someone else the account holder ships a present to.
func giftRecipient(r *rand.Rand) *transaction.Location {
	return &transaction.Location{
		Address:   randomAddress(r, pick(r, cities)),
		FirstName: pick(r, firstNames),
		LastName:  pick(r, lastNames),
	}
}
