package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"

	"github.com/hitchdev/hitch/bench/internal/hitch"
	"github.com/hitchdev/hitch/bench/internal/proc"
	"github.com/hitchdev/hitch/internal/event"
	"github.com/hitchdev/hitch/internal/netguard"
	"github.com/hitchdev/hitch/internal/queue"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/postgres"
	"github.com/hitchdev/hitch/internal/store/sqlite"
)

const (
	// noopKind is the River kind of the ceiling's jobs.
	noopKind = "bench_noop"
	// postKind is the River kind of the floor's jobs.
	postKind = "bench_post"
	// insertBatch is how many jobs one insert transaction holds.
	insertBatch = 1000
)

// noopArgs is a job that does nothing, in the webhooks queue, so that it
// runs with the same worker count as deliveries.
type noopArgs struct{}

func (noopArgs) Kind() string { return noopKind }

func (noopArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: queue.QueueWebhooks} }

// postArgs is a job that only POSTs an envelope to the receiver. Its
// arguments have the shape of a delivery's (three ids), so that River
// stores, indexes and decodes as much for it as for a delivery.
type postArgs struct {
	ClientID   string `json:"client_id"`
	EventID    string `json:"event_id"`
	EndpointID string `json:"endpoint_id"`
}

func (postArgs) Kind() string { return postKind }

func (postArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: queue.QueueWebhooks} }

// jobCounter counts the jobs a worker has run and notes when the want-th
// ran.
type jobCounter struct {
	want   int64
	worked atomic.Int64
	lastAt time.Time     // set before done is closed
	done   chan struct{} // closed when want jobs have run
}

func newJobCounter(want int) *jobCounter {
	return &jobCounter{want: int64(want), done: make(chan struct{})}
}

func (c *jobCounter) count() {
	if c.worked.Add(1) == c.want {
		c.lastAt = time.Now()
		close(c.done)
	}
}

type noopWorker struct {
	river.WorkerDefaults[noopArgs]
	*jobCounter
}

func (w *noopWorker) Work(context.Context, *river.Job[noopArgs]) error {
	w.count()
	return nil
}

// postWorker POSTs body to url with Hitch's delivery client and its
// job's event id as the webhook-id, and counts the job once the receiver
// has answered 200: a delivery without Hitch's own work (reading the
// event, signing, recording the attempt).
type postWorker struct {
	river.WorkerDefaults[postArgs]
	*jobCounter
	client *http.Client
	url    string
	body   []byte
}

func (w *postWorker) Work(ctx context.Context, job *river.Job[postArgs]) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(w.body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("webhook-id", job.Args.EventID)
	resp, err := w.client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("receiver answered %d", resp.StatusCode)
	}
	w.count()
	return nil
}

// ceilingResult is the queue's own throughput on the store, or that of
// jobs that only POST.
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

// measureCeiling times n no-op jobs: the queue's own ceiling.
func measureCeiling(ctx context.Context, o options, launcher *hitch.Launcher) (ceilingResult, error) {
	c := newJobCounter(o.events)
	workers := river.NewWorkers()
	river.AddWorker(workers, &noopWorker{jobCounter: c})
	return timeJobs(ctx, o, launcher, "ceiling", workers, noopKind, c, func() river.JobArgs { return noopArgs{} })
}

// measureFloor times n jobs that each POST one envelope to a receiver in a
// process of its own, as deliveries do. No delivery can go faster on this
// machine and store: it is the bound on the share of the ceiling that
// deliveries can reach, whatever Hitch does around the POST.
func measureFloor(ctx context.Context, o options, launcher *hitch.Launcher) (ceilingResult, error) {
	rcv, err := startReceiverProcess(ctx, launcher.Work, "floor")
	if err != nil {
		return ceilingResult{}, err
	}
	defer rcv.close()
	body, err := json.Marshal(event.Envelope{ID: event.NewID(), Event: event.Test,
		Data: map[string]any{"message": "This is a test event from Hitch."}, Timestamp: time.Now().UnixMilli()})
	if err != nil {
		return ceilingResult{}, err
	}
	c := newJobCounter(o.events)
	workers := river.NewWorkers()
	river.AddWorker(workers, &postWorker{jobCounter: c, url: rcv.hooksURL(), body: body,
		client: netguard.NewHTTPClient(netguard.Policy{AllowPrivate: true}, 10*time.Second, o.workers)})
	res, err := timeJobs(ctx, o, launcher, "floor", workers, postKind, c, func() river.JobArgs {
		return postArgs{ClientID: hitch.DevClientID, EventID: event.NewID(), EndpointID: event.NewID()}
	})
	if err != nil {
		return res, err
	}
	if n := rcv.received(); n != o.events {
		return res, fmt.Errorf("delivery floor: the receiver has %d of %d POSTs", n, o.events)
	}
	return res, nil
}

// timeJobs inserts o.events jobs of kind, made by args, in the webhooks
// queue of a fresh store, then starts a River client with Hitch's queue
// settings and workers, and times it working them all: c counts them.
func timeJobs(ctx context.Context, o options, launcher *hitch.Launcher, name string, workers *river.Workers,
	kind string, c *jobCounter, args func() river.JobArgs,
) (ceilingResult, error) {
	res := ceilingResult{Jobs: o.events}
	dataDir := filepath.Join(launcher.Work, "data-"+name)
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

	q, err := queue.New(st, queue.Config{Workers: workers, WebhookWorkers: o.workers})
	if err != nil {
		return res, err
	}

	insertStart := time.Now()
	for inserted := 0; inserted < o.events; inserted += insertBatch {
		params := make([]river.InsertManyParams, min(insertBatch, o.events-inserted))
		for i := range params {
			params[i].Args = args()
		}
		if err := st.InTx(ctx, func(ex store.Executor) error { return q.InsertTx(ctx, ex, params) }); err != nil {
			return res, err
		}
	}
	res.InsertSeconds = time.Since(insertStart).Seconds()
	if n, _, err := q.Pending(ctx, kind); err != nil {
		return res, err
	} else if n != int64(o.events) {
		return res, fmt.Errorf("%s: %d jobs pending after inserting %d", name, n, o.events)
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
	case <-c.done:
	case <-ctx.Done():
		return res, ctx.Err()
	case <-time.After(timeout):
		return res, fmt.Errorf("%s: %d of %d jobs worked after %v", name, c.worked.Load(), o.events, timeout)
	}
	res.WorkedSeconds = c.lastAt.Sub(start).Seconds()
	res.PerSec = float64(o.events) / res.WorkedSeconds

	// River marks jobs completed in batches after Work returns.
	for {
		n, _, err := q.Pending(ctx, kind)
		if err != nil {
			return res, err
		}
		if n == 0 {
			break
		}
		if time.Since(start) > timeout {
			return res, fmt.Errorf("%s: %d jobs still pending after %v", name, n, timeout)
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
