package simulate

import (
	"fmt"
	"reflect"
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
	// Fare classes: every ticket's fare is its class's share of one
	// main-cabin fare per segment, so first class costs more than any main
	// cabin; a class with checked bags carries no bag fee.
	if al, ok := airlines[m.Domain]; ok {
		for _, p := range t.Products {
			for _, fc := range al.fares {
				if !strings.HasPrefix(p.Name, al.code+" ") || !strings.HasSuffix(p.Name, " · "+fc.name) {
					continue
				}
				segments := int64(1)
				if strings.Contains(p.Name, "⇄") {
					segments = 2
				}
				main := c.money("fare", p.Price.UnitPrice) / segments * 100 / fc.pct
				if main < mainFareLo-1 || main > mainFareHi {
					c.failf("%q at %s: a main-cabin fare of %s, outside %s–%s", p.Name, p.Price.UnitPrice,
						transaction.FormatCents(main), transaction.FormatCents(mainFareLo), transaction.FormatCents(mainFareHi))
				}
				if fc.bags && slices.ContainsFunc(t.Products, func(q transaction.Product) bool { return q.Name == "First checked bag" }) {
					c.failf("%q with a first-checked-bag fee", p.Name)
				}
			}
		}
	}

	// Payment methods: a FAILED order, and an order CANCELLED before it was
	// charged, charge nothing; every other order's methods add up to its
	// total. Refunded methods stay, at 0.00.
	if t.PaymentMethods == nil {
		c.failf("payment_methods is nil, want []")
	}
	if len(t.PaymentMethods) == 0 {
		c.failf("no payment method")
	}
	var paid int64
	for _, pm := range t.PaymentMethods {
		v := c.money("payment "+pm.Type, pm.TransactionAmount)
		paid += v
		if v < 0 {
			c.failf("payment %s amount %s negative", pm.Type, pm.TransactionAmount)
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
		if v == 0 && !slices.Contains([]string{transaction.StatusFailed, transaction.StatusCancelled,
			transaction.StatusRefunded, transaction.StatusReturned}, t.OrderStatus) {
			c.failf("payment %s of 0.00 on a %s order", pm.Type, t.OrderStatus)
		}
	}
	refunded := hasAdjustment(&t, "REFUND")
	if refunded && !slices.Contains([]string{transaction.StatusCancelled, transaction.StatusRefunded,
		transaction.StatusReturned}, t.OrderStatus) {
		c.failf("refund on a %s order", t.OrderStatus)
	}
	if (t.OrderStatus == transaction.StatusRefunded || t.OrderStatus == transaction.StatusReturned) && !refunded {
		c.failf("%s without a REFUND adjustment", t.OrderStatus)
	}
	cancelFee := slices.ContainsFunc(t.Products, func(p transaction.Product) bool {
		return strings.HasSuffix(p.Name, "(canceled)")
	})
	switch {
	case t.OrderStatus == transaction.StatusFailed && (paid != 0 || refunded):
		c.failf("FAILED order charged %s (refunds: %v), want nothing", transaction.FormatCents(paid), refunded)
	case t.OrderStatus == transaction.StatusCancelled && !refunded && !cancelFee && paid != 0:
		c.failf("CANCELLED order charged %s with no refund", transaction.FormatCents(paid))
	case t.OrderStatus == transaction.StatusFailed, t.OrderStatus == transaction.StatusCancelled && paid == 0 && !refunded:
	case paid != total:
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
	if s.StartDate.After(s.LastBillingDate) || s.LastBillingDate.After(now) || !now.Before(s.NextBillingDate) ||
		s.StartDate.Day() > 28 {
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
	// A pending change names another plan and a billing date ahead;
	// nothing else announces one.
	to, on := changeOf(s.Description, "Changing to ")
	switch {
	case s.Status == "ACTIVE_PLAN_CHANGE" && (on.IsZero() || to == s.Name):
		c.failf("plan change %q names no other plan and date", s.Description)
	case s.Status == "ACTIVE_PLAN_CHANGE":
		d := s.NextBillingDate
		for d.Truncate(24 * time.Hour).Before(on) {
			d = addCycle(d, s.BillingCycle)
		}
		if !d.Truncate(24 * time.Hour).Equal(on) {
			c.failf("plan change on %v, not a billing date (next %v)", on, s.NextBillingDate)
		}
	case !on.IsZero():
		c.failf("a %s plan announces a change: %q", s.Status, s.Description)
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

// checkHistory returns every rule an account's whole history (oldest
// first) and its subscriptions break together: unique ids in time order,
// and each paid plan billed on every billing date from its start to its
// last billing, and on no other day, at the price of the plan in effect.
func checkHistory(orders []transaction.Transaction, subs []transaction.Subscription, m merchant.Merchant, now time.Time) []error {
	c := &checker{what: m.Name + " history"}
	ids := make(map[string]bool, len(orders))
	billings := map[string][]transaction.Transaction{}
	for i, t := range orders {
		if ids[t.ExternalID] {
			c.failf("duplicate external_id %s", t.ExternalID)
		}
		ids[t.ExternalID] = true
		if i > 0 && t.Datetime.Before(orders[i-1].Datetime) {
			c.failf("%s at %v before the order listed ahead of it", t.ExternalID, t.Datetime)
		}
		for _, p := range t.Products {
			if strings.HasPrefix(p.ExternalID, "sub_") {
				billings[p.ExternalID] = append(billings[p.ExternalID], t)
			}
		}
	}
	known := map[string]bool{}
	for _, s := range subs {
		known[s.ExternalID] = true
		bs := billings[s.ExternalID]
		if !s.IsPaid {
			if len(bs) > 0 {
				c.failf("free plan %q billed %d times", s.Name, len(bs))
			}
			continue
		}
		// Billings from the day of the last change on are under the
		// current plan at its price; the one before, under the plan it
		// changed from.
		from, changedOn := changeOf(s.Description, "Changed from ")
		want := s.StartDate
		sawChange := changedOn.IsZero()
		for k, b := range bs {
			if !b.Datetime.Equal(want) {
				c.failf("%q billing %d at %v, want %v (start + %d cycles)", s.Name, k, b.Datetime, want, k)
				break
			}
			want = addCycle(want, s.BillingCycle)
			var line *transaction.Product
			for i := range b.Products {
				if b.Products[i].ExternalID == s.ExternalID {
					if line != nil {
						c.failf("%q billed twice in %s", s.Name, b.ExternalID)
					}
					line = &b.Products[i]
				}
			}
			if line.Quantity != 1 {
				c.failf("%q billed %d times in %s", s.Name, line.Quantity, b.ExternalID)
			}
			day := b.Datetime.Truncate(24 * time.Hour)
			switch {
			case changedOn.IsZero() || !day.Before(changedOn):
				sawChange = sawChange || day.Equal(changedOn)
				if !strings.HasPrefix(line.Name, s.Name+" — ") || line.Price.UnitPrice != s.Price.Total {
					c.failf("%q billed as %q at %s in %s, want the current plan at %s", s.Name, line.Name, line.Price.UnitPrice, b.ExternalID, s.Price.Total)
				}
			case addCycle(day, s.BillingCycle).Equal(changedOn) && !strings.HasPrefix(line.Name, from+" — "):
				c.failf("%q billed as %q before its change from %q on %v", s.Name, line.Name, from, changedOn)
			}
		}
		if len(bs) == 0 || !bs[len(bs)-1].Datetime.Equal(s.LastBillingDate) {
			c.failf("%q: last_billing_date %v, but %d billings", s.Name, s.LastBillingDate, len(bs))
		} else if !sawChange {
			c.failf("%q: changed from %q on %v, a day with no billing", s.Name, from, changedOn)
		}
	}
	// A plan that is no longer listed ended: its billings kept one cycle
	// and stopped at least a cycle before now.
	for id, bs := range billings {
		if known[id] {
			continue
		}
		ended := false
		for _, cycle := range []string{"MONTHLY", "QUARTERLY", "ANNUALLY", "WEEKLY", "BIWEEKLY", "SEMIANNUALLY"} {
			regular := true
			for i := 1; i < len(bs); i++ {
				regular = regular && addCycle(bs[i-1].Datetime, cycle).Equal(bs[i].Datetime)
			}
			if regular && !addCycle(bs[len(bs)-1].Datetime, cycle).After(now) {
				ended = true
				break
			}
		}
		if !ended {
			c.failf("%d billings of %s, which is no subscription of the account and has not ended", len(bs), id)
		}
	}
	return c.errs
}

// changeOf returns the plan and day a subscription's description names
// after prefix ("Changed from ", "Changing to "), as "… <plan> on Jan 2,
// 2006"; a zero day when it names none.
func changeOf(desc, prefix string) (string, time.Time) {
	_, rest, ok := strings.Cut(desc, prefix)
	if !ok {
		return "", time.Time{}
	}
	rest, _, _ = strings.Cut(rest, ". ")
	i := strings.LastIndex(rest, " on ")
	if i < 0 {
		return "", time.Time{}
	}
	day, err := time.Parse("Jan 2, 2006", rest[i+4:])
	if err != nil {
		return "", time.Time{}
	}
	return rest[:i], day
}

// checkLater returns every rule that observing an account at now and
// again at later (after now) breaks: the later observation is the earlier
// one moved on in time. Orders up to now stay as they were (an order on
// its way may only move to its final status) and none appears before now;
// a plan keeps its start and past changes; a cancellation ends the plan
// on its expiration date, and a pending change takes effect on its date.
func checkLater(seed Seed, m merchant.Merchant, now, later time.Time) []error {
	c := &checker{what: fmt.Sprintf("%s %s observed at %s and %s", m.Name, seed.ExternalUserID,
		now.Format(time.DateOnly), later.Format(time.DateOnly))}
	before, after := History(seed, m, time.Time{}, now), History(seed, m, time.Time{}, later)
	byID := make(map[string]transaction.Transaction, len(after))
	billings := map[string]map[time.Time]string{} // subscription, billing time → line name
	for _, t := range after {
		byID[t.ExternalID] = t
		for _, p := range t.Products {
			if strings.HasPrefix(p.ExternalID, "sub_") {
				if billings[p.ExternalID] == nil {
					billings[p.ExternalID] = map[time.Time]string{}
				}
				billings[p.ExternalID][t.Datetime] = p.Name
			}
		}
	}
	// UserEveryStatus's forced orders move with now, by design.
	if seed.ExternalUserID != UserEveryStatus {
		seen := map[string]bool{}
		for _, t := range before {
			seen[t.ExternalID] = true
			l, ok := byID[t.ExternalID]
			switch {
			case !ok:
				c.failf("order %s of %v gone", t.ExternalID, t.Datetime)
			case inFlightRank(t.OrderStatus) > 0:
				if !l.Datetime.Equal(t.Datetime) || !reflect.DeepEqual(l.Products, t.Products) {
					c.failf("order %s (%s) changed more than its status", t.ExternalID, t.OrderStatus)
				}
			case !reflect.DeepEqual(l, t):
				c.failf("order %s changed: %+v, then %+v", t.ExternalID, t, l)
			}
		}
		for _, t := range after {
			if !t.Datetime.After(now) && !seen[t.ExternalID] {
				c.failf("order %s of %v appeared later", t.ExternalID, t.Datetime)
			}
		}
	}

	subs := map[string]transaction.Subscription{}
	for _, l := range Subscriptions(seed, m, later) {
		subs[l.ExternalID] = l
	}
	listed := map[string]bool{}
	for _, f := range Subscriptions(seed, m, now) {
		listed[f.ExternalID] = true
		l, ok := subs[f.ExternalID]
		expired := f.Status == "ACTIVE_CANCELLATION" && !f.ExpirationDate.After(later)
		switch {
		case !ok && expired:
			continue
		case !ok && f.Status == "ACTIVE_CANCELLATION":
			c.failf("%q gone before its expiration %v", f.Name, *f.ExpirationDate)
			continue
		case !ok:
			// Not yet canceled at now: billed at least once more, then a
			// last cycle.
			_, billed := billings[f.ExternalID][f.NextBillingDate]
			if f.IsPaid && !billed || addCycle(f.NextBillingDate, f.BillingCycle).After(later) {
				c.failf("%s %q gone without a last cycle", f.Status, f.Name)
			}
			continue
		case expired:
			c.failf("%q still listed after its expiration %v", f.Name, *f.ExpirationDate)
		}
		if !l.StartDate.Equal(f.StartDate) {
			c.failf("%q start moved from %v to %v", f.Name, f.StartDate, l.StartDate)
		}
		if later.Before(f.NextBillingDate) && !reflect.DeepEqual(f, l) {
			c.failf("%q changed with no billing in between: %+v, then %+v", f.Name, f, l)
		}
		if _, on := changeOf(f.Description, "Changed from "); !on.IsZero() {
			if _, lon := changeOf(l.Description, "Changed from "); lon.Before(on) {
				c.failf("%q changed on %v, later on %v", f.Name, on, lon)
			}
		}
		if to, on := changeOf(f.Description, "Changing to "); !on.IsZero() {
			if later.Before(on) {
				if lto, lon := changeOf(l.Description, "Changing to "); l.Status != f.Status || lto != to || !lon.Equal(on) {
					c.failf("pending change to %q on %v became %s %q", to, on, l.Status, l.Description)
				}
				continue
			}
			took := false
			for at, name := range billings[f.ExternalID] {
				if at.Truncate(24*time.Hour).Equal(on) && strings.HasPrefix(name, to+" — ") {
					took = true
				}
			}
			if !took {
				c.failf("the change of %q to %q on %v did not take effect", f.Name, to, on)
			}
		}
	}
	for id, l := range subs {
		if !listed[id] && !l.StartDate.After(now) {
			c.failf("%q, started %v, listed only later", l.Name, l.StartDate)
		}
	}
	return c.errs
}
