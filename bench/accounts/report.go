package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"
)

// The targets bench/README.md sets for Hitch on SQLite at 64 connections.
const (
	targetThroughputPercent = 40
	targetP99               = 10 * time.Millisecond
	targetRSSBytes          = 80 << 20
	targetColdStart         = 300 * time.Millisecond
)

// report is everything one run measured; it is also the --json document.
type report struct {
	Machine         machine        `json:"machine"`
	Command         string         `json:"command"`
	Store           string         `json:"store"`
	Conns           int            `json:"conns"`
	WarmupSeconds   float64        `json:"warmup_seconds"`
	DurationSeconds float64        `json:"duration_seconds"`
	ColdStart       coldStart      `json:"cold_start"`
	Results         []targetResult `json:"results"`
	// HitchBarePercent is Hitch's req/s as a percentage of the bare handler's.
	HitchBarePercent float64  `json:"hitch_bare_throughput_percent"`
	Notes            []string `json:"notes,omitempty"`
}

// machine describes where the run happened.
type machine struct {
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	CPUs      int    `json:"cpus"`
	CPUModel  string `json:"cpu_model"`
	GoVersion string `json:"go_version"`
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
}

func newReport(o options, store string) *report {
	return &report{
		Machine:         thisMachine(),
		Command:         commandLine(),
		Store:           store,
		Conns:           o.conns,
		WarmupSeconds:   o.warmup.Seconds(),
		DurationSeconds: o.duration.Seconds(),
	}
}

func newColdStart(times []time.Duration) coldStart {
	c := coldStart{Runs: len(times)}
	if len(times) == 0 {
		return c
	}
	for _, t := range times {
		c.RunsMs = append(c.RunsMs, ms(t))
	}
	sorted := slices.Sorted(slices.Values(c.RunsMs))
	n := len(sorted)
	c.MinMs, c.MaxMs = sorted[0], sorted[n-1]
	c.MedianMs = (sorted[(n-1)/2] + sorted[n/2]) / 2
	return c
}

func newTargetResult(t target, conns int, s *loadStats, peakRSS, hwm int64) targetResult {
	r := targetResult{
		Target:            t.name,
		Store:             t.store,
		Conns:             conns,
		Requests:          s.hist.total,
		Seconds:           s.elapsed.Seconds(),
		ReqPerSec:         float64(s.hist.total) / s.elapsed.Seconds(),
		P50Ms:             ms(s.hist.quantile(0.50)),
		P90Ms:             ms(s.hist.quantile(0.90)),
		P99Ms:             ms(s.hist.quantile(0.99)),
		MaxMs:             ms(s.hist.max),
		FirstError:        s.firstError,
		ConnectionsDialed: s.dials,
		PeakRSSBytes:      peakRSS,
		VmHWMBytes:        hwm,
	}
	for _, n := range s.errors {
		r.Errors += n
	}
	if r.Errors > 0 {
		r.ErrorKinds = s.errors
	}
	return r
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

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
	hitch, okHitch := r.result("hitch")
	if okBare && okHitch && bare.ReqPerSec > 0 {
		r.HitchBarePercent = 100 * hitch.ReqPerSec / bare.ReqPerSec
	}
	for _, res := range r.Results {
		if res.Errors > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("%s: %d failed requests %v; first: %s", res.Target, res.Errors, res.ErrorKinds, res.FirstError))
		}
		if res.ConnectionsDialed > int64(res.Conns) {
			r.Notes = append(r.Notes, fmt.Sprintf("%s: %d connections dialed for %d workers: some were not kept alive", res.Target, res.ConnectionsDialed, res.Conns))
		}
	}
	names := make([]string, 0, len(hitchLogs))
	for name := range hitchLogs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		lines := hitchLogs[name]
		r.Notes = append(r.Notes, fmt.Sprintf("%s logged %d lines at warn or above; first: %.300s", name, len(lines), lines[0]))
	}
}

