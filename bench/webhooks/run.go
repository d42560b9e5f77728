package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/hitchdev/hitch/bench/internal/benchreport"
	"github.com/hitchdev/hitch/bench/internal/hitch"
	"github.com/hitchdev/hitch/bench/internal/proc"
)

// run builds Hitch, measures the backlog and the paced latencies, each on
// a fresh database, and reports. Every child process, temporary directory
// and PostgreSQL schema it made is gone when it returns, unless --keep.
func run(ctx context.Context, o options, out, errOut io.Writer) error {
	launcher, err := hitch.NewLauncher(ctx, o.hitch, "hitch-bench-webhooks-", errOut)
	if err != nil {
		return err
	}
	defer launcher.Close()
	rcv, err := startReceiverProcess(ctx, launcher.Work, "receiver")
	if err != nil {
		return err
	}
	defer rcv.close()
	rep := newReport(o, launcher.Store())

	if rep.Backlog, err = measureBacklog(ctx, o, launcher, rcv); err != nil {
		return err
	}
	for _, rate := range o.pacedRates {
		if rep.lost() {
			break
		}
		p, err := measurePaced(ctx, o, launcher, rcv, rate)
		if err != nil {
			return err
		}
		rep.Paced = append(rep.Paced, p)
	}
	rep.finish(launcher.WarnLogs())

	rep.writeMarkdown(out)
	if o.jsonPath != "" {
		if err := benchreport.WriteJSON(o.jsonPath, rep); err != nil {
			return err
		}
	}
	return rep.failed()
}

// backlogResult is a backlog of events recorded with no worker running,
// then delivered by a `hitch worker` started after them.
type backlogResult struct {
	Events        int              `json:"events"`
	CreateSeconds float64          `json:"create_seconds"`
	CreateErrors  map[string]int64 `json:"create_errors,omitempty"`
	// Seconds runs from the first receipt to the last, so that the
	// worker's start is not counted; PerSec is the deliveries after the
	// first over it.
	Seconds    float64 `json:"seconds"`
	PerSec     float64 `json:"per_sec"`
	Duplicates int     `json:"duplicates"`
	Missing    int     `json:"missing"`
	// DrainError is set when not every event arrived in time.
	DrainError string `json:"drain_error,omitempty"`
}

// measureBacklog starts an API-only Hitch on a fresh database with one
// endpoint at the receiver, creates o.events events through its API, then
// starts a worker process on the same database and times their delivery.
func measureBacklog(ctx context.Context, o options, launcher *hitch.Launcher, rcv *receiverProcess) (backlogResult, error) {
	var res backlogResult
	api, base, err := startHitch(ctx, launcher, "backlog", "--workers=false")
	if err != nil {
		return res, err
	}
	defer api.Stop()
	if err := addEndpoint(ctx, launcher.API(base), rcv.hooksURL()); err != nil {
		return res, err
	}
	launcher.Progress("backlog: creating %d events on %d connections, no worker running", o.events, o.createConns)
	_, dupsBefore := rcv.receipts()
	before := rcv.received()
	cr, err := createEvents(ctx, base, hitch.DevClientID, launcher.Secret, o.events, o.createConns)
	if err != nil {
		return res, err
	}
	res.Events, res.CreateSeconds = len(cr.events), cr.end.Sub(cr.start).Seconds()
	if cr.failures.Count() > 0 {
		res.CreateErrors = cr.failures.ByKind
	}
	if n := rcv.received(); n != before {
		return res, fmt.Errorf("backlog: %d events delivered with no worker running", n-before)
	}

	launcher.Progress("backlog: %d created in %.1fs; starting a hitch worker", len(cr.events), res.CreateSeconds)
	worker, err := launcher.StartWorker("backlog", "backlog", workerFlags(o)...)
	if err != nil {
		return res, err
	}
	defer worker.Stop()
	if err := waitDelivered(ctx, rcv, cr.events, before, worker, drainTimeout(len(cr.events))); err != nil {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		res.DrainError = err.Error()
	}
	first, dups := rcv.receipts()
	var earliest, last time.Time
	for _, ev := range cr.events {
		rc, ok := first[ev.id]
		switch {
		case !ok:
			res.Missing++
			continue
		case earliest.IsZero() || rc.at.Before(earliest):
			earliest = rc.at
		}
		if rc.at.After(last) {
			last = rc.at
		}
	}
	res.Duplicates = dups - dupsBefore
	if res.Seconds = last.Sub(earliest).Seconds(); res.Seconds > 0 {
		res.PerSec = float64(len(cr.events)-res.Missing-1) / res.Seconds
	}
	launcher.Progress("backlog: %.0f deliveries/s", res.PerSec)
	return res, nil
}

