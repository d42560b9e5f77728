package simulate

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hitchdev/hitch/internal/merchant"
	"github.com/hitchdev/hitch/internal/transaction"
)

// testNow is a fixed "now" with a sub-second part, which the generator
// must not leak into its timestamps.
var testNow = time.Date(2026, time.March, 14, 15, 9, 26, 535_000_000, time.UTC)

// testSeeds are accounts of different developers and users, on a first
// and a later call.
var testSeeds = []Seed{
	{ClientID: "cli_test_a", ExternalUserID: "user-1", Call: 1},
	{ClientID: "cli_test_a", ExternalUserID: "user-2", Call: 3},
	{ClientID: "cli_test_b", ExternalUserID: "user-1", Call: 2},
}

// checkSeeds are the accounts TestInvariants checks at every merchant:
// many ordinary users and the documented test users.
func checkSeeds() []Seed {
	out := []Seed{}
	for i := range 40 {
		out = append(out, Seed{ClientID: fmt.Sprint("cli_check_", i%3), ExternalUserID: fmt.Sprint("user-", i)})
	}
	for _, u := range []string{UserEmpty, UserEveryStatus, UserPlanChange} {
		out = append(out, Seed{ClientID: "cli_check_0", ExternalUserID: u})
	}
	return out
}

// recent is what a first observation of the account ingests: the last two
// years.
func recent(s Seed, m merchant.Merchant, now time.Time) []transaction.Transaction {
	return History(s, m, now.Add(-Window), now)
}

func catalog(t testing.TB) []merchant.Merchant {
	t.Helper()
	c, err := merchant.Load()
	if err != nil {
		t.Fatalf("load catalog: %v", err)
	}
	var out []merchant.Merchant
	for _, m := range c.All() {
		out = append(out, *m)
	}
	return out
}

func merchantByID(t testing.TB, id int64) merchant.Merchant {
	t.Helper()
	c, err := merchant.Load()
	if err != nil {
		t.Fatalf("load catalog: %v", err)
	}
	m, ok := c.Get(id)
	if !ok {
		t.Fatalf("no merchant %d", id)
	}
	return *m
}

func seedFor(s Seed, m merchant.Merchant) Seed {
	s.MerchantID = m.ID
	return s
}

// reportErrs fails t with at most a few of errs, so one bad rule does not
// drown the log.
func reportErrs(t *testing.T, errs []error) {
	t.Helper()
	for i, err := range errs {
		if i == 10 {
			t.Errorf("... and %d more", len(errs)-i)
			return
		}
		t.Error(err)
	}
}

// TestInvariants generates the whole history of every checkSeeds account
// at every catalog merchant, checks every rule on each order, on the
// subscriptions and on both together, then updates a sample of the orders
// repeatedly and checks every update too. -v prints the counts.
func TestInvariants(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var histories, orders, subscriptions, violations int
	t.Cleanup(func() {
		t.Logf("checked %d histories, %d transactions, %d subscriptions: %d violations",
			histories, orders, subscriptions, violations)
	})
	for _, m := range catalog(t) {
		t.Run(fmt.Sprintf("%d_%s", m.ID, m.Domain), func(t *testing.T) {
			t.Parallel()
			for _, base := range checkSeeds() {
				seed := seedFor(base, m)
				txns := History(seed, m, time.Time{}, testNow)
				subs := Subscriptions(seed, m, testNow)
				var errs []error
				for _, tx := range txns {
					errs = append(errs, checkTransaction(tx, m, testNow)...)
					if !reflect.DeepEqual(tx.LoyaltyMembership, txns[0].LoyaltyMembership) {
						errs = append(errs, fmt.Errorf("loyalty %v on %s, %v on the first order",
							tx.LoyaltyMembership, tx.ExternalID, txns[0].LoyaltyMembership))
					}
				}
				errs = append(errs, checkHistory(txns, subs, m, testNow)...)
				errs = append(errs, checkSubscriptions(seed, m)...)
				if seed.ExternalUserID == UserEmpty && (len(txns) > 0 || len(subs) > 0) {
					errs = append(errs, fmt.Errorf("%s: %d orders, %d subscriptions", UserEmpty, len(txns), len(subs)))
				}
				for i := 0; i < len(txns); i += 7 {
					errs = append(errs, checkUpdates(seed, txns[i], m)...)
				}
				mu.Lock()
				histories++
				orders += len(txns)
				subscriptions += len(subs)
				violations += len(errs)
				mu.Unlock()
				reportErrs(t, errs)
			}
		})
	}
}

