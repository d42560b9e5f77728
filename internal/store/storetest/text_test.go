package storetest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// A string argument holding a NUL or invalid UTF-8 is refused with
// ErrInvalidText by both stores, in reads and writes, on the pool and in a
// transaction: PostgreSQL failed with "invalid byte sequence for encoding
// UTF8" where SQLite found nothing or stored the bytes.
func TestInvalidTextIsRefusedAlike(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		newClient(t, st, "client-a")
		for _, bad := range []string{"a\x00b", "\xff", "ok\xc3"} {
			checks := map[string]error{}
			_, checks["get"] = st.ClientGetByID(ctx, bad)
			_, checks["list"] = st.UserList(ctx, &store.UserListParams{ClientID: "client-a", Prefix: bad, Limit: 10})
			_, checks["insert"] = st.ClientInsert(ctx, &store.ClientInsertParams{ID: "client-b", Name: bad, Environment: "development", CreatedAt: t0})
			checks["in a transaction"] = st.InTx(ctx, func(ex store.Executor) error {
				_, err := ex.UserGetOrCreate(ctx, &store.UserGetOrCreateParams{ID: "00000000-0000-4000-8000-000000000001",
					ClientID: "client-a", ExternalUserID: bad, CreatedAt: t0})
				return err
			})
			for what, err := range checks {
				if !errors.Is(err, store.ErrInvalidText) {
					t.Errorf("%s with %q: %v, want ErrInvalidText", what, bad, err)
				}
			}
		}
		// Nothing was written, and text that is UTF-8 is stored as it was.
		if _, err := st.ClientGetByID(ctx, "client-b"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("client-b: %v, want not found", err)
		}
		u, err := st.UserGetOrCreate(ctx, &store.UserGetOrCreateParams{ID: "00000000-0000-4000-8000-000000000002",
			ClientID: "client-a", ExternalUserID: "é\u2028\uFFFD", CreatedAt: t0})
		if err != nil || u.ExternalUserID != "é\u2028\uFFFD" {
			t.Errorf("UTF-8 user: %+v %v", u, err)
		}
	})
}
