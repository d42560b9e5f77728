package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/sqlite"
	"github.com/hitchdev/hitch/internal/store/sqlstore"
)

// openSQLite opens a migrated store whose groups are not cut short by
// time (a slow machine must not split the groups the tests build).
func openSQLite(t *testing.T) *sqlstore.DB {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hitch.db"))
	if err != nil {
		t.Fatal(err)
	}
	sqlstore.SetGroupTime(db, time.Hour)
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return db
}

func insertClient(ctx context.Context, ex store.Executor, id string) error {
	_, err := ex.ClientInsert(ctx, &store.ClientInsertParams{ID: id, Name: id, Environment: "development", CreatedAt: time.Now()})
	return err
}

// waitFor polls cond until it holds, or fails the test after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// Calls that queue behind a transaction commit together in one, and each
// call that fails (an error, a panic, runtime.Goexit, a context ended
// before its turn) leaves no write behind and takes no other call's with
// it.
func TestGroupCommitIsolatesEachCall(t *testing.T) {
	t.Parallel()
	db := openSQLite(t)
	ctx := context.Background()

	// "a" holds the writer until the others are queued behind it.
	release, waitA := holdWriter(t, db, func(ex store.Executor) error { return insertClient(ctx, ex, "a") })

	boom := errors.New("boom")
	canceled, cancel := context.WithCancel(ctx)
	results := map[string]chan any{}
	var wg sync.WaitGroup
	call := func(name string, callCtx context.Context, fn func(store.Executor) error) {
		out := make(chan any, 1)
		results[name] = out
		wg.Go(func() {
			exited := true
			defer func() {
				if p := recover(); p != nil {
					out <- p
				} else if exited {
					out <- "goexit"
				}
			}()
			err := db.InTx(callCtx, fn)
			exited = false
			out <- err
		})
		// Queue the calls in this order.
		want := len(results)
		waitFor(t, name+" queued", func() bool { return sqlstore.WaitingCalls(db) == want })
	}
	call("b", ctx, func(ex store.Executor) error { return insertClient(ctx, ex, "b") })
	call("c", ctx, func(ex store.Executor) error {
		if err := insertClient(ctx, ex, "c"); err != nil {
			return err
		}
		return boom
	})
	call("d", ctx, func(ex store.Executor) error {
		if err := insertClient(ctx, ex, "d"); err != nil {
			return err
		}
		panic("d panics")
	})
	call("e", ctx, func(ex store.Executor) error {
		if err := insertClient(ctx, ex, "e"); err != nil {
			return err
		}
		runtime.Goexit()
		return nil
	})
	call("f", canceled, func(ex store.Executor) error {
		t.Error("f ran after its context ended")
		return insertClient(ctx, ex, "f")
	})
	call("g", ctx, func(ex store.Executor) error {
		// The group's earlier writes are visible to later calls.
		if _, err := ex.ClientGetByID(ctx, "b"); err != nil {
			return err
		}
		return insertClient(ctx, ex, "g")
	})
	cancel()
	close(release)
	if err := waitA(); err != nil {
		t.Fatalf("a: %v", err)
	}
	wg.Wait()

	want := map[string]any{"b": nil, "c": boom, "d": "d panics", "e": "goexit", "f": context.Canceled, "g": nil}
	for name, w := range want {
		got := <-results[name]
		if err, ok := w.(error); ok {
			if gotErr, _ := got.(error); !errors.Is(gotErr, err) {
				t.Errorf("%s: got %v, want %v", name, got, w)
			}
		} else if got != w {
			t.Errorf("%s: got %v, want %v", name, got, w)
		}
	}
	for _, id := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		_, err := db.ClientGetByID(ctx, id)
		committed := id == "a" || id == "b" || id == "g"
		if committed && err != nil {
			t.Errorf("%s was not committed: %v", id, err)
		}
		if !committed && !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s's write survived its failure (err %v)", id, err)
		}
	}
	// a alone, then b to g in one transaction.
	if n := sqlstore.GroupCommits(db); n != 2 {
		t.Errorf("%d commits, want 2", n)
	}
}

