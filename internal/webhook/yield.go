package webhook

import (
	"context"
	"sync"
	"time"
)

// Deliveries and the API share a node's CPUs. Left alone, a backlog of
// deliveries draining at full speed took about a third of the API's
// throughput on SQLite and over half on PostgreSQL (docs/benchmarks.md).
// So while the API is busy, deliveries yield to it: they go out at no more
// than Config.BusyRate a second, and at full speed again as soon as the
// API is not busy. A delivery that yields waits before its attempt; the
// wait is not an attempt and changes nothing of the event.
//
// Yielding must not make a busy API build a backlog of its own: when its
// requests create events faster than the busy rate, deliveries paced at
// that rate would fall further behind for as long as the API stays busy.
// So each delivery this node queues for a new event earns a credit, and a
// delivery with a credit goes out at once: while busy, deliveries go out at
// the busy rate plus the rate events come in, so that the backlog does not
// grow. (Credits are not tied to jobs: River fetches the oldest first, so
// behind an older backlog new events still wait their turn in it.)

// maxYieldWait bounds how long a delivery waits for its turn inside its
// job: one whose turn is further off (a low --webhook-busy-rate for many
// workers) is snoozed instead, so that waiting never eats into the job's
// timeout or counts as a failed attempt.
const maxYieldWait = time.Second

// yieldTick groups the deliveries that yield: those whose turns fall in one
// tick go out together at its end. Spaced out one by one, each delivery
// fetched its job, read its event, recorded its attempt and completed its
// job in statements of its own; together they share them (River fetches
// and completes jobs in batches, a successful attempt with its job's
// completion), which costs the API less; the longer the tick the more
// they share (50 ms against 200 ms: docs/benchmarks.md, session 15).
// Deliveries of new events do not wait for a tick: they go at once on
// their credits.
const yieldTick = 200 * time.Millisecond

// yielder paces deliveries while busy reports true.
type yielder struct {
	busy func() bool
	// interval is the time between two deliveries while busy (1/rate).
	interval time.Duration
	// burst is how many deliveries may go out at once after a pause, as
	// the time they take at the pace: ten of them, or a tick's worth if
	// more (100 at 500 a second).
	burst time.Duration

	// start is the origin of the ticks' grid.
	start time.Time

	mu sync.Mutex
	// next is when the next delivery may go out while busy: a virtual
	// clock that each delivery moves on by interval.
	next time.Time

	// credits are deliveries that may go out at once while busy, earned
	// in the current window of creditWindow (cur) and the one before
	// (prev): a credit is for keeping pace with events coming in now, so
	// one earned for a delivery that could not go out (its receiver was
	// down, say) soon lapses rather than let a burst through later.
	epoch     int64
	cur, prev int64

	// waiting counts the deliveries waiting for their turns. While any
	// does, a watcher polls busy every idlePoll and closes idle once the
	// API is no longer busy, so that they go out then rather than at
	// turns that were paced for a busy API (up to maxYieldWait away).
	waiting int
	idle    chan struct{}
}

// idlePoll is how often a watcher asks whether the API is still busy while
// deliveries wait.
const idlePoll = 10 * time.Millisecond

// creditWindow is how long a credit lasts: one to two windows. A job is
// fetched within tens of milliseconds of its insert when deliveries keep up
// (River polls SQLite every 50 ms), so a credit outlives its job's wait.
const creditWindow = 250 * time.Millisecond

// roll moves the credit windows on to now's; y.mu is held. A now older
// than the windows (read before another caller moved them on) moves
// nothing.
func (y *yielder) roll(now time.Time) {
	epoch := int64(now.Sub(y.start) / creditWindow)
	switch epoch - y.epoch {
	case 0:
		return
	case 1:
		y.prev, y.cur = y.cur, 0
	default:
		if epoch < y.epoch {
			return
		}
		y.prev, y.cur = 0, 0
	}
	y.epoch = epoch
}

// credit lets n more deliveries go out at once while the API is busy: n
// deliveries of new events were queued.
func (y *yielder) credit(n int) {
	if y == nil || n <= 0 {
		return
	}
	y.mu.Lock()
	y.roll(time.Now())
	y.cur += int64(n)
	y.mu.Unlock()
}

// takeCredit uses a credit, if there is one; y.mu is held.
func (y *yielder) takeCredit(now time.Time) bool {
	y.roll(now)
	switch {
	case y.prev > 0:
		y.prev--
	case y.cur > 0:
		y.cur--
	default:
		return false
	}
	return true
}

// newYielder returns a yielder pacing deliveries at rate a second while
// busy; nil (never yield) when busy is nil or rate is not positive.
func newYielder(busy func() bool, rate float64) *yielder {
	if busy == nil || rate <= 0 {
		return nil
	}
	interval := time.Duration(float64(time.Second) / rate)
	return &yielder{busy: busy, interval: interval, burst: max(10*interval, yieldTick), start: time.Now()}
}

// wait returns when a delivery may go out: at once while the API is not
// busy, else at its turn of the pace or as soon as the API is no longer
// busy, whichever comes first, and reports how long it waited. When
// its turn is more than maxYieldWait away it takes no turn and returns at
// once with later, the time to snooze the job for; when ctx ends first it
// returns ctx's error.
func (y *yielder) wait(ctx context.Context) (waited, later time.Duration, err error) {
	if y == nil || !y.busy() {
		return 0, 0, nil
	}
	now := time.Now()
	y.mu.Lock()
	if y.takeCredit(now) {
		y.mu.Unlock()
		return 0, 0, nil
	}
	// A pause earns at most burst: after it, deliveries resume at the pace.
	turn := y.next
	if floor := now.Add(-y.burst); turn.Before(floor) {
		turn = floor
	}
	// The end of the tick the turn falls in, on a grid of the monotonic
	// clock's ticks since the yielder's start.
	sinceStart := turn.Sub(y.start)
	d := y.start.Add((sinceStart + yieldTick - 1).Truncate(yieldTick)).Sub(now)
	if d > maxYieldWait {
		y.mu.Unlock()
		return 0, d, nil
	}
	y.next = turn.Add(y.interval)
	if d <= 0 {
		y.mu.Unlock()
		return 0, 0, nil
	}
	y.waiting++
	if y.idle == nil {
		y.idle = make(chan struct{})
		go y.watch(y.idle)
	}
	idle := y.idle
	y.mu.Unlock()
	defer func() {
		y.mu.Lock()
		y.waiting--
		y.mu.Unlock()
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return d, 0, nil
	case <-idle:
		return time.Since(now), 0, nil
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	}
}

// watch closes idle when the API is no longer busy, letting every waiting
// delivery go, and forgets the turns they had taken: a later busy spell
// starts afresh, with its burst. It returns when no delivery waits.
func (y *yielder) watch(idle chan struct{}) {
	t := time.NewTicker(idlePoll)
	defer t.Stop()
	for range t.C {
		// Read outside y.mu: a delivery that starts waiting as the API
		// turns busy again may go with the others, a burst such as the
		// pace allows after a pause anyway.
		notBusy := !y.busy()
		y.mu.Lock()
		switch {
		case notBusy:
			close(idle)
			y.next = time.Time{}
		case y.waiting > 0:
			y.mu.Unlock()
			continue
		}
		y.idle = nil
		y.mu.Unlock()
		return
	}
}
