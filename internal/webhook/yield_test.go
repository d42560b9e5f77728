package webhook

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hitchdev/hitch/internal/event"
	"github.com/hitchdev/hitch/internal/queue"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// While the API is not busy deliveries never wait; while it is, they go
// out at the busy rate after a short burst, and at once again when it no
// longer is.
func TestYielderPacesWhileBusy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var busy atomic.Bool
	y := newYielder(busy.Load, 20) // one every 50 ms; a burst of 10 (500 ms)
	start := time.Now()
	for range 100 {
		if waited, later, err := y.wait(ctx); err != nil || waited != 0 || later != 0 {
			t.Fatalf("not busy: waited %v, later %v, %v", waited, later, err)
		}
	}
	if took := time.Since(start); took > 50*time.Millisecond {
		t.Fatalf("100 deliveries with the API idle took %v", took)
	}

	busy.Store(true)
	start = time.Now()
	var total time.Duration
	for range 30 {
		waited, later, err := y.wait(ctx)
		if err != nil || later != 0 {
			t.Fatal(later, err)
		}
		total += waited
	}
	// They go out one every 50 ms from a virtual clock at most a burst
	// (10 of them) behind, at the end of the tick their turn falls in:
	// the last at (30-1-10) * 50 ms = 950 ms, in the tick ending at 1 s.
	if took := time.Since(start); took < 900*time.Millisecond || took > 3*time.Second {
		t.Fatalf("30 deliveries at 20/s with the API busy took %v, want about 1 s", took)
	}
	if total < 600*time.Millisecond {
		t.Fatalf("the deliveries report %v of waiting", total)
	}

	busy.Store(false)
	start = time.Now()
	if waited, later, err := y.wait(ctx); err != nil || waited != 0 || later != 0 || time.Since(start) > 10*time.Millisecond {
		t.Fatalf("once the API is idle again: waited %v, later %v, %v", waited, later, err)
	}
}

// A delivery waiting its turn gives up when its job's context ends.
func TestYielderStopsWithContext(t *testing.T) {
	t.Parallel()
	y := newYielder(func() bool { return true }, 5) // one every 200 ms, a burst of 2 s
	for range 11 {                                  // the burst, and the one due now
		if _, _, err := y.wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, later, err := y.wait(ctx); !errors.Is(err, context.DeadlineExceeded) || later != 0 {
		t.Fatalf("wait = later %v, %v; want the context's error", later, err)
	}
	if took := time.Since(start); took > 150*time.Millisecond {
		t.Fatalf("wait returned %v after its context ended", took)
	}
}

// Deliveries waiting their turns go out as soon as the API is no longer
// busy, not at turns paced for a busy API, and the turns they had taken
// are forgotten: the next busy spell starts with its burst again.
func TestYielderWakesWhenIdle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var busy atomic.Bool
	busy.Store(true)
	y := newYielder(busy.Load, 5) // one every 200 ms, a burst of 2 s
	for range 11 {                // the burst, and the one due now
		if _, later, err := y.wait(ctx); err != nil || later != 0 {
			t.Fatal(later, err)
		}
	}
	// Four more take turns 200 to 800 ms away.
	type result struct {
		waited time.Duration
		err    error
	}
	results := make(chan result, 4)
	for range 4 {
		go func() {
			waited, later, err := y.wait(ctx)
			if err == nil && later != 0 {
				err = fmt.Errorf("told to snooze for %v", later)
			}
			results <- result{waited, err}
		}()
	}
	waitFor(t, func() bool {
		y.mu.Lock()
		defer y.mu.Unlock()
		return y.waiting == 4
	})
	busy.Store(false)
	idleAt := time.Now()
	for range 4 {
		r := <-results
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.waited <= 0 || r.waited > 150*time.Millisecond {
			t.Errorf("a delivery waiting while the API went idle waited %v, want under %v", r.waited, 150*time.Millisecond)
		}
	}
	if took := time.Since(idleAt); took > 100*time.Millisecond {
		t.Fatalf("the waiting deliveries went out %v after the API went idle", took)
	}

	// The watcher is gone: a later spell starts one of its own.
	waitFor(t, func() bool {
		y.mu.Lock()
		defer y.mu.Unlock()
		return y.idle == nil
	})

	busy.Store(true)
	for i := range 10 { // a fresh burst: no turn of the last spell is left
		if waited, later, err := y.wait(ctx); err != nil || waited != 0 || later != 0 {
			t.Fatalf("delivery %d of the next busy spell: waited %v, later %v, %v", i, waited, later, err)
		}
	}
	// And it is paced again: after the one due now (at its tick's end),
	// the next is an interval (200 ms) further.
	if _, later, err := y.wait(ctx); err != nil || later != 0 {
		t.Fatal(later, err)
	}
	if waited, later, err := y.wait(ctx); err != nil || later != 0 || waited < 150*time.Millisecond {
		t.Fatalf("the delivery after the burst: waited %v, later %v, %v; want about 200 ms", waited, later, err)
	}
}

