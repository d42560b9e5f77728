package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/hitchdev/hitch/bench/internal/benchreport"
)

// Targets of the issue, checked on every store.
const (
	targetCeilingPercent = 50
	targetPerSec         = 1500
	targetP50            = 50 * time.Millisecond
	targetDropPercent    = 25
)

// report is everything one run measured.
type report struct {
	Machine machine    `json:"machine"`
	Command string     `json:"command"`
	Store   string     `json:"store"`
	Events  int        `json:"events"`
	Workers int        `json:"workers"`
	Ceiling jobsResult `json:"ceiling"`
	// Floor is River jobs that only POST to a receiver: a delivery does
	// all they do and more, so they bound deliveries on this machine and
	// store.
	Floor   jobsResult     `json:"floor"`
	Deliver deliveryResult `json:"deliver"`
	Backlog backlogResult  `json:"backlog"`
	// CeilingPercent is deliveries/s as a share of the ceiling.
	CeilingPercent float64 `json:"ceiling_percent"`
	// FloorCeilingPercent is the floor as a share of the ceiling: the
	// share deliveries can be expected to reach at most.
	FloorCeilingPercent float64  `json:"floor_ceiling_percent"`
	WarmupSeconds       float64  `json:"warmup_seconds"`
	DurationSeconds     float64  `json:"duration_seconds"`
	Notes               []string `json:"notes,omitempty"`
}

// machine describes where the run happened.
type machine struct {
	benchreport.Machine
	// LoadAvg is /proc/loadavg's 1, 5 and 15 minute averages: other work
	// on the machine skews every number.
	LoadAvg string `json:"load_avg"`
}

func newReport(o options, store string) *report {
	return &report{
		Machine:         machine{Machine: benchreport.ThisMachine(), LoadAvg: benchreport.LoadAvg()},
		Command:         benchreport.CommandLine("go run ./bench/webhooks"),
		Store:           store,
		Events:          o.events,
		Workers:         o.workers,
		WarmupSeconds:   o.warmup.Seconds(),
		DurationSeconds: o.duration.Seconds(),
	}
}

// finish computes the ratio and the notes: failures, and whatever Hitch
// logged at warn or above.
func (r *report) finish(hitchLogs map[string][]string) {
	if r.Ceiling.PerSec > 0 {
		r.CeilingPercent = 100 * r.Deliver.PerSec / r.Ceiling.PerSec
		r.Deliver.Backlog.CeilingPercent = 100 * r.Deliver.Backlog.PerSec / r.Ceiling.PerSec
		r.FloorCeilingPercent = 100 * r.Floor.PerSec / r.Ceiling.PerSec
	}
	if r.Floor.PerSec > 0 {
		r.Deliver.Backlog.FloorPercent = 100 * r.Deliver.Backlog.PerSec / r.Floor.PerSec
	}
	d := r.Deliver
	for _, p := range d.Paced {
		if p.Errors > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("delivery: %d creates at %g/s failed", p.Errors, p.Rate))
		}
		if p.CreatedPerSec < 0.9*p.Rate {
			r.Notes = append(r.Notes, fmt.Sprintf("delivery: events were created at %.0f/s, not the %g/s asked for", p.CreatedPerSec, p.Rate))
		}
	}
	if bd := d.Backlog; len(bd.CreateErrors) > 0 || bd.Duplicates > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("delivery backlog: failed creates %v, %d duplicates", bd.CreateErrors, bd.Duplicates))
	}
	if n := len(d.CreateErrors); n > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("delivery: failed creates %v; first: %s", d.CreateErrors, d.FirstError))
	}
	if d.DrainError != "" {
		r.Notes = append(r.Notes, "delivery: "+d.DrainError)
	}
	if d.Unknown > 0 || d.NoID > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("delivery: %d deliveries of events no create answered for, %d without a webhook-id", d.Unknown, d.NoID))
	}
	// When the last delivery follows the last create closely, delivery
	// kept pace with creation and the rate measures creation.
	if d.Delivered > 0 && d.TailMs <= 100*d.SpanSeconds {
		r.Notes = append(r.Notes, fmt.Sprintf("delivery: the last event arrived %s after the last create: delivery kept pace with creation, so deliveries/s is creation-bound (%.0f events/s created)",
			benchreport.FmtMs(d.TailMs), d.CreatePerSec))
	}
	b := r.Backlog
	for _, row := range []struct {
		name string
		l    apiLoad
	}{{"idle", b.Idle}, {"backlog", b.Busy}, {"idle after", b.IdleAfter}} {
		name, l := row.name, row.l
		if l.Errors > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("api %s: %d failed requests %v; first: %s", name, l.Errors, l.ErrorKinds, l.FirstError))
		}
		if l.Dials > int64(b.Conns) {
			r.Notes = append(r.Notes, fmt.Sprintf("api %s: %d connections dialed for %d workers", name, l.Dials, b.Conns))
		}
	}
	if len(b.CreateErrors) > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("backlog: failed creates %v", b.CreateErrors))
	}
	if b.DrainError != "" {
		r.Notes = append(r.Notes, "backlog: "+b.DrainError)
	}
	if b.Drain.Events > 0 && b.Drain.LeftAtEnd == 0 {
		r.Notes = append(r.Notes, "backlog: it drained before the measured window ended, so the drop understates the cost of a longer backlog; raise --events or lower --duration")
	}
	r.Notes = append(r.Notes, benchreport.LogNotes(hitchLogs)...)
}

