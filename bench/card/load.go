package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hitchdev/hitch/bench/internal/hist"
	"github.com/hitchdev/hitch/bench/internal/loadgen"
)

const (
	// requestTimeout bounds one request of the load generator.
	requestTimeout = 5 * time.Second
	// maxOpsPerWorker bounds each worker by count as well as by time.
	maxOpsPerWorker = 50_000_000
)

// operation is one unit of work, a request or a decrypt, begun at start;
// on failure it also returns the kind of failure, for counting.
type operation func(start time.Time) (kind string, err error)

// closedLoop runs each of ops on a goroutine of its own, again and again,
// for warmup and then duration, and records the latency of each success
// begun after the warm-up. It is loadgen.Run's loop, with work that differs
// from one call to the next (loadgen.Load sends one request, always the
// same, and wants the same answer). It returns ctx's error if ctx ends
// first.
func closedLoop(ctx context.Context, ops []operation, warmup, duration time.Duration) (*loadgen.Stats, error) {
	measureFrom := time.Now().Add(warmup)
	until := measureFrom.Add(duration)
	hists := make([]*hist.Histogram, len(ops))
	failures := make([]loadgen.Failures, len(ops))
	var wg sync.WaitGroup
	for i, op := range ops {
		h := new(hist.Histogram)
		hists[i] = h
		wg.Go(func() {
			for range maxOpsPerWorker {
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
	stats := &loadgen.Stats{Hist: new(hist.Histogram), MeasureFrom: measureFrom, Elapsed: elapsed}
	for i := range ops {
		stats.Hist.Merge(hists[i])
		stats.Failures.Merge(failures[i])
	}
	return stats, nil
}

// cardLoad is the requests under load: conns workers, each on its own
// keep-alive connection to base, posting the bodies in turn, each worker
// from its own place in the list.
type cardLoad struct {
	base       string
	user, pass string
	bodies     [][]byte
	conns      int
}

// run loads Hitch for warmup then duration.
func (l cardLoad) run(ctx context.Context, warmup, duration time.Duration) (*loadgen.Stats, error) {
	u, err := url.Parse(l.base + "/card")
	if err != nil {
		return nil, err
	}
	reqs := make([][]byte, len(l.bodies))
	for i, body := range l.bodies {
		reqs[i] = loadgen.Request(http.MethodPost, u, l.user, l.pass, body)
	}
	var dials atomic.Int64
	conns := make([]*loadgen.Conn, l.conns)
	ops := make([]operation, l.conns)
	for w := range ops {
		c := loadgen.NewConn(u.Host, requestTimeout, &dials)
		conns[w] = c
		next := w * len(reqs) / l.conns
		ops[w] = func(start time.Time) (string, error) {
			req := reqs[next%len(reqs)]
			next++
			return postCard(c, req, start)
		}
	}
	stats, err := closedLoop(ctx, ops, warmup, duration)
	for _, c := range conns {
		c.Close()
	}
	if err != nil {
		return nil, err
	}
	stats.Dials = dials.Load()
	return stats, nil
}

// postCard sends one POST /card and checks the answer.
func postCard(c *loadgen.Conn, req []byte, start time.Time) (kind string, err error) {
	status, kind, err := c.Do(req, start)
	switch {
	case err != nil:
		return kind, err
	case status != http.StatusOK:
		return fmt.Sprintf("status %d", status), fmt.Errorf("status %d: %.200s", status, c.Body())
	}
	if err := checkCardAnswer(c.Body()); err != nil {
		return "body", err
	}
	return "", nil
}

// cardAnswerPrefix starts every accepted card's answer; the task id that
// follows differs from one answer to the next.
var cardAnswerPrefix = []byte(`{"message":"Success","task_id":`)

// checkCardAnswer wants {"message":"Success","task_id":N} with N a positive
// integer, as Hitch writes it (then a newline).
func checkCardAnswer(body []byte) error {
	rest, ok := bytes.CutPrefix(body, cardAnswerPrefix)
	rest, closed := bytes.CutSuffix(bytes.TrimRight(rest, "\n"), []byte("}"))
	if !ok || !closed || len(rest) == 0 || len(rest) > 19 || rest[0] == '0' || bytes.ContainsFunc(rest, notDigit) {
		return fmt.Errorf(`200 without {"message":"Success","task_id":…}: %.200q`, body)
	}
	return nil
}

func notDigit(r rune) bool { return r < '0' || r > '9' }
