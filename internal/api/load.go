package api

import (
	"runtime"
	"sync/atomic"
	"time"
)

// busyMemory is how long the API stays busy after its last moment of
// Load's threshold of requests in flight.
const busyMemory = 100 * time.Millisecond

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
