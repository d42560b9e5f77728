package refconnector

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hitchdev/hitch/connector"
	"github.com/hitchdev/hitch/examples/refshop"
)

// dollars is cents as Hitch's decimal string: 1234 → "12.34", -500 → "-5.00".
func dollars(cents int64) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s%d.%02d", sign, cents/100, cents%100)
}

// midnight is the day of t (the pages show days only) in RFC 3339.
func midnight(t time.Time) string { return t.UTC().Format(time.DateOnly) + "T00:00:00Z" }

// wantTransaction is what the connector must send for an order the admin
// API shows, written from the ingestion rules (docs/connectors.md).
func wantTransaction(base string, u refshop.User, o refshop.Order) connector.Transaction {
	status := map[string]string{
		"Ordered": "ORDERED", "Shipped": "SHIPPED", "Delivered": "DELIVERED", "Cancelled": "CANCELLED",
		"Returned": "RETURNED", "Refunded": "REFUNDED", "Payment failed": "FAILED",
	}[o.Status]
	tx := connector.Transaction{
		ExternalID:  o.Number,
		Datetime:    o.PlacedAt.UTC().Format(time.RFC3339),
		URL:         base + "/orders/" + o.Number,
		OrderStatus: status,
		Shipping: &connector.Shipping{Location: connector.Location{
			FirstName: o.ShippingAddress.FirstName, LastName: o.ShippingAddress.LastName,
			Address: connector.Address{
				Line1: o.ShippingAddress.Line1, Line2: o.ShippingAddress.Line2, City: o.ShippingAddress.City,
				Region: o.ShippingAddress.Region, PostalCode: o.ShippingAddress.PostalCode, Country: o.ShippingAddress.Country,
			},
		}},
		PaymentMethods: []connector.PaymentMethod{},
		Price: connector.Price{
			SubTotal: dollars(o.SubtotalCents), Total: dollars(o.TotalCents), Currency: "USD",
			Adjustments: []connector.Adjustment{},
		},
		Products:          []connector.Product{},
		LoyaltyMembership: &connector.LoyaltyMembership{Tier: u.Tier},
	}
	for _, a := range o.Adjustments {
		typ := map[string]string{"tax": "TAX", "discount": "DISCOUNT", "shipping": "FEE", "refund": "REFUND"}[a.Kind]
		tx.Price.Adjustments = append(tx.Price.Adjustments, connector.Adjustment{Type: typ, Label: a.Label, Amount: dollars(a.AmountCents)})
	}
	for _, it := range o.Items {
		p := connector.Product{
			ExternalID: it.SKU, Name: it.Name, URL: base + it.URL, ImageURL: base + it.ImageURL, Quantity: it.Quantity,
			Price: connector.ProductPrice{
				SubTotal: dollars(it.LineTotalCents), Total: dollars(it.LineTotalCents), UnitPrice: dollars(it.UnitPriceCents),
			},
			Eligibility: []string{},
		}
		if it.Seller != "" {
			p.Seller = &connector.Seller{Name: it.Seller}
		}
		tx.Products = append(tx.Products, p)
	}
	for _, p := range o.Payments {
		m := connector.PaymentMethod{LastFour: p.Last4, TransactionAmount: dollars(p.AmountCents)}
		switch p.Method {
		case "card":
			m.Type = "CARD"
			m.Brand = map[string]string{"Visa": "VISA", "Mastercard": "MASTERCARD", "American Express": "AMEX", "Discover": "DISCOVER"}[p.Brand]
			m.Name = p.Brand + " ending in " + p.Last4
		case "gift_card":
			m.Type, m.Name = "GIFT_CARD", "Gift card ending in "+p.Last4
		}
		tx.PaymentMethods = append(tx.PaymentMethods, m)
	}
	return tx
}

// wantSubscription is what the connector must send for a plan the admin
// API shows.
func wantSubscription(s refshop.Subscription) connector.Subscription {
	sub := connector.Subscription{
		ExternalID: s.ID, Name: s.Name, Description: s.Description,
		Status:             "ACTIVE",
		BillingCycle:       map[string]string{"Monthly": "MONTHLY", "Annual": "ANNUALLY"}[s.Cycle],
		NextBillingDate:    midnight(s.NextBillingAt),
		LastBillingDate:    midnight(s.LastBilledAt),
		StartDate:          midnight(s.StartedAt),
		NextRenewalDate:    midnight(s.NextBillingAt),
		CancelInstructions: s.CancelInstructions,
		IsPaid:             true, IsFamilyPlan: s.FamilyPlan, IsCancellable: true,
		Price: connector.SubscriptionPrice{Total: dollars(s.PriceCents), Currency: "USD"},
	}
	if s.CancelsOn != nil {
		// A cancelled plan runs to its term and does not renew.
		exp := midnight(*s.CancelsOn)
		sub.Status, sub.ExpirationDate, sub.NextRenewalDate = "ACTIVE_CANCELLATION", &exp, ""
	}
	return sub
}

