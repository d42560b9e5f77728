package api_test

import (
	"context"
	"testing"

	"github.com/hitchdev/hitch/client"
)

// Two developers using the same external_user_id never see each other's
// accounts, sessions or events.
func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		a := h.api
		bCreds := h.newDeveloper("development")
		b := h.clientFor(bCreds)

		linkCard(t, a, "shared-user", 1)
		linkCard(t, a, "shared-user", 4)
		sa, err := a.CreateSession(ctx, &client.CreateSessionRequest{Type: "link", ExternalUserID: "shared-user"})
		if err != nil {
			t.Fatal(err)
		}

		_, err = b.ListAccounts(ctx, "shared-user", "")
		expectError(t, err, 404, "USER_ERROR", "USER_NOT_FOUND")
		if _, err := b.CreateSession(ctx, &client.CreateSessionRequest{Type: "link", ExternalUserID: "shared-user"}); err != nil {
			t.Fatal(err)
		}
		accounts, err := b.ListAccounts(ctx, "shared-user", "")
		if err != nil || len(accounts) != 0 {
			t.Fatalf("developer b sees %+v, %v", accounts, err)
		}
		_, err = b.GetAccount(ctx, "shared-user", 1, "")
		expectError(t, err, 404, "MERCHANT_ACCOUNT_ERROR", "MERCHANT_ACCOUNT_NOT_FOUND")
		err = b.UnlinkAccount(ctx, "shared-user", 1)
		expectError(t, err, 404, "MERCHANT_ACCOUNT_ERROR", "MERCHANT_ACCOUNT_NOT_FOUND")
		err = b.DevDisconnectAccount(ctx, "shared-user", 4)
		expectError(t, err, 404, "MERCHANT_ACCOUNT_ERROR", "MERCHANT_ACCOUNT_NOT_FOUND")
		_, err = b.ExtendSession(ctx, sa.Session)
		expectError(t, err, 404, "SESSION_ERROR", "SESSION_NOT_FOUND")
		if evs := h.events(bCreds.ClientID); len(evs) != 0 {
			t.Fatalf("developer b has %d events", len(evs))
		}

		// Developer a's data is untouched by b's attempts.
		accounts, err = a.ListAccounts(ctx, "shared-user", "")
		if err != nil || len(accounts) != 2 || accounts[1].Connection.Status != "connected" {
			t.Fatalf("developer a's accounts = %+v, %v", accounts, err)
		}
		if _, err := a.ExtendSession(ctx, sa.Session); err != nil {
			t.Fatal(err)
		}
	})
}
