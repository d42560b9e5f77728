package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/hitchdev/hitch/bench/internal/benchreport"
	"github.com/hitchdev/hitch/bench/internal/loadgen"
)

// The targets bench/README.md sets at 64 connections besides each
// endpoint's throughput (see endpoint.targetsOnPostgres for the stores).
const (
	targetP99       = 10 * time.Millisecond
	targetRSSBytes  = 80 << 20
	targetColdStart = 300 * time.Millisecond
)

// report is everything one run measured; it is also the --json document.
type report struct {
	Machine         benchreport.Machine `json:"machine"`
	Command         string              `json:"command"`
	Endpoint        string              `json:"endpoint"`
	ResponseBytes   int                 `json:"response_bytes"`
	Store           string              `json:"store"`
	Conns           int                 `json:"conns"`
	WarmupSeconds   float64             `json:"warmup_seconds"`
	DurationSeconds float64             `json:"duration_seconds"`
	ColdStart       coldStart           `json:"cold_start"`
	Results         []targetResult      `json:"results"`
	// HitchBarePercent is Hitch's req/s as a percentage of the bare handler's.
	HitchBarePercent float64 `json:"hitch_bare_throughput_percent"`
	// HitchBareCPU is Hitch's server CPU time per request (its own, plus
	// PostgreSQL's) over the bare handler's.
	HitchBareCPU float64  `json:"hitch_bare_cpu_ratio"`
	Notes        []string `json:"notes,omitempty"`

	ep endpoint
}

// coldStart is the time from starting hitch serve to its first 200 from
// /readyz, over fresh data dirs and databases.
type coldStart struct {
	Runs     int       `json:"runs"`
	MinMs    float64   `json:"min_ms"`
	MedianMs float64   `json:"median_ms"`
	MaxMs    float64   `json:"max_ms"`
	RunsMs   []float64 `json:"runs_ms"`
}

// targetResult is one server's row of the table.
type targetResult struct {
	Target            string           `json:"target"`
	Store             string           `json:"store"`
	Conns             int              `json:"conns"`
	Requests          int64            `json:"requests"`
	Seconds           float64          `json:"seconds"`
	ReqPerSec         float64          `json:"req_per_sec"`
	P50Ms             float64          `json:"p50_ms"`
	P90Ms             float64          `json:"p90_ms"`
	P99Ms             float64          `json:"p99_ms"`
	MaxMs             float64          `json:"max_ms"`
	Errors            int64            `json:"errors"`
	ErrorKinds        map[string]int64 `json:"error_kinds,omitempty"`
	FirstError        string           `json:"first_error,omitempty"`
	ConnectionsDialed int64            `json:"connections_dialed"`
	PeakRSSBytes      int64            `json:"peak_rss_bytes"`
	VmHWMBytes        int64            `json:"vm_hwm_bytes"`
	// CPUMicrosPerReq is the server process's CPU time per measured
	// request, and DatabaseCPUMicrosPerReq that of PostgreSQL's processes
	// (Hitch on PostgreSQL only); -1 where /proc could not be read.
	CPUMicrosPerReq         float64 `json:"cpu_us_per_req"`
	DatabaseCPUMicrosPerReq float64 `json:"database_cpu_us_per_req,omitempty"`
}

func newReport(o options, store string) *report {
	return &report{
		Machine:         benchreport.ThisMachine(),
		Command:         benchreport.CommandLine("go run ./bench/accounts"),
		Endpoint:        o.endpoint.name,
		Store:           store,
		Conns:           o.conns,
		WarmupSeconds:   o.warmup.Seconds(),
		DurationSeconds: o.duration.Seconds(),
		ep:              o.endpoint,
	}
}

func newColdStart(times []time.Duration) coldStart {
	c := coldStart{Runs: len(times)}
	if len(times) == 0 {
		return c
	}
	for _, t := range times {
		c.RunsMs = append(c.RunsMs, benchreport.Ms(t))
	}
	sorted := slices.Sorted(slices.Values(c.RunsMs))
	n := len(sorted)
	c.MinMs, c.MaxMs = sorted[0], sorted[n-1]
	c.MedianMs = (sorted[(n-1)/2] + sorted[n/2]) / 2
	return c
}

