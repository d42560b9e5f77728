package main

import (
	"bytes"
	"context"
	"encoding/base64"
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
	"github.com/hitchdev/hitch/internal/config"
	"github.com/hitchdev/hitch/internal/event"
	"github.com/hitchdev/hitch/internal/netguard"
	"github.com/hitchdev/hitch/internal/queue"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/postgres"
	"github.com/hitchdev/hitch/internal/store/sqlite"
	"github.com/hitchdev/hitch/internal/webhook"
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
// arguments are a delivery's, so that River stores, indexes and decodes
// as much for it as for a delivery (with the same decoder).
type postArgs struct{ webhook.DeliveryArgs }

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

// postWorker POSTs body to url with Hitch's delivery client and the
// headers of a delivery, its job's event id as the webhook-id, and counts
// the job once the receiver has answered 200: a delivery without Hitch's
// own work (reading the event, signing, recording the attempt).
type postWorker struct {
	river.WorkerDefaults[postArgs]
	*jobCounter
	client *http.Client
	url    string
	body   []byte
	header http.Header // a delivery's, signed once
	// begun counts the POSTs started, failed those that failed (River
	// retries them later, which the floor's time must not hide).
	begun, failed atomic.Int64
}

func (w *postWorker) Work(ctx context.Context, job *river.Job[postArgs]) error {
	w.begun.Add(1)
	if err := w.post(ctx, job.Args.EventID); err != nil {
		w.failed.Add(1)
		return err
	}
	w.count()
	return nil
}

func (w *postWorker) post(ctx context.Context, id string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(w.body))
	if err != nil {
		return err
	}
	req.Header = w.header.Clone()
	req.Header.Set("webhook-id", id)
	resp, err := w.client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("receiver answered %d", resp.StatusCode)
	}
	return nil
}