// checkUpdates updates tx five times, a day apart, and checks that every
// update is valid, differs from what it updated and keeps the order's
// identity.
func checkUpdates(seed Seed, tx transaction.Transaction, m merchant.Merchant) []error {
	var errs []error
	prev := tx
	for step := range 5 {
		now := testNow.Add(time.Duration(step) * 24 * time.Hour)
		before := cloneTransaction(prev)
		next := Update(seed, prev, now)
		if !reflect.DeepEqual(prev, before) {
			errs = append(errs, fmt.Errorf("update %d of %s changed its input", step+1, tx.ExternalID))
		}
		if reflect.DeepEqual(next, prev) {
			errs = append(errs, fmt.Errorf("update %d of %s (%s) changed nothing", step+1, tx.ExternalID, prev.OrderStatus))
		}
		if next.ExternalID != tx.ExternalID || !next.Datetime.Equal(tx.Datetime) || next.ID != tx.ID {
			errs = append(errs, fmt.Errorf("update %d of %s changed its identity or date", step+1, tx.ExternalID))
		}
		for _, err := range checkTransaction(next, m, now) {
			errs = append(errs, fmt.Errorf("update %d (%s → %s): %w", step+1, prev.OrderStatus, next.OrderStatus, err))
		}
		prev = next
	}
	return errs
}

func checkSubscriptions(seed Seed, m merchant.Merchant) []error {
	subs := Subscriptions(seed, m, testNow)
	if !hasPlans(m) {
		if subs != nil {
			return []error{fmt.Errorf("%s: %d subscriptions at a merchant without plans", m.Name, len(subs))}
		}
		return nil
	}
	var errs []error
	if seed.ExternalUserID == UserEmpty {
		if len(subs) > 0 {
			errs = append(errs, fmt.Errorf("%s: %d subscriptions for %s", m.Name, len(subs), UserEmpty))
		}
		return errs
	}
	// None once the account's plans have all ended (checkHistory checks
	// that their billings stopped).
	if len(subs) > 3 {
		errs = append(errs, fmt.Errorf("%s: %d subscriptions, want at most 3", m.Name, len(subs)))
	}
	ids := map[string]bool{}
	for _, s := range subs {
		errs = append(errs, checkSubscription(s, m, testNow)...)
		if ids[s.ExternalID] {
			errs = append(errs, fmt.Errorf("%s: duplicate subscription external_id %s", m.Name, s.ExternalID))
		}
		ids[s.ExternalID] = true
	}
	return errs
}

func TestSubscriptionMerchants(t *testing.T) {
	t.Parallel()
	tests := []struct {
		id   int64
		want bool
	}{
		{4, true},    // Netflix, streaming
		{23, true},   // Adobe, software
		{26, true},   // The New York Times, news
		{19, true},   // Verizon, telecom
		{97, true},   // PG&E, utilities
		{33, true},   // Peloton, fitness
		{110, true},  // Ring, home with a subscription
		{1, false},   // Amazon
		{6, false},   // Uber
		{10, false},  // Instacart
		{113, false}, // Crate & Barrel
	}
	for _, tt := range tests {
		m := merchantByID(t, tt.id)
		subs := Subscriptions(seedFor(testSeeds[0], m), m, testNow)
		if got := subs != nil; got != tt.want {
			t.Errorf("%s: has subscriptions %v, want %v", m.Name, got, tt.want)
		}
		if !tt.want {
			continue
		}
		// Every user of a subscription merchant has its plan, whenever the
		// account is observed: a main plan never ends.
		for i := range 300 {
			seed := Seed{ClientID: "client-plans", ExternalUserID: fmt.Sprintf("user-%d", i), MerchantID: m.ID}
			for _, now := range []time.Time{testNow, testNow.AddDate(3, 0, 0), testNow.AddDate(9, 0, 0)} {
				if len(Subscriptions(seed, m, now)) == 0 {
					t.Errorf("%s: %s has no plan at %s", m.Name, seed.ExternalUserID, now.Format(time.DateOnly))
				}
			}
		}
	}
}

