package main

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/hitchdev/hitch/bench/internal/benchreport"
)

// The target: over targetUsers users, on either store, p99 of
// POST /detect to webhook receipt at most targetP99.
const (
	targetUsers = 500
	targetP99   = 2 * time.Second
)

// report is everything one run measured; it is also the --json document.
type report struct {
	Machine benchreport.Machine `json:"machine"`
	// LoadAvg is /proc/loadavg's 1, 5 and 15 minute averages at the start:
	// other work on the machine moves every number.
	LoadAvg     string `json:"load_avg"`
	Command     string `json:"command"`
	Store       string `json:"store"`
	Users       int    `json:"users"`
	Concurrency int    `json:"concurrency"`
	// RatePerSec is the requests started per second; 0 for a closed loop.
	RatePerSec     float64 `json:"rate_per_sec"`
	TimeoutSeconds float64 `json:"timeout_seconds"`
	Result         summary `json:"result"`
	PeakRSSBytes   int64   `json:"peak_rss_bytes"`
	TargetP99Ms    float64 `json:"target_p99_ms"`
	// TargetMet is p99 within the target and no failure.
	TargetMet bool     `json:"target_met"`
	Notes     []string `json:"notes,omitempty"`
}

func newReport(o options, store string) *report {
	return &report{
		Machine:        benchreport.ThisMachine(),
		LoadAvg:        benchreport.LoadAvg(),
		Command:        benchreport.CommandLine("go run ./bench/detection"),
		Store:          store,
		Users:          o.users,
		Concurrency:    o.concurrency,
		RatePerSec:     o.rate,
		TimeoutSeconds: o.timeout.Seconds(),
		TargetP99Ms:    benchreport.Ms(targetP99),
	}
}

// finish sets the verdict and the notes: failures, stray deliveries, and
// whatever Hitch logged at warn or above. waitErr is why waiting for the
// webhooks ended early, if it did.
func (r *report) finish(waitErr error, hitchLogs map[string][]string) {
	s := r.Result
	r.TargetMet = s.Latency.Count > 0 && s.Latency.P99Ms <= r.TargetP99Ms && s.failures() == 0
	if len(s.Failed) > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d POST /detect failed %v; first: %s", s.Users-s.Accepted, s.Failed, s.FirstError))
	}
	if waitErr != nil {
		r.Notes = append(r.Notes, waitErr.Error())
	}
	if s.ExtraEvents > 0 || s.Redeliveries > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d events beyond one per user, %d deliveries of an event already received", s.ExtraEvents, s.Redeliveries))
	}
	if s.Strangers > 0 || s.Malformed > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d deliveries for users no request named, %d unreadable", s.Strangers, s.Malformed))
	}
	for _, t := range slices.Sorted(maps.Keys(s.OtherEvents)) {
		r.Notes = append(r.Notes, fmt.Sprintf("%d %s events also arrived", s.OtherEvents[t], t))
	}
	r.Notes = append(r.Notes, benchreport.LogNotes(hitchLogs)...)
}

// failed says why the run should exit non-zero.
func (r *report) failed() error {
	if n := r.Result.failures(); n > 0 {
		return fmt.Errorf("%d failures: requests failed, or users did not receive exactly one event (see the notes)", n)
	}
	return nil
}

// arrival describes how the requests arrived.
func (r *report) arrival() string {
	if r.RatePerSec > 0 {
		return fmt.Sprintf("open loop: one request started every %s (%g/s), by %d senders (a request waits when all are busy)",
			fmtDuration(time.Duration(float64(time.Second)/r.RatePerSec)), r.RatePerSec, r.Concurrency)
	}
	return fmt.Sprintf("closed loop: %d senders, each sending its next request as soon as its previous one is answered, so the requests arrive as one burst", r.Concurrency)
}

