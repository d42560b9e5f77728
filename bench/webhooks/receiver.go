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
	"time"
)

// receipt is the first arrival of one event at the receiver.
type receipt struct {
	at time.Time
	// eventMs is the envelope's timestamp (Unix ms), 0 when absent.
	eventMs int64
}

// receiver is the webhook endpoint: a net/http server that answers 200
// with no body as soon as it has read a delivery, and records when each
// webhook-id first arrived. It does not verify signatures: it stands for a
// receiver that costs nothing. The benchmark runs it in a process of its
// own (receiverProcess), as a real receiver is elsewhere, so that its
// goroutines and garbage do not slow the benchmark creating events. Tests
// run it in their own process.
type receiver struct {
	url string
	srv *http.Server

	mu    sync.Mutex
	first map[string]receipt
	dups  int
}

// startReceiver starts a receiver on a free loopback port.
func startReceiver() (*receiver, error) { return startReceiverOn("127.0.0.1:0") }

// startReceiverOn starts a receiver listening on addr.
func startReceiverOn(addr string) (*receiver, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	base := "http://" + ln.Addr().String()
	r := &receiver{url: base + hooksPath, first: map[string]receipt{}}
	r.srv = &http.Server{Handler: r.mux(), ReadHeaderTimeout: 10 * time.Second}
	go r.srv.Serve(ln)
	return r, nil
}

func (r *receiver) close() { r.srv.Close() }

// deliver reads one delivery.
func (r *receiver) deliver(w http.ResponseWriter, req *http.Request) {
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
	if _, seen := r.first[id]; seen {
		r.dups++
		return
	}
	r.first[id] = rc
}

// received is how many distinct webhook-ids have arrived.
func (r *receiver) received() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.first)
}

// receipts is a copy of what has arrived: the first receipt per
// webhook-id, and the repeated arrivals.
func (r *receiver) receipts() (first map[string]receipt, dups int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	first = make(map[string]receipt, len(r.first))
	for id, rc := range r.first {
		first[id] = rc
	}
	return first, r.dups
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

// endpoint is what the benchmark asks of a receiver, in its process or
// another.
type endpoint interface {
	hooksURL() string
	received() int
	missing(events []created) int
	receipts() (first map[string]receipt, dups int)
	close()
}

func (r *receiver) hooksURL() string { return r.url }

// waitPoll is how often waitDelivered asks the receiver: each time an HTTP
// request to its process, so not so often that it loads the machine
// under measurement. Latencies come from the receipts, not from this.
const waitPoll = 20 * time.Millisecond

// waitDelivered waits until every one of events has arrived at r, the
// server exits, ctx ends or timeout passes.
// before is how many webhook-ids r had received before events were
// created: until it has that many more, none of events needs looking up
// (a lookup sends every id to the receiver's process).
func waitDelivered(ctx context.Context, r endpoint, events []created, before int, server server, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if r.received() >= before+len(events) && r.missing(events) == 0 {
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
		case <-time.After(waitPoll):
		}
	}
}

// The receiver's paths: deliveries, and the benchmark's questions.
const (
	hooksPath    = "/hooks"
	countsPath   = "/bench/counts"
	receiptsPath = "/bench/receipts"
	missingPath  = "/bench/missing"
)

// counts are a receiver's counters, as countsPath serves them.
type counts struct {
	Received int `json:"received"`
}

// wireReceipts are a receiver's receipts, as receiptsPath serves them: for
// each webhook-id, its first arrival (Unix ns) and the envelope's timestamp.
type wireReceipts struct {
	First map[string][2]int64 `json:"first"`
	Dups  int                 `json:"dups"`
}

// mux routes deliveries and the benchmark's questions.
func (r *receiver) mux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+hooksPath, r.deliver)
	mux.HandleFunc("GET "+countsPath, func(w http.ResponseWriter, _ *http.Request) {
		json.NewEncoder(w).Encode(counts{Received: r.received()})
	})
	mux.HandleFunc("POST "+missingPath, func(w http.ResponseWriter, req *http.Request) {
		var ids []string
		if err := json.NewDecoder(req.Body).Decode(&ids); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		events := make([]created, len(ids))
		for i, id := range ids {
			events[i].id = id
		}
		json.NewEncoder(w).Encode(r.missing(events))
	})
	mux.HandleFunc("GET "+receiptsPath, func(w http.ResponseWriter, _ *http.Request) {
		first, dups := r.receipts()
		out := wireReceipts{First: make(map[string][2]int64, len(first)), Dups: dups}
		for id, rc := range first {
			out.First[id] = [2]int64{rc.at.UnixNano(), rc.eventMs}
		}
		json.NewEncoder(w).Encode(out)
	})
	return mux
}
