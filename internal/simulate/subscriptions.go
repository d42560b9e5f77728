package simulate

import (
	"fmt"
	"time"

	"github.com/hitchdev/hitch/internal/merchant"
	"github.com/hitchdev/hitch/internal/transaction"
)

// Subscriptions generates the account's one to three plans at m when m
// sells subscriptions (m.Subscription, or a streaming, software, news,
// fitness, telecom or utilities merchant), and returns nil otherwise. The
// plans do not depend on seed.Call nor on now: a later observation sees the
// same plans, with the same ExternalIDs and start dates, billed up to now:
// cancellations and plan changes fall on billing dates fixed in the
// account's history, so a later observation is an earlier one moved on in
// time. Every billing of a paid plan is a transaction of History on its
// billing date, so LastBillingDate is the date of the plan's newest
// billing. A plan that starts after now, or has ended, is left out. ID
// fields are left empty.
func Subscriptions(seed Seed, m merchant.Merchant, now time.Time) []transaction.Subscription {
	if !hasPlans(m) {
		return nil
	}
	now = now.UTC().Truncate(time.Second)
	plans := accountPlans(seed, m)
	out := make([]transaction.Subscription, 0, len(plans))
	for i := range plans {
		p := &plans[i]
		if p.start.After(now) || p.endAt > 0 && !p.billingAt(p.endAt).After(now) {
			continue // not taken yet, or ended
		}
		k := lastCycle(p, now)
		last, next := p.billingAt(k), p.billingAt(k+1)
		n := p.changesBy(k)
		cur := p.tier(n)
		// A cancellation shows in the last cycle; a change from its notice
		// until it takes effect, unless the plan ends first.
		status := "ACTIVE"
		at := p.change(n)
		switch {
		case p.endAt > 0 && k+1 == p.endAt:
			status = "ACTIVE_CANCELLATION"
		case at >= 0 && k >= at-p.notice && (p.endAt == 0 || at < p.endAt):
			status = "ACTIVE_PLAN_CHANGE"
		}
		s := transaction.Subscription{
			ExternalID:         p.externalID,
			Name:               cur.name,
			Description:        cur.desc,
			Merchant:           transaction.SubscriptionRef{ID: m.ID, Name: m.Name},
			Status:             status,
			BillingCycle:       cur.cycle,
			NextBillingDate:    next,
			LastBillingDate:    last,
			StartDate:          p.start,
			NextRenewalDate:    next,
			CancelInstructions: cancelInstructions(m),
			IsPaid:             cur.cents > 0,
			IsFamilyPlan:       cur.family,
			IsCancellable:      cancellable(m),
			Price:              transaction.SubscriptionPrice{Total: transaction.FormatCents(cur.cents), Currency: "USD"},
		}
		if s.Description == "" {
			s.Description = fmt.Sprintf("%s, billed %s", cur.name, cycleWords[cur.cycle])
		}
		if n > 0 {
			s.Description += fmt.Sprintf(". Changed from %s on %s", p.tier(n-1).name, p.billingAt(p.change(n-1)).Format("Jan 2, 2006"))
		}
		switch status {
		case "ACTIVE_CANCELLATION":
			exp := next
			s.ExpirationDate = &exp
			s.Description += ". Canceled: access ends " + next.Format("Jan 2, 2006")
		case "ACTIVE_PLAN_CHANGE":
			s.Description += ". Changing to " + p.tier(n+1).name + " on " + p.billingAt(at).Format("Jan 2, 2006")
		}
		out = append(out, s)
	}
	return out
}

// lastCycle returns the number of the plan's last billing at or before
// now, which must not be before its start.
func lastCycle(p *plan, now time.Time) int64 {
	months, days := cycleStep(p.cycle)
	var k int64
	if months > 0 {
		k = int64((now.Year()-p.start.Year())*12+int(now.Month()-p.start.Month())) / int64(months)
	} else {
		k = int64(now.Sub(p.start) / (time.Duration(days) * 24 * time.Hour))
	}
	k = max(k, 0)
	for k > 0 && p.billingAt(k).After(now) {
		k--
	}
	for !p.billingAt(k + 1).After(now) {
		k++
	}
	return k
}

// cycleStep returns the months and days of one billing cycle.
func cycleStep(cycle string) (months, days int) {
	switch cycle {
	case "WEEKLY":
		return 0, 7
	case "BIWEEKLY":
		return 0, 14
	case "DAILY":
		return 0, 1
	case "QUARTERLY":
		return 3, 0
	case "SEMIANNUALLY":
		return 6, 0
	case "ANNUALLY":
		return 12, 0
	}
	return 1, 0
}

// cancelInstructions are the steps the merchant gives to cancel, in the
// manner of its category; some merchants give none.
func cancelInstructions(m merchant.Merchant) string {
	h := stableHash(m.Domain, "cancel")
	if h%7 == 0 {
		return ""
	}
	phone := fmt.Sprintf("1-800-%s-%s", hashString(h, digits, 3), hashString(h>>20, digits, 4))
	host := baseURL(m.Domain)
	switch m.Category {
	case "telecom":
		return fmt.Sprintf("Call %s at %s or visit a store. Devices on installment plans become due in full when you cancel.", m.Name, phone)
	case "utilities":
		return fmt.Sprintf("Call %s customer service at %s at least 3 business days before your move-out date to stop service.", m.Name, phone)
	case "fitness":
		if m.Domain != "onepeloton.com" && m.Domain != "strava.com" && m.Domain != "classpass.com" {
			return "Cancel in person at your home club or by certified letter; memberships need 30 days' notice."
		}
	case "home":
		if m.Domain == "adt.com" {
			return fmt.Sprintf("Call %s at %s. Early termination fees may apply under your monitoring contract.", m.Name, phone)
		}
	}
	return fmt.Sprintf("Sign in at %s/account, open Membership & Billing, choose Cancel and confirm. Access continues until the end of the billing period.", host)
}
