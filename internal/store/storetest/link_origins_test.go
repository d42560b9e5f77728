package storetest_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// A developer's allowed origins are replaced whole, read back sorted,
// removed by an empty list, rolled back with their transaction, kept per
// tenant, and never merged by concurrent replacements.
func TestLinkOrigins(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		newClient(t, st, "a")
		newClient(t, st, "b")
		list := func(clientID string) []string {
			t.Helper()
			got, err := st.LinkOriginList(ctx, clientID)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		if got := list("a"); got == nil || len(got) != 0 {
			t.Fatalf("no origins yet: %#v", got)
		}
		if err := st.LinkOriginSet(ctx, "a", []string{"https://b.example", "https://a.example:8443"}, t0); err != nil {
			t.Fatal(err)
		}
		if got := list("a"); !slices.Equal(got, []string{"https://a.example:8443", "https://b.example"}) {
			t.Fatalf("after a set: %q", got)
		}
		if got := list("b"); len(got) != 0 {
			t.Fatalf("another tenant sees %q", got)
		}
		if err := st.LinkOriginSet(ctx, "b", []string{"http://localhost:3000"}, t0); err != nil {
			t.Fatal(err)
		}
		if err := st.LinkOriginSet(ctx, "a", []string{"https://c.example"}, t0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if got := list("a"); !slices.Equal(got, []string{"https://c.example"}) {
			t.Fatalf("after a replacement: %q", got)
		}
		if got := list("b"); !slices.Equal(got, []string{"http://localhost:3000"}) {
			t.Fatalf("the other tenant's after a replacement: %q", got)
		}

		rollback := errors.New("roll back")
		err := st.InTx(ctx, func(ex store.Executor) error {
			if err := ex.LinkOriginSet(ctx, "a", []string{"https://d.example"}, t0); err != nil {
				return err
			}
			return rollback
		})
		if !errors.Is(err, rollback) {
			t.Fatal(err)
		}
		if got := list("a"); !slices.Equal(got, []string{"https://c.example"}) {
			t.Fatalf("after a rolled back set: %q", got)
		}

		if err := st.LinkOriginSet(ctx, "a", nil, t0); err != nil {
			t.Fatal(err)
		}
		if got := list("a"); len(got) != 0 {
			t.Fatalf("after an empty set: %q", got)
		}
		if err := st.LinkOriginSet(ctx, "a", nil, t0); err != nil { // nothing to remove
			t.Fatal(err)
		}

		// Concurrent replacements: one wins whole.
		lists := [][]string{{"https://x1.example", "https://x2.example"}, {"https://y1.example"}, {"https://z1.example", "https://z2.example", "https://z3.example"}}
		var wg sync.WaitGroup
		for _, l := range lists {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := st.LinkOriginSet(ctx, "a", l, t0); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		got := list("a")
		if !slices.ContainsFunc(lists, func(l []string) bool { return slices.Equal(l, got) }) {
			t.Fatalf("after concurrent sets: %q, want one of %q", got, lists)
		}
	})
}