// failed says why the run should exit non-zero: lost events or failed
// requests.
func (r *report) failed() error {
	d, b := r.Deliver, r.Backlog
	switch {
	case d.Missing > 0 || d.Backlog.Missing > 0 || b.DrainError != "":
		return fmt.Errorf("events were not delivered (%d missing in the delivery phase, %d of its backlog)", d.Missing, d.Backlog.Missing)
	case len(d.CreateErrors) > 0 || len(b.CreateErrors) > 0 || len(d.Backlog.CreateErrors) > 0 ||
		slices.ContainsFunc(d.Paced, func(p pacedResult) bool { return p.Errors > 0 }):
		return fmt.Errorf("creating events failed")
	case b.Idle.Errors > 0 || b.Busy.Errors > 0 || b.IdleAfter.Errors > 0:
		return fmt.Errorf("%d API requests failed", b.Idle.Errors+b.Busy.Errors+b.IdleAfter.Errors)
	}
	return nil
}

// writeMarkdown prints the report for a terminal or a Markdown document.
func (r *report) writeMarkdown(w io.Writer) {
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	m, d, b, c := r.Machine, r.Deliver, r.Backlog, r.Ceiling
	fmt.Fprintf(bw, "## Webhook delivery on %s: %d events\n\n", r.Store, r.Events)
	fmt.Fprintf(bw, "- machine: %s/%s, %d CPUs, %s, %s; load average %s at the start\n", m.OS, m.Arch, m.CPUs, m.CPUModel, m.GoVersion, m.LoadAvg)
	fmt.Fprintf(bw, "- command: `%s`\n", r.Command)
	fmt.Fprintf(bw, "- hitch: %d webhook workers; events created on %d connections; the receiver answers 200 at once (the benchmark re-executed as a process of its own)\n", r.Workers, d.CreateConns)
	fmt.Fprintf(bw, "- latency: from the 200 of the create request (its transaction had committed) to the receipt; event time: from the envelope's timestamp (ms, taken in the transaction)\n\n")

	fmt.Fprintln(bw, "| measure | value |")
	fmt.Fprintln(bw, "|---|--:|")
	fmt.Fprintf(bw, "| queue ceiling: no-op River jobs | %.0f jobs/s (%d worked in %.2f s; inserted in %.2f s; all completed at %.2f s) |\n",
		c.PerSec, c.Jobs, c.WorkedSeconds, c.InsertSeconds, c.CompletedSeconds)
	fmt.Fprintf(bw, "| floor: River jobs that only POST an envelope to the receiver | %.0f jobs/s (%d worked in %.2f s; %.0f%% of the ceiling: deliveries do all this and more) |\n",
		r.Floor.PerSec, r.Floor.Jobs, r.Floor.WorkedSeconds, r.FloorCeilingPercent)
	fmt.Fprintf(bw, "| events created | %.0f/s (%d in %.2f s) |\n", d.CreatePerSec, d.Created, d.CreateSeconds)
	fmt.Fprintf(bw, "| deliveries of a backlog: %d events created with deliveries held, then let go | %.0f/s (in %.2f s from the release; %.0f%% of the ceiling, %.0f%% of the floor) |\n",
		d.Backlog.Events, d.Backlog.PerSec, d.Backlog.Seconds, d.Backlog.CeilingPercent, d.Backlog.FloorPercent)
	fmt.Fprintf(bw, "| deliveries while events are created as fast as the API answers | %.0f/s (%d in %.2f s, first commit to last receipt; %.0f%% of the ceiling) |\n",
		d.PerSec, d.Delivered, d.SpanSeconds, r.CeilingPercent)
	fmt.Fprintf(bw, "| commit→receipt under that flood p50 / p99 / max | %s / %s / %s |\n", benchreport.FmtMs(d.Latency.P50Ms), benchreport.FmtMs(d.Latency.P99Ms), benchreport.FmtMs(d.Latency.MaxMs))
	fmt.Fprintf(bw, "| event time→receipt p50 / p99 / max | %s / %s / %s |\n", benchreport.FmtMs(d.EventLatency.P50Ms), benchreport.FmtMs(d.EventLatency.P99Ms), benchreport.FmtMs(d.EventLatency.MaxMs))
	fmt.Fprintf(bw, "| deliveries while events were created / after | %.0f/s / %.0f/s |\n", d.DuringPerSec, d.AfterPerSec)
	fmt.Fprintf(bw, "| last create→last receipt | %s |\n", benchreport.FmtMs(d.TailMs))
	for _, p := range d.Paced {
		fmt.Fprintf(bw, "| commit→receipt at %g events/s (%.0f/s created): p50 / p99 / max | %s / %s / %s |\n",
			p.Rate, p.CreatedPerSec, benchreport.FmtMs(p.Latency.P50Ms), benchreport.FmtMs(p.Latency.P99Ms), benchreport.FmtMs(p.Latency.MaxMs))
	}
	fmt.Fprintf(bw, "| duplicates / missing / before their 200 | %d / %d / %d |\n", d.Duplicates, d.Missing, d.Early)
	fmt.Fprintf(bw, "| connections to the receiver | %d |\n", d.ReceiverConns)
	fmt.Fprintf(bw, "| hitch peak RSS | %s |\n\n", benchreport.FmtMiB(d.PeakRSSBytes))

	fmt.Fprintf(bw, "| GET /accounts/get, %d conns | req/s | p50 | p99 | max | errors |\n", b.Conns)
	fmt.Fprintln(bw, "|---|--:|--:|--:|--:|--:|")
	for _, row := range []struct {
		name string
		l    apiLoad
	}{{"idle", b.Idle}, {"backlog draining", b.Busy}, {"idle again, after the drain", b.IdleAfter}} {
		if row.l.ReqPerSec == 0 && row.l.Errors == 0 {
			continue // not measured
		}
		fmt.Fprintf(bw, "| %s | %.0f | %s | %s | %s | %d |\n", row.name, row.l.ReqPerSec,
			benchreport.FmtMs(row.l.Latency.P50Ms), benchreport.FmtMs(row.l.Latency.P99Ms), benchreport.FmtMs(row.l.Latency.MaxMs), row.l.Errors)
	}
	fmt.Fprintln(bw)
	if b.IdleAfter.ReqPerSec > 0 {
		fmt.Fprintf(bw, "API throughput drop while the backlog drains: %.0f%% against the mean of the two idle loads (%.0f%% against the one before, %.0f%% against the one after)\n\n",
			b.DropPercent, b.DropBeforePercent, b.DropAfterPercent)
	} else {
		fmt.Fprintf(bw, "API throughput drop while the backlog drains: %.0f%% against the idle load before it\n\n", b.DropPercent)
	}
	dr := b.Drain
	fmt.Fprintf(bw, "- backlog: %d events created in %.1f s with deliveries held, then released as the load began; %d delivered in the %gs measured (%.0f/s), %d left when it ended",
		dr.Events, b.CreateSeconds, dr.InWindow, r.DurationSeconds, dr.WindowPerSec, dr.LeftAtEnd)
	if dr.AfterPerSec > 0 {
		fmt.Fprintf(bw, ", delivered at %.0f/s once the load had stopped", dr.AfterPerSec)
	}
	fmt.Fprintf(bw, "; all delivered %.1f s after the release\n", dr.DrainSeconds)
	fmt.Fprintf(bw, "- targets: %s\n", strings.Join(r.targetChecks(), "; "))
	for _, note := range r.Notes {
		fmt.Fprintf(bw, "- note: %s\n", note)
	}
}