// Deliveries whose turns fall in one tick go out together, at its end on
// the grid of ticks since the yielder's start.
func TestYielderGroupsByTick(t *testing.T) {
	t.Parallel()
	y := newYielder(func() bool { return true }, 100) // one every 10 ms; a burst of one tick (20)
	for range 20 {
		if waited, later, err := y.wait(context.Background()); err != nil || waited != 0 || later != 0 {
			t.Fatal(waited, later, err)
		}
	}
	// Five turns 0 to 40 ms away: one tick, or two if it ends among them.
	done := make(chan time.Time, 5)
	for range 5 {
		go func() {
			if _, later, err := y.wait(context.Background()); err != nil || later != 0 {
				t.Error(later, err)
			}
			done <- time.Now()
		}()
	}
	ends := map[time.Duration]int{}
	for range 5 {
		at := (<-done).Sub(y.start)
		tick := at.Truncate(yieldTick)
		if at-tick > 20*time.Millisecond {
			t.Errorf("a delivery went %v after a tick's end, not at it", at-tick)
		}
		ends[tick]++
	}
	if len(ends) > 2 {
		t.Errorf("five turns 40 ms apart went at %d tick ends, want one or two: %v", len(ends), ends)
	}
}

// A watcher stops once no delivery waits, while the API stays busy.
func TestYielderWatcherStops(t *testing.T) {
	t.Parallel()
	y := newYielder(func() bool { return true }, 50) // one every 20 ms, a burst of 200 ms
	for range 12 {
		if _, later, err := y.wait(context.Background()); err != nil || later != 0 {
			t.Fatal(later, err)
		}
	}
	waitFor(t, func() bool {
		y.mu.Lock()
		defer y.mu.Unlock()
		return y.idle == nil && y.waiting == 0
	})
}

// A delivery whose turn is more than maxYieldWait away does not wait in
// its job: it is told how long to snooze for, and takes no turn.
func TestYielderSnoozesLongWaits(t *testing.T) {
	t.Parallel()
	y := newYielder(func() bool { return true }, 0.5) // one every 2 s, a burst of 20 s
	for range 11 {
		if _, later, err := y.wait(context.Background()); err != nil || later != 0 {
			t.Fatal(later, err)
		}
	}
	for range 3 { // no turn is taken, so each is told the same
		start := time.Now()
		waited, later, err := y.wait(context.Background())
		if err != nil || waited != 0 || later < 1900*time.Millisecond || later > 2100*time.Millisecond {
			t.Fatalf("wait = waited %v, later %v, %v; want later about 2 s", waited, later, err)
		}
		if took := time.Since(start); took > 100*time.Millisecond {
			t.Fatalf("a snoozed delivery waited %v", took)
		}
	}
}

// Without a busy signal, or at a rate of 0, deliveries never yield.
func TestYielderOff(t *testing.T) {
	t.Parallel()
	for _, y := range []*yielder{newYielder(nil, 100), newYielder(func() bool { return true }, 0)} {
		if waited, later, err := y.wait(context.Background()); y != nil || waited != 0 || later != 0 || err != nil {
			t.Fatalf("yielder %+v: waited %v, later %v, %v", y, waited, later, err)
		}
	}
}

