package storetest_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/postgres"
	"github.com/hitchdev/hitch/internal/store/sqlite"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// Nodes starting together on an empty database migrate it once, without
// errors.
func TestConcurrentMigrate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// open returns a function opening one more unmigrated store on a fresh
	// database of the backend.
	openers := map[string]func(t *testing.T) func() (store.Store, error){
		"sqlite": func(t *testing.T) func() (store.Store, error) {
			path := filepath.Join(t.TempDir(), "hitch.db")
			return func() (store.Store, error) { return sqlite.Open(ctx, path) }
		},
		"postgres": func(t *testing.T) func() (store.Store, error) {
			url := storetest.RequirePostgres(t)
			schema := storetest.NewSchema(t, url)
			return func() (store.Store, error) {
				return postgres.Open(ctx, url, postgres.Options{Schema: schema, MaxConns: 2})
			}
		},
	}
	for _, backend := range storetest.Backends(t) {
		t.Run(backend.Name, func(t *testing.T) {
			t.Parallel()
			open := openers[backend.Name](t)
			const nodes = 4
			var wg sync.WaitGroup
			errs := make(chan error, nodes)
			for i := 0; i < nodes; i++ {
				st, err := open()
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs <- st.Migrate(ctx)
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatalf("concurrent migrate: %v", err)
				}
			}
		})
	}
}

func TestJWEKeyOneBootstrap(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		insert := func(kid string, bootstrap bool) error {
			_, err := st.JWEKeyInsert(ctx, &store.JWEKeyInsertParams{KID: kid, PublicJWK: json.RawMessage(`{}`),
				PrivateSealed: []byte("x"), Bootstrap: bootstrap, CreatedAt: t0})
			return err
		}
		if err := insert("first", true); err != nil {
			t.Fatal(err)
		}
		if err := insert("second", true); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("a second bootstrap key: %v", err)
		}
		if err := insert("rotated", false); err != nil {
			t.Fatalf("a rotated key: %v", err)
		}
	})
}

func TestMasterKeyCheck(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		first, err := st.MasterKeyCheck(ctx, []byte("one"))
		if err != nil || string(first) != "one" {
			t.Fatalf("first check = %q, %v", first, err)
		}
		again, err := st.MasterKeyCheck(ctx, []byte("two"))
		if err != nil || string(again) != "one" {
			t.Fatalf("the check value changed: %q, %v", again, err)
		}
	})
}