// jobsResult is the throughput of one kind of job on a fresh store.
type jobsResult struct {
	Jobs          int     `json:"jobs"`
	InsertSeconds float64 `json:"insert_seconds"`
	// WorkedSeconds runs from the start of the timing (the client's start;
	// for the floor, the release of its held POSTs) to the last job's
	// Work; CompletedSeconds to when none is pending any more.
	WorkedSeconds    float64 `json:"worked_seconds"`
	CompletedSeconds float64 `json:"completed_seconds"`
	// PerSec is Jobs / WorkedSeconds: the floor's jobs count once the
	// receiver has answered, deliveries once it has the delivery.
	PerSec float64 `json:"per_sec"`
	// CPU is the machine's CPU time over WorkedSeconds, by process.
	CPU proc.CPUUse `json:"cpu"`
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
func measureCeiling(ctx context.Context, o options, launcher *hitch.Launcher, round int) (jobsResult, error) {
	dataDir, dbURL, err := freshStore(ctx, launcher, roundName("ceiling", round))
	if err != nil {
		return jobsResult{}, err
	}
	c := newJobCounter(o.events)
	workers := river.NewWorkers()
	river.AddWorker(workers, &noopWorker{jobCounter: c})
	return timeJobs(ctx, o, dataDir, dbURL, jobRun{name: "ceiling", kind: noopKind, workers: workers, counter: c,
		args: func() river.JobArgs { return noopArgs{} }, cpu: cpuGroups(dbURL, nil)})
}

// measureFloor times n jobs that each POST one envelope to a receiver in a
// process of its own, as deliveries do. A delivery does all that such a
// job does and more, so the floor's share of the ceiling bounds the share
// deliveries can reach on this machine and store.
func measureFloor(ctx context.Context, o options, launcher *hitch.Launcher, round int) (jobsResult, error) {
	rcv, err := startReceiverProcess(ctx, launcher.Work, roundName("floor", round))
	if err != nil {
		return jobsResult{}, err
	}
	defer rcv.close()
	dataDir, dbURL, err := freshStore(ctx, launcher, roundName("floor", round))
	if err != nil {
		return jobsResult{}, err
	}
	return timeFloor(ctx, o, dataDir, dbURL, rcv, cpuGroups(dbURL, map[string]int{"receiver": rcv.child.PID()}))
}

// timeFloor times the floor's jobs against rcv as the backlog's deliveries
// are timed: the receiver holds the first POSTs, one per worker, then lets
// them go, and the run is timed from that release.
func timeFloor(ctx context.Context, o options, dataDir, dbURL string, rcv endpoint, cpu proc.CPUGroups) (jobsResult, error) {
	body, err := json.Marshal(event.Envelope{ID: event.NewID(), Event: event.Test,
		Data: map[string]any{"message": "A benchmark's delivery floor."}, Timestamp: time.Now().UnixMilli()})
	if err != nil {
		return jobsResult{}, err
	}
	// A delivery's headers, signed once: the floor sends as much, without
	// the signing, which is Hitch's own work.
	secret := "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 32))
	header, err := webhook.Headers(event.NewID(), event.Test, body, time.Now(), "bench-client-secret", secret)
	if err != nil {
		return jobsResult{}, err
	}
	client := netguard.NewHTTPClient(netguard.Policy{AllowPrivate: true}, webhook.DefaultTimeout, o.workers)
	defer client.CloseIdleConnections()
	c := newJobCounter(o.events)
	w := &postWorker{jobCounter: c, client: client, url: rcv.hooksURL(), body: body, header: header}
	workers := river.NewWorkers()
	river.AddWorker(workers, w)

	rcv.hold()
	held := int64(min(o.workers, o.events))
	// release lets the held POSTs go once every worker has one, and in
	// any case before it returns: the client stops only once its jobs
	// have returned.
	release := func(ctx context.Context) (time.Time, error) {
		defer rcv.release()
		for deadline := time.Now().Add(time.Minute); w.begun.Load() < held; {
			if time.Now().After(deadline) {
				return time.Time{}, fmt.Errorf("floor: %d of %d POSTs held after a minute", w.begun.Load(), held)
			}
			select {
			case <-ctx.Done():
				return time.Time{}, ctx.Err()
			case <-time.After(time.Millisecond):
			}
		}
		return time.Now(), nil
	}
	res, err := timeJobs(ctx, o, dataDir, dbURL, jobRun{name: "floor", kind: postKind, workers: workers, counter: c,
		args: func() river.JobArgs {
			return postArgs{webhook.DeliveryArgs{ClientID: hitch.DevClientID, EventID: event.NewID(), EndpointID: event.NewID()}}
		},
		begin: release, cpu: cpu})
	if err != nil {
		return res, err
	}
	if n := w.failed.Load(); n > 0 {
		return res, fmt.Errorf("floor: %d POSTs failed", n)
	}
	if n := rcv.received(); n != o.events {
		return res, fmt.Errorf("floor: the receiver has %d of %d POSTs", n, o.events)
	}
	return res, nil
}

// freshStore makes a data dir for name and, on PostgreSQL, a fresh schema.
func freshStore(ctx context.Context, launcher *hitch.Launcher, name string) (dataDir, dbURL string, err error) {
	dataDir = filepath.Join(launcher.Work, "data-"+name)
	if err := os.Mkdir(dataDir, 0o700); err != nil {
		return "", "", err
	}
	dbURL, err = launcher.FreshDatabase(ctx)
	return dataDir, dbURL, err
}

// jobRun is what timeJobs runs: jobs of kind, made by args, worked by
// workers, which count them in counter.
type jobRun struct {
	name    string
	kind    string
	workers *river.Workers
	counter *jobCounter
	args    func() river.JobArgs
	// begin, when set, is called once the client has started; the run is
	// timed from the instant it returns, else from the start.
	begin func(context.Context) (time.Time, error)
	// cpu are the processes whose CPU time the run reports.
	cpu proc.CPUGroups
}

// cpuGroups are the processes of a phase whose CPU time it reports: this
// one, those in pids, and on PostgreSQL the server's processes on this
// machine (a server elsewhere counts for nothing).
func cpuGroups(dbURL string, pids map[string]int) proc.CPUGroups {
	g := proc.CPUGroups{PIDs: map[string]int{"benchmark": os.Getpid()}}
	for name, pid := range pids {
		g.PIDs[name] = pid
	}
	if dbURL != "" {
		g.Comms = map[string]string{"postgres": "postgres"}
	}
	return g
}

// timeJobs inserts o.events jobs in the webhooks queue of a fresh store
// (dataDir for SQLite, or dbURL), then starts a River client with Hitch's
// queue settings and GC target, and times it working them all.
func timeJobs(ctx context.Context, o options, dataDir, dbURL string, run jobRun) (jobsResult, error) {
	res := jobsResult{Jobs: o.events}
	st, err := openStore(ctx, dataDir, dbURL)
	if err != nil {
		return res, err
	}
	defer st.Close()
	defer config.SetGC()()

	q, err := queue.New(st, queue.Config{Workers: run.workers, WebhookWorkers: o.workers})
	if err != nil {
		return res, err
	}

	insertStart := time.Now()
	for inserted := 0; inserted < o.events; inserted += insertBatch {
		params := make([]river.InsertManyParams, min(insertBatch, o.events-inserted))
		for i := range params {
			params[i].Args = run.args()
		}
		if err := st.InTx(ctx, func(ex store.Executor) error { return q.InsertTx(ctx, ex, params) }); err != nil {
			return res, err
		}
	}
	res.InsertSeconds = time.Since(insertStart).Seconds()
	if n, _, err := q.Pending(ctx, run.kind); err != nil {
		return res, err
	} else if n != int64(o.events) {
		return res, fmt.Errorf("%s: %d jobs pending after inserting %d", run.name, n, o.events)
	}

	start, cpuBefore := time.Now(), run.cpu.Sample()
	if err := q.Start(ctx); err != nil {
		return res, err
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), proc.StopTimeout)
		defer cancel()
		q.Stop(stopCtx)
	}()
	if run.begin != nil {
		if start, err = run.begin(ctx); err != nil {
			return res, err
		}
		cpuBefore = run.cpu.Sample()
	}
	timeout := drainTimeout(o.events)
	select {
	case <-run.counter.done:
	case <-ctx.Done():
		return res, ctx.Err()
	case <-time.After(timeout):
		return res, fmt.Errorf("%s: %d of %d jobs worked after %v", run.name, run.counter.worked.Load(), o.events, timeout)
	}
	res.CPU = run.cpu.Sample().Since(cpuBefore)
	res.WorkedSeconds = run.counter.lastAt.Sub(start).Seconds()
	res.PerSec = float64(o.events) / res.WorkedSeconds

	// River marks jobs completed in batches after Work returns.
	for {
		n, _, err := q.Pending(ctx, run.kind)
		if err != nil {
			return res, err
		}
		if n == 0 {
			break
		}
		if time.Since(start) > timeout {
			return res, fmt.Errorf("%s: %d jobs still pending after %v", run.name, n, timeout)
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