// While the API is busy, the deliveries of new events go out at once, one
// per credit, so that a busy API creating events faster than the busy rate
// does not build a backlog; without credits they wait their turn, and a
// credit lapses after one to two windows.
func TestYielderCreditsKeepPaceWithNewEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	y := newYielder(func() bool { return true }, 0.5) // one every 2 s, a burst of 20 s
	for range 11 {                                    // the burst, and the one due now
		if _, later, err := y.wait(ctx); err != nil || later != 0 {
			t.Fatal(later, err)
		}
	}
	if _, later, _ := y.wait(ctx); later == 0 {
		t.Fatal("with the burst spent and no credit, a delivery went out")
	}
	y.credit(3)
	y.mu.Lock()
	next := y.next
	y.mu.Unlock()
	for i := range 3 {
		if waited, later, err := y.wait(ctx); err != nil || waited != 0 || later != 0 {
			t.Fatalf("credited delivery %d: waited %v, later %v, %v", i, waited, later, err)
		}
	}
	// A time read before another caller moved the windows on leaves the
	// credits alone.
	y.credit(1)
	y.mu.Lock()
	if !y.next.Equal(next) {
		t.Errorf("credited deliveries moved the pace's clock from %v to %v", next, y.next)
	}
	if !y.takeCredit(y.start.Add(time.Duration(y.epoch-1) * creditWindow)) {
		t.Error("a stale time lost the credit")
	}
	y.mu.Unlock()
	if _, later, _ := y.wait(ctx); later == 0 {
		t.Fatal("a fourth delivery went out on three credits")
	}

	// Credits earned in one window last through the next, not longer.
	y.mu.Lock()
	y.epoch, y.cur, y.prev = 100, 0, 0
	y.start = time.Now().Add(-100 * creditWindow)
	y.mu.Unlock()
	y.credit(5)
	y.mu.Lock()
	y.start = y.start.Add(-creditWindow) // a window later
	y.mu.Unlock()
	if _, later, err := y.wait(ctx); err != nil || later != 0 {
		t.Fatalf("a credit of the window before: later %v, %v", later, err)
	}
	y.mu.Lock()
	y.start = y.start.Add(-creditWindow) // two windows later
	y.mu.Unlock()
	if _, later, _ := y.wait(ctx); later == 0 {
		t.Fatal("a credit two windows old was spent")
	}
	var none *yielder
	none.credit(1) // a node that never yields takes credits without effect
}

// Dispatching a new event's deliveries earns a credit per delivery;
// resending an event earns none.
func TestDispatchEarnsCredits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.OpenSQLite(t)
	if err := queue.Migrate(ctx, st); err != nil {
		t.Fatal(err)
	}
	q, err := queue.New(st, queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	events := &event.Log{}
	s := NewService(st, q, nil, nil, events, slog.New(slog.DiscardHandler), time.Now,
		Config{APIBusy: func() bool { return true }, BusyRate: 1})
	keys := seedDeliveries(t, st, 1) // one endpoint, enabled
	now := time.Now().UTC()
	for _, ep := range []*store.WebhookEndpoint{
		{ID: "we_b", Status: store.WebhookEndpointEnabled},
		{ID: "we_off", Status: store.WebhookEndpointDisabled},
	} {
		ep.ClientID, ep.URL, ep.SecretSealed, ep.CreatedAt, ep.UpdatedAt = keys[0].ClientID, "https://example.com/"+ep.ID, []byte("s"), now, now
		if err := st.WebhookEndpointInsert(ctx, ep); err != nil {
			t.Fatal(err)
		}
	}
	credits := func() int64 {
		s.yield.mu.Lock()
		defer s.yield.mu.Unlock()
		s.yield.roll(time.Now())
		return s.yield.cur + s.yield.prev
	}
	var ev *store.Event
	if err := st.InTx(ctx, func(ex store.Executor) error {
		ev, err = events.Record(ctx, ex, event.Params{ClientID: keys[0].ClientID, Type: event.Test, At: now})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got := credits(); got != 2 {
		t.Fatalf("%d credits after an event for two enabled endpoints, want 2", got)
	}
	if n, err := s.Resend(ctx, keys[0].ClientID, ev.ID, ""); err != nil || n != 2 {
		t.Fatalf("Resend = %d, %v", n, err)
	}
	if got := credits(); got != 2 {
		t.Fatalf("%d credits after a resend, want still 2", got)
	}
}
