package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/hitchdev/hitch/bench/internal/proc"
	"github.com/hitchdev/hitch/internal/netguard"
	"github.com/hitchdev/hitch/internal/webhook"
)

// A floor job POSTs its body with a delivery's headers and its event id
// as the webhook-id, and counts only once the receiver has answered 200;
// a refused POST counts as failed.
func TestPostWorker(t *testing.T) {
	t.Parallel()
	rcv, err := startReceiver()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rcv.close)
	var refusedHeader http.Header
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		refusedHeader = r.Header
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(refusing.Close)

	c := newJobCounter(2)
	header := http.Header{"Knot-Signature": {"sig"}, "Webhook-Id": {"signed-id"}}
	w := &postWorker{jobCounter: c, client: netguard.NewHTTPClient(netguard.Policy{AllowPrivate: true}, time.Second, 2),
		url: rcv.hooksURL(), body: []byte(`{"timestamp":1700000000000}`), header: header}
	job := func(id string) *river.Job[postArgs] {
		return &river.Job[postArgs]{Args: postArgs{webhook.DeliveryArgs{EventID: id}}}
	}
	ctx := context.Background()
	if err := w.Work(ctx, job("ev_1")); err != nil {
		t.Fatal(err)
	}
	first, _, _ := rcv.receipts()
	if r, ok := first["ev_1"]; !ok || r.eventMs != 1700000000000 {
		t.Fatalf("receipts = %+v, want ev_1 with its body's timestamp", first)
	}
	if n := c.worked.Load(); n != 1 {
		t.Fatalf("worked = %d after one POST, want 1", n)
	}

	w.url = refusing.URL
	if err := w.Work(ctx, job("ev_2")); err == nil {
		t.Fatal("a 503 counted as done")
	}
	if refusedHeader.Get("Knot-Signature") != "sig" || refusedHeader.Get("webhook-id") != "ev_2" {
		t.Errorf("sent headers %v, want the delivery's with the job's webhook-id", refusedHeader)
	}
	if header.Get("webhook-id") != "signed-id" {
		t.Error("the shared headers were changed")
	}
	if worked, begun, failed := c.worked.Load(), w.begun.Load(), w.failed.Load(); worked != 1 || begun != 2 || failed != 1 {
		t.Fatalf("worked %d, begun %d, failed %d after a refused POST; want 1, 2, 1", worked, begun, failed)
	}

	w.url = rcv.hooksURL()
	if err := w.Work(ctx, job("ev_2")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.done:
	default:
		t.Fatal("done not closed at the wanted count")
	}
	if c.lastAt.IsZero() {
		t.Fatal("lastAt not set")
	}
}

// The ceiling's and the floor's runs work every job they insert on a
// fresh SQLite store; the floor's reach the receiver once each, after it
// held one per worker.
func TestTimeJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := options{events: 60, workers: 8}

	c := newJobCounter(o.events)
	workers := river.NewWorkers()
	river.AddWorker(workers, &noopWorker{jobCounter: c})
	res, err := timeJobs(ctx, o, t.TempDir(), "", jobRun{name: "ceiling", kind: noopKind, workers: workers, counter: c,
		args: func() river.JobArgs { return noopArgs{} }, cpu: cpuGroups("", nil)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Jobs != 60 || c.worked.Load() != 60 || res.PerSec <= 0 || res.CompletedSeconds < res.WorkedSeconds {
		t.Errorf("ceiling: %+v, %d worked", res, c.worked.Load())
	}
	checkCPU(t, "ceiling", res.CPU, "benchmark")

	rcv, err := startReceiver()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rcv.close)
	res, err = timeFloor(ctx, o, t.TempDir(), "", rcv, cpuGroups("", map[string]int{"receiver": os.Getpid()}))
	if err != nil {
		t.Fatal(err)
	}
	first, dups, noID := rcv.receipts()
	if res.Jobs != 60 || res.PerSec <= 0 || res.CompletedSeconds < res.WorkedSeconds || len(first) != 60 || dups != 0 || noID != 0 {
		t.Errorf("floor: %+v; the receiver has %d ids, %d repeats, %d without an id", res, len(first), dups, noID)
	}
	checkCPU(t, "floor", res.CPU, "benchmark", "receiver")
}

// checkCPU checks that a run's CPU time covers its window and names the
// groups of processes it was given, where Linux's /proc has them.
func checkCPU(t *testing.T, run string, u proc.CPUUse, groups ...string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		return
	}
	if u.Seconds <= 0 {
		t.Errorf("%s: CPU over %.3f s: want the run's window", run, u.Seconds)
	}
	for _, g := range groups {
		if _, ok := u.GroupSeconds[g]; !ok {
			t.Errorf("%s: no CPU time for %q in %v", run, g, u.GroupSeconds)
		}
	}
}

// The floor is reported against the ceiling, and deliveries against both.
func TestReportFloorShares(t *testing.T) {
	t.Parallel()
	r := &report{Ceiling: jobsResult{PerSec: 20000}, Floor: jobsResult{PerSec: 8000}}
	r.Deliver.Backlog.PerSec = 6000
	r.finish(nil)
	if r.FloorCeilingPercent != 40 || r.Deliver.Backlog.CeilingPercent != 30 || r.Deliver.Backlog.FloorPercent != 75 {
		t.Fatalf("floor %v%% of the ceiling, backlog %v%% of the ceiling and %v%% of the floor; want 40, 30, 75",
			r.FloorCeilingPercent, r.Deliver.Backlog.CeilingPercent, r.Deliver.Backlog.FloorPercent)
	}
	if got, want := r.targetChecks()[0], "backlog deliveries 30% of the ceiling ≥ 50% MISSED (the floor: 40% of it)"; got != want {
		t.Errorf("first target check %q, want %q", got, want)
	}
}