// Close waits for the calls already queued, and refuses later ones.
func TestGroupCloseRunsQueuedCalls(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hitch.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	release, waitA := holdWriter(t, db, func(ex store.Executor) error { return insertClient(ctx, ex, "a") })
	errs := make(chan error, 2)
	go func() { errs <- waitA() }()
	go func() { errs <- db.InTx(ctx, func(ex store.Executor) error { return insertClient(ctx, ex, "b") }) }()
	waitFor(t, "b queued", func() bool { return sqlstore.WaitingCalls(db) == 1 })
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a call was running", err)
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("a queued call failed: %v", err)
		}
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := db.InTx(ctx, func(store.Executor) error { return nil }); err == nil {
		t.Fatal("InTx after Close succeeded")
	}
}

// beforeCommitter is sqlstore.TxExecutor's BeforeCommit.
type beforeCommitter interface {
	BeforeCommit(key, item any, flush func(ctx context.Context, rawTx any, items []any) error)
}

// Work left for before the commit runs once per key for the whole group,
// with the items of the calls whose writes stand, in order, inside the
// transaction; a flush that fails fails every call of the group.
func TestGroupFlushesDeferredWorkOnce(t *testing.T) {
	t.Parallel()
	db := openSQLite(t)
	ctx := context.Background()

	var mu sync.Mutex
	var flushes [][]any
	flush := func(ctx context.Context, rawTx any, items []any) error {
		mu.Lock()
		flushes = append(flushes, items)
		id := fmt.Sprintf("flush-%d", len(flushes))
		mu.Unlock()
		if _, err := rawTx.(*sql.Tx).ExecContext(ctx, `INSERT INTO clients (id, name, environment, created_at)
			VALUES ($1, 'flushed', 'development', 0)`, id); err != nil {
			return err
		}
		if items[0] == "poison" {
			return errors.New("flush failed")
		}
		return nil
	}
	// runGroup runs calls named names behind a held call, so that they
	// commit as one group, and returns each call's result.
	runGroup := func(names ...string) map[string]error {
		release, waitHold := holdWriter(t, db, nil)
		results := make(map[string]chan error)
		for i, name := range names {
			out := make(chan error, 1)
			results[name] = out
			go func() {
				out <- db.InTx(ctx, func(ex store.Executor) error {
					ex.(beforeCommitter).BeforeCommit("key", name, flush)
					if err := insertClient(ctx, ex, name); err != nil {
						return err
					}
					if name == "fails" {
						return errors.New("call failed")
					}
					return nil
				})
			}()
			waitFor(t, name+" queued", func() bool { return sqlstore.WaitingCalls(db) == i+1 })
		}
		close(release)
		if err := waitHold(); err != nil {
			t.Fatal(err)
		}
		got := map[string]error{}
		for name, out := range results {
			got[name] = <-out
		}
		return got
	}

	got := runGroup("x", "fails", "y")
	if got["x"] != nil || got["y"] != nil || got["fails"] == nil {
		t.Fatalf("results %v: want x and y to commit, fails to fail", got)
	}
	if len(flushes) != 1 || fmt.Sprint(flushes[0]) != "[x y]" {
		t.Fatalf("flushes %v, want one with [x y]", flushes)
	}
	for id, want := range map[string]bool{"x": true, "y": true, "flush-1": true, "fails": false} {
		if _, err := db.ClientGetByID(ctx, id); (err == nil) != want {
			t.Errorf("client %s committed = %v, want %v", id, err == nil, want)
		}
	}

	got = runGroup("poison", "z")
	for name, err := range got {
		if err == nil || !strings.Contains(err.Error(), "flush failed") {
			t.Errorf("%s: %v, want the flush's error", name, err)
		}
	}
	for _, id := range []string{"poison", "z", "flush-2"} {
		if _, err := db.ClientGetByID(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("client %s survived the failed flush (err %v)", id, err)
		}
	}
	var n int
	if err := db.InTx(ctx, func(ex store.Executor) error {
		return ex.(interface{ Raw() any }).Raw().(*sql.Tx).QueryRowContext(ctx,
			`SELECT count(*) FROM clients WHERE name = 'flushed'`).Scan(&n)
	}); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("%d flushes' writes committed, want 1 (the failed flush's rolled back)", n)
	}
}

