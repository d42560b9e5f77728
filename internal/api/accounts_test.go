package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/hitchdev/hitch/client"
)

func linkCard(t *testing.T, c *client.Client, user string, merchantID int64) {
	t.Helper()
	if err := c.DevLinkAccount(context.Background(), &client.DevLinkRequest{
		ExternalUserID: user, MerchantID: merchantID, CardSwitcher: true, CardID: ptr("card-1")}); err != nil {
		t.Fatal(err)
	}
}

func TestAccountsLifecycle(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		_, err := h.api.ListAccounts(ctx, "nobody", "")
		expectError(t, err, 404, "USER_ERROR", "USER_NOT_FOUND")

		linkCard(t, h.api, "u1", 1)
		if err := h.api.DevLinkAccount(ctx, &client.DevLinkRequest{ExternalUserID: "u1", MerchantID: 4,
			Transactions: &client.DevTransactions{New: true}}); err != nil {
			t.Fatal(err)
		}
		accounts, err := h.api.ListAccounts(ctx, "u1", "")
		if err != nil || len(accounts) != 2 {
			t.Fatalf("list = %+v, %v", accounts, err)
		}
		a := accounts[0]
		if a.Merchant.ID != 1 || a.Merchant.Name != "Amazon" || a.Merchant.Logo == "" ||
			// update_card comes with a card switch that succeeds, which
			// this one, waiting for its card, has not yet (cards_test.go).
			a.Connection.Status != "connected" || a.Connection.Scopes == nil || len(a.Connection.Scopes) != 0 ||
			a.Lifecycle.Status == nil || *a.Lifecycle.Status != "authenticated" ||
			a.LastUserAction.AttemptedAt == nil || *a.LastUserAction.Status != "pending" {
			t.Fatalf("linked account = %+v", a)
		}

		// type selects the product whose lifecycle is reported.
		one, err := h.api.GetAccount(ctx, "u1", 4, "card_switcher")
		if err != nil || one.Lifecycle.Status != nil {
			t.Fatalf("card_switcher lifecycle of a transaction_link account = %+v, %v", one.Lifecycle, err)
		}
		one, err = h.api.GetAccount(ctx, "u1", 4, "transaction_link")
		if err != nil || one.Lifecycle.Status == nil || *one.Lifecycle.Status != "authenticated" {
			t.Fatalf("transaction_link lifecycle = %+v, %v", one.Lifecycle, err)
		}
		_, err = h.api.GetAccount(ctx, "u1", 2, "")
		expectError(t, err, 404, "MERCHANT_ACCOUNT_ERROR", "MERCHANT_ACCOUNT_NOT_FOUND")
		_, err = h.api.ListAccounts(ctx, "u1", "link")
		expectError(t, err, 400, "INVALID_INPUT", "PRODUCT_NOT_VALID")
		if resp := h.do("GET", "/accounts/get?external_user_id=u1&merchant_id=abc", nil, nil); resp.status != 400 {
			t.Fatalf("merchant_id=abc: %d", resp.status)
		}
		for _, bad := range []string{"a%00b", "a%FFb"} {
			if resp := h.do("GET", "/accounts/get?external_user_id="+bad, nil, nil); resp.status != 400 {
				t.Fatalf("external_user_id=%s: %d %s", bad, resp.status, resp.body)
			}
		}
		if resp := h.do("GET", "/accounts/get", nil, nil); resp.status != 400 || resp.errorBody(t).Message != "The external_user_id field is required." {
			t.Fatalf("no user: %d %s", resp.status, resp.body)
		}

		// Disconnect: scopes cleared, one ACCOUNT_LOGIN_REQUIRED event; again: no new event.
		if err := h.api.DevDisconnectAccount(ctx, "u1", 1); err != nil {
			t.Fatal(err)
		}
		one, _ = h.api.GetAccount(ctx, "u1", 1, "")
		if one.Connection.Status != "disconnected" || one.Connection.Scopes == nil || len(one.Connection.Scopes) != 0 {
			t.Fatalf("disconnected account = %+v", one.Connection)
		}
		if err := h.api.DevDisconnectAccount(ctx, "u1", 1); err != nil {
			t.Fatal(err)
		}
		evs := h.events(h.clientID)
		var loginRequired int
		for _, ev := range evs {
			if ev.Type == "ACCOUNT_LOGIN_REQUIRED" {
				loginRequired++
				var env map[string]any
				if err := json.Unmarshal(ev.Payload, &env); err != nil {
					t.Fatal(err)
				}
				m, _ := env["merchant"].(map[string]any)
				if env["event"] != "ACCOUNT_LOGIN_REQUIRED" || env["external_user_id"] != "u1" || m["name"] != "Amazon" || m["logo"] == nil ||
					env["id"] != ev.ID || env["timestamp"] == nil {
					t.Fatalf("envelope = %s", ev.Payload)
				}
			}
		}
		if loginRequired != 1 {
			t.Fatalf("%d ACCOUNT_LOGIN_REQUIRED events, want 1", loginRequired)
		}
		_ = h.api.DevDisconnectAccount(ctx, "u1", 3)
		if err := h.api.DevDisconnectAccount(ctx, "u1", 3); err == nil {
			t.Fatal("disconnecting an account that does not exist succeeded")
		}

		// Unlink: gone from the list; again: 404; linking again brings it back connected.
		if err := h.api.UnlinkAccount(ctx, "u1", 1); err != nil {
			t.Fatal(err)
		}
		accounts, _ = h.api.ListAccounts(ctx, "u1", "")
		if len(accounts) != 1 || accounts[0].Merchant.ID != 4 {
			t.Fatalf("after unlink: %+v", accounts)
		}
		err = h.api.UnlinkAccount(ctx, "u1", 1)
		expectError(t, err, 404, "MERCHANT_ACCOUNT_ERROR", "MERCHANT_ACCOUNT_NOT_FOUND")
		err = h.api.UnlinkAccount(ctx, "nobody", 1)
		expectError(t, err, 404, "USER_ERROR", "USER_NOT_FOUND")
		linkCard(t, h.api, "u1", 1)
		one, err = h.api.GetAccount(ctx, "u1", 1, "")
		// Disconnecting cleared update_card; only a new card switch grants it.
		if err != nil || one.Connection.Status != "connected" || len(one.Connection.Scopes) != 0 {
			t.Fatalf("relinked = %+v, %v", one, err)
		}
	})
}