// writeMarkdown prints the report for a terminal or a Markdown document.
func (r *report) writeMarkdown(w io.Writer) {
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	m := r.Machine
	fmt.Fprintf(bw, "## GET /accounts/get, %d linked accounts\n\n", linkedAccounts)
	fmt.Fprintf(bw, "- machine: %s/%s, %d CPUs, %s, %s\n", m.OS, m.Arch, m.CPUs, m.CPUModel, m.GoVersion)
	fmt.Fprintf(bw, "- command: `%s`\n", r.Command)
	fmt.Fprintf(bw, "- load: closed loop on 127.0.0.1, %d connections, %gs warm-up, %gs measured per target\n\n",
		r.Conns, r.WarmupSeconds, r.DurationSeconds)

	fmt.Fprintln(bw, "| target | store | conns | req/s | p50 | p90 | p99 | max | errors | peak RSS |")
	fmt.Fprintln(bw, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, res := range r.Results {
		fmt.Fprintf(bw, "| %s | %s | %d | %.0f | %s | %s | %s | %s | %d | %s |\n",
			res.Target, res.Store, res.Conns, res.ReqPerSec,
			fmtMs(res.P50Ms), fmtMs(res.P90Ms), fmtMs(res.P99Ms), fmtMs(res.MaxMs), res.Errors, fmtMiB(res.PeakRSSBytes))
	}
	fmt.Fprintln(bw)
	fmt.Fprintf(bw, "hitch/bare throughput: %.0f%%\n\n", r.HitchBarePercent)
	fmt.Fprintf(bw, "- cold start (%s): %s\n", r.Store, r.ColdStart)
	fmt.Fprintf(bw, "- VmHWM at the end: %s\n", r.hwmLine())
	fmt.Fprintf(bw, "- targets%s: %s\n", r.targetsScope(), strings.Join(r.targetChecks(), "; "))
	for _, note := range r.Notes {
		fmt.Fprintf(bw, "- note: %s\n", note)
	}
}

func (c coldStart) String() string {
	if c.Runs == 0 {
		return "skipped"
	}
	return fmt.Sprintf("min %s, median %s, max %s over %d runs", fmtMs(c.MinMs), fmtMs(c.MedianMs), fmtMs(c.MaxMs), c.Runs)
}

func (r *report) hwmLine() string {
	var parts []string
	for _, res := range r.Results {
		parts = append(parts, res.Target+" "+fmtMiB(res.VmHWMBytes))
	}
	return strings.Join(parts, ", ")
}

func (r *report) targetsScope() string {
	if r.Store == "sqlite" && r.Conns == 64 {
		return ""
	}
	return " (set for SQLite at 64 connections)"
}

// targetChecks compares Hitch's numbers with the targets.
func (r *report) targetChecks() []string {
	hitch, ok := r.result("hitch")
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
		fmt.Sprintf("throughput %.0f%% ≥ %d%% %s", r.HitchBarePercent, targetThroughputPercent, verdict(r.HitchBarePercent >= targetThroughputPercent)),
		fmt.Sprintf("p99 %s ≤ %s %s", fmtMs(hitch.P99Ms), fmtMs(ms(targetP99)), verdict(hitch.P99Ms <= ms(targetP99))),
		fmt.Sprintf("peak RSS %s ≤ %s %s", fmtMiB(hitch.PeakRSSBytes), fmtMiB(targetRSSBytes), verdict(hitch.PeakRSSBytes <= targetRSSBytes)),
	}
	if r.ColdStart.Runs > 0 {
		checks = append(checks, fmt.Sprintf("cold start median %s ≤ %s %s",
			fmtMs(r.ColdStart.MedianMs), fmtMs(ms(targetColdStart)), verdict(r.ColdStart.MedianMs <= ms(targetColdStart))))
	}
	return checks
}

func fmtMs(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f ms", v)
	}
	return fmt.Sprintf("%.2f ms", v)
}

func fmtMiB(b int64) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}

// writeJSON writes the report to path.
func (r *report) writeJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func thisMachine() machine {
	return machine{
		OS:        runtime.GOOS,
		Arch:      runtime.GOARCH,
		CPUs:      runtime.NumCPU(),
		CPUModel:  cpuModel(),
		GoVersion: runtime.Version(),
	}
}

// cpuModel is the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for line := range strings.Lines(string(info)) {
		key, value, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return "unknown CPU"
}

// commandLine is how the benchmark was started, quoted for a shell; a
// binary from `go run` shows as go run ./bench/accounts.
func commandLine() string {
	prog := os.Args[0]
	if strings.Contains(prog, string(os.PathSeparator)+"go-build") {
		prog = "go run ./bench/accounts"
	}
	parts := []string{prog}
	for _, arg := range os.Args[1:] {
		parts = append(parts, shellQuote(redactPassword(arg)))
	}
	return strings.Join(parts, " ")
}

// redactPassword hides the password of a database URL argument, so that
// reports can be shared.
func redactPassword(arg string) string {
	prefix, rawURL := "", arg
	if name, value, ok := strings.Cut(arg, "="); ok && strings.HasPrefix(name, "-") {
		prefix, rawURL = name+"=", value
	}
	if !isPostgresURL(rawURL) {
		return arg
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return prefix + "<unparsable URL>"
	}
	return prefix + u.Redacted()
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
