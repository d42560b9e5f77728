package queue_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/hitchdev/hitch/internal/queue"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

type groupArgs struct{ N int }

func (groupArgs) Kind() string { return "test_group_complete" }

// groupWorker gathers its jobs until it has them all, completes them
// together in one transaction with CompleteManyTx, and then fails every
// run: River's own completion cannot hide a CompleteManyTx that did
// nothing, since a failed run left running would be retried.
type groupWorker struct {
	river.WorkerDefaults[groupArgs]
	st    store.Store
	total int
	runs  atomic.Int64

	mu      sync.Mutex
	waiting []int64
	done    chan error
}

func (w *groupWorker) Work(ctx context.Context, job *river.Job[groupArgs]) error {
	w.runs.Add(1)
	w.mu.Lock()
	w.waiting = append(w.waiting, job.ID)
	if len(w.waiting) < w.total {
		w.mu.Unlock()
		<-w.done
		return errors.New("failed after its group completed it")
	}
	ids := w.waiting
	w.mu.Unlock()
	err := w.st.InTx(ctx, func(ex store.Executor) error { return queue.CompleteManyTx(ctx, ex, ids) })
	close(w.done)
	if err != nil {
		return err
	}
	return errors.New("failed after completing its group")
}

// CompleteManyTx completes running jobs in the caller's transaction, on
// both stores: once it has, the jobs stay completed and are not run again,
// whatever their runs return.
func TestCompleteManyTx(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		if err := queue.Migrate(ctx, st); err != nil {
			t.Fatal(err)
		}
		const jobs = 3
		w := &groupWorker{st: st, total: jobs, done: make(chan error)}
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
		t.Cleanup(func() { _ = q.Stop(context.Background()) })
		deadline := time.Now().Add(10 * time.Second)
		for {
			n, _, err := q.Pending(ctx, groupArgs{}.Kind())
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d jobs still pending: the group's completion did not hold", n)
			}
			time.Sleep(20 * time.Millisecond)
		}
		// A failed run that was still running would be retried after about a
		// second.
		time.Sleep(1500 * time.Millisecond)
		if n, _, _ := q.Pending(ctx, groupArgs{}.Kind()); n != 0 || w.runs.Load() != jobs {
			t.Fatalf("%d pending and %d runs after the group completed, want 0 and %d", n, w.runs.Load(), jobs)
		}
	})
}
