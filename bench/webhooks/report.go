package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/hitchdev/hitch/bench/internal/benchreport"
	"github.com/hitchdev/hitch/bench/internal/proc"
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
	// Extra are the rounds after the first (--rounds), whose ceiling,
	// floor and deliveries are the fields above.
	Extra []round `json:"extra_rounds,omitempty"`
	// Rounds sums up every round, the first included, and Median is their
	// median, field by field: the checks read it.
	Rounds  []roundSummary `json:"rounds"`
	Median  roundSummary   `json:"median"`
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

// roundSummary is what the checks read of one round: its throughputs, the
// flood's p50, and the shares, each computed within the round.
type roundSummary struct {
	CeilingPerSec         float64 `json:"ceiling_per_sec"`
	FloorPerSec           float64 `json:"floor_per_sec"`
	BacklogPerSec         float64 `json:"backlog_per_sec"`
	FloodPerSec           float64 `json:"flood_per_sec"`
	FloodP50Ms            float64 `json:"flood_p50_ms"`
	FloorCeilingPercent   float64 `json:"floor_ceiling_percent"`
	BacklogCeilingPercent float64 `json:"backlog_ceiling_percent"`
	BacklogFloorPercent   float64 `json:"backlog_floor_percent"`
	FloodCeilingPercent   float64 `json:"flood_ceiling_percent"`
}

// summarize computes a round's shares, in its deliveries' backlog too.
func (rd *round) summarize() roundSummary {
	c, f, d := rd.Ceiling.PerSec, rd.Floor.PerSec, &rd.Deliver
	s := roundSummary{CeilingPerSec: c, FloorPerSec: f, BacklogPerSec: d.Backlog.PerSec, FloodPerSec: d.PerSec, FloodP50Ms: d.Latency.P50Ms}
	if c > 0 {
		s.FloorCeilingPercent = 100 * f / c
		s.BacklogCeilingPercent = 100 * d.Backlog.PerSec / c
		s.FloodCeilingPercent = 100 * d.PerSec / c
	}
	if f > 0 {
		s.BacklogFloorPercent = 100 * d.Backlog.PerSec / f
	}
	d.Backlog.CeilingPercent, d.Backlog.FloorPercent = s.BacklogCeilingPercent, s.BacklogFloorPercent
	return s
}

// fields are s's fields, for what is done to each alike.
func (s *roundSummary) fields() []*float64 {
	return []*float64{&s.CeilingPerSec, &s.FloorPerSec, &s.BacklogPerSec, &s.FloodPerSec, &s.FloodP50Ms,
		&s.FloorCeilingPercent, &s.BacklogCeilingPercent, &s.BacklogFloorPercent, &s.FloodCeilingPercent}
}

