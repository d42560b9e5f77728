package storetest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

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

// Concurrent transactions through two stores on one database (two
// processes or nodes) all commit, none losing another's update: on SQLite
// each store's writer waits for the other's (BEGIN IMMEDIATE under
// busy_timeout) instead of failing with SQLITE_BUSY.
func TestConcurrentTransactions(t *testing.T) {
	t.Parallel()
	storetest.ForEachPair(t, func(t *testing.T, a, b store.Store) {
		ctx := context.Background()
		newClient(t, a, "c")
		shared := newUser(t, a, "c", "shared")
		const writers = 32
		errs := make(chan error, writers)
		var wg sync.WaitGroup
		for i := range writers {
			st := a
			if i%2 == 1 {
				st = b
			}
			wg.Go(func() {
				errs <- st.InTx(ctx, func(ex store.Executor) error {
					if _, err := ex.ClientGetByID(ctx, "c"); err != nil {
						return err
					}
					if _, err := ex.UserGetOrCreate(ctx, &store.UserGetOrCreateParams{ID: uuid.NewString(), ClientID: "c",
						ExternalUserID: fmt.Sprint("user-", i), CreatedAt: t0}); err != nil {
						return err
					}
					_, err := ex.UserNextEventSequence(ctx, "c", shared.ID)
					return err
				})
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("a concurrent transaction failed: %v", err)
			}
		}
		for i := range writers {
			if _, err := b.UserGet(ctx, "c", fmt.Sprint("user-", i)); err != nil {
				t.Errorf("user-%d: %v", i, err)
			}
		}
		if seq, err := a.UserNextEventSequence(ctx, "c", shared.ID); err != nil || seq != writers+1 {
			t.Fatalf("the shared sequence is %d (%v) after %d increments and this one", seq, err, writers)
		}
	})
}

// A transaction that waits for another (SQLite's one writer, or a row
// PostgreSQL has locked) gives up when its context ends, leaving no write,
// and the store goes on.
func TestTransactionWaitEndsWithItsContext(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		newClient(t, st, "c")
		u := newUser(t, st, "c", "u")
		locked, release := make(chan struct{}), make(chan struct{})
		holder := make(chan error, 1)
		go func() {
			holder <- st.InTx(ctx, func(ex store.Executor) error {
				_, err := ex.UserNextEventSequence(ctx, "c", u.ID)
				close(locked)
				<-release
				return err
			})
		}()
		<-locked
		waiting, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		err := st.InTx(waiting, func(ex store.Executor) error {
			_, err := ex.UserNextEventSequence(waiting, "c", u.ID)
			return err
		})
		close(release)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("the waiting transaction = %v, want its deadline", err)
		}
		if err := <-holder; err != nil {
			t.Fatalf("the holding transaction: %v", err)
		}
		if seq, err := st.UserNextEventSequence(ctx, "c", u.ID); err != nil || seq != 2 {
			t.Fatalf("the sequence is %d (%v), want 2: the holder's increment and this one", seq, err)
		}
	})
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