// TestDeterminism checks that a history belongs to the account: the same
// on every run and whatever the call, the same orders when observed later
// (only orders still on their way move on), other data for another user.
func TestDeterminism(t *testing.T) {
	t.Parallel()
	for _, id := range []int64{1, 6, 10, 31, 4, 61, 97} {
		m := merchantByID(t, id)
		t.Run(m.Domain, func(t *testing.T) {
			t.Parallel()
			seed := seedFor(testSeeds[0], m)

			a, b := recent(seed, m, testNow), recent(seed, m, testNow)
			if !reflect.DeepEqual(a, b) {
				t.Error("same seed, different orders")
			}
			if !reflect.DeepEqual(Subscriptions(seed, m, testNow), Subscriptions(seed, m, testNow)) {
				t.Error("same seed, different subscriptions")
			}
			if len(a) == 0 {
				t.Fatal("no orders in two years")
			}
			if last := len(a) - 1; !reflect.DeepEqual(Update(seed, a[last], testNow), Update(seed, b[last], testNow)) {
				t.Error("same seed, different updates")
			}
			call := seed
			call.Call += 5
			if !reflect.DeepEqual(a, recent(call, m, testNow)) {
				t.Error("another call, another history")
			}

			// Thirty days later the same orders are there, and new ones after.
			later := testNow.Add(30 * 24 * time.Hour)
			byID := map[string]transaction.Transaction{}
			for _, tx := range History(seed, m, time.Time{}, later) {
				byID[tx.ExternalID] = tx
			}
			for _, tx := range a {
				l, ok := byID[tx.ExternalID]
				switch {
				case !ok:
					t.Errorf("%s gone 30 days later", tx.ExternalID)
				case tx.OrderStatus == l.OrderStatus && !reflect.DeepEqual(tx, l):
					t.Errorf("%s changed 30 days later: %+v, then %+v", tx.ExternalID, tx, l)
				}
			}

			other := seed
			other.ExternalUserID += "-other"
			if reflect.DeepEqual(a, recent(other, m, testNow)) {
				t.Error("another user got the same orders")
			}
		})
	}
}

