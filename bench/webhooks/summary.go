package main

import (
	"time"

	"github.com/hitchdev/hitch/bench/internal/benchreport"
	"github.com/hitchdev/hitch/bench/internal/hist"
)

// latency is a distribution in milliseconds.
type latency struct {
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
	MaxMs float64 `json:"max_ms"`
	Count int64   `json:"count"`
}

func latencyOf(h *hist.Histogram) latency {
	return latency{P50Ms: benchreport.Ms(h.Quantile(0.50)), P99Ms: benchreport.Ms(h.Quantile(0.99)), MaxMs: benchreport.Ms(h.Max()), Count: h.Count()}
}

// deliveryStats joins the events created with what the receiver got.
type deliveryStats struct {
	Events    int `json:"events"`
	Delivered int `json:"delivered"`
	Missing   int `json:"missing"`
	// Unknown are webhook-ids no create answered with: an event whose
	// request failed after its transaction committed.
	Unknown    int `json:"unknown"`
	Duplicates int `json:"duplicates"`
	NoID       int `json:"no_id"`
	// Early counts events that arrived before their create's 200 did (the
	// job can run between the commit and the answer); their latency counts
	// as 0.
	Early int `json:"early"`
	// SpanSeconds runs from the first 200 to the last receipt.
	SpanSeconds float64 `json:"span_seconds"`
	PerSec      float64 `json:"per_sec"`
	// TailMs runs from the last 200 to the last receipt: how far delivery
	// was behind creation when creation stopped.
	TailMs float64 `json:"tail_ms"`
	// DuringPerSec is the delivery rate while events were being created
	// (first to last 200), AfterPerSec the rate after.
	DuringPerSec float64 `json:"during_per_sec"`
	AfterPerSec  float64 `json:"after_per_sec"`
	// Latency is from the create's 200 to the receipt; EventLatency from the
	// envelope timestamp (the event's time, set in its transaction, in
	// whole ms) to the receipt.
	Latency      latency `json:"latency"`
	EventLatency latency `json:"event_latency"`
}

// summarizeDeliveries computes the delivery rate and latencies.
func summarizeDeliveries(events []created, first map[string]receipt, dups, noID int) deliveryStats {
	s := deliveryStats{Events: len(events), Duplicates: dups, NoID: noID}
	var lat, evLat hist.Histogram
	receipts := make([]time.Time, 0, len(events))
	var firstCommit, lastCommit, lastReceipt time.Time
	for _, ev := range events {
		if firstCommit.IsZero() || ev.at.Before(firstCommit) {
			firstCommit = ev.at
		}
		if ev.at.After(lastCommit) {
			lastCommit = ev.at
		}
		rc, ok := first[ev.id]
		if !ok {
			s.Missing++
			continue
		}
		s.Delivered++
		if rc.at.After(lastReceipt) {
			lastReceipt = rc.at
		}
		receipts = append(receipts, rc.at)
		d := rc.at.Sub(ev.at)
		if d < 0 {
			s.Early++
		}
		lat.Record(d)
		if rc.eventMs > 0 {
			evLat.Record(rc.at.Sub(time.UnixMilli(rc.eventMs)))
		}
	}
	s.Unknown = len(first) - s.Delivered
	if s.Delivered > 0 {
		span := lastReceipt.Sub(firstCommit)
		s.SpanSeconds = span.Seconds()
		if span > 0 {
			s.PerSec = float64(s.Delivered) / span.Seconds()
		}
		s.TailMs = benchreport.Ms(lastReceipt.Sub(lastCommit))
		during := 0
		for _, at := range receipts {
			if !at.After(lastCommit) {
				during++
			}
		}
		if d := lastCommit.Sub(firstCommit); d > 0 {
			s.DuringPerSec = float64(during) / d.Seconds()
		}
		if d := lastReceipt.Sub(lastCommit); d > 0 && during < s.Delivered {
			s.AfterPerSec = float64(s.Delivered-during) / d.Seconds()
		}
	}
	s.Latency, s.EventLatency = latencyOf(&lat), latencyOf(&evLat)
	return s
}

// drainStats describe a backlog let go at once.
type drainStats struct {
	Events int `json:"events"`
	// InWindow were delivered during the measured API load, at
	// WindowPerSec; LeftAtEnd were still waiting when it ended.
	InWindow     int     `json:"in_window"`
	WindowPerSec float64 `json:"window_per_sec"`
	LeftAtEnd    int     `json:"left_at_end"`
	// DrainSeconds runs from the release to the last receipt.
	DrainSeconds float64 `json:"drain_seconds"`
	// AfterPerSec is the rate once the API load had stopped; 0 when
	// nothing was left.
	AfterPerSec float64 `json:"after_per_sec"`
}

// summarizeDrain counts which of events arrived before, during and after
// the measured window [from, to).
func summarizeDrain(events []created, first map[string]receipt, released, from, to time.Time) drainStats {
	s := drainStats{Events: len(events)}
	var last time.Time
	deliveredByEnd, after := 0, 0
	for _, ev := range events {
		rc, ok := first[ev.id]
		if !ok {
			continue
		}
		if rc.at.After(last) {
			last = rc.at
		}
		switch {
		case !rc.at.Before(to):
			after++
		case !rc.at.Before(from):
			s.InWindow++
			deliveredByEnd++
		default:
			deliveredByEnd++
		}
	}
	s.LeftAtEnd = len(events) - deliveredByEnd
	if w := to.Sub(from); w > 0 {
		s.WindowPerSec = float64(s.InWindow) / w.Seconds()
	}
	if !last.IsZero() {
		s.DrainSeconds = last.Sub(released).Seconds()
	}
	if after > 0 && last.After(to) {
		s.AfterPerSec = float64(after) / last.Sub(to).Seconds()
	}
	return s
}

// dropPercent is how much lower busy is than idle, in percent (negative
// when it is higher).
func dropPercent(idle, busy float64) float64 {
	if idle <= 0 {
		return 0
	}
	return 100 * (idle - busy) / idle
}
