package main

import (
	"math"
	"testing"
	"time"
)

// ev makes an event committed at ms after t0.
func ev(id string, t0 time.Time, ms int) created {
	return created{id: id, at: t0.Add(time.Duration(ms) * time.Millisecond)}
}

func rcpt(t0 time.Time, ms int) receipt {
	return receipt{at: t0.Add(time.Duration(ms) * time.Millisecond)}
}

func near(got, want float64) bool { return math.Abs(got-want) <= want/100+1e-9 }

func TestSummarizeDeliveries(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	events := []created{ev("a", t0, 0), ev("b", t0, 100), ev("c", t0, 200), ev("d", t0, 300), ev("lost", t0, 400)}
	first := map[string]receipt{
		"a":     rcpt(t0, 10),  // 10 ms
		"b":     rcpt(t0, 90),  // before its 200: counts as 0
		"c":     rcpt(t0, 230), // 30 ms
		"d":     rcpt(t0, 1000),
		"stray": rcpt(t0, 500), // a create that failed after committing
	}
	first["a"] = receipt{at: first["a"].at, eventMs: t0.Add(-5 * time.Millisecond).UnixMilli()}
	s := summarizeDeliveries(events, first, 2, 1)

	if s.Events != 5 || s.Delivered != 4 || s.Missing != 1 || s.Unknown != 1 || s.Duplicates != 2 || s.NoID != 1 || s.Early != 1 {
		t.Errorf("counts = %+v", s)
	}
	// First commit at 0, last receipt at 1000 ms: 4 in one second.
	if !near(s.SpanSeconds, 1) || !near(s.PerSec, 4) {
		t.Errorf("span %v s, %v/s; want 1 s, 4/s", s.SpanSeconds, s.PerSec)
	}
	// The last commit is "lost" at 400 ms; d arrived 600 ms later.
	if !near(s.TailMs, 600) {
		t.Errorf("tail %v ms, want 600", s.TailMs)
	}
	// a, b, c arrived by 400 ms (3 in 0.4 s), d after (1 in 0.6 s).
	if !near(s.DuringPerSec, 7.5) || !near(s.AfterPerSec, 1/0.6) {
		t.Errorf("during %v/s, after %v/s; want 7.5, 1.67", s.DuringPerSec, s.AfterPerSec)
	}
	// Latencies 0, 10, 30, 700 ms.
	if s.Latency.Count != 4 || !near(s.Latency.P50Ms, 10) || !near(s.Latency.MaxMs, 700) || !near(s.Latency.P99Ms, 700) {
		t.Errorf("latency %+v", s.Latency)
	}
	if s.EventLatency.Count != 1 || !near(s.EventLatency.P50Ms, 15) {
		t.Errorf("event latency %+v, want one of 15 ms", s.EventLatency)
	}
}

func TestSummarizeDeliveriesNone(t *testing.T) {
	t.Parallel()
	s := summarizeDeliveries([]created{ev("a", time.Now(), 0)}, map[string]receipt{}, 0, 0)
	if s.Delivered != 0 || s.Missing != 1 || s.PerSec != 0 || s.Latency.Count != 0 {
		t.Errorf("got %+v", s)
	}
}

func TestSummarizeDrain(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	events := []created{ev("a", t0, 0), ev("b", t0, 0), ev("c", t0, 0), ev("d", t0, 0), ev("e", t0, 0), ev("lost", t0, 0)}
	first := map[string]receipt{
		"a": rcpt(t0, 500),  // during the warm-up
		"b": rcpt(t0, 1000), // the window's first instant
		"c": rcpt(t0, 2500),
		"d": rcpt(t0, 3000), // the window's end: after it
		"e": rcpt(t0, 4000),
	}
	released, from, to := t0, t0.Add(time.Second), t0.Add(3*time.Second)
	s := summarizeDrain(events, first, released, from, to)
	want := drainStats{Events: 6, InWindow: 2, WindowPerSec: 1, LeftAtEnd: 3, DrainSeconds: 4, AfterPerSec: 2}
	if s != want {
		t.Errorf("got %+v\nwant %+v", s, want)
	}
}

func TestDropPercent(t *testing.T) {
	t.Parallel()
	tests := []struct{ idle, busy, want float64 }{
		{1000, 750, 25},
		{1000, 1100, -10},
		{0, 10, 0},
	}
	for _, tt := range tests {
		if got := dropPercent(tt.idle, tt.busy); !near(got, tt.want) && got != tt.want {
			t.Errorf("dropPercent(%v, %v) = %v, want %v", tt.idle, tt.busy, got, tt.want)
		}
	}
}
