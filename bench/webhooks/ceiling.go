package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"

	"github.com/hitchdev/hitch/bench/internal/hitch"
	"github.com/hitchdev/hitch/bench/internal/proc"
	"github.com/hitchdev/hitch/internal/queue"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/postgres"
	"github.com/hitchdev/hitch/internal/store/sqlite"
)

const (
	// noopKind is the River kind of the ceiling's jobs.
	noopKind = "bench_noop"
	// insertBatch is how many jobs one insert transaction holds.
	insertBatch = 1000
)

// noopArgs is a job that does nothing, in the webhooks queue, so that it
// runs with the same worker count as deliveries.
type noopArgs struct{}

func (noopArgs) Kind() string { return noopKind }

func (noopArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: queue.QueueWebhooks} }

// noopWorker counts the jobs it has run and notes when the want-th ran.
type noopWorker struct {
	river.WorkerDefaults[noopArgs]
	want   int64
	worked atomic.Int64
	lastAt time.Time     // set before done is closed
	done   chan struct{} // closed when want jobs have run
}

func (w *noopWorker) Work(context.Context, *river.Job[noopArgs]) error {
	if w.worked.Add(1) == w.want {
		w.lastAt = time.Now()
		close(w.done)
	}
	return nil
}

// ceilingResult is the queue's own throughput on the store.
type ceilingResult struct {
	Jobs          int     `json:"jobs"`
	InsertSeconds float64 `json:"insert_seconds"`
	// WorkedSeconds runs from the client's start to the last job's Work;
	// CompletedSeconds to when none is pending any more.
	WorkedSeconds    float64 `json:"worked_seconds"`
	CompletedSeconds float64 `json:"completed_seconds"`
	// PerSec is Jobs / WorkedSeconds: deliveries are timed to the receipt,
	// which is inside Work too.
	PerSec float64 `json:"per_sec"`
}

// openStore opens a fresh store as cmd/hitch does: the store's migrations,
// then River's.
func openStore(ctx context.Context, dataDir, dbURL string) (store.Store, error) {
	var st store.Store
	var err error
	if dbURL == "" {
		st, err = sqlite.Open(ctx, filepath.Join(dataDir, "hitch.db"))
	} else {
		st, err = postgres.Open(ctx, dbURL, postgres.Options{})
	}
	if err != nil {
		return nil, err
	}
	if err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, err
	}
	if err := queue.Migrate(ctx, st); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// measureCeiling inserts n no-op jobs in the webhooks queue of a fresh
// store, then starts a River client with Hitch's queue settings and times
// it working them all.
func measureCeiling(ctx context.Context, o options, launcher *hitch.Launcher) (ceilingResult, error) {
	res := ceilingResult{Jobs: o.events}
	dataDir := filepath.Join(launcher.Work, "data-ceiling")
	if err := os.Mkdir(dataDir, 0o700); err != nil {
		return res, err
	}
	dbURL, err := launcher.FreshDatabase(ctx)
	if err != nil {
		return res, err
	}
	st, err := openStore(ctx, dataDir, dbURL)
	if err != nil {
		return res, err
	}
	defer st.Close()

	w := &noopWorker{want: int64(o.events), done: make(chan struct{})}
	workers := river.NewWorkers()
	river.AddWorker(workers, w)
	q, err := queue.New(st, queue.Config{Workers: workers, WebhookWorkers: o.workers})
	if err != nil {
		return res, err
	}

	insertStart := time.Now()
	for inserted := 0; inserted < o.events; inserted += insertBatch {
		params := make([]river.InsertManyParams, min(insertBatch, o.events-inserted))
		for i := range params {
			params[i].Args = noopArgs{}
		}
		if err := st.InTx(ctx, func(ex store.Executor) error { return q.InsertTx(ctx, ex, params) }); err != nil {
			return res, err
		}
	}
	res.InsertSeconds = time.Since(insertStart).Seconds()
	if n, _, err := q.Pending(ctx, noopKind); err != nil {
		return res, err
	} else if n != int64(o.events) {
		return res, fmt.Errorf("queue ceiling: %d jobs pending after inserting %d", n, o.events)
	}

	start := time.Now()
	if err := q.Start(ctx); err != nil {
		return res, err
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), proc.StopTimeout)
		defer cancel()
		q.Stop(stopCtx)
	}()
	timeout := drainTimeout(o.events)
	select {
	case <-w.done:
	case <-ctx.Done():
		return res, ctx.Err()
	case <-time.After(timeout):
		return res, fmt.Errorf("queue ceiling: %d of %d jobs worked after %v", w.worked.Load(), o.events, timeout)
	}
	res.WorkedSeconds = w.lastAt.Sub(start).Seconds()
	res.PerSec = float64(o.events) / res.WorkedSeconds

	// River marks jobs completed in batches after Work returns.
	for {
		n, _, err := q.Pending(ctx, noopKind)
		if err != nil {
			return res, err
		}
		if n == 0 {
			break
		}
		if time.Since(start) > timeout {
			return res, fmt.Errorf("queue ceiling: %d jobs still pending after %v", n, timeout)
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	res.CompletedSeconds = time.Since(start).Seconds()
	return res, nil
}

// drainTimeout bounds the wait for n jobs or deliveries: a minute, plus a
// second per 200.
func drainTimeout(n int) time.Duration {
	return time.Minute + time.Duration(n/200)*time.Second
}
