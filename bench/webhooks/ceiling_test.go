package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/riverqueue/river"
)

// A floor job POSTs its body with its event id as the webhook-id, and
// counts only once the receiver has answered 200.
func TestPostWorker(t *testing.T) {
	t.Parallel()
	rcv, err := startReceiver()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rcv.close)
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(refusing.Close)

	c := newJobCounter(2)
	w := &postWorker{jobCounter: c, client: http.DefaultClient, url: rcv.hooksURL(), body: []byte(`{"timestamp":1700000000000}`)}
	job := func(id string) *river.Job[postArgs] { return &river.Job[postArgs]{Args: postArgs{EventID: id}} }
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
	if n := c.worked.Load(); n != 1 {
		t.Fatalf("worked = %d after a refused POST, want 1", n)
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

// The floor is reported against the ceiling, and deliveries against both.
func TestReportFloorShares(t *testing.T) {
	t.Parallel()
	r := &report{Ceiling: ceilingResult{PerSec: 20000}, Floor: ceilingResult{PerSec: 8000}}
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
