package loadgen

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hitchdev/hitch/bench/internal/hist"
)

// maxRequestsPerWorker bounds each worker by count as well as by time.
const maxRequestsPerWorker = 50_000_000

// Load is one closed-loop run of one request, sent again and again.
type Load struct {
	// Method is the request's method; empty means GET.
	Method string
	URL    string
	// Body, unless nil, is sent with every request as JSON, with its
	// Content-Length.
	Body       []byte
	User, Pass string // Basic auth
	// Want is the body every answer must have, with status 200.
	Want []byte
	// Conns is the number of workers, each on its own connection.
	Conns int
	// Warmup is the unmeasured load before the measured Duration.
	Warmup, Duration time.Duration
	// RequestTimeout bounds each request.
	RequestTimeout time.Duration
}

// Stats is what the workers of one run saw together.
type Stats struct {
	// Hist holds the latencies of the successful measured requests.
	Hist *hist.Histogram
	// MeasureFrom is the end of the warm-up; Elapsed runs from it to the
	// last answer.
	MeasureFrom time.Time
	Elapsed     time.Duration
	// Failures are those of the warm-up and measured phases.
	Failures Failures
	// Dials counts the connections opened: more than Conns means some were
	// not kept alive.
	Dials int64
}

// ReqPerSec is the measured throughput.
func (s *Stats) ReqPerSec() float64 { return float64(s.Hist.Count()) / s.Elapsed.Seconds() }

// Failures counts failed requests by kind: "transport", "read", "timeout"
// (from Conn.Do), "status N" or "body". The zero value is empty.
type Failures struct {
	ByKind map[string]int64
	// First is the first failure's message.
	First string
}

// Add counts one failure.
func (f *Failures) Add(kind string, err error) {
	if f.ByKind == nil {
		f.ByKind = map[string]int64{}
	}
	f.ByKind[kind]++
	if f.First == "" {
		f.First = err.Error()
	}
}

// Merge adds o's counts to f, keeping f's first message if it has one.
func (f *Failures) Merge(o Failures) {
	for kind, n := range o.ByKind {
		if f.ByKind == nil {
			f.ByKind = map[string]int64{}
		}
		f.ByKind[kind] += n
	}
	if f.First == "" {
		f.First = o.First
	}
}

// Count is the number of failures, of every kind.
func (f *Failures) Count() int64 {
	var n int64
	for _, c := range f.ByKind {
		n += c
	}
	return n
}

// Run runs a closed loop: l.Conns workers, each on its own keep-alive
// connection, sending its next request as soon as the previous one is
// answered, for l.Warmup and then l.Duration. It returns ctx's error if ctx
// ends first.
func Run(ctx context.Context, l Load) (*Stats, error) {
	u, err := url.Parse(l.URL)
	if err != nil {
		return nil, err
	}
	req := Request(cmp.Or(l.Method, http.MethodGet), u, l.User, l.Pass, l.Body)
	var dials atomic.Int64
	conns := make([]*Conn, l.Conns)
	ops := make([]Op, l.Conns)
	for i := range ops {
		c := NewConn(u.Host, l.RequestTimeout, &dials)
		conns[i] = c
		ops[i] = func(start time.Time) (string, error) { return send(c, req, l.Want, start) }
	}
	stats, err := ClosedLoop(ctx, ops, l.Warmup, l.Duration)
	for _, c := range conns {
		c.Close()
	}
	if err != nil {
		return nil, err
	}
	stats.Dials = dials.Load()
	return stats, nil
}

// Op is one unit of work of a closed loop, a request or anything else,
// begun at start; on failure it also returns the kind of failure, for
// counting.
type Op func(start time.Time) (kind string, err error)

// ClosedLoop runs each of ops on a goroutine of its own, again and again,
// for warmup and then duration, and records the latency of each success
// begun after the warm-up. Each goroutine records its own results, so the
// hot loop shares nothing. It returns ctx's error if ctx ends first; Dials
// is left for the caller.
func ClosedLoop(ctx context.Context, ops []Op, warmup, duration time.Duration) (*Stats, error) {
	measureFrom := time.Now().Add(warmup)
	until := measureFrom.Add(duration)
	hists := make([]*hist.Histogram, len(ops))
	failures := make([]Failures, len(ops))
	var wg sync.WaitGroup
	for i, op := range ops {
		h := new(hist.Histogram)
		hists[i] = h
		wg.Go(func() {
			for range maxRequestsPerWorker {
				start := time.Now()
				if !start.Before(until) || ctx.Err() != nil {
					return
				}
				kind, err := op(start)
				took := time.Since(start)
				switch {
				case ctx.Err() != nil:
					return // interrupted, not a failure
				case err != nil:
					failures[i].Add(kind, err)
				case !start.Before(measureFrom):
					h.Record(took)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(measureFrom)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	stats := &Stats{Hist: new(hist.Histogram), MeasureFrom: measureFrom, Elapsed: elapsed}
	for i := range ops {
		stats.Hist.Merge(hists[i])
		stats.Failures.Merge(failures[i])
	}
	return stats, nil
}

// send sends req once on c and checks the answer is a 200 with the body
// want; on failure it also returns the kind of failure.
func send(c *Conn, req, want []byte, start time.Time) (kind string, err error) {
	status, kind, err := c.Do(req, start)
	switch {
	case err != nil:
		return kind, err
	case status != http.StatusOK:
		return fmt.Sprintf("status %d", status), fmt.Errorf("status %d: %.200s", status, c.Body())
	case !bytes.Equal(c.Body(), want):
		return "body", errors.New("200 with a different body than the first answer")
	}
	return "", nil
}
