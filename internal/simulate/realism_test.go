package simulate

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hitchdev/hitch/internal/transaction"
)

// orderStats counts, over a merchant's orders, the traits a realistic
// history of its category must show.
type orderStats struct {
	orders, products, multiQty            int
	tips, fees, taxes, discounts, refunds int
	giftSplits, sellers, fsa, shipped     int
	maxProducts                           int
	statuses                              map[string]int
	productNames                          map[string]int
}

func statsOf(txns []transaction.Transaction) orderStats {
	s := orderStats{statuses: map[string]int{}, productNames: map[string]int{}}
	for _, t := range txns {
		s.orders++
		s.statuses[t.OrderStatus]++
		s.products += len(t.Products)
		s.maxProducts = max(s.maxProducts, len(t.Products))
		if t.Shipping != nil {
			s.shipped++
		}
		for _, p := range t.Products {
			s.productNames[p.Name]++
			if p.Quantity > 1 {
				s.multiQty++
			}
			if p.Seller != nil {
				s.sellers++
			}
			if slices.Contains(p.Eligibility, "FSA/HSA") {
				s.fsa++
			}
		}
		seen := map[string]bool{}
		for _, a := range t.Price.Adjustments {
			seen[a.Type] = true
		}
		for typ, n := range map[string]*int{"TIP": &s.tips, "FEE": &s.fees, "TAX": &s.taxes,
			"DISCOUNT": &s.discounts, "REFUND": &s.refunds} {
			if seen[typ] {
				*n++
			}
		}
		if len(t.PaymentMethods) == 2 && slices.ContainsFunc(t.PaymentMethods, func(pm transaction.PaymentMethod) bool {
			return pm.Type == "GIFT_CARD"
		}) {
			s.giftSplits++
		}
	}
	return s
}

// ordersOf generates perCall orders for every test seed at merchant id.
func ordersOf(t *testing.T, id int64) []transaction.Transaction {
	t.Helper()
	m := merchantByID(t, id)
	var out []transaction.Transaction
	for _, base := range testSeeds {
		for i := range 8 {
			s := seedFor(base, m)
			s.ExternalUserID += fmt.Sprint("-", i)
			out = append(out, recent(s, m, testNow)...)
		}
	}
	return out
}

// want returns an error unless ok.
func want(ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return fmt.Errorf(format, args...)
}

