package storetest_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

func TestConnectors(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		if list, err := st.ConnectorList(ctx); err != nil || len(list) != 0 {
			t.Fatalf("list on an empty store = %v, %v", list, err)
		}
		if _, err := st.ConnectorGet(ctx, "conn_nope"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("get unknown: %v", err)
		}
		a := &store.Connector{ID: "conn_a", Name: "Amazon orders", SecretHash: bytes.Repeat([]byte{1}, 32), CreatedAt: t0}
		b := &store.Connector{ID: "conn_b", Name: "Netflix plans", SecretHash: bytes.Repeat([]byte{2}, 32), CreatedAt: t0.Add(time.Second)}
		for _, c := range []*store.Connector{b, a} { // inserted out of order: listing sorts
			if err := st.ConnectorInsert(ctx, c); err != nil {
				t.Fatalf("insert %s: %v", c.ID, err)
			}
		}
		if err := st.ConnectorInsert(ctx, &store.Connector{ID: "conn_a", Name: "dup", SecretHash: []byte{3}, CreatedAt: t0}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("duplicate id: got %v, want ErrConflict", err)
		}
		got, err := st.ConnectorGet(ctx, "conn_a")
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != a.ID || got.Name != a.Name || !bytes.Equal(got.SecretHash, a.SecretHash) ||
			!got.CreatedAt.Equal(t0) || got.CreatedAt.Location() != time.UTC || got.RevokedAt != nil {
			t.Fatalf("got %+v, want %+v", got, a)
		}

		revokedAt := t0.Add(time.Hour)
		if err := st.ConnectorRevoke(ctx, "conn_a", revokedAt); err != nil {
			t.Fatal(err)
		}
		// Revoking again keeps the first time.
		if err := st.ConnectorRevoke(ctx, "conn_a", revokedAt.Add(time.Hour)); err != nil {
			t.Fatalf("revoke again: %v", err)
		}
		if err := st.ConnectorRevoke(ctx, "conn_nope", revokedAt); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("revoke unknown: %v", err)
		}
		list, err := st.ConnectorList(ctx)
		if err != nil || len(list) != 2 {
			t.Fatalf("list = %v, %v", list, err)
		}
		if list[0].ID != "conn_a" || list[1].ID != "conn_b" {
			t.Fatalf("list order %s, %s", list[0].ID, list[1].ID)
		}
		if list[0].RevokedAt == nil || !list[0].RevokedAt.Equal(revokedAt) || list[0].RevokedAt.Location() != time.UTC {
			t.Fatalf("revoked_at = %v, want %v", list[0].RevokedAt, revokedAt)
		}
		if list[1].RevokedAt != nil {
			t.Fatalf("the other connector was revoked too: %v", list[1].RevokedAt)
		}

		// A revocation in a rolled-back transaction does not stick.
		rollback := errors.New("rollback")
		err = st.InTx(ctx, func(ex store.Executor) error {
			if err := ex.ConnectorRevoke(ctx, "conn_b", revokedAt); err != nil {
				return err
			}
			return rollback
		})
		if !errors.Is(err, rollback) {
			t.Fatalf("InTx = %v", err)
		}
		if c, err := st.ConnectorGet(ctx, "conn_b"); err != nil || c.RevokedAt != nil {
			t.Fatalf("after rollback: %+v, %v", c, err)
		}
	})
}
