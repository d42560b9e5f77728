package main

import (
	"strings"
	"testing"

	"github.com/hitchdev/hitch/bench/internal/proc"
)

// The median is the middle value of each field, or the mean of the two
// middle ones.
func TestMedianOf(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		rounds []roundSummary
		want   roundSummary
	}{
		{"none", nil, roundSummary{}},
		{"one", []roundSummary{{CeilingPerSec: 7}}, roundSummary{CeilingPerSec: 7}},
		{"three, each field apart",
			[]roundSummary{{CeilingPerSec: 9, BacklogCeilingPercent: 40}, {CeilingPerSec: 3, BacklogCeilingPercent: 60}, {CeilingPerSec: 5, BacklogCeilingPercent: 50}},
			roundSummary{CeilingPerSec: 5, BacklogCeilingPercent: 50}},
		{"four", []roundSummary{{FloorPerSec: 1}, {FloorPerSec: 10}, {FloorPerSec: 4}, {FloorPerSec: 6}}, roundSummary{FloorPerSec: 5}},
	} {
		if got := medianOf(tt.rounds); got != tt.want {
			t.Errorf("%s: medianOf = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// With several rounds, each round's shares are its own, and the checks
// read their medians and say so; a round that lost an event fails the run.
func TestReportRounds(t *testing.T) {
	t.Parallel()
	mk := func(ceiling, floor, backlog, flood float64) round {
		var rd round
		rd.Ceiling.PerSec, rd.Floor.PerSec = ceiling, floor
		rd.Deliver.Backlog.PerSec, rd.Deliver.PerSec = backlog, flood
		return rd
	}
	first := mk(10000, 8000, 4000, 2000) // backlog 40% of the ceiling
	r := &report{Ceiling: first.Ceiling, Floor: first.Floor, Deliver: first.Deliver,
		Extra: []round{mk(10000, 7000, 6000, 3000), mk(8000, 6000, 4400, 1000)}} // 60%, 55%
	r.finish(nil)

	if len(r.Rounds) != 3 {
		t.Fatalf("%d rounds summed up, want 3", len(r.Rounds))
	}
	if got := []float64{r.Rounds[0].BacklogCeilingPercent, r.Rounds[1].BacklogCeilingPercent, r.Rounds[2].BacklogCeilingPercent}; got[0] != 40 || got[1] != 60 || got[2] != 55 {
		t.Errorf("backlog shares by round %v, want 40, 60, 55", got)
	}
	if r.Extra[1].Deliver.Backlog.FloorPercent < 73.3 || r.Extra[1].Deliver.Backlog.FloorPercent > 73.4 {
		t.Errorf("round 3's backlog share of its floor %v, want 73.3", r.Extra[1].Deliver.Backlog.FloorPercent)
	}
	// The median of the shares, not the share of the medians (4400/10000).
	if m := r.Median; m.BacklogCeilingPercent != 55 || m.BacklogPerSec != 4400 || m.CeilingPerSec != 10000 || m.FloodPerSec != 2000 {
		t.Errorf("median %+v", m)
	}
	checks := r.targetChecks()
	if want := "backlog deliveries (median of 3 rounds) 55% of the ceiling ≥ 50% ok (the floor: 75% of it)"; checks[0] != want {
		t.Errorf("first check %q, want %q", checks[0], want)
	}
	if !strings.Contains(checks[3], "deliveries under the flood (median of 3 rounds) 2000/s ≥ 1500/s ok") {
		t.Errorf("fourth check %q", checks[3])
	}
	var out strings.Builder
	r.writeMarkdown(&out)
	if !strings.Contains(out.String(), "| 3 | 8000 | 6000 (75%) | 4400 (55%, 73%) | 1000 (12%) |") || !strings.Contains(out.String(), "| median | 10000 |") {
		t.Errorf("the rounds table is missing a row:\n%s", out.String())
	}
	if err := r.failed(); err != nil {
		t.Fatalf("failed() = %v with every event delivered", err)
	}
	for _, tt := range []struct {
		name   string
		mutate func(r *report)
		want   string
	}{
		{"an extra round's backlog lost an event", func(r *report) { r.Extra[1].Deliver.Backlog.Missing = 1 }, "round 3"},
		{"an extra round's flood lost an event", func(r *report) { r.Extra[0].Deliver.Missing = 1 }, "round 2"},
		{"an extra round's creates failed", func(r *report) { r.Extra[0].Deliver.CreateErrors = map[string]int64{"status 500": 1} }, "round 2: creating"},
		{"round 1's paced events were not all delivered", func(r *report) { r.Deliver.DrainError = "paced at 100/s: 1 missing" }, "not delivered"},
	} {
		broken := *r
		broken.Extra = []round{r.Extra[0], r.Extra[1]}
		tt.mutate(&broken)
		if err := broken.failed(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: failed() = %v, want an error naming %q", tt.name, err, tt.want)
		}
	}
}

// The CPU table gives each phase's CPU time per job by process, in µs,
// with a dash for a process the phase did not have.
func TestReportCPU(t *testing.T) {
	t.Parallel()
	r := &report{}
	r.Ceiling = jobsResult{Jobs: 1000, PerSec: 20000, CPU: proc.CPUUse{Seconds: 0.05, BusyPercent: 90,
		GroupSeconds: map[string]float64{"benchmark": 0.03, "postgres": 0.05}, OtherSeconds: 0.01}}
	r.Floor = jobsResult{Jobs: 1000, PerSec: 10000, CPU: proc.CPUUse{Seconds: 0.1, BusyPercent: 95,
		GroupSeconds: map[string]float64{"benchmark": 0.07, "postgres": 0.06, "receiver": 0.05}}}
	r.Deliver.Backlog = backlogDrain{Events: 1000, Missing: 0, PerSec: 5000, CPU: proc.CPUUse{Seconds: 0.2, BusyPercent: 99,
		GroupSeconds: map[string]float64{"benchmark": 0.01, "postgres": 0.2, "receiver": 0.06, "hitch": 0.12}, OtherSeconds: 0.01}}
	var b strings.Builder
	r.writeCPU(&b)
	for _, want := range []string{
		"| 1 | ceiling (no-op jobs) | 20000 | 90% | — | 50 | — | 30 | 10 | 90 |",
		"| 1 | floor (POST-only jobs) | 10000 | 95% | — | 60 | 50 | 70 | 0 | 180 |",
		"| 1 | backlog (deliveries) | 5000 | 99% | 120 | 200 | 60 | 10 | 10 | 400 |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("CPU table lacks %q:\n%s", want, b.String())
		}
	}

	b.Reset()
	(&report{}).writeCPU(&b)
	if b.Len() != 0 {
		t.Errorf("a run without /proc printed a CPU table:\n%s", b.String())
	}
}
