package main

import (
	"bufio"
	"fmt"
	"io"

	"github.com/hitchdev/hitch/bench/internal/benchreport"
	"github.com/hitchdev/hitch/bench/internal/loadgen"
)

// The target: at targetConns connections, Hitch's POST /card
// requests/s at least targetPercent of the bare loop's decrypts/s.
const (
	targetConns   = 16
	targetPercent = 70
)

// report is everything one run measured; it is also the --json document.
type report struct {
	Machine benchreport.Machine `json:"machine"`
	// LoadAvg is /proc/loadavg's 1, 5 and 15 minute averages at the start:
	// other work on the machine moves every number.
	LoadAvg string `json:"load_avg"`
	Command string `json:"command"`
	Store   string `json:"store"`
	KeyBits int    `json:"key_bits"`
	JWEs    int    `json:"jwes"`
	// Accounts is how many accounts the cards went to, in turn.
	Accounts        int     `json:"accounts"`
	Conns           int     `json:"conns"`
	WarmupSeconds   float64 `json:"warmup_seconds"`
	DurationSeconds float64 `json:"duration_seconds"`
	Bare            result  `json:"bare"`
	Hitch           result  `json:"hitch"`
	// HitchBarePercent is Hitch's requests/s as a percentage of the bare
	// loop's decrypts/s.
	HitchBarePercent float64  `json:"hitch_bare_percent"`
	TargetPercent    int      `json:"target_percent"`
	TargetMet        bool     `json:"target_met"`
	Notes            []string `json:"notes,omitempty"`
}

// result is one side's measured phase: POST /card requests on Hitch, or
// decrypts in the bare loop.
type result struct {
	Ops        int64            `json:"ops"`
	Seconds    float64          `json:"seconds"`
	PerSec     float64          `json:"per_sec"`
	P50Ms      float64          `json:"p50_ms"`
	P90Ms      float64          `json:"p90_ms"`
	P99Ms      float64          `json:"p99_ms"`
	MaxMs      float64          `json:"max_ms"`
	Errors     int64            `json:"errors"`
	ErrorKinds map[string]int64 `json:"error_kinds,omitempty"`
	FirstError string           `json:"first_error,omitempty"`
	// ConnectionsDialed counts the load generator's connections; 0 for the
	// bare loop.
	ConnectionsDialed int64 `json:"connections_dialed,omitempty"`
	// CPU seconds used in the measured phase, -1 where unknown: by Hitch,
	// by this process (the bare loop, or the load generator), and by the
	// whole machine (so also PostgreSQL and anything else running).
	HitchCPUSeconds   float64 `json:"hitch_cpu_seconds"`
	BenchCPUSeconds   float64 `json:"bench_cpu_seconds"`
	MachineCPUSeconds float64 `json:"machine_cpu_seconds"`
	// CPUMsPerOp is the CPU time of whoever does the work (Hitch, or the
	// bare loop) per request or decrypt.
	CPUMsPerOp   float64 `json:"cpu_ms_per_op"`
	PeakRSSBytes int64   `json:"peak_rss_bytes,omitempty"`
	// Drain is Hitch's work left when the load stopped.
	Drain drain `json:"drain,omitzero"`
}

// drain is how long Hitch stayed busy once its load stopped, working jobs
// the requests queued, and the CPU that took.
type drain struct {
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpu_seconds"`
	// TimedOut says Hitch was still busy when the benchmark stopped
	// waiting.
	TimedOut bool `json:"timed_out,omitempty"`
}

func (d drain) String() string {
	s := fmt.Sprintf("busy %.1f s more, %.2f CPU-s", d.Seconds, d.CPUSeconds)
	if d.TimedOut {
		s += ", and still busy when the benchmark stopped waiting"
	}
	return s
}

func newReport(o options, store string) *report {
	return &report{
		Machine:         benchreport.ThisMachine(),
		LoadAvg:         benchreport.LoadAvg(),
		Command:         benchreport.CommandLine("go run ./bench/card"),
		Store:           store,
		JWEs:            poolSize,
		Accounts:        o.accounts,
		Conns:           o.conns,
		WarmupSeconds:   o.warmup.Seconds(),
		DurationSeconds: o.duration.Seconds(),
		TargetPercent:   targetPercent,
	}
}

// The order of the CPU readers of each measured phase.
const (
	cpuHitch = iota
	cpuBench
	cpuMachine
)

// newResult is s with the CPU seconds of the phase, in the order above;
// worker names the one doing the work, for CPU per operation.
func newResult(s *loadgen.Stats, cpu []float64, worker int) result {
	r := result{
		Ops:               s.Hist.Count(),
		Seconds:           s.Elapsed.Seconds(),
		PerSec:            s.ReqPerSec(),
		P50Ms:             benchreport.Ms(s.Hist.Quantile(0.50)),
		P90Ms:             benchreport.Ms(s.Hist.Quantile(0.90)),
		P99Ms:             benchreport.Ms(s.Hist.Quantile(0.99)),
		MaxMs:             benchreport.Ms(s.Hist.Max()),
		FirstError:        s.Failures.First,
		ConnectionsDialed: s.Dials,
		HitchCPUSeconds:   cpu[cpuHitch],
		BenchCPUSeconds:   cpu[cpuBench],
		MachineCPUSeconds: cpu[cpuMachine],
		CPUMsPerOp:        -1,
	}
	if r.Errors = s.Failures.Count(); r.Errors > 0 {
		r.ErrorKinds = s.Failures.ByKind
	}
	if r.Ops > 0 && cpu[worker] >= 0 {
		r.CPUMsPerOp = 1000 * cpu[worker] / float64(r.Ops)
	}
	return r
}