func newTargetResult(t target, conns int, s *loadgen.Stats, peakRSS, hwm int64, cpuSeconds []float64) targetResult {
	r := targetResult{
		Target:            t.name,
		Store:             t.store,
		Conns:             conns,
		Requests:          s.Hist.Count(),
		Seconds:           s.Elapsed.Seconds(),
		ReqPerSec:         s.ReqPerSec(),
		P50Ms:             benchreport.Ms(s.Hist.Quantile(0.50)),
		P90Ms:             benchreport.Ms(s.Hist.Quantile(0.90)),
		P99Ms:             benchreport.Ms(s.Hist.Quantile(0.99)),
		MaxMs:             benchreport.Ms(s.Hist.Max()),
		FirstError:        s.Failures.First,
		ConnectionsDialed: s.Dials,
		PeakRSSBytes:      peakRSS,
		VmHWMBytes:        hwm,
	}
	perReq := func(seconds float64) float64 {
		if seconds < 0 || r.Requests == 0 {
			return -1
		}
		return seconds * 1e6 / float64(r.Requests)
	}
	r.CPUMicrosPerReq = perReq(cpuSeconds[0])
	if len(cpuSeconds) > 1 {
		r.DatabaseCPUMicrosPerReq = perReq(cpuSeconds[1])
	}
	if r.Errors = s.Failures.Count(); r.Errors > 0 {
		r.ErrorKinds = s.Failures.ByKind
	}
	return r
}

// result is the row of the named target, if it ran.
func (r *report) result(name string) (targetResult, bool) {
	for _, res := range r.Results {
		if res.Target == name {
			return res, true
		}
	}
	return targetResult{}, false
}

func (r *report) totalErrors() int64 {
	var n int64
	for _, res := range r.Results {
		n += res.Errors
	}
	return n
}

// finish computes the throughput ratio and the notes: failures, connections
// that were not kept alive, and whatever Hitch logged at warn or above.
func (r *report) finish(hitchLogs map[string][]string) {
	bare, okBare := r.result("bare")
	hitchRes, okHitch := r.result("hitch")
	if okBare && okHitch && bare.ReqPerSec > 0 {
		r.HitchBarePercent = 100 * hitchRes.ReqPerSec / bare.ReqPerSec
	}
	if okBare && okHitch && bare.CPUMicrosPerReq > 0 && hitchRes.CPUMicrosPerReq >= 0 {
		r.HitchBareCPU = (hitchRes.CPUMicrosPerReq + max(hitchRes.DatabaseCPUMicrosPerReq, 0)) / bare.CPUMicrosPerReq
	}
	for _, res := range r.Results {
		if res.Errors > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("%s: %d failed requests %v; first: %s", res.Target, res.Errors, res.ErrorKinds, res.FirstError))
		}
		if res.ConnectionsDialed > int64(res.Conns) {
			r.Notes = append(r.Notes, fmt.Sprintf("%s: %d connections dialed for %d workers: some were not kept alive", res.Target, res.ConnectionsDialed, res.Conns))
		}
	}
	r.Notes = append(r.Notes, benchreport.LogNotes(hitchLogs)...)
}

