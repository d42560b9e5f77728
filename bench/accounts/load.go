package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// requestTimeout bounds one request of the load generator.
	requestTimeout = 5 * time.Second
	// maxRequestsPerWorker bounds each worker by count as well as by time.
	maxRequestsPerWorker = 50_000_000
)

// target is one server under load.
type target struct {
	name  string
	store string // "-" for the bare handler
	url   string
	user  string
	pass  string
	want  []byte // the body every answer must have
	// server is the process answering, sampled for memory.
	server *child
}

// loadStats is what the workers of one run saw together.
type loadStats struct {
	// hist holds the latencies of the successful measured requests.
	hist *histogram
	// elapsed runs from the end of the warm-up to the last answer.
	elapsed time.Duration
	// errors counts failures of the warm-up and measured phases by kind.
	errors     map[string]int64
	firstError string
	dials      int64
}

// measureTarget loads t for the warm-up and measured phases while sampling
// its server's resident memory.
func measureTarget(ctx context.Context, t target, o options) (targetResult, error) {
	sampler := startRSSSampler(t.server.pid())
	stats, err := generateLoad(ctx, t, o.conns, o.warmup, o.duration)
	peak := sampler.stop()
	hwm, _ := procStatusBytes(t.server.pid(), "VmHWM")
	if err != nil {
		return targetResult{}, err
	}
	select {
	case <-t.server.exited:
		return targetResult{}, fmt.Errorf("%s exited under load (%v)%s", t.server.name, t.server.waitErr, t.server.logTail())
	default:
	}
	return newTargetResult(t, o.conns, stats, peak, hwm), nil
}

// generateLoad runs a closed loop: conns workers, each sending its next
// request as soon as the previous one is answered, over at most conns
// keep-alive connections.
func generateLoad(ctx context.Context, t target, conns int, warmup, duration time.Duration) (*loadStats, error) {
	var dials atomic.Int64
	transport := newLoadTransport(conns, &dials)
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, Timeout: requestTimeout}

	measureFrom := time.Now().Add(warmup)
	until := measureFrom.Add(duration)
	workers := make([]*worker, conns)
	var wg sync.WaitGroup
	for i := range workers {
		w, err := newWorker(ctx, client, t)
		if err != nil {
			return nil, err
		}
		workers[i] = w
		wg.Go(func() { w.run(ctx, measureFrom, until) })
	}
	wg.Wait()
	elapsed := time.Since(measureFrom)
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	stats := &loadStats{hist: new(histogram), elapsed: elapsed, errors: map[string]int64{}, dials: dials.Load()}
	for _, w := range workers {
		stats.hist.merge(w.hist)
		for kind, n := range w.errors {
			stats.errors[kind] += n
		}
		if stats.firstError == "" {
			stats.firstError = w.firstError
		}
	}
	return stats, nil
}

// newLoadTransport keeps up to conns connections open and counts how many
// it dials: more than conns means connections were not kept alive.
func newLoadTransport(conns int, dials *atomic.Int64) *http.Transport {
	dialer := &net.Dialer{Timeout: requestTimeout, KeepAlive: 30 * time.Second}
	return &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return dialer.DialContext(ctx, network, addr)
		},
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
}

// worker sends one request at a time and records its own results, so the
// hot loop shares nothing with the other workers.
type worker struct {
	client     *http.Client
	req        *http.Request
	want       []byte
	buf        bytes.Buffer
	hist       *histogram
	errors     map[string]int64
	firstError string
}

func newWorker(ctx context.Context, client *http.Client, t target) (*worker, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.url, nil)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(t.user, t.pass)
	w := &worker{client: client, req: req, want: t.want, hist: new(histogram), errors: map[string]int64{}}
	w.buf.Grow(len(t.want) + 1)
	return w, nil
}

// run sends requests until until, recording the latency of each success
// that started at or after measureFrom.
func (w *worker) run(ctx context.Context, measureFrom, until time.Time) {
	for range maxRequestsPerWorker {
		start := time.Now()
		if !start.Before(until) || ctx.Err() != nil {
			return
		}
		kind, err := w.get()
		took := time.Since(start)
		switch {
		case ctx.Err() != nil:
			return // interrupted, not a server failure
		case err != nil:
			w.errors[kind]++
			if w.firstError == "" {
				w.firstError = err.Error()
			}
		case !start.Before(measureFrom):
			w.hist.record(took)
		}
	}
}

// get sends the request once and checks the answer is a 200 with the
// expected body; on failure it also returns the kind of failure.
func (w *worker) get() (kind string, err error) {
	resp, err := w.client.Do(w.req) // the request is reused: it has no body
	if err != nil {
		if os.IsTimeout(err) {
			return "timeout", err
		}
		return "transport", err
	}
	w.buf.Reset()
	_, err = w.buf.ReadFrom(io.LimitReader(resp.Body, int64(len(w.want))+1))
	// Drain what is left so the connection is reused.
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	switch {
	case err != nil:
		return "read", err
	case resp.StatusCode != http.StatusOK:
		return fmt.Sprintf("status %d", resp.StatusCode), fmt.Errorf("status %d: %.200s", resp.StatusCode, w.buf.Bytes())
	case !bytes.Equal(w.buf.Bytes(), w.want):
		return "body", errors.New("200 with a different body than the first answer")
	}
	return "", nil
}
