package storetest_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// A session's failed logins are reserved up to the limit, exactly under
// concurrency, released again, and counted per tenant.
func TestSessionLoginFailures(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		newClient(t, st, "a")
		newClient(t, st, "b")
		u := newUser(t, st, "a", "user-1")
		s, err := st.SessionInsert(ctx, &store.SessionInsertParams{ID: uuid.NewString(), ClientID: "a", UserID: u.ID,
			Type: "link", TokenHash: []byte("hash-1"), CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		const max = 5
		var wg sync.WaitGroup
		var reserved atomic.Int32
		for range 3 * max {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := st.SessionLoginFailureReserve(ctx, "a", s.ID, max)
				if err != nil {
					t.Error(err)
				}
				if ok {
					reserved.Add(1)
				}
			}()
		}
		wg.Wait()
		if n := reserved.Load(); n != max {
			t.Fatalf("%d concurrent reservations, want %d", n, max)
		}
		if err := st.SessionLoginFailureRelease(ctx, "b", s.ID); err != nil {
			t.Fatal(err)
		}
		if ok, _ := st.SessionLoginFailureReserve(ctx, "a", s.ID, max); ok {
			t.Fatal("another tenant released a failure")
		}
		if ok, _ := st.SessionLoginFailureReserve(ctx, "b", s.ID, max); ok {
			t.Fatal("another tenant reserved a failure")
		}
		if err := st.SessionLoginFailureRelease(ctx, "a", s.ID); err != nil {
			t.Fatal(err)
		}
		if ok, err := st.SessionLoginFailureReserve(ctx, "a", s.ID, max); !ok || err != nil {
			t.Fatalf("after a release: %v %v", ok, err)
		}
		// Releasing never goes below zero.
		other, err := st.SessionInsert(ctx, &store.SessionInsertParams{ID: uuid.NewString(), ClientID: "a", UserID: u.ID,
			Type: "link", TokenHash: []byte("hash-2"), CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if err := st.SessionLoginFailureRelease(ctx, "a", other.ID); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 2 {
			if ok, _ := st.SessionLoginFailureReserve(ctx, "a", other.ID, 1); ok != (i == 0) {
				t.Fatalf("reservation %d with max 1: %v", i, ok)
			}
		}
	})
}