// checkSnapshot compares a refresh with what the admin API says, field by
// field.
func checkSnapshot(t *testing.T, base string, u refshop.User, snap *connector.Snapshot) {
	t.Helper()
	if len(snap.Transactions) != len(u.Orders) {
		t.Errorf("%d transactions, want %d (the admin API's orders)", len(snap.Transactions), len(u.Orders))
	}
	for i := range min(len(snap.Transactions), len(u.Orders)) {
		for _, d := range diff("transactions["+u.Orders[i].Number+"]", wantTransaction(base, u, u.Orders[i]), snap.Transactions[i]) {
			t.Error(d)
		}
	}
	if len(snap.Subscriptions) != len(u.Subscriptions) {
		t.Errorf("%d subscriptions, want %d", len(snap.Subscriptions), len(u.Subscriptions))
	}
	for i := range min(len(snap.Subscriptions), len(u.Subscriptions)) {
		for _, d := range diff("subscriptions["+u.Subscriptions[i].ID+"]", wantSubscription(u.Subscriptions[i]), snap.Subscriptions[i]) {
			t.Error(d)
		}
	}
}

// TestRefresh logs ada in, restores the saved session into a new one as the
// SDK runtime does, and compares every transaction and subscription with
// the admin API; a user with a cancelled family plan checks the other
// subscription fields.
func TestRefresh(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	s := newShop(t)
	site := New(s.URL)
	s.admin(http.MethodPost, "/admin/api/users", map[string]any{
		"email": "fam@refshop.example", "password": demoPassword, "orders": 12, "subscriptions": true,
		"created_at": time.Now().AddDate(-2, 0, 0),
	}, nil)

	for _, email := range []string{ada, "fam@refshop.example"} {
		t.Run(email, func(t *testing.T) {
			t.Parallel()
			state := mustLogin(t, pool, site, email)
			snap, err := refresh(t, pool, site, state)
			if err != nil {
				t.Fatalf("refresh: %v", err)
			}
			u := s.user(email)
			checkSnapshot(t, s.URL, u, snap)
			// The data must show every case the mapping handles.
			seen := map[string]bool{}
			for _, tx := range snap.Transactions {
				seen[tx.OrderStatus] = true
				for _, a := range tx.Price.Adjustments {
					seen[a.Type] = true
				}
				for _, p := range tx.Products {
					seen["seller"] = seen["seller"] || p.Seller != nil
				}
				for _, m := range tx.PaymentMethods {
					seen[m.Type] = true
				}
			}
			for _, sub := range snap.Subscriptions {
				seen[sub.Status], seen[sub.BillingCycle] = true, true
			}
			want := []string{"DELIVERED", "CANCELLED", "REFUNDED", "RETURNED", "FAILED", "TAX", "REFUND", "FEE",
				"seller", "CARD", "GIFT_CARD", "ACTIVE", "MONTHLY"}
			if email != ada {
				want = []string{"ACTIVE", "MONTHLY", "ACTIVE_CANCELLATION", "ANNUALLY"}
			}
			for _, w := range want {
				if !seen[w] {
					t.Errorf("no %s in %s's refresh: the comparison does not cover it", w, email)
				}
			}
		})
	}
}

// TestRefreshFollowsTheShop: an order the admin adds and a status the admin
// changes show in the next refresh; a password change ends the session,
// and the refresh says so with ErrLoggedOut.
func TestRefreshFollowsTheShop(t *testing.T) {
	t.Parallel()
	pool := sharedPool(t)
	s := newShop(t)
	site := New(s.URL)
	state := mustLogin(t, pool, site, ada)

	before := s.user(ada)
	var added struct{ Number string }
	s.admin(http.MethodPost, "/admin/api/users/"+url.PathEscape(ada)+"/orders", map[string]any{
		"items": []map[string]any{{"sku": "RS-KTL-001", "quantity": 2}, {"sku": "MP-HNY-103"}},
		"adjustments": []map[string]any{
			{"kind": "discount", "label": "Promotion (WELCOME)", "amount_cents": -1000},
			{"kind": "tax", "label": "Estimated tax", "amount_cents": 1177},
		},
		"payments": []map[string]any{
			{"method": "gift_card", "last4": "0042", "amount_cents": 2500},
			{"method": "card", "brand": "Discover", "last4": "1117", "amount_cents": 6999*2 + 1650 - 1000 + 1177 - 2500},
		},
	}, &added)
	changed := before.Orders[len(before.Orders)-1]
	newStatus := "Returned"
	if changed.Status == newStatus {
		newStatus = "Refunded"
	}
	s.admin(http.MethodPost, "/admin/api/orders/"+changed.Number+"/status", map[string]string{"status": newStatus}, nil)

	snap, err := refresh(t, pool, site, state)
	if err != nil {
		t.Fatalf("refresh: %v", err)
	}
	after := s.user(ada)
	checkSnapshot(t, s.URL, after, snap)
	i := slices.IndexFunc(snap.Transactions, func(tx connector.Transaction) bool { return tx.ExternalID == added.Number })
	if i < 0 {
		t.Errorf("the added order %s is not in the refresh", added.Number)
	} else if tx := snap.Transactions[i]; tx.PaymentMethods[1].Brand != "DISCOVER" || tx.Price.Total != "158.25" {
		t.Errorf("the added order reads %+v", tx)
	}
	i = slices.IndexFunc(snap.Transactions, func(tx connector.Transaction) bool { return tx.ExternalID == changed.Number })
	if want := strings.ToUpper(newStatus); i < 0 || snap.Transactions[i].OrderStatus != want {
		t.Errorf("order %s: the refresh does not show the new status %s", changed.Number, want)
	}

	s.admin(http.MethodPost, "/admin/api/users/"+url.PathEscape(ada)+"/password", map[string]string{"password": "a-new-password"}, nil)
	if _, err := refresh(t, pool, site, state); !errors.Is(err, connector.ErrLoggedOut) {
		t.Fatalf("refresh after a password change: %v, want ErrLoggedOut", err)
	}
}