// writeMarkdown prints the report for a terminal or a Markdown document.
func (r *report) writeMarkdown(w io.Writer) {
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	m, s := r.Machine, r.Result
	fmt.Fprintf(bw, "## Detection latency on %s: POST /detect to NEW_DETECTED_ACCOUNTS_AVAILABLE, %d users\n\n", r.Store, r.Users)
	fmt.Fprintf(bw, "- machine: %s/%s, %d CPUs, %s, %s; load average %s at the start\n", m.OS, m.Arch, m.CPUs, m.CPUModel, m.GoVersion, r.LoadAvg)
	fmt.Fprintf(bw, "- command: `%s`\n", r.Command)
	fmt.Fprintf(bw, "- store: %s; Hitch in development, where its simulator works each request as a River job\n", r.Store)
	fmt.Fprintf(bw, "- load: %d distinct users, one POST /detect each (bench-<i>@example.com); %s\n", r.Users, r.arrival())
	fmt.Fprintln(bw, "- latency: from just before a user's request is sent to its webhook's arrival at a receiver in the benchmark process, which answers 200 at once;",
		"event time is the envelope's timestamp (whole ms, taken in the detection job's transaction, before its commit)")
	fmt.Fprintln(bw)

	fmt.Fprintln(bw, "| | p50 | p90 | p99 | max |")
	fmt.Fprintln(bw, "|---|--:|--:|--:|--:|")
	for _, row := range []struct {
		name string
		d    dist
	}{
		{"**send → webhook receipt**", s.Latency},
		{"POST /detect answer", s.Answer},
		{"send → event time", s.ToEvent},
		{"event time → receipt", s.EventToReceipt},
	} {
		fmt.Fprintf(bw, "| %s | %s | %s | %s | %s |\n", row.name,
			benchreport.FmtMs(row.d.P50Ms), benchreport.FmtMs(row.d.P90Ms), benchreport.FmtMs(row.d.P99Ms), benchreport.FmtMs(row.d.MaxMs))
	}
	fmt.Fprintln(bw)

	fmt.Fprintln(bw, "| | |")
	fmt.Fprintln(bw, "|---|--:|")
	fmt.Fprintf(bw, "| requests | %d sent in %.2f s (%.0f/s, first send to last answer), %d failed |\n",
		s.Users, s.SendSeconds, s.SendPerSec, s.Users-s.Accepted)
	fmt.Fprintf(bw, "| events | %d of %d users, %d missing, %d extra, %d redelivered |\n",
		s.Received, s.Accepted, s.Missing, s.ExtraEvents, s.Redeliveries)
	fmt.Fprintf(bw, "| accounts per event, min / mean / max | %d / %.1f / %d |\n", s.AccountsMin, s.AccountsMean, s.AccountsMax)
	fmt.Fprintf(bw, "| wall time, first send to last receipt | %.2f s |\n", s.WallSeconds)
	fmt.Fprintf(bw, "| hitch peak RSS | %s |\n\n", benchreport.FmtMiB(r.PeakRSSBytes))

	fmt.Fprintf(bw, "- target%s: %s\n", r.targetScope(), r.targetCheck())
	for _, note := range r.Notes {
		fmt.Fprintf(bw, "- note: %s\n", note)
	}
}

// targetScope says, unless it applies to this run, what the target was set
// for.
func (r *report) targetScope() string {
	if r.Users == targetUsers {
		return ""
	}
	return fmt.Sprintf(" (set for %d users)", targetUsers)
}

// targetCheck compares p99 with the target.
func (r *report) targetCheck() string {
	verdict := "met"
	if !r.TargetMet {
		verdict = "MISSED"
	}
	check := fmt.Sprintf("send → receipt p99 ≤ %s: %s %s", fmtDuration(targetP99), benchreport.FmtMs(r.Result.Latency.P99Ms), verdict)
	if n := r.Result.failures(); n > 0 {
		check += fmt.Sprintf(" (%d failures)", n)
	}
	return check
}

// fmtDuration prints d in seconds from 1 s, in milliseconds below.
func fmtDuration(d time.Duration) string {
	if d >= time.Second {
		return fmt.Sprintf("%g s", d.Seconds())
	}
	return benchreport.FmtMs(benchreport.Ms(d))
}
