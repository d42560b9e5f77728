package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hitchdev/hitch/bench/internal/loadgen"
)

const (
	// testEventPath records one TEST event, delivered to every endpoint.
	testEventPath = "/development/webhooks/test"
	// requestTimeout bounds one request of the benchmark's clients.
	requestTimeout = 10 * time.Second
)

// created is one event the API recorded, with the instant its 200 arrived:
// by then its transaction, and so its delivery job, had committed.
type created struct {
	id string
	at time.Time
}

// creation is what creating the events saw.
type creation struct {
	events []created
	// start is when the first request was sent, end when the last answer
	// arrived.
	start, end time.Time
	failures   loadgen.Failures
}

func (c *creation) perSec() float64 {
	return float64(len(c.events)) / c.end.Sub(c.start).Seconds()
}

// createEvent sends req, a create, once on c and returns the event it
// recorded; on failure it also returns the kind of failure.
func createEvent(c *loadgen.Conn, req []byte) (ev created, kind string, err error) {
	status, kind, err := c.Do(req, time.Now())
	at := time.Now()
	var answer struct {
		EventID string `json:"event_id"`
	}
	switch {
	case err != nil:
		return created{}, kind, err
	case status != http.StatusOK:
		return created{}, fmt.Sprintf("status %d", status), fmt.Errorf("status %d: %.200s", status, c.Body())
	case json.Unmarshal(c.Body(), &answer) != nil || answer.EventID == "":
		return created{}, "body", fmt.Errorf("no event_id in %.200q", c.Body())
	}
	return created{id: answer.EventID, at: at}, "", nil
}

// createEvents records n TEST events through the API as fast as conns
// concurrent keep-alive connections allow. A failed request is counted, not
// retried.
func createEvents(ctx context.Context, base, user, pass string, n, conns int) (*creation, error) {
	var next atomic.Int64
	return createOn(ctx, base, user, pass, []byte(`{"message":"bench"}`), conns, func() bool {
		return next.Add(1) <= int64(n)
	})
}

// pacedConns is how many connections send paced creates: enough that a
// create waits for none before it (at 1,500/s a create may take up to 20 ms
// before its successor finds no free connection; PostgreSQL's took 8 ms
// with the server delivering, too long for 8 connections).
const pacedConns = 32

// createPaced records events at rate per second for d, each sent at its
// own time (start + i/rate) whatever the others' answers, on pacedConns
// connections: what the latency of a delivery is when events come no
// faster than rate.
func createPaced(ctx context.Context, base, user, pass string, rate float64, d time.Duration) (*creation, error) {
	n := int(rate * d.Seconds())
	interval := time.Duration(float64(time.Second) / rate)
	// The schedule: one slot per event, taken by whichever connection is
	// free; a slot taken late is sent at once.
	slots := make(chan struct{}, n)
	go func() {
		defer close(slots)
		start := time.Now()
		timer := time.NewTimer(0)
		defer timer.Stop()
		for i := range n {
			timer.Reset(time.Until(start.Add(time.Duration(i) * interval)))
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
			slots <- struct{}{}
		}
	}()
	return createOn(ctx, base, user, pass, []byte(`{"message":"paced"}`), pacedConns, func() bool {
		_, ok := <-slots
		return ok
	})
}

// createOn sends creates with body on conns keep-alive connections, each
// for as long as more says another is due, and joins what each recorded.
func createOn(ctx context.Context, base, user, pass string, body []byte, conns int, more func() bool) (*creation, error) {
	u, err := url.Parse(base + testEventPath)
	if err != nil {
		return nil, err
	}
	req := loadgen.Request(http.MethodPost, u, user, pass, body)
	var dials atomic.Int64
	// Each connection records its own results, merged at the end.
	results := make([]creation, conns)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range results {
		r := &results[i]
		wg.Go(func() {
			c := loadgen.NewConn(u.Host, requestTimeout, &dials)
			defer c.Close()
			for ctx.Err() == nil && more() {
				ev, kind, err := createEvent(c, req)
				switch {
				case ctx.Err() != nil:
					return
				case err != nil:
					r.failures.Add(kind, err)
				default:
					r.events = append(r.events, ev)
				}
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cr := &creation{start: start, end: time.Now()}
	for _, r := range results {
		cr.events = append(cr.events, r.events...)
		cr.failures.Merge(r.failures)
	}
	return cr, nil
}