// writeMarkdown prints the report for a terminal or a Markdown document.
func (r *report) writeMarkdown(w io.Writer) {
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	m := r.Machine
	fmt.Fprintf(bw, "## %s\n\n", r.ep.title)
	fmt.Fprintf(bw, "- machine: %s/%s, %d CPUs, %s, %s\n", m.OS, m.Arch, m.CPUs, m.CPUModel, m.GoVersion)
	fmt.Fprintf(bw, "- command: `%s`\n", r.Command)
	fmt.Fprintf(bw, "- load: closed loop on 127.0.0.1, %d connections, %gs warm-up, %gs measured per target\n\n",
		r.Conns, r.WarmupSeconds, r.DurationSeconds)

	fmt.Fprintln(bw, "| target | store | conns | req/s | p50 | p90 | p99 | max | errors | peak RSS | server CPU/req | database CPU/req |")
	fmt.Fprintln(bw, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, res := range r.Results {
		fmt.Fprintf(bw, "| %s | %s | %d | %.0f | %s | %s | %s | %s | %d | %s | %s | %s |\n",
			res.Target, res.Store, res.Conns, res.ReqPerSec,
			benchreport.FmtMs(res.P50Ms), benchreport.FmtMs(res.P90Ms), benchreport.FmtMs(res.P99Ms), benchreport.FmtMs(res.MaxMs),
			res.Errors, benchreport.FmtMiB(res.PeakRSSBytes), fmtMicros(res.CPUMicrosPerReq), fmtMicros(res.DatabaseCPUMicrosPerReq))
	}
	fmt.Fprintln(bw)
	fmt.Fprintf(bw, "hitch/bare throughput: %.0f%%; hitch/bare server CPU per request: %.1f×\n\n", r.HitchBarePercent, r.HitchBareCPU)
	fmt.Fprintf(bw, "- cold start (%s): %s\n", r.Store, r.ColdStart)
	fmt.Fprintf(bw, "- VmHWM at the end: %s\n", r.hwmLine())
	fmt.Fprintf(bw, "- targets%s: %s\n", r.targetsScope(), strings.Join(r.targetChecks(), "; "))
	for _, note := range r.Notes {
		fmt.Fprintf(bw, "- note: %s\n", note)
	}
}

// fmtMicros formats a CPU time per request; a dash where none was read.
func fmtMicros(us float64) string {
	if us <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f µs", us)
}

func (c coldStart) String() string {
	if c.Runs == 0 {
		return "skipped"
	}
	return fmt.Sprintf("min %s, median %s, max %s over %d runs",
		benchreport.FmtMs(c.MinMs), benchreport.FmtMs(c.MedianMs), benchreport.FmtMs(c.MaxMs), c.Runs)
}

func (r *report) hwmLine() string {
	var parts []string
	for _, res := range r.Results {
		parts = append(parts, res.Target+" "+benchreport.FmtMiB(res.VmHWMBytes))
	}
	return strings.Join(parts, ", ")
}

// targetsScope says, unless they apply to this run, what the targets were
// set for.
func (r *report) targetsScope() string {
	switch {
	case r.Conns == 64 && (r.Store == "sqlite" || r.ep.targetsOnPostgres):
		return ""
	case r.ep.targetsOnPostgres:
		return " (set for 64 connections)"
	}
	return " (set for SQLite at 64 connections)"
}

// targetChecks compares Hitch's numbers with the targets.
func (r *report) targetChecks() []string {
	hitchRes, ok := r.result("hitch")
	if !ok {
		return []string{"no hitch result"}
	}
	verdict := func(pass bool) string {
		if pass {
			return "ok"
		}
		return "MISSED"
	}
	checks := []string{
		fmt.Sprintf("throughput %.0f%% ≥ %d%% %s", r.HitchBarePercent, r.ep.throughputPercent,
			verdict(r.HitchBarePercent >= float64(r.ep.throughputPercent))),
		fmt.Sprintf("p99 %s ≤ %s %s", benchreport.FmtMs(hitchRes.P99Ms), benchreport.FmtMs(benchreport.Ms(targetP99)),
			verdict(hitchRes.P99Ms <= benchreport.Ms(targetP99))),
		fmt.Sprintf("peak RSS %s ≤ %s %s", benchreport.FmtMiB(hitchRes.PeakRSSBytes), benchreport.FmtMiB(targetRSSBytes),
			verdict(hitchRes.PeakRSSBytes <= targetRSSBytes)),
	}
	if r.ColdStart.Runs > 0 {
		checks = append(checks, fmt.Sprintf("cold start median %s ≤ %s %s",
			benchreport.FmtMs(r.ColdStart.MedianMs), benchreport.FmtMs(benchreport.Ms(targetColdStart)), verdict(r.ColdStart.MedianMs <= benchreport.Ms(targetColdStart))))
	}
	return checks
}
