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
		"stray": rcpt(t0, 500), // not one of events
	}
	first["a"] = receipt{at: first["a"].at, eventMs: t0.Add(-5 * time.Millisecond).UnixMilli()}
	s := summarizeDeliveries(events, first, 2)

	if s.Events != 5 || s.Delivered != 4 || s.Missing != 1 || s.Duplicates != 2 || s.Early != 1 {
		t.Errorf("counts = %+v", s)
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
	s := summarizeDeliveries([]created{ev("a", time.Now(), 0)}, map[string]receipt{}, 0)
	if s.Delivered != 0 || s.Missing != 1 || s.Latency.Count != 0 {
		t.Errorf("got %+v", s)
	}
}
