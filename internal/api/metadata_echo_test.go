package api_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/url"
	"testing"

	"github.com/hitchdev/hitch/client"
)

// listedEvent is an event as GET /webhooks/events lists it, with the
// envelope that webhooks deliver.
type listedEvent struct {
	Type    string `json:"type"`
	Payload struct {
		Event string `json:"event"`
		Data  struct {
			Metadata map[string]string `json:"metadata"`
		} `json:"data"`
	} `json:"payload"`
}

// listedEvents lists the user's events through the public API, oldest
// first.
func (h *harness) listedEvents(t *testing.T, user string) []listedEvent {
	t.Helper()
	resp := h.do("GET", "/webhooks/events?limit=100&external_user_id="+url.QueryEscape(user), nil, nil)
	if resp.status != 200 {
		t.Fatalf("GET /webhooks/events: %d %s", resp.status, resp.body)
	}
	var page struct {
		Data []listedEvent `json:"data"`
	}
	if err := json.Unmarshal(resp.body, &page); err != nil {
		t.Fatal(err)
	}
	for i, j := 0, len(page.Data)-1; i < j; i, j = i+1, j-1 {
		page.Data[i], page.Data[j] = page.Data[j], page.Data[i]
	}
	return page.Data
}

// The metadata given at a link is echoed on every event that follows from
// it: the link's transactions, updates and subscriptions, a refresh's
// transactions, a card posted for the linked account without a login, and
// ACCOUNT_LOGIN_REQUIRED. Linking again replaces it, with none too.
func TestMetadataEchoedOnEveryEventOfALink(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		spring := map[string]string{"campaign": "spring", "plan": "gold"}
		if err := h.api.DevLinkAccount(ctx, &client.DevLinkRequest{ExternalUserID: "u1", MerchantID: 4, // Netflix: has plans
			Transactions: &client.DevTransactions{New: true, Updated: true}, Metadata: spring}); err != nil {
			t.Fatal(err)
		}
		if resp := h.do("POST", "/transactions/refresh", map[string]any{"external_user_id": "u1", "merchant_id": 4}, nil); resp.status != 202 {
			t.Fatalf("refresh: %d %s", resp.status, resp.body)
		}
		res, err := h.api.SubmitCard(ctx, &client.SubmitCardRequest{JWE: h.encrypt(t, goodCard("4242424242424242")),
			ExternalUserID: "u1", MerchantID: 4})
		if err != nil {
			t.Fatal(err)
		}
		h.waitEvent(t, h.clientID, "CARD_UPDATED", res.TaskID)
		if err := h.api.DevDisconnectAccount(ctx, "u1", 4); err != nil {
			t.Fatal(err)
		}

		evs := h.listedEvents(t, "u1")
		seen := map[string]int{}
		for _, ev := range evs {
			seen[ev.Type]++
			if !maps.Equal(ev.Payload.Data.Metadata, spring) {
				t.Errorf("%s: data.metadata = %v, want %v", ev.Type, ev.Payload.Data.Metadata, spring)
			}
		}
		for _, typ := range []string{"AUTHENTICATED", "NEW_TRANSACTIONS_AVAILABLE", "UPDATED_TRANSACTIONS_AVAILABLE",
			"NEW_SUBSCRIPTIONS_AVAILABLE", "CARD_UPDATED", "ACCOUNT_LOGIN_REQUIRED"} {
			if seen[typ] == 0 {
				t.Errorf("no %s among %v", typ, seen)
			}
		}
		if seen["NEW_TRANSACTIONS_AVAILABLE"] != 2 {
			t.Errorf("%d NEW_TRANSACTIONS_AVAILABLE, want the link's and the refresh's", seen["NEW_TRANSACTIONS_AVAILABLE"])
		}

		// Linking again replaces the metadata; a link without any leaves none.
		lastLoginRequired := func(link map[string]string) map[string]string {
			t.Helper()
			if err := h.api.DevLinkAccount(ctx, &client.DevLinkRequest{ExternalUserID: "u1", MerchantID: 4,
				Transactions: &client.DevTransactions{New: false}, Metadata: link}); err != nil {
				t.Fatal(err)
			}
			if err := h.api.DevDisconnectAccount(ctx, "u1", 4); err != nil {
				t.Fatal(err)
			}
			evs := h.listedEvents(t, "u1")
			last := evs[len(evs)-1]
			if last.Type != "ACCOUNT_LOGIN_REQUIRED" {
				t.Fatalf("last event %s", last.Type)
			}
			return last.Payload.Data.Metadata
		}
		autumn := map[string]string{"campaign": "autumn"}
		if got := lastLoginRequired(autumn); !maps.Equal(got, autumn) {
			t.Errorf("after linking again: data.metadata = %v, want %v", got, autumn)
		}
		if got := lastLoginRequired(nil); got != nil {
			t.Errorf("after linking without metadata: data.metadata = %v, want none", got)
		}
	}, withWorkers)
}

