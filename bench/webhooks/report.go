package main

import (
	"bufio"
	"fmt"
	"io"
	"time"

	"github.com/hitchdev/hitch/bench/internal/benchreport"
)

// Targets of commit→receipt latency at a paced 500 events/s, on every
// store.
const (
	targetRate = 500
	targetP50  = 50 * time.Millisecond
	targetP99  = 250 * time.Millisecond
)

// report is everything one run measured.
type report struct {
	Machine benchreport.Machine `json:"machine"`
	// LoadAvg is /proc/loadavg at the start: other work on the machine
	// skews every number.
	LoadAvg string        `json:"load_avg"`
	Command string        `json:"command"`
	Store   string        `json:"store"`
	Workers int           `json:"workers"`
	Backlog backlogResult `json:"backlog"`
	Paced   []pacedResult `json:"paced"`
	Notes   []string      `json:"notes,omitempty"`
}

func newReport(o options, store string) *report {
	return &report{
		Machine: benchreport.ThisMachine(),
		LoadAvg: benchreport.LoadAvg(),
		Command: benchreport.CommandLine("go run ./bench/webhooks"),
		Store:   store,
		Workers: o.workers,
	}
}

// lost reports whether an event was not delivered, or a create failed.
func (r *report) lost() bool {
	b := r.Backlog
	if b.Missing > 0 || b.DrainError != "" || len(b.CreateErrors) > 0 {
		return true
	}
	for _, p := range r.Paced {
		if p.Missing > 0 || p.DrainError != "" || p.CreateErrors > 0 {
			return true
		}
	}
	return false
}

// failed says why the run should exit non-zero: lost events or failed
// creates.
func (r *report) failed() error {
	if r.lost() {
		return fmt.Errorf("events were lost or not created: %v", r.Notes)
	}
	return nil
}

// finish writes the notes: failures, and whatever Hitch logged at warn or
// above.
func (r *report) finish(hitchLogs map[string][]string) {
	b := r.Backlog
	if len(b.CreateErrors) > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("backlog: failed creates %v", b.CreateErrors))
	}
	if b.DrainError != "" {
		r.Notes = append(r.Notes, "backlog: "+b.DrainError)
	}
	if b.Missing > 0 || b.Duplicates > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("backlog: %d events missing, %d delivered twice", b.Missing, b.Duplicates))
	}
	for _, p := range r.Paced {
		if p.CreateErrors > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("paced at %g/s: %d creates failed", p.Rate, p.CreateErrors))
		}
		if p.DrainError != "" {
			r.Notes = append(r.Notes, fmt.Sprintf("paced at %g/s: %s", p.Rate, p.DrainError))
		}
		if p.Missing > 0 || p.Duplicates > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("paced at %g/s: %d events missing, %d delivered twice", p.Rate, p.Missing, p.Duplicates))
		}
		if p.CreatedPerSec < 0.9*p.Rate {
			r.Notes = append(r.Notes, fmt.Sprintf("paced at %g/s: events were created at %.0f/s only", p.Rate, p.CreatedPerSec))
		}
	}
	r.Notes = append(r.Notes, benchreport.LogNotes(hitchLogs)...)
}

// writeMarkdown prints the report for a terminal or a Markdown document.
func (r *report) writeMarkdown(w io.Writer) {
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	m, b := r.Machine, r.Backlog
	fmt.Fprintf(bw, "## Webhook delivery on %s\n\n", r.Store)
	fmt.Fprintf(bw, "- machine: %s/%s, %d CPUs, %s, %s; load average %s at the start\n", m.OS, m.Arch, m.CPUs, m.CPUModel, m.GoVersion, r.LoadAvg)
	fmt.Fprintf(bw, "- command: `%s`\n", r.Command)
	fmt.Fprintf(bw, "- hitch: --webhook-workers %d; the receiver answers 200 at once, in a process of its own\n", r.Workers)
	fmt.Fprintf(bw, "- commit→receipt: from the 200 of the create request (its transaction had committed) to the receipt\n\n")

	fmt.Fprintln(bw, "| measure | value |")
	fmt.Fprintln(bw, "|---|--:|")
	fmt.Fprintf(bw, "| backlog: %d events recorded by `hitch serve --workers=false` (%.1f s), delivered by a `hitch worker` started after | %.0f deliveries/s (%.2f s, first receipt to last) |\n",
		b.Events, b.CreateSeconds, b.PerSec, b.Seconds)
	for _, p := range r.Paced {
		fmt.Fprintf(bw, "| `hitch serve`, %d events at %g/s (%.0f/s created): commit→receipt p50 / p99 / max | %s / %s / %s |\n",
			p.Events, p.Rate, p.CreatedPerSec, benchreport.FmtMs(p.Latency.P50Ms), benchreport.FmtMs(p.Latency.P99Ms), benchreport.FmtMs(p.Latency.MaxMs))
		fmt.Fprintf(bw, "| event timestamp→receipt at %g/s: p50 / p99 / max | %s / %s / %s |\n",
			p.Rate, benchreport.FmtMs(p.EventLatency.P50Ms), benchreport.FmtMs(p.EventLatency.P99Ms), benchreport.FmtMs(p.EventLatency.MaxMs))
	}
	fmt.Fprintln(bw)
	for _, check := range r.targetChecks() {
		fmt.Fprintf(bw, "- target: %s\n", check)
	}
	for _, note := range r.Notes {
		fmt.Fprintf(bw, "- note: %s\n", note)
	}
}

// targetChecks compares the paced latencies at the target rate with the
// targets, when every event arrived.
func (r *report) targetChecks() []string {
	var checks []string
	for _, p := range r.Paced {
		if p.Rate != targetRate || p.Delivered == 0 || p.Missing > 0 {
			continue
		}
		for _, t := range []struct {
			name   string
			got    float64
			target time.Duration
		}{{"p50", p.Latency.P50Ms, targetP50}, {"p99", p.Latency.P99Ms, targetP99}} {
			verdict := "ok"
			if t.got > benchreport.Ms(t.target) {
				verdict = "MISSED"
			}
			checks = append(checks, fmt.Sprintf("commit→receipt %s at %d/s %s ≤ %s %s", t.name, targetRate,
				benchreport.FmtMs(t.got), benchreport.FmtMs(benchreport.Ms(t.target)), verdict))
		}
	}
	return checks
}