func TestRealism(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		id    int64
		check func(s orderStats) []error
	}{
		{"rides have tips and fees, one trip each, no shipping", 6, func(s orderStats) []error {
			return []error{
				want(s.tips > s.orders/4, "%d of %d rides tipped", s.tips, s.orders),
				want(s.fees > s.orders*9/10, "%d of %d rides with a booking fee", s.fees, s.orders),
				want(s.products == s.orders, "%d products in %d rides, want one each", s.products, s.orders),
				want(s.shipped == 0, "%d rides with shipping", s.shipped),
				want(s.statuses["COMPLETED"] > s.orders*8/10, "statuses %v", s.statuses),
				want(s.productNames["UberX trip"] > s.orders/3, "UberX trips %d of %d", s.productNames["UberX trip"], s.orders),
			}
		}},
		{"pharmacy sells FSA/HSA-eligible items", 31, func(s orderStats) []error {
			return []error{
				want(s.fsa > s.products/3, "%d of %d products FSA/HSA-eligible", s.fsa, s.products),
				want(s.fsa < s.products, "every product FSA/HSA-eligible"),
				want(s.statuses["PICKED_UP"] > 0 && s.statuses["DELIVERED"] > 0, "statuses %v", s.statuses),
			}
		}},
		{"marketplace has sellers, shipping, gift cards, discounts and returns", 1, func(s orderStats) []error {
			return []error{
				want(s.sellers > s.products/5, "%d of %d products from sellers", s.sellers, s.products),
				want(s.shipped == s.orders, "%d of %d orders shipped", s.shipped, s.orders),
				want(s.giftSplits > 0, "no order split between a gift card and another method"),
				want(s.discounts > 0, "no discounts"),
				want(s.statuses["RETURNED"] > 0 && s.refunds > 0, "no returns (%v)", s.statuses),
				want(s.fees > 0, "never a shipping fee"),
			}
		}},
		{"grocery baskets are large, with quantities, tax, loyalty discounts", 42, func(s orderStats) []error {
			return []error{
				want(s.products >= 8*s.orders, "%.1f products per basket", float64(s.products)/float64(s.orders)),
				want(s.maxProducts >= 20, "largest basket %d products", s.maxProducts),
				want(s.multiQty > s.orders, "%d lines with quantity > 1 in %d baskets", s.multiQty, s.orders),
				want(s.taxes > s.orders/2, "%d of %d baskets taxed", s.taxes, s.orders),
				want(s.discounts > 0, "no discounts"),
				want(s.statuses["PICKED_UP"] > 0 && s.statuses["DELIVERED"] > 0, "statuses %v", s.statuses),
				want(s.tips > 0, "no delivery tips"),
			}
		}},
		{"food delivery has fees, tips, tax and restaurant sellers", 9, func(s orderStats) []error {
			return []error{
				want(s.fees > s.orders/2, "%d of %d orders with fees", s.fees, s.orders),
				want(s.tips > s.orders/2, "%d of %d orders tipped", s.tips, s.orders),
				want(s.taxes > s.orders*3/4, "%d of %d orders taxed", s.taxes, s.orders), // a few cities tax no meals
				want(s.sellers == s.products, "%d of %d dishes with a restaurant", s.sellers, s.products),
			}
		}},
		{"streaming charges are plan renewals", 4, func(s orderStats) []error {
			var errs []error
			for name := range s.productNames {
				errs = append(errs, want(strings.HasSuffix(name, " — monthly") || strings.HasSuffix(name, " — annual"),
					"product %q is not a renewal", name))
			}
			return append(errs,
				want(s.products == s.orders, "%d products in %d charges", s.products, s.orders),
				want(s.shipped == 0, "%d charges with shipping", s.shipped),
				want(s.statuses["COMPLETED"] > s.orders*8/10, "statuses %v", s.statuses),
			)
		}},
		{"flights have transportation tax and fees", 61, func(s orderStats) []error {
			return []error{
				want(s.taxes == s.orders, "%d of %d tickets taxed", s.taxes, s.orders),
				want(s.fees == s.orders, "%d of %d tickets with government fees", s.fees, s.orders),
				want(s.shipped == 0, "%d tickets shipped", s.shipped),
			}
		}},
		{"utility bills are one level amount a month", 97, func(s orderStats) []error {
			return []error{
				want(s.products == s.orders, "%d lines in %d bills", s.products, s.orders),
				want(s.statuses["COMPLETED"] > s.orders*9/10, "statuses %v", s.statuses),
			}
		}},
		{"telecom bills have fees, taxes and AutoPay discounts", 19, func(s orderStats) []error {
			return []error{
				want(s.fees == s.orders, "%d of %d bills with fees", s.fees, s.orders),
				want(s.discounts > s.orders/3, "%d of %d bills with AutoPay", s.discounts, s.orders),
			}
		}},
		{"gaming uses gift cards", 29, func(s orderStats) []error {
			return []error{want(s.giftSplits > s.orders/20, "%d of %d orders with a gift card", s.giftSplits, s.orders)}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, err := range tt.check(statsOf(ordersOf(t, tt.id))) {
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// TestRecentOrdersInFlight checks that only recent orders are still on
// their way, and that they are, for a store that ships.
func TestRecentOrdersInFlight(t *testing.T) {
	t.Parallel()
	m := merchantByID(t, 3) // Target
	inFlight := 0
	for i := range 30 {
		seed := Seed{ClientID: "cli_recent", ExternalUserID: fmt.Sprint("user-", i), MerchantID: m.ID, Call: 1}
		for _, tx := range recent(seed, m, testNow) {
			if tx.OrderStatus == transaction.StatusOrdered || tx.OrderStatus == transaction.StatusShipped {
				inFlight++
			}
		}
	}
	if inFlight == 0 {
		t.Error("no ORDERED or SHIPPED order among 30 accounts' recent orders")
	}
}

// TestLoyaltyPerAccount checks that a membership belongs to the account:
// the same tier on every call, and some accounts without one.
func TestLoyaltyPerAccount(t *testing.T) {
	t.Parallel()
	m := merchantByID(t, 65) // Marriott
	members := 0
	for i := range 40 {
		seed := Seed{ClientID: "cli_loyal", ExternalUserID: fmt.Sprint("user-", i), MerchantID: m.ID, Call: 1}
		orders := recent(seed, m, testNow)
		if len(orders) == 0 {
			continue
		}
		a, b := orders[0].LoyaltyMembership, orders[len(orders)-1].LoyaltyMembership
		if (a == nil) != (b == nil) || a != nil && a.Tier != b.Tier {
			t.Errorf("%s: membership %v on call 1, %v on call 2", seed.ExternalUserID, a, b)
		}
		if a != nil {
			members++
		}
	}
	if members == 0 || members == 40 {
		t.Errorf("%d of 40 accounts are members, want some but not all", members)
	}
}

// TestSubscriptionNames checks that plans are named like the merchant's
// real ones and family plans are marked.
func TestSubscriptionNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		id     int64
		prefix string
	}{
		{4, "Netflix "},
		{5, "Spotify "},
		{24, "Microsoft 365 "},
	}
	for _, tt := range tests {
		m := merchantByID(t, tt.id)
		family, cycles := 0, map[string]int{}
		for i := range 60 {
			seed := Seed{ClientID: "cli_names", ExternalUserID: fmt.Sprint("user-", i), MerchantID: m.ID, Call: 1}
			for _, s := range Subscriptions(seed, m, testNow) {
				if !strings.HasPrefix(s.Name, tt.prefix) {
					t.Errorf("%s plan named %q", m.Name, s.Name)
				}
				if s.IsFamilyPlan {
					family++
					if !strings.Contains(s.Name, "Family") {
						t.Errorf("family plan named %q", s.Name)
					}
				}
				cycles[s.BillingCycle]++
			}
		}
		if tt.id != 4 && family == 0 {
			t.Errorf("%s: no family plan among 60 accounts", m.Name)
		}
		if cycles["MONTHLY"]+cycles["ANNUALLY"] == 0 {
			t.Errorf("%s: cycles %v", m.Name, cycles)
		}
	}
}