// In production the session's metadata reaches what a connector's refresh
// raises: transactions ingested without metadata echo it, a batch's own
// metadata is laid over it, and a refresh that finds the user logged out
// raises ACCOUNT_LOGIN_REQUIRED with it.
func TestMetadataEchoedOnConnectorRefreshes(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		c := h.newServingConnector(t, refshop)
		metadata := map[string]string{"campaign": "spring", "source": "app"}
		s := h.flowSession(&client.CreateSessionRequest{Type: "transaction_link", ExternalUserID: "shopper", Metadata: metadata})
		login := h.asyncFlow("/link/api/login", s.Session, map[string]any{"merchant_id": refshop, "username": "ada", "password": "pw"})
		w := c.claim(t, "login")
		c.want(t, 200, "POST", "/internal/work/"+w["id"].(string)+"/step", map[string]any{"lease": w["lease"], "status": "authenticated"})
		if st := h.stepOf(t, login); st.Status != "success" {
			t.Fatalf("login: %+v", st)
		}

		r := c.claim(t, "refresh")
		c.want(t, 200, "POST", "/internal/ingest/transactions", map[string]any{"client_id": h.clientID,
			"external_user_id": "shopper", "merchant_id": refshop, "transactions": []any{wireTransaction("RS-1", "SHIPPED")}})
		c.want(t, 200, "POST", "/internal/ingest/transactions", map[string]any{"client_id": h.clientID,
			"external_user_id": "shopper", "merchant_id": refshop, "transactions": []any{wireTransaction("RS-1", "DELIVERED")},
			"metadata": map[string]string{"source": "refshop", "page": "orders"}})
		c.want(t, 200, "POST", "/internal/work/"+r["id"].(string)+"/complete", map[string]any{"lease": r["lease"], "outcome": "succeeded"})
		h.refreshNow(t, c)
		r = c.claim(t, "refresh")
		c.want(t, 200, "POST", "/internal/work/"+r["id"].(string)+"/complete", map[string]any{"lease": r["lease"], "outcome": "disconnected"})

		merged := map[string]string{"campaign": "spring", "source": "refshop", "page": "orders"}
		want := []struct {
			typ      string
			metadata map[string]string
		}{
			{"AUTHENTICATED", metadata},
			{"NEW_TRANSACTIONS_AVAILABLE", metadata},
			{"UPDATED_TRANSACTIONS_AVAILABLE", merged},
			{"ACCOUNT_LOGIN_REQUIRED", metadata},
		}
		evs := h.listedEvents(t, "shopper")
		if len(evs) != len(want) {
			t.Fatalf("%d events, want %d: %+v", len(evs), len(want), evs)
		}
		for i, w := range want {
			if evs[i].Type != w.typ || !maps.Equal(evs[i].Payload.Data.Metadata, w.metadata) {
				t.Errorf("event %d: %s %v, want %s %v", i, evs[i].Type, evs[i].Payload.Data.Metadata, w.typ, w.metadata)
			}
		}
	}, production)
}
