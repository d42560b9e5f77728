package queue_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/hitchdev/hitch/internal/queue"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

type groupArgs struct{ N int }

func (groupArgs) Kind() string { return "test_group_complete" }

// groupWorker gathers its jobs until it has them all, completes them
// together with CompleteManyTx in one transaction, and then fails every
// run: River's own completion cannot hide a CompleteManyTx that did
// nothing, since a failed run left running is retried. With rollback, the
// transaction is rolled back after CompleteManyTx, which must undo it.
type groupWorker struct {
	river.WorkerDefaults[groupArgs]
	st       store.Store
	total    int
	rollback bool
	runs     atomic.Int64

	mu      sync.Mutex
	waiting []int64
	done    chan struct{}
	once    sync.Once
}

var errRollback = errors.New("rolled back")

func (w *groupWorker) Work(ctx context.Context, job *river.Job[groupArgs]) error {
	w.runs.Add(1)
	w.mu.Lock()
	w.waiting = append(w.waiting, job.ID)
	if len(w.waiting) < w.total {
		w.mu.Unlock()
		select {
		case <-w.done:
		case <-ctx.Done():
		}
		return errors.New("failed after its group was recorded")
	}
	ids := slices.Clone(w.waiting)
	w.mu.Unlock()
	defer w.once.Do(func() { close(w.done) })
	err := w.st.InTx(ctx, func(ex store.Executor) error {
		if err := queue.CompleteManyTx(ctx, ex, ids); err != nil {
			return err
		}
		if w.rollback {
			return errRollback
		}
		return nil
	})
	if err != nil && !errors.Is(err, errRollback) {
		return err
	}
	return errors.New("failed after recording its group")
}

// states returns the states of the test's jobs, read in a transaction of
// st's own.
func states(t *testing.T, st store.Store) []string {
	t.Helper()
	var out []string
	err := st.InTx(context.Background(), func(ex store.Executor) error {
		const q = `SELECT state FROM river_job WHERE kind = $1 ORDER BY id`
		switch tx := ex.(interface{ Raw() any }).Raw().(type) {
		case *sql.Tx:
			rows, err := tx.Query(q, groupArgs{}.Kind())
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var s string
				if err := rows.Scan(&s); err != nil {
					return err
				}
				out = append(out, s)
			}
			return rows.Err()
		case pgx.Tx:
			rows, err := tx.Query(context.Background(), q, groupArgs{}.Kind())
			if err != nil {
				return err
			}
			out, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		default:
			return fmt.Errorf("transaction %T", tx)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// CompleteManyTx completes running jobs in the caller's transaction, on
// both stores: committed, the jobs stay completed whatever their runs
// return and are not run again; rolled back, they are retried.
func TestCompleteManyTx(t *testing.T) {
	t.Parallel()
	for _, rollback := range []bool{false, true} {
		t.Run(fmt.Sprintf("rollback=%v", rollback), func(t *testing.T) {
			t.Parallel()
			storetest.ForEach(t, func(t *testing.T, st store.Store) {
				ctx := context.Background()
				if err := queue.Migrate(ctx, st); err != nil {
					t.Fatal(err)
				}
				const jobs = 3
				w := &groupWorker{st: st, total: jobs, rollback: rollback, done: make(chan struct{})}
				workers := river.NewWorkers()
				river.AddWorker(workers, w)
				q, err := queue.New(st, queue.Config{Workers: workers, FetchPollInterval: 20 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				params := make([]river.InsertManyParams, jobs)
				for i := range params {
					params[i] = river.InsertManyParams{Args: groupArgs{N: i}}
				}
				if err := st.InTx(ctx, func(ex store.Executor) error { return q.InsertTx(ctx, ex, params) }); err != nil {
					t.Fatal(err)
				}
				if err := q.Start(ctx); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					stopCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					_ = q.Stop(stopCtx)
				})
				// Every run has ended once no job is running.
				want := "completed"
				if rollback {
					want = "retryable"
				}
				deadline := time.Now().Add(10 * time.Second)
				for {
					got := states(t, st)
					if len(got) == jobs && !slices.Contains(got, "running") && !slices.Contains(got, "available") {
						for _, s := range got {
							if s != want {
								t.Fatalf("job states %v, want every one %s", got, want)
							}
						}
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("job states %v after 10 s", got)
					}
					time.Sleep(20 * time.Millisecond)
				}
				if !rollback && w.runs.Load() != jobs {
					t.Fatalf("%d runs, want %d", w.runs.Load(), jobs)
				}
			})
		})
	}
}
