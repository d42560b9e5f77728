package card_test

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hitchdev/hitch/internal/card"
	"github.com/hitchdev/hitch/internal/seal"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// Several nodes asking for the first key at once agree on one key.
func TestConcurrentFirstKey(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		box, err := seal.New(bytes.Repeat([]byte{3}, seal.KeySize))
		if err != nil {
			t.Fatal(err)
		}
		const nodes = 4
		kids := make(chan string, nodes)
		var wg sync.WaitGroup
		for i := 0; i < nodes; i++ {
			keys := card.NewKeys(st, box, time.Now) // one per node: no shared mutex
			wg.Add(1)
			go func() {
				defer wg.Done()
				k, err := keys.Current(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				kids <- k.Kid
			}()
		}
		wg.Wait()
		close(kids)
		first := ""
		for kid := range kids {
			if first == "" {
				first = kid
			} else if kid != first {
				t.Fatalf("nodes serve different keys: %s and %s", first, kid)
			}
		}
		usable, err := st.JWEKeyListUsable(context.Background(), time.Now())
		if err != nil || len(usable) != 1 {
			t.Fatalf("%d keys stored, want 1 (%v)", len(usable), err)
		}
	})
}