// medianOf is the median of the rounds, field by field (of the two middle
// values, their mean).
func medianOf(rounds []roundSummary) roundSummary {
	var m roundSummary
	if len(rounds) == 0 {
		return m
	}
	v := make([]float64, len(rounds))
	for f, dst := range m.fields() {
		for i := range rounds {
			v[i] = *rounds[i].fields()[f]
		}
		slices.Sort(v)
		if n := len(v); n%2 == 1 {
			*dst = v[n/2]
		} else {
			*dst = (v[n/2-1] + v[n/2]) / 2
		}
	}
	return m
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

// firstRound is the first round, whose results are the report's own
// fields.
func (r *report) firstRound() round {
	return round{Ceiling: r.Ceiling, Floor: r.Floor, Deliver: r.Deliver}
}

// finish computes the ratio and the notes: failures, and whatever Hitch
// logged at warn or above.
func (r *report) finish(hitchLogs map[string][]string) {
	first := r.firstRound()
	s := first.summarize()
	r.Deliver = first.Deliver
	r.CeilingPercent, r.FloorCeilingPercent = s.FloodCeilingPercent, s.FloorCeilingPercent
	r.Rounds = []roundSummary{s}
	for i := range r.Extra {
		r.Rounds = append(r.Rounds, r.Extra[i].summarize())
	}
	r.Median = medianOf(r.Rounds)

	d := r.Deliver
	r.Notes = append(r.Notes, deliveryNotes("delivery", d)...)
	for i, x := range r.Extra {
		r.Notes = append(r.Notes, deliveryNotes(fmt.Sprintf("round %d: delivery", i+2), x.Deliver)...)
	}
	for _, p := range d.Paced {
		if p.Errors > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("delivery: %d creates at %g/s failed", p.Errors, p.Rate))
		}
		if p.CreatedPerSec < 0.9*p.Rate {
			r.Notes = append(r.Notes, fmt.Sprintf("delivery: events were created at %.0f/s, not the %g/s asked for", p.CreatedPerSec, p.Rate))
		}
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

// deliveryNotes are the notes on one round's deliveries, each starting
// with name: failures, and a flood whose rate was creation's.
func deliveryNotes(name string, d deliveryResult) []string {
	var notes []string
	if bd := d.Backlog; len(bd.CreateErrors) > 0 || bd.Duplicates > 0 {
		notes = append(notes, fmt.Sprintf("%s backlog: failed creates %v, %d duplicates", name, bd.CreateErrors, bd.Duplicates))
	}
	if n := len(d.CreateErrors); n > 0 {
		notes = append(notes, fmt.Sprintf("%s: failed creates %v; first: %s", name, d.CreateErrors, d.FirstError))
	}
	if d.DrainError != "" {
		notes = append(notes, name+": "+d.DrainError)
	}
	if d.Unknown > 0 || d.NoID > 0 {
		notes = append(notes, fmt.Sprintf("%s: %d deliveries of events no create answered for, %d without a webhook-id", name, d.Unknown, d.NoID))
	}
	// When the last delivery follows the last create closely, delivery
	// kept pace with creation and the rate measures creation.
	if d.Delivered > 0 && d.TailMs <= 100*d.SpanSeconds {
		notes = append(notes, fmt.Sprintf("%s: the last event arrived %s after the last create: delivery kept pace with creation, so deliveries/s is creation-bound (%.0f events/s created)",
			name, benchreport.FmtMs(d.TailMs), d.CreatePerSec))
	}
	return notes
}

// failed says why the run should exit non-zero: lost events or failed
// requests.
func (r *report) failed() error {
	d, b := r.Deliver, r.Backlog
	for i, x := range r.Extra {
		if x.Deliver.Missing > 0 || x.Deliver.Backlog.Missing > 0 || x.Deliver.DrainError != "" {
			return fmt.Errorf("round %d: events were not delivered (%d missing in the delivery phase, %d of its backlog)", i+2, x.Deliver.Missing, x.Deliver.Backlog.Missing)
		}
		if len(x.Deliver.CreateErrors) > 0 || len(x.Deliver.Backlog.CreateErrors) > 0 {
			return fmt.Errorf("round %d: creating events failed", i+2)
		}
	}
	switch {
	case d.Missing > 0 || d.Backlog.Missing > 0 || d.DrainError != "" || b.DrainError != "":
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
	if len(r.Rounds) > 1 {
		r.writeRounds(bw)
	}
	r.writeCPU(bw)

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

// writeRounds prints every round and their median. The table above is the
// first round's.
func (r *report) writeRounds(w io.Writer) {
	paced := ""
	if len(r.Deliver.Paced) > 0 {
		paced = ", which alone measured the paced latencies"
	}
	fmt.Fprintf(w, "%d rounds, interleaved (ceiling, floor, deliveries, then the next round), each on fresh databases and a fresh Hitch; the table above is round 1%s. Each round's shares are its own; the median row takes each column's median apart, so its shares are not its throughputs' ratios.\n\n", len(r.Rounds), paced)
	fmt.Fprintln(w, "| round | ceiling jobs/s | floor jobs/s (share of ceiling) | backlog deliveries/s (share of ceiling, of floor) | flood deliveries/s (share of ceiling) | flood p50 |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|")
	row := func(name string, s roundSummary) {
		fmt.Fprintf(w, "| %s | %.0f | %.0f (%.0f%%) | %.0f (%.0f%%, %.0f%%) | %.0f (%.0f%%) | %s |\n", name, s.CeilingPerSec, s.FloorPerSec, s.FloorCeilingPercent,
			s.BacklogPerSec, s.BacklogCeilingPercent, s.BacklogFloorPercent, s.FloodPerSec, s.FloodCeilingPercent, benchreport.FmtMs(s.FloodP50Ms))
	}
	for i, s := range r.Rounds {
		row(fmt.Sprint(i+1), s)
	}
	row("median", r.Median)
	fmt.Fprintln(w)
}

// cpuColumns are the groups of processes the CPU table shows, in order.
var cpuColumns = []string{"hitch", "postgres", "receiver", "benchmark", "other"}

// writeCPU prints, for each round's ceiling, floor and backlog, the CPU
// time each process spent per job or delivery: where the machine's two
// (or more) CPUs went, and so what bounds each rate.
func (r *report) writeCPU(w io.Writer) {
	if r.Ceiling.CPU.GroupSeconds == nil {
		return // no /proc
	}
	rounds := append([]round{r.firstRound()}, r.Extra...)
	fmt.Fprintln(w, "CPU time per job or delivery, by process, in µs (from /proc, in 10 ms ticks; \"other\" is the rest of the machine's busy time), over each phase's timed window:")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| round | phase | per second | machine busy | %s | total |\n", strings.Join(cpuColumns, " | "))
	fmt.Fprintf(w, "|---|---|--:|--:|%s--:|\n", strings.Repeat("--:|", len(cpuColumns)))
	for i, rd := range rounds {
		for _, ph := range []struct {
			name   string
			n      int
			perSec float64
			cpu    proc.CPUUse
		}{
			{"ceiling (no-op jobs)", rd.Ceiling.Jobs, rd.Ceiling.PerSec, rd.Ceiling.CPU},
			{"floor (POST-only jobs)", rd.Floor.Jobs, rd.Floor.PerSec, rd.Floor.CPU},
			{"backlog (deliveries)", rd.Deliver.Backlog.Events - rd.Deliver.Backlog.Missing, rd.Deliver.Backlog.PerSec, rd.Deliver.Backlog.CPU},
		} {
			per := ph.cpu.PerOp(ph.n)
			if per == nil {
				continue
			}
			fmt.Fprintf(w, "| %d | %s | %.0f | %.0f%% |", i+1, ph.name, ph.perSec, ph.cpu.BusyPercent)
			total := 0.0
			for _, c := range cpuColumns {
				v, ok := per[c]
				if !ok {
					fmt.Fprint(w, " — |")
					continue
				}
				total += v
				fmt.Fprintf(w, " %.0f |", v)
			}
			fmt.Fprintf(w, " %.0f |\n", total)
		}
	}
	fmt.Fprintln(w)
}

// targetChecks compares the numbers with the targets.
func (r *report) targetChecks() []string {
	verdict := func(pass bool) string {
		if pass {
			return "ok"
		}
		return "MISSED"
	}
	d, m := r.Deliver, r.Median
	p50 := benchreport.FmtMs(benchreport.Ms(targetP50))
	// Of several rounds, the checks read their medians (say so).
	of := ""
	if len(r.Rounds) > 1 {
		of = fmt.Sprintf(" (median of %d rounds)", len(r.Rounds))
	}
	checks := []string{
		fmt.Sprintf("backlog deliveries%s %.0f%% of the ceiling ≥ %d%% %s (the floor: %.0f%% of it)", of, m.BacklogCeilingPercent, targetCeilingPercent,
			verdict(m.BacklogCeilingPercent >= targetCeilingPercent), m.FloorCeilingPercent),
		fmt.Sprintf("deliveries under the flood%s %.0f%% of the ceiling ≥ %d%% %s", of, m.FloodCeilingPercent, targetCeilingPercent, verdict(m.FloodCeilingPercent >= targetCeilingPercent)),
		fmt.Sprintf("backlog deliveries%s %.0f/s ≥ %d/s %s", of, m.BacklogPerSec, targetPerSec, verdict(m.BacklogPerSec >= targetPerSec)),
		fmt.Sprintf("deliveries under the flood%s %.0f/s ≥ %d/s %s", of, m.FloodPerSec, targetPerSec, verdict(m.FloodPerSec >= targetPerSec)),
	}
	for _, p := range d.Paced {
		checks = append(checks, fmt.Sprintf("p50 at %g/s %s ≤ %s %s", p.Rate, benchreport.FmtMs(p.Latency.P50Ms), p50, verdict(p.Latency.P50Ms <= benchreport.Ms(targetP50))))
	}
	return append(checks,
		fmt.Sprintf("p50 under the flood%s %s ≤ %s %s", of, benchreport.FmtMs(m.FloodP50Ms), p50, verdict(m.FloodP50Ms <= benchreport.Ms(targetP50))),
		fmt.Sprintf("API drop %.0f%% ≤ %d%% %s", r.Backlog.DropPercent, targetDropPercent, verdict(r.Backlog.DropPercent <= targetDropPercent)))
}