// targetChecks compares the numbers with the targets.
func (r *report) targetChecks() []string {
	verdict := func(pass bool) string {
		if pass {
			return "ok"
		}
		return "MISSED"
	}
	d, bd := r.Deliver, r.Deliver.Backlog
	p50 := benchreport.FmtMs(benchreport.Ms(targetP50))
	checks := []string{
		fmt.Sprintf("backlog deliveries %.0f%% of the ceiling ≥ %d%% %s (the floor: %.0f%% of it)", bd.CeilingPercent, targetCeilingPercent,
			verdict(bd.CeilingPercent >= targetCeilingPercent), r.FloorCeilingPercent),
		fmt.Sprintf("deliveries under the flood %.0f%% of the ceiling ≥ %d%% %s", r.CeilingPercent, targetCeilingPercent, verdict(r.CeilingPercent >= targetCeilingPercent)),
		fmt.Sprintf("backlog deliveries %.0f/s ≥ %d/s %s", bd.PerSec, targetPerSec, verdict(bd.PerSec >= targetPerSec)),
		fmt.Sprintf("deliveries under the flood %.0f/s ≥ %d/s %s", d.PerSec, targetPerSec, verdict(d.PerSec >= targetPerSec)),
	}
	for _, p := range d.Paced {
		checks = append(checks, fmt.Sprintf("p50 at %g/s %s ≤ %s %s", p.Rate, benchreport.FmtMs(p.Latency.P50Ms), p50, verdict(p.Latency.P50Ms <= benchreport.Ms(targetP50))))
	}
	return append(checks,
		fmt.Sprintf("p50 under the flood %s ≤ %s %s", benchreport.FmtMs(d.Latency.P50Ms), p50, verdict(d.Latency.P50Ms <= benchreport.Ms(targetP50))),
		fmt.Sprintf("API drop %.0f%% ≤ %d%% %s", r.Backlog.DropPercent, targetDropPercent, verdict(r.Backlog.DropPercent <= targetDropPercent)))
}