// pacedResult is the latency of events created at Rate per second.
type pacedResult struct {
	Rate float64 `json:"rate"`
	// CreatedPerSec is the rate achieved.
	CreatedPerSec float64 `json:"created_per_sec"`
	deliveryStats
	CreateErrors int64 `json:"create_errors"`
	// DrainError is set when not every event arrived in time.
	DrainError string `json:"drain_error,omitempty"`
}

// measurePaced starts Hitch, API and workers in one process, on a fresh
// database with one endpoint at the receiver, creates events at rate for
// o.pacedDuration and waits for their delivery.
func measurePaced(ctx context.Context, o options, launcher *hitch.Launcher, rcv *receiverProcess, rate float64) (pacedResult, error) {
	res := pacedResult{Rate: rate}
	name := fmt.Sprintf("paced-%g", rate)
	h, base, err := startHitch(ctx, launcher, name, workerFlags(o)...)
	if err != nil {
		return res, err
	}
	defer h.Stop()
	if err := addEndpoint(ctx, launcher.API(base), rcv.hooksURL()); err != nil {
		return res, err
	}
	launcher.Progress("paced: %g events/s for %v", rate, o.pacedDuration)
	_, dupsBefore := rcv.receipts()
	before := rcv.received()
	cr, err := createPaced(ctx, base, hitch.DevClientID, launcher.Secret, rate, o.pacedDuration)
	if err != nil {
		return res, err
	}
	res.CreatedPerSec, res.CreateErrors = cr.perSec(), cr.failures.Count()
	if err := waitDelivered(ctx, rcv, cr.events, before, h, drainTimeout(len(cr.events))); err != nil {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		res.DrainError = err.Error()
	}
	first, dups := rcv.receipts()
	res.deliveryStats = summarizeDeliveries(cr.events, first, dups-dupsBefore)
	launcher.Progress("paced: %g events/s: commit→receipt p50 %s, p99 %s", rate,
		benchreport.FmtMs(res.Latency.P50Ms), benchreport.FmtMs(res.Latency.P99Ms))
	return res, nil
}

// workerFlags are the flags of the process that delivers.
func workerFlags(o options) []string {
	flags := []string{"--webhook-workers", fmt.Sprint(o.workers)}
	if o.debugAddr != "" {
		flags = append(flags, "--debug-addr", o.debugAddr)
	}
	return flags
}

// startHitch starts `hitch serve` with extra flags and returns it once it
// is ready.
func startHitch(ctx context.Context, launcher *hitch.Launcher, name string, extra ...string) (*proc.Child, string, error) {
	c, base, err := launcher.Start(ctx, name, extra...)
	if err != nil {
		return nil, "", err
	}
	if _, err := c.WaitReady(ctx, base+"/readyz"); err != nil {
		c.Stop()
		return nil, "", err
	}
	return c, base, nil
}

// addEndpoint registers url as a webhook endpoint receiving every event.
func addEndpoint(ctx context.Context, api *hitch.APIClient, url string) error {
	_, err := api.PostJSON(ctx, "/webhooks/endpoints", map[string]any{"url": url})
	return err
}

// drainTimeout bounds the wait for n events' delivery: a minute, and a
// second more for every 200 events.
func drainTimeout(n int) time.Duration {
	return time.Minute + time.Duration(n/200)*time.Second
}