// TestObservedLater observes every checkSeeds account at every merchant
// with plans at three first nows (spread over the last years, 17 days
// apart from one account to the next, so that the first observations
// catch plans in the cycle of a cancellation or a change) and again 1, 31 and
// 400 days later, and checks that each later observation is the earlier
// one moved on (checkLater): past dates stay, cancellations end on their
// date and changes take effect on theirs. The monthly plans listed both
// times were billed in between.
func TestObservedLater(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var pairs, canceled, changing int
	t.Cleanup(func() {
		t.Logf("checked %d pairs of observations (%d canceling and %d changing plans, besides %s's, at the first)",
			pairs, canceled, changing, UserPlanChange)
	})
	for _, m := range catalog(t) {
		if !hasPlans(m) {
			continue
		}
		t.Run(fmt.Sprintf("%d_%s", m.ID, m.Domain), func(t *testing.T) {
			t.Parallel()
			for i, base := range checkSeeds() {
				seed := seedFor(base, m)
				var errs []error
				for j := range 3 {
					now := testNow.AddDate(0, 0, -17*i-241*j)
					for _, days := range []int{1, 31, 400} {
						errs = append(errs, checkLater(seed, m, now, now.AddDate(0, 0, days))...)
					}
					later := Subscriptions(seed, m, now.AddDate(0, 0, 45))
					for _, f := range Subscriptions(seed, m, now) {
						mu.Lock()
						canceled += btoi(f.Status == "ACTIVE_CANCELLATION")
						changing += btoi(f.Status == "ACTIVE_PLAN_CHANGE" && base.ExternalUserID != UserPlanChange)
						mu.Unlock()
						for _, l := range later {
							if l.ExternalID == f.ExternalID && f.BillingCycle == "MONTHLY" && !l.LastBillingDate.After(f.LastBillingDate) {
								errs = append(errs, fmt.Errorf("%s: monthly plan %q not billed again in 45 days", m.Name, f.Name))
							}
						}
					}
					mu.Lock()
					pairs += 3
					mu.Unlock()
				}
				reportErrs(t, errs)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestHistoryEdgeCases(t *testing.T) {
	t.Parallel()
	m := merchantByID(t, 1)
	seed := seedFor(testSeeds[0], m)
	if got := History(seed, m, testNow, testNow); got == nil || len(got) != 0 {
		t.Errorf("an empty span: got %v, want an empty slice", got)
	}
	// A "now" in another zone still yields UTC timestamps no later than now.
	la := time.FixedZone("PST", -8*3600)
	for _, tx := range recent(seed, m, testNow.In(la)) {
		reportErrs(t, checkTransaction(tx, m, testNow))
	}
	// A "now" before the account was opened: nothing yet.
	if got := History(seed, m, time.Time{}, epoch); len(got) != 0 || len(Subscriptions(seed, merchantByID(t, 4), epoch)) != 0 {
		t.Errorf("%d orders before the account was opened", len(got))
	}
}

// TestTestUsers checks the documented test users at a few merchants.
func TestTestUsers(t *testing.T) {
	t.Parallel()
	for _, id := range []int64{1, 2, 4, 6, 42} {
		m := merchantByID(t, id)
		t.Run(m.Domain, func(t *testing.T) {
			t.Parallel()
			user := func(name string) Seed { return Seed{ClientID: "cli_users", ExternalUserID: name, MerchantID: m.ID} }

			start := time.Now()
			busy := recent(user(UserTenThousand), m, testNow)
			t.Logf("%s: %d orders in %v", UserTenThousand, len(busy), time.Since(start).Round(time.Millisecond))
			if len(busy) != tenThousand {
				t.Errorf("%s: %d orders, want %d", UserTenThousand, len(busy), tenThousand)
			}
			// A day later, still 10,000 in the last two years, the same ids for the same days.
			if n := len(recent(user(UserTenThousand), m, testNow.Add(24*time.Hour))); n != tenThousand {
				t.Errorf("%s a day later: %d orders", UserTenThousand, n)
			}
			for _, tx := range busy[:50] {
				reportErrs(t, checkTransaction(tx, m, testNow))
			}

			seen := map[string]bool{}
			for _, tx := range recent(user(UserEveryStatus), m, testNow) {
				seen[tx.OrderStatus] = true
			}
			p := profileFor(m)
			fs := []fulfilment{p.fulfil}
			if p.altOdds > 0 {
				fs = append(fs, p.alt)
			}
			if p.cadence.kind == billed {
				fs = []fulfilment{fulfilDigital}
			}
			for _, f := range fs {
				for _, st := range statusesOf(f, p.travel) {
					if !seen[st] {
						t.Errorf("%s: no %s order (statuses %v)", UserEveryStatus, st, seen)
					}
				}
			}
		})
	}
	// UserPlanChange shows a past and a pending change whenever it is
	// observed.
	netflix := merchantByID(t, 4)
	seed := Seed{ClientID: "cli_users", ExternalUserID: UserPlanChange, MerchantID: 4}
	for days := range 400 {
		now := testNow.AddDate(0, 0, days)
		subs := Subscriptions(seed, netflix, now)
		if len(subs) == 0 || subs[0].Status != "ACTIVE_PLAN_CHANGE" || !strings.Contains(subs[0].Description, "Changed from ") {
			t.Fatalf("%s at Netflix on %v: %+v", UserPlanChange, now, subs)
		}
		if days%7 == 0 {
			reportErrs(t, checkLater(seed, netflix, now, now.AddDate(0, 0, 1+days%45)))
		}
	}
	names := map[string]bool{}
	for _, tx := range History(seed, netflix, time.Time{}, testNow) {
		names[strings.Split(tx.Products[0].Name, " — ")[0]] = true
	}
	if len(names) < 2 {
		t.Errorf("%s at Netflix: billed as %v only", UserPlanChange, names)
	}
}

// TestUpdateForeignInput checks that Update still returns a different,
// valid copy of orders it did not make itself.
func TestUpdateForeignInput(t *testing.T) {
	t.Parallel()
	m := merchantByID(t, 1)
	seed := seedFor(testSeeds[0], m)
	orig := recent(seed, m, testNow)[0]
	tests := []struct {
		name   string
		change func(*transaction.Transaction)
	}{
		{"unrecognized status", func(t *transaction.Transaction) { t.OrderStatus = transaction.StatusUnrecognized }},
		{"refunded without refund", func(t *transaction.Transaction) {
			t.OrderStatus = transaction.StatusRefunded
			t.Price.Adjustments = []transaction.Adjustment{}
			t.Price.Total = t.Price.SubTotal
			t.PaymentMethods = []transaction.PaymentMethod{{ExternalID: "pm_1", Type: "CARD", Brand: "VISA",
				LastFour: "4242", TransactionAmount: t.Price.SubTotal}}
		}},
		{"nil slices", func(t *transaction.Transaction) {
			t.OrderStatus = transaction.StatusUnrecognized
			t.Price.Adjustments = nil
			t.PaymentMethods = nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := cloneTransaction(orig)
			tt.change(&in)
			out := Update(seed, in, testNow)
			if reflect.DeepEqual(cloneTransaction(in), out) {
				t.Errorf("update changed nothing")
			}
			if out.ExternalID != in.ExternalID {
				t.Errorf("external_id %q, want %q", out.ExternalID, in.ExternalID)
			}
		})
	}
}