// holdWriter starts a call that holds the group's turn until release is
// closed, then runs then (if not nil); it returns once the call holds its
// turn, and wait returns the call's result.
func holdWriter(t *testing.T, db *sqlstore.DB, then func(store.Executor) error) (release chan struct{}, wait func() error) {
	t.Helper()
	release, started := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- db.InTx(context.Background(), func(ex store.Executor) error {
			close(started)
			<-release
			if then == nil {
				return nil
			}
			return then(ex)
		})
	}()
	<-started
	return release, func() error { return <-done }
}

// A call whose context ends while it waits for its turn returns at once,
// and its function never runs.
func TestGroupCallGivesUpWhenItsContextEnds(t *testing.T) {
	t.Parallel()
	db := openSQLite(t)
	release, wait := holdWriter(t, db, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := db.InTx(ctx, func(ex store.Executor) error {
		t.Error("the function ran after its context ended")
		return nil
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("InTx = %v, want the deadline", err)
	}
	close(release)
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	// The store goes on.
	if err := db.InTx(context.Background(), func(ex store.Executor) error {
		return insertClient(context.Background(), ex, "after")
	}); err != nil {
		t.Fatal(err)
	}
}

// When a call loses the group's transaction (here it rolls it back
// through the native transaction), the calls whose writes it held are told
// so, and the calls after it commit in a new transaction.
func TestGroupLostTransaction(t *testing.T) {
	t.Parallel()
	db := openSQLite(t)
	ctx := context.Background()
	release, wait := holdWriter(t, db, nil)
	fns := []struct {
		name string
		fn   func(ex store.Executor) error
	}{
		{"before", func(ex store.Executor) error { return insertClient(ctx, ex, "before") }},
		{"loses", func(ex store.Executor) error {
			_, err := ex.(interface{ Raw() any }).Raw().(*sql.Tx).Exec("ROLLBACK")
			return err
		}},
		{"after", func(ex store.Executor) error { return insertClient(ctx, ex, "after") }},
	}
	results := map[string]chan error{}
	for i, f := range fns {
		out := make(chan error, 1)
		results[f.name] = out
		go func() { out <- db.InTx(ctx, f.fn) }()
		waitFor(t, f.name+" queued", func() bool { return sqlstore.WaitingCalls(db) == i+1 })
	}
	close(release)
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	for name, wantErr := range map[string]bool{"before": true, "loses": true, "after": false} {
		if err := <-results[name]; (err != nil) != wantErr {
			t.Errorf("%s: %v, want an error: %v", name, err, wantErr)
		}
	}
	if _, err := db.ClientGetByID(ctx, "before"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the lost transaction's write is there (err %v)", err)
	}
	if _, err := db.ClientGetByID(ctx, "after"); err != nil {
		t.Errorf("the call after the lost transaction: %v", err)
	}
}

// A group hands out no turn once it has run for its time: the calls
// queued behind a slow one commit in the next transaction, so that the
// slow call holds back only the commit of the calls before it.
func TestGroupTimeBoundsATransaction(t *testing.T) {
	t.Parallel()
	db := openSQLite(t)
	sqlstore.SetGroupTime(db, 10*time.Millisecond)
	ctx := context.Background()
	release, wait := holdWriter(t, db, nil)
	errs := make(chan error, 3)
	for i, name := range []string{"slow", "b", "c"} {
		go func() {
			errs <- db.InTx(ctx, func(ex store.Executor) error {
				if name == "slow" {
					time.Sleep(50 * time.Millisecond)
				}
				return insertClient(ctx, ex, name)
			})
		}()
		waitFor(t, name+" queued", func() bool { return sqlstore.WaitingCalls(db) == i+1 })
	}
	close(release)
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// The held call, then slow alone, then b and c (together, or apart on
	// a slow machine).
	if n := sqlstore.GroupCommits(db); n < 3 {
		t.Errorf("%d commits: the calls after the slow one shared its transaction", n)
	}
}
