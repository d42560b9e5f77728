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
	measureFrom := time.Now().Add(l.Warmup)
	until := measureFrom.Add(l.Duration)
	workers := make([]*worker, l.Conns)
	var wg sync.WaitGroup
	for i := range workers {
		w := &worker{c: Conn{addr: u.Host, timeout: l.RequestTimeout, dials: &dials}, req: req, want: l.Want, hist: new(hist.Histogram)}
		workers[i] = w
		wg.Go(func() { w.run(ctx, measureFrom, until) })
	}
	wg.Wait()
	elapsed := time.Since(measureFrom)
	for _, w := range workers {
		w.c.Close()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	stats := &Stats{Hist: new(hist.Histogram), MeasureFrom: measureFrom, Elapsed: elapsed, Dials: dials.Load()}
	for _, w := range workers {
		stats.Hist.Merge(w.hist)
		stats.Failures.Merge(w.failures)
	}
	return stats, nil
}

// worker records its own results, so the hot loop shares nothing with the
// other workers.
type worker struct {
	c    Conn
	req  []byte
	want []byte

	hist     *hist.Histogram
	failures Failures
}

// run sends requests until until, recording the latency of each success
// that started at or after measureFrom.
func (w *worker) run(ctx context.Context, measureFrom, until time.Time) {
	for range maxRequestsPerWorker {
		start := time.Now()
		if !start.Before(until) || ctx.Err() != nil {
			return
		}
		kind, err := w.send(start)
		took := time.Since(start)
		switch {
		case ctx.Err() != nil:
			return // interrupted, not a server failure
		case err != nil:
			w.failures.Add(kind, err)
		case !start.Before(measureFrom):
			w.hist.Record(took)
		}
	}
}

// send sends the request once and checks the answer is a 200 with the
// expected body; on failure it also returns the kind of failure.
func (w *worker) send(start time.Time) (kind string, err error) {
	status, kind, err := w.c.Do(w.req, start)
	switch {
	case err != nil:
		return kind, err
	case status != http.StatusOK:
		return fmt.Sprintf("status %d", status), fmt.Errorf("status %d: %.200s", status, w.c.Body())
	case !bytes.Equal(w.c.Body(), w.want):
		return "body", errors.New("200 with a different body than the first answer")
	}
	return "", nil
}