func TestDevelopmentLink(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		cases := []struct {
			name    string
			body    map[string]any
			message string
		}{
			{"both", map[string]any{"external_user_id": "u", "merchant_id": 1, "card_switcher": true, "card_id": "c", "transactions": map[string]any{"new": true}}, "cannot be used together"},
			{"no card", map[string]any{"external_user_id": "u", "merchant_id": 1, "card_switcher": true}, "card_id"},
			{"neither", map[string]any{"external_user_id": "u", "merchant_id": 1}, "One of card_switcher"},
			{"no merchant", map[string]any{"external_user_id": "u", "card_switcher": true, "card_id": "c"}, "The merchant_id field is required."},
			{"unknown merchant", map[string]any{"external_user_id": "u", "merchant_id": 999999, "card_switcher": true, "card_id": "c"}, "merchant_id"},
			{"no user", map[string]any{"merchant_id": 1, "card_switcher": true, "card_id": "c"}, "The external_user_id field is required."},
			{"transactions without new", map[string]any{"external_user_id": "u", "merchant_id": 1, "transactions": map[string]any{}}, "transactions.new"},
			{"updated without new", map[string]any{"external_user_id": "u", "merchant_id": 1, "transactions": map[string]any{"new": false, "updated": true}}, "transactions.updated"},
			{"unknown transactions field", map[string]any{"external_user_id": "u", "merchant_id": 1, "transactions": map[string]any{"new": true, "old": true}}, "The transactions.old field is not allowed."},
		}
		for _, tc := range cases {
			resp := h.do("POST", "/development/accounts/link", tc.body, nil)
			if resp.status != 400 {
				t.Errorf("%s: status %d (%s)", tc.name, resp.status, resp.body)
				continue
			}
			if e := resp.errorBody(t); !strings.Contains(e.Message, tc.message) {
				t.Errorf("%s: message %q, want %q", tc.name, e.Message, tc.message)
			}
		}
		if _, err := h.api.ListAccounts(ctx, "u", ""); err == nil {
			t.Fatal("a rejected link created the user")
		}

		// AUTHENTICATED carries the card and echoes metadata; sequences increase per user.
		md := map[string]string{"order": "o-1"}
		if err := h.api.DevLinkAccount(ctx, &client.DevLinkRequest{ExternalUserID: "u", MerchantID: 6, CardSwitcher: true,
			CardID: ptr("card-9"), Metadata: md}); err != nil {
			t.Fatal(err)
		}
		linkCard(t, h.api, "u", 7)
		evs := h.events(h.clientID)
		if len(evs) != 2 {
			t.Fatalf("%d events", len(evs))
		}
		var env struct {
			Event    string `json:"event"`
			Sequence int64  `json:"sequence"`
			Merchant struct {
				ID int64 `json:"id"`
			} `json:"merchant"`
			Data struct {
				CardID   string            `json:"card_id"`
				SendCard bool              `json:"send_card"`
				Metadata map[string]string `json:"metadata"`
			} `json:"data"`
		}
		if err := json.Unmarshal(evs[1].Payload, &env); err != nil {
			t.Fatal(err)
		}
		if env.Event != "AUTHENTICATED" || env.Sequence != 1 || env.Merchant.ID != 6 || env.Data.CardID != "card-9" ||
			!env.Data.SendCard || env.Data.Metadata["order"] != "o-1" {
			t.Fatalf("AUTHENTICATED = %s", evs[1].Payload)
		}
		if evs[0].Sequence != 2 {
			t.Fatalf("second event sequence %d", evs[0].Sequence)
		}
	})
}

func TestProductionHasNoDevelopmentPaths(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		for _, path := range []string{"/development/accounts/link", "/development/accounts/disconnect", "/development/anything"} {
			for _, method := range []string{"POST", "GET"} {
				resp := h.do(method, path, map[string]any{"external_user_id": "u", "merchant_id": 1}, nil)
				if resp.status != 404 || resp.errorBody(t).Code != "NOT_FOUND" {
					t.Errorf("%s %s in production: %d %s", method, path, resp.status, resp.body)
				}
			}
		}
	}, production)
}

// Concurrent disconnects of one account record exactly one
// ACCOUNT_LOGIN_REQUIRED (PostgreSQL runs them truly in parallel).
func TestConcurrentDisconnectRecordsOneEvent(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		for round := 0; round < 3; round++ {
			linkCard(t, h.api, "u1", 1)
			var wg sync.WaitGroup
			errs := make(chan error, 40)
			for i := 0; i < 40; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs <- h.api.DevDisconnectAccount(ctx, "u1", 1)
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatalf("concurrent disconnect: %v", err)
				}
			}
		}
		var n int
		for _, ev := range h.events(h.clientID) {
			if ev.Type == "ACCOUNT_LOGIN_REQUIRED" {
				n++
			}
		}
		if n != 3 {
			t.Fatalf("%d ACCOUNT_LOGIN_REQUIRED events for 3 disconnections", n)
		}
	}, func(o *harnessOptions) { o.rateLimit = 0 })
}
