package api

import (
	"runtime"
	"sync/atomic"
	"time"
)

// busyMemory is how long the API stays busy after its last moment of
// Load's threshold of requests in flight. Fast requests (SQLite's
// GET /accounts/get spends a tenth of a millisecond past authentication)
// reach the threshold often but not always: at 100 ms the API read as idle
// for moments, each of which let every waiting delivery go at once, up to
// --webhook-workers of them (bench/webhooks delivered 661-1,067 a second
// through a busy API paced at 500; at 500 ms, 500).
const busyMemory = 500 * time.Millisecond

// Load tells how busy a node's API is, for the work that yields to it
// (webhook deliveries, --webhook-busy-rate): busy while, within the last
// busyMemory, a developer's request began with at least one other request
// per CPU in flight. That is the API keeping every CPU of the node to
// itself; a few requests now and then never are. Only requests that have
// passed authentication and the rate limit count, so that nobody without
// credentials can hold deliveries back with slow or refused requests.
type Load struct {
	threshold int64
	start     time.Time // for monotonic readings
	inflight  atomic.Int64
	// lastBusy is when a request last began at the threshold, in
	// nanoseconds since start, plus one (0: never).
	lastBusy atomic.Int64
}

// NewLoad returns a Load whose threshold is a request in flight per CPU
// (GOMAXPROCS), at least two.
func NewLoad() *Load {
	return &Load{threshold: int64(max(runtime.GOMAXPROCS(0), 2)), start: time.Now()}
}

// Busy reports whether the API has been busy within the last busyMemory.
func (l *Load) Busy() bool {
	last := l.lastBusy.Load()
	return last != 0 && time.Since(l.start)-time.Duration(last-1) < busyMemory
}

// begin counts a request in flight until the returned func is called.
func (l *Load) begin() (end func()) {
	if l.inflight.Add(1) > l.threshold {
		l.lastBusy.Store(int64(time.Since(l.start)) + 1)
	}
	return l.end
}

func (l *Load) end() { l.inflight.Add(-1) }
