package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
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

// generateLoad runs a closed loop: conns workers, each on its own keep-alive
// connection, sending its next request as soon as the previous one is
// answered.
func generateLoad(ctx context.Context, t target, conns int, warmup, duration time.Duration) (*loadStats, error) {
	u, err := url.Parse(t.url)
	if err != nil {
		return nil, err
	}
	req := rawRequest(u, t.user, t.pass)
	var dials atomic.Int64
	measureFrom := time.Now().Add(warmup)
	until := measureFrom.Add(duration)
	workers := make([]*worker, conns)
	var wg sync.WaitGroup
	for i := range workers {
		w := &worker{addr: u.Host, req: req, want: t.want, dials: &dials, hist: new(histogram), errors: map[string]int64{}}
		workers[i] = w
		wg.Go(func() { w.run(ctx, measureFrom, until) })
	}
	wg.Wait()
	elapsed := time.Since(measureFrom)
	for _, w := range workers {
		w.close()
	}
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

// rawRequest is the bytes of one GET of u with Basic auth, written as is on
// every request. The load generator speaks HTTP/1.1 over the socket itself,
// as wrk does, rather than through net/http's client: on a two-core machine
// the client's goroutines and allocations would take CPU from the server it
// measures.
func rawRequest(u *url.URL, user, pass string) []byte {
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
	return []byte("GET " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host +
		"\r\nAuthorization: Basic " + auth + "\r\nUser-Agent: hitch-bench\r\n\r\n")
}

// worker sends one request at a time on its own connection and records its
// own results, so the hot loop shares nothing with the other workers.
type worker struct {
	addr  string
	req   []byte
	want  []byte
	dials *atomic.Int64

	conn net.Conn
	br   *bufio.Reader
	body []byte

	hist       *histogram
	errors     map[string]int64
	firstError string
}

// run sends requests until until, recording the latency of each success
// that started at or after measureFrom.
func (w *worker) run(ctx context.Context, measureFrom, until time.Time) {
	for range maxRequestsPerWorker {
		start := time.Now()
		if !start.Before(until) || ctx.Err() != nil {
			return
		}
		kind, err := w.get(start)
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

func (w *worker) close() {
	if w.conn != nil {
		w.conn.Close()
		w.conn = nil
	}
}

// get sends the request once and checks the answer is a 200 with the
// expected body; on failure it also returns the kind of failure. A
// connection that failed, or that the server asked to close, is closed, and
// the next request dials again.
func (w *worker) get(start time.Time) (kind string, err error) {
	if w.conn == nil {
		w.dials.Add(1)
		c, err := net.DialTimeout("tcp", w.addr, requestTimeout)
		if err != nil {
			return "transport", err
		}
		w.conn = c
		if w.br == nil {
			w.br = bufio.NewReaderSize(c, 16<<10)
		} else {
			w.br.Reset(c)
		}
	}
	w.conn.SetDeadline(start.Add(requestTimeout))
	status, keep, kind, err := w.exchange()
	if err != nil || !keep {
		w.close()
	}
	switch {
	case err != nil:
		if os.IsTimeout(err) {
			return "timeout", err
		}
		return kind, err
	case status != http.StatusOK:
		return fmt.Sprintf("status %d", status), fmt.Errorf("status %d: %.200s", status, w.body)
	case !bytes.Equal(w.body, w.want):
		return "body", errors.New("200 with a different body than the first answer")
	}
	return "", nil
}

// maxBody bounds a response body the load generator reads.
const maxBody = 1 << 20

// exchange writes the request and reads the response into w.body. It
// understands what Hitch and the bare handler send: a Content-Length body.
func (w *worker) exchange() (status int, keep bool, kind string, err error) {
	if _, err := w.conn.Write(w.req); err != nil {
		return 0, false, "transport", err
	}
	line, err := w.br.ReadSlice('\n')
	if err != nil {
		return 0, false, "read", err
	}
	// "HTTP/1.1 200 OK\r\n"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) {
		return 0, false, "read", fmt.Errorf("malformed status line %q", line)
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, false, "read", fmt.Errorf("malformed status line %q", line)
	}
	length, keep := -1, true
	for {
		line, err := w.br.ReadSlice('\n')
		if err != nil {
			return 0, false, "read", err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return 0, false, "read", fmt.Errorf("malformed header %q", line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil || length < 0 || length > maxBody {
				return 0, false, "read", fmt.Errorf("bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			return 0, false, "read", fmt.Errorf("unsupported Transfer-Encoding %q", value)
		case bytes.EqualFold(name, []byte("Connection")) && bytes.EqualFold(value, []byte("close")):
			keep = false
		}
	}
	if length < 0 {
		return 0, false, "read", errors.New("response without Content-Length")
	}
	if cap(w.body) < length {
		w.body = make([]byte, length)
	}
	w.body = w.body[:length]
	if _, err := io.ReadFull(w.br, w.body); err != nil {
		return 0, false, "read", err
	}
	return status, keep, "", nil
}