// finish computes the ratio, the verdict and the notes: failures,
// connections that were not kept alive, and whatever Hitch logged at warn
// or above.
func (r *report) finish(hitchLogs map[string][]string) {
	if r.Bare.PerSec > 0 {
		r.HitchBarePercent = 100 * r.Hitch.PerSec / r.Bare.PerSec
	}
	r.TargetMet = r.HitchBarePercent >= targetPercent && r.totalErrors() == 0
	if r.Bare.Errors > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("bare: %d failed decrypts %v; first: %s", r.Bare.Errors, r.Bare.ErrorKinds, r.Bare.FirstError))
	}
	if r.Hitch.Errors > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("hitch: %d failed requests %v; first: %s", r.Hitch.Errors, r.Hitch.ErrorKinds, r.Hitch.FirstError))
	}
	if r.Hitch.ConnectionsDialed > int64(r.Conns) {
		r.Notes = append(r.Notes, fmt.Sprintf("hitch: %d connections dialed for %d workers: some were not kept alive", r.Hitch.ConnectionsDialed, r.Conns))
	}
	r.Notes = append(r.Notes, benchreport.LogNotes(hitchLogs)...)
}

func (r *report) totalErrors() int64 { return r.Bare.Errors + r.Hitch.Errors }

// writeMarkdown prints the report for a terminal or a Markdown document.
func (r *report) writeMarkdown(w io.Writer) {
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	m := r.Machine
	fmt.Fprintf(bw, "## POST /card with a JWE (RSA-OAEP-256, A256GCM, %d-bit key)\n\n", r.KeyBits)
	fmt.Fprintf(bw, "- machine: %s/%s, %d CPUs, %s, %s; load average %s at the start\n", m.OS, m.Arch, m.CPUs, m.CPUModel, m.GoVersion, r.LoadAvg)
	fmt.Fprintf(bw, "- command: `%s`\n", r.Command)
	fmt.Fprintf(bw, "- store: %s\n", r.Store)
	fmt.Fprintf(bw, "- load: closed loop, %d connections to Hitch on 127.0.0.1 / %d goroutines decrypting, %gs warm-up, %gs measured each, %d distinct JWEs in turn, for %d account(s) of one user\n\n",
		r.Conns, r.Conns, r.WarmupSeconds, r.DurationSeconds, r.JWEs, r.Accounts)

	fmt.Fprintln(bw, "| target | ops/s | p50 | p90 | p99 | max | errors | CPU/op | CPUs: hitch | bench | rest of machine |")
	fmt.Fprintln(bw, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	r.writeRow(bw, "bare go-jose decrypt, in the bench process", r.Bare)
	r.writeRow(bw, "hitch POST /card ("+r.Store+"), bench = load generator", r.Hitch)
	fmt.Fprintln(bw)
	fmt.Fprintf(bw, "hitch/bare throughput: %.0f%%\n\n", r.HitchBarePercent)
	fmt.Fprintf(bw, "- target%s: %s\n", r.targetScope(), r.targetCheck())
	fmt.Fprintf(bw, "- hitch peak RSS: %s\n", benchreport.FmtMiB(r.Hitch.PeakRSSBytes))
	fmt.Fprintf(bw, "- hitch after the load (jobs still queued): %s\n", r.Hitch.Drain)
	fmt.Fprintln(bw, "- the bare loop has every CPU to itself while Hitch idles; Hitch shares them with the load generator;",
		"the bare loop's latencies include waiting for a CPU among its goroutines")
	for _, note := range r.Notes {
		fmt.Fprintf(bw, "- note: %s\n", note)
	}
}

func (r *report) writeRow(w io.Writer, name string, res result) {
	fmt.Fprintf(w, "| %s | %.0f | %s | %s | %s | %s | %d | %s | %s | %s | %s |\n",
		name, res.PerSec,
		benchreport.FmtMs(res.P50Ms), benchreport.FmtMs(res.P90Ms), benchreport.FmtMs(res.P99Ms), benchreport.FmtMs(res.MaxMs),
		res.Errors, fmtCPUPerOp(res.CPUMsPerOp),
		fmtCPUs(res.HitchCPUSeconds, res.Seconds), fmtCPUs(res.BenchCPUSeconds, res.Seconds),
		fmtCPUs(rest(res), res.Seconds))
}

// rest is the CPU seconds the machine spent on neither Hitch nor the
// bench process: PostgreSQL, and whatever else runs.
func rest(res result) float64 {
	if res.MachineCPUSeconds < 0 || res.HitchCPUSeconds < 0 || res.BenchCPUSeconds < 0 {
		return -1
	}
	// The counters are read a moment apart, in ticks of 10 ms.
	return max(res.MachineCPUSeconds-res.HitchCPUSeconds-res.BenchCPUSeconds, 0)
}

// fmtCPUs prints CPU seconds over a phase of seconds as CPUs busy.
func fmtCPUs(cpuSeconds, seconds float64) string {
	if cpuSeconds < 0 || seconds <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", cpuSeconds/seconds)
}

func fmtCPUPerOp(ms float64) string {
	if ms < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f ms", ms)
}

// targetScope says, unless it applies to this run, what the target was set
// for.
func (r *report) targetScope() string {
	if r.Conns == targetConns && r.Accounts == 1 {
		return ""
	}
	return fmt.Sprintf(" (set for %d connections, 1 account)", targetConns)
}

// targetCheck compares the ratio with the target.
func (r *report) targetCheck() string {
	verdict := "met"
	if !r.TargetMet {
		verdict = "MISSED"
	}
	check := fmt.Sprintf("hitch req/s ≥ %d%% of bare decrypts/s: %.0f%% %s", targetPercent, r.HitchBarePercent, verdict)
	if n := r.totalErrors(); n > 0 {
		check += fmt.Sprintf(" (%d failures)", n)
	}
	return check
}
