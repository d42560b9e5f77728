package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// receipt is the first arrival of one event at the receiver.
type receipt struct {
	at time.Time
	// eventMs is the envelope's timestamp (Unix ms), 0 when absent.
	eventMs int64
}

// receiver is the webhook endpoint: an in-process net/http server that
// answers 200 with no body as soon as it has read a delivery, and records
// when each webhook-id first arrived. It does not verify signatures: it
// stands for a receiver that costs nothing.
type receiver struct {
	url string
	srv *http.Server
	// conns counts the TCP connections Hitch opened to it.
	conns atomic.Int64
	// gate, while set, holds every delivery until release.
	gate atomic.Pointer[chan struct{}]

	mu    sync.Mutex
	first map[string]receipt
	dups  int
	noID  int
}

func startReceiver() (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &receiver{url: "http://" + ln.Addr().String() + "/hooks", first: map[string]receipt{}}
	r.srv = &http.Server{
		Handler:           r,
		ReadHeaderTimeout: 10 * time.Second,
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				r.conns.Add(1)
			}
		},
	}
	go r.srv.Serve(ln)
	return r, nil
}

func (r *receiver) close() { r.srv.Close() }

// hold makes deliveries wait until release, so that a backlog builds up.
func (r *receiver) hold() {
	ch := make(chan struct{})
	r.gate.Store(&ch)
}

// release lets held and later deliveries through.
func (r *receiver) release() {
	if ch := r.gate.Swap(nil); ch != nil {
		close(*ch)
	}
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if ch := r.gate.Load(); ch != nil {
		select {
		case <-*ch:
		case <-req.Context().Done():
			return
		}
	}
	at := time.Now()
	body, _ := io.ReadAll(io.LimitReader(req.Body, 64<<10))
	var envelope struct {
		Timestamp int64 `json:"timestamp"`
	}
	_ = json.Unmarshal(body, &envelope)
	r.record(req.Header.Get("webhook-id"), receipt{at: at, eventMs: envelope.Timestamp})
	w.WriteHeader(http.StatusOK)
}

func (r *receiver) record(id string, rc receipt) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch _, seen := r.first[id]; {
	case id == "":
		r.noID++
	case seen:
		r.dups++
	default:
		r.first[id] = rc
	}
}

// received is how many distinct webhook-ids have arrived.
func (r *receiver) received() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.first)
}

// receipts is a copy of what has arrived: the first receipt per
// webhook-id, the repeated arrivals, and the deliveries without an id.
func (r *receiver) receipts() (first map[string]receipt, dups, noID int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	first = make(map[string]receipt, len(r.first))
	for id, rc := range r.first {
		first[id] = rc
	}
	return first, r.dups, r.noID
}

// missing counts the events not received yet.
func (r *receiver) missing(events []created) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, ev := range events {
		if _, ok := r.first[ev.id]; !ok {
			n++
		}
	}
	return n
}

// errDrainTimeout: not every event arrived in time.
var errDrainTimeout = errors.New("not every event was delivered in time")

// server is the process delivering, a *proc.Child.
type server interface {
	Exited() <-chan struct{}
	ExitErr(during string) error
}

// waitDelivered waits until every one of events has arrived, the server
// exits, ctx ends or timeout passes.
func (r *receiver) waitDelivered(ctx context.Context, events []created, server server, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if r.received() >= len(events) && r.missing(events) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: %d of %d missing after %v", errDrainTimeout, r.missing(events), len(events), timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-server.Exited():
			return server.ExitErr("while delivering")
		case <-time.After(5 * time.Millisecond):
		}
	}
}
