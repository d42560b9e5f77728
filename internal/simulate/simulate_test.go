package simulate

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/hitchdev/hitch/internal/merchant"
	"github.com/hitchdev/hitch/internal/transaction"
)

// testNow is a fixed "now" with a sub-second part, which the generator
// must not leak into its timestamps.
var testNow = time.Date(2026, time.March, 14, 15, 9, 26, 535_000_000, time.UTC)

// perCall is how many orders the public sandbox makes per simulated link.
const perCall = 205

// testSeeds are accounts of different developers and users, on a first
// and a later call.
var testSeeds = []Seed{
	{ClientID: "cli_test_a", ExternalUserID: "user-1", Call: 1},
	{ClientID: "cli_test_a", ExternalUserID: "user-2", Call: 3},
	{ClientID: "cli_test_b", ExternalUserID: "user-1", Call: 2},
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

// TestInvariants generates 205 orders for every catalog merchant and every
// test seed (over 69,000 orders), checks every rule on each, then updates a
// sample of them repeatedly and checks every update too.
func TestInvariants(t *testing.T) {
	t.Parallel()
	for _, m := range catalog(t) {
		t.Run(fmt.Sprintf("%d_%s", m.ID, m.Domain), func(t *testing.T) {
			t.Parallel()
			for _, base := range testSeeds {
				seed := seedFor(base, m)
				txns := Transactions(seed, m, perCall, testNow)
				if len(txns) != perCall {
					t.Fatalf("%+v: got %d orders, want %d", seed, len(txns), perCall)
				}
				var errs []error
				ids := make(map[string]bool, len(txns))
				oldest, newest := testNow, time.Time{}
				for _, tx := range txns {
					errs = append(errs, checkTransaction(tx, m, testNow)...)
					if ids[tx.ExternalID] {
						errs = append(errs, fmt.Errorf("duplicate external_id %s", tx.ExternalID))
					}
					ids[tx.ExternalID] = true
					if !reflect.DeepEqual(tx.LoyaltyMembership, txns[0].LoyaltyMembership) {
						errs = append(errs, fmt.Errorf("loyalty %v on %s, %v on the first order",
							tx.LoyaltyMembership, tx.ExternalID, txns[0].LoyaltyMembership))
					}
					oldest, newest = minTime(oldest, tx.Datetime), maxTime(newest, tx.Datetime)
				}
				if age := testNow.Sub(oldest); age > 731*24*time.Hour {
					errs = append(errs, fmt.Errorf("oldest order %v old, more than two years", age))
				}
				if age := testNow.Sub(oldest); age < 600*24*time.Hour {
					errs = append(errs, fmt.Errorf("oldest order only %v old", age))
				}
				if age := testNow.Sub(newest); age > 30*24*time.Hour {
					errs = append(errs, fmt.Errorf("newest order %v old", age))
				}
				for i := 0; i < len(txns); i += 7 {
					errs = append(errs, checkUpdates(seed, txns[i], m)...)
				}
				errs = append(errs, checkSubscriptions(seed, m)...)
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
	if len(subs) < 1 || len(subs) > 3 {
		errs = append(errs, fmt.Errorf("%s: %d subscriptions, want 1–3", m.Name, len(subs)))
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

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
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
	}
}

func TestDeterminism(t *testing.T) {
	t.Parallel()
	for _, id := range []int64{1, 6, 10, 31, 4, 61, 97} {
		m := merchantByID(t, id)
		t.Run(m.Domain, func(t *testing.T) {
			t.Parallel()
			seed := seedFor(testSeeds[0], m)

			a, b := Transactions(seed, m, perCall, testNow), Transactions(seed, m, perCall, testNow)
			if !reflect.DeepEqual(a, b) {
				t.Error("same seed, different orders")
			}
			if !reflect.DeepEqual(Subscriptions(seed, m, testNow), Subscriptions(seed, m, testNow)) {
				t.Error("same seed, different subscriptions")
			}
			if !reflect.DeepEqual(Update(seed, a[3], testNow), Update(seed, b[3], testNow)) {
				t.Error("same seed, different updates")
			}

			later := seed
			later.Call++
			c := Transactions(later, m, perCall, testNow.Add(time.Hour))
			ids := map[string]bool{}
			for _, tx := range a {
				ids[tx.ExternalID] = true
			}
			for _, tx := range c {
				if ids[tx.ExternalID] {
					t.Errorf("call %d repeats external_id %s of call %d", later.Call, tx.ExternalID, seed.Call)
				}
			}

			other := seed
			other.ExternalUserID += "-other"
			if reflect.DeepEqual(a, Transactions(other, m, perCall, testNow)) {
				t.Error("another user got the same orders")
			}
			if a[0].ExternalID == Transactions(other, m, 1, testNow)[0].ExternalID &&
				reflect.DeepEqual(a[0].PaymentMethods, Transactions(other, m, 1, testNow)[0].PaymentMethods) {
				t.Error("another user got the same first order and payment")
			}
		})
	}
}

// TestSubscriptionsStable checks that a later call, weeks later, observes
// the same plans: same ids, names and start dates, billing dates moved on.
func TestSubscriptionsStable(t *testing.T) {
	t.Parallel()
	for _, m := range catalog(t) {
		if !hasPlans(m) {
			continue
		}
		seed := seedFor(testSeeds[1], m)
		first := Subscriptions(seed, m, testNow)
		laterSeed := seed
		laterSeed.Call += 4
		laterNow := testNow.Add(45 * 24 * time.Hour)
		later := Subscriptions(laterSeed, m, laterNow)
		if len(first) != len(later) {
			t.Errorf("%s: %d plans, then %d", m.Name, len(first), len(later))
			continue
		}
		for i := range first {
			f, l := first[i], later[i]
			if f.ExternalID != l.ExternalID || f.Name != l.Name || !f.StartDate.Equal(l.StartDate) || f.Price != l.Price {
				t.Errorf("%s: plan %d changed between calls: %+v then %+v", m.Name, i, f, l)
			}
			if !l.LastBillingDate.After(f.LastBillingDate) && f.BillingCycle == "MONTHLY" {
				t.Errorf("%s: monthly plan %q not billed again in 45 days", m.Name, f.Name)
			}
			reportErrs(t, checkSubscription(l, m, laterNow))
		}
	}
}

func TestTransactionsEdgeCases(t *testing.T) {
	t.Parallel()
	m := merchantByID(t, 1)
	seed := seedFor(testSeeds[0], m)
	if got := Transactions(seed, m, 0, testNow); got == nil || len(got) != 0 {
		t.Errorf("n=0: got %v, want an empty slice", got)
	}
	// A "now" in another zone still yields UTC timestamps no later than now.
	la := time.FixedZone("PST", -8*3600)
	for _, tx := range Transactions(seed, m, 3, testNow.In(la)) {
		reportErrs(t, checkTransaction(tx, m, testNow))
	}
	// A large n still spreads over two years with unique ids.
	big := Transactions(seed, m, 3000, testNow)
	ids := map[string]bool{}
	for _, tx := range big {
		if ids[tx.ExternalID] {
			t.Fatalf("duplicate external_id %s in 3000 orders", tx.ExternalID)
		}
		ids[tx.ExternalID] = true
	}
}

// TestUpdateForeignInput checks that Update still returns a different,
// valid copy of orders it did not make itself.
func TestUpdateForeignInput(t *testing.T) {
	t.Parallel()
	m := merchantByID(t, 1)
	seed := seedFor(testSeeds[0], m)
	orig := Transactions(seed, m, 1, testNow)[0]
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
