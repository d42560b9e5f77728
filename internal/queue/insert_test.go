package queue

import (
	"context"
	"testing"

	"github.com/riverqueue/river"

	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// Jobs inserted in a transaction are there once it commits, together with
// the unique jobs, which are inserted at once: two with one unique key in
// one transaction make one job, on both stores.
func TestInsertTxDeferredAndUnique(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		if err := Migrate(ctx, st); err != nil {
			t.Fatal(err)
		}
		q, err := New(st, Config{})
		if err != nil {
			t.Fatal(err)
		}
		plain := river.InsertManyParams{Args: benchArgs{ClientID: "c", EventID: "plain"}}
		once := river.InsertManyParams{Args: benchArgs{ClientID: "c", EventID: "once"},
			InsertOpts: &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}}}
		if !unique(once) || unique(plain) {
			t.Fatalf("unique(once) = %v, unique(plain) = %v", unique(once), unique(plain))
		}
		err = st.InTx(ctx, func(ex store.Executor) error {
			for _, p := range [][]river.InsertManyParams{{plain, once}, {once}, {plain}} {
				if err := q.InsertTx(ctx, ex, p); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		n, _, err := q.Pending(ctx, benchArgs{}.Kind())
		if err != nil {
			t.Fatal(err)
		}
		if n != 3 {
			t.Errorf("%d jobs pending, want 3 (two plain, one unique)", n)
		}
	})
}
