package refconnector

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hitchdev/hitch/connector/browser"
)

// timedRefresh runs one refresh of the saved session as the SDK runtime
// does (a new session with the state, Refresh, SaveState, Close) and
// returns how long Refresh took and how long the whole took.
func timedRefresh(tb testing.TB, pool *browser.Pool, site *Site, state []byte) (refreshTook, wholeTook time.Duration) {
	tb.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	sess, err := pool.NewSession(ctx, browser.SessionOptions{Label: "refshop/refresh", State: state})
	if err != nil {
		tb.Fatalf("session: %v", err)
	}
	began := time.Now()
	snap, err := site.Refresh(ctx, sess)
	refreshTook = time.Since(began)
	if err != nil {
		sess.Close()
		tb.Fatalf("refresh: %v", err)
	}
	if len(snap.Transactions) != 25 || len(snap.Subscriptions) != 1 {
		tb.Errorf("refresh read %d orders and %d plans, want 25 and 1", len(snap.Transactions), len(snap.Subscriptions))
	}
	if _, err := sess.SaveState(ctx); err != nil {
		tb.Errorf("save state: %v", err)
	}
	sess.Close()
	return refreshTook, time.Since(start)
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkRefresh measures refreshes a minute of ada's 25 orders with 4
// concurrent sessions on one Chromium, as the SDK runtime runs them:
//
//	go test -run '^$' -bench Refresh -benchtime 40x ./examples/refconnector
func BenchmarkRefresh(b *testing.B) {
	pool := newPool(b, 4)
	s := newShop(b)
	site := New(s.URL)
	state := mustLogin(b, pool, site, ada)
	timedRefresh(b, pool, site, state)

	var mu sync.Mutex
	var took []time.Duration
	jobs := make(chan struct{})
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range 4 {
		wg.Go(func() {
			for range jobs {
				_, w := timedRefresh(b, pool, site, state)
				mu.Lock()
				took = append(took, w)
				mu.Unlock()
			}
		})
	}
	for range b.N {
		jobs <- struct{}{}
	}
	close(jobs)
	wg.Wait()
	wall := time.Since(start)
	b.ReportMetric(float64(b.N)/wall.Minutes(), "refreshes/min")
	b.ReportMetric(float64(median(took).Milliseconds()), "median-ms/refresh")
}
