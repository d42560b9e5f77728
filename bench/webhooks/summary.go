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
	Events     int `json:"events"`
	Delivered  int `json:"delivered"`
	Missing    int `json:"missing"`
	Duplicates int `json:"duplicates"`
	// Early counts events that arrived before their create's 200 did (the
	// job can run between the commit and the answer); their latency counts
	// as 0.
	Early int `json:"early"`
	// Latency is from the create's 200 to the receipt; EventLatency from the
	// envelope timestamp (the event's time, set in its transaction, in
	// whole ms) to the receipt.
	Latency      latency `json:"latency"`
	EventLatency latency `json:"event_latency"`
}

// summarizeDeliveries computes the latencies of events from the first
// receipts of every webhook-id; dups is the repeated receipts among them.
func summarizeDeliveries(events []created, first map[string]receipt, dups int) deliveryStats {
	s := deliveryStats{Events: len(events), Duplicates: dups}
	var lat, evLat hist.Histogram
	for _, ev := range events {
		rc, ok := first[ev.id]
		if !ok {
			s.Missing++
			continue
		}
		s.Delivered++
		d := rc.at.Sub(ev.at)
		if d < 0 {
			s.Early++
		}
		lat.Record(d)
		if rc.eventMs > 0 {
			evLat.Record(rc.at.Sub(time.UnixMilli(rc.eventMs)))
		}
	}
	s.Latency, s.EventLatency = latencyOf(&lat), latencyOf(&evLat)
	return s
}
