package api_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/hitchdev/hitch/internal/merchant"
	"github.com/hitchdev/hitch/internal/simulate"
	"github.com/hitchdev/hitch/internal/transaction"
)

// updatedOf returns the transaction ids the user's
// UPDATED_TRANSACTIONS_AVAILABLE events named, oldest event first.
func (h *harness) updatedOf(user string) []string {
	h.t.Helper()
	var out []string
	evs := h.events(h.clientID)
	for i := len(evs) - 1; i >= 0; i-- {
		var env struct {
			Event          string                `json:"event"`
			ExternalUserID string                `json:"external_user_id"`
			Updated        []struct{ ID string } `json:"updated"`
		}
		if err := json.Unmarshal(evs[i].Payload, &env); err != nil {
			h.t.Fatal(err)
		}
		if env.ExternalUserID == user && env.Event == "UPDATED_TRANSACTIONS_AVAILABLE" {
			for _, u := range env.Updated {
				out = append(out, u.ID)
			}
		}
	}
	return out
}

func onTheWay(status string) bool {
	return status == transaction.StatusOrdered || status == transaction.StatusShipped || status == transaction.StatusBilled
}

// A stored order that was still on its way moves on at the next refresh,
// a POST /transactions/refresh or a second link without updated: the
// refresh names it in UPDATED_TRANSACTIONS_AVAILABLE and the order shows
// its new status; nothing is updated while nothing has moved, nor twice.
func TestDevelopmentRefreshMovesOrdersOn(t *testing.T) {
	t.Parallel()
	catalog, err := merchant.Load()
	if err != nil {
		t.Fatal(err)
	}
	const amazon = 1 // parcels stay ORDERED or SHIPPED for up to 7 days
	m, _ := catalog.Get(amazon)
	each(t, func(t *testing.T, h *harness) {
		// Users whose last two years hold an order on its way now.
		now := h.clock.Now()
		var users []string
		for i := 0; i < 200 && len(users) < 2; i++ {
			u := fmt.Sprint("mover-", i)
			seed := simulate.Seed{ClientID: h.clientID, ExternalUserID: u, MerchantID: amazon}
			for _, o := range simulate.History(seed, *m, now.Add(-simulate.Window), now) {
				if onTheWay(o.OrderStatus) {
					users = append(users, u)
					break
				}
			}
		}
		if len(users) < 2 {
			t.Fatalf("no two users with an order on its way at %v", now)
		}
		stored := map[string]map[string]string{} // user → id → status on its way
		for _, u := range users {
			devLinkTransactions(t, h, u, amazon, false)
			all, _ := h.walkAll(t, u, amazon, nil)
			stored[u] = map[string]string{}
			for _, tx := range all {
				if st := tx["order_status"].(string); onTheWay(st) {
					stored[u][tx["id"].(string)] = st
				}
			}
			if len(stored[u]) == 0 {
				t.Fatalf("%s: no stored order on its way", u)
			}
		}
		refresh := func(user string) {
			t.Helper()
			if r := h.do("POST", "/transactions/refresh", map[string]any{"external_user_id": user, "merchant_id": amazon}, nil); r.status != 202 {
				t.Fatalf("refresh: %d %s", r.status, r.body)
			}
		}
		// Nothing has moved yet: nothing is updated.
		refresh(users[0])
		if got := h.updatedOf(users[0]); len(got) != 0 {
			t.Fatalf("a refresh at once updated %v", got)
		}

		// A week and a day later every parcel has arrived (or come back).
		h.clock.Advance(8 * 24 * time.Hour)
		refresh(users[0])
		devLinkTransactions(t, h, users[1], amazon, false)
		for _, u := range users {
			updated := map[string]bool{}
			for _, id := range h.updatedOf(u) {
				updated[id] = true
			}
			for id, was := range stored[u] {
				if !updated[id] {
					t.Errorf("%s: %s (%s) not updated, updated %v", u, id, was, updated)
					continue
				}
				r := h.do("GET", "/transactions/"+id, nil, nil)
				var tx struct {
					OrderStatus string `json:"order_status"`
				}
				if r.status != 200 || json.Unmarshal(r.body, &tx) != nil || onTheWay(tx.OrderStatus) {
					t.Errorf("%s: %s was %s, now %d %s", u, id, was, r.status, r.body)
				}
			}
			if len(updated) != len(stored[u]) {
				t.Errorf("%s: updated %d orders, %d were on their way", u, len(updated), len(stored[u]))
			}
		}

		// Once moved on, a refresh has nothing more to update.
		before := len(h.updatedOf(users[0]))
		refresh(users[0])
		if after := len(h.updatedOf(users[0])); after != before {
			t.Errorf("a second refresh updated %d more", after-before)
		}
	})
}
