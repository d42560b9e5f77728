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
// plans do not depend on seed.Call: a later call observes the same plans,
// with the same ExternalIDs and start dates, billed up to now. ID fields are
// left empty.
func Subscriptions(seed Seed, m merchant.Merchant, now time.Time) []transaction.Subscription {
	if !hasPlans(m) {
		return nil
	}
	now = now.UTC().Truncate(time.Second)
	plans := accountPlans(seed, m)
	out := make([]transaction.Subscription, 0, len(plans))
	for i, p := range plans {
		start := p.start
		switch {
		case i > 0 && start.After(now):
			start = out[0].StartDate // an add-on taken with the main plan
		case start.After(now):
			// A "now" before the simulated history: keep the day, a year back.
			start = start.AddDate(now.Year()-start.Year()-1, 0, 0)
		}
		last, next := billingDates(start, p.cycle, now)
		s := transaction.Subscription{
			ExternalID:         p.externalID,
			Name:               p.name,
			Description:        p.desc,
			Merchant:           transaction.SubscriptionRef{ID: m.ID, Name: m.Name},
			Status:             p.status,
			BillingCycle:       p.cycle,
			NextBillingDate:    next,
			LastBillingDate:    last,
			StartDate:          start,
			NextRenewalDate:    next,
			CancelInstructions: cancelInstructions(m),
			IsPaid:             p.cents > 0,
			IsFamilyPlan:       p.family,
			IsCancellable:      cancellable(m),
			Price:              transaction.SubscriptionPrice{Total: transaction.FormatCents(p.cents), Currency: "USD"},
		}
		if s.Description == "" {
			s.Description = fmt.Sprintf("%s, billed %s", p.name, cycleWords[p.cycle])
		}
		switch p.status {
		case "ACTIVE_CANCELLATION":
			exp := next
			s.ExpirationDate = &exp
			s.Description += ". Canceled: access ends " + next.Format("Jan 2, 2006")
		case "ACTIVE_PLAN_CHANGE":
			s.Description += ". Plan change takes effect " + next.Format("Jan 2, 2006")
		}
		out = append(out, s)
	}
	return out
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

// billingDates returns the last billing at or before now and the next one
// after it, counting whole cycles from start (which must not be after now).
func billingDates(start time.Time, cycle string, now time.Time) (last, next time.Time) {
	months, days := cycleStep(cycle)
	at := func(k int) time.Time { return start.AddDate(0, k*months, k*days) }
	var k int
	if months > 0 {
		k = ((now.Year()-start.Year())*12 + int(now.Month()-start.Month())) / months
	} else {
		k = int(now.Sub(start) / (time.Duration(days) * 24 * time.Hour))
	}
	k = max(k, 0)
	for k > 0 && at(k).After(now) {
		k--
	}
	for !at(k + 1).After(now) {
		k++
	}
	return at(k), at(k + 1)
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
