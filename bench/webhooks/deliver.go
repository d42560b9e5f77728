package main

import (
	"context"
	"fmt"
	"time"

	"github.com/hitchdev/hitch/bench/internal/hitch"
	"github.com/hitchdev/hitch/bench/internal/proc"
)

// deliveryResult is the delivery phase: events created through the API
// while Hitch delivers them.
type deliveryResult struct {
	CreateConns   int              `json:"create_conns"`
	Created       int              `json:"created"`
	CreateSeconds float64          `json:"create_seconds"`
	CreatePerSec  float64          `json:"create_per_sec"`
	CreateErrors  map[string]int64 `json:"create_errors,omitempty"`
	FirstError    string           `json:"first_error,omitempty"`
	deliveryStats
	// ReceiverConns counts the connections Hitch opened to the receiver.
	ReceiverConns int64 `json:"receiver_conns"`
	PeakRSSBytes  int64 `json:"peak_rss_bytes"`
	// DrainError is set when not every event arrived in time.
	DrainError string `json:"drain_error,omitempty"`
	// Backlog is a backlog delivered with nothing else running.
	Backlog backlogDrain `json:"backlog"`
	// Paced are the commit→receipt latencies of events created at a
	// steady rate once the rest were delivered, one per rate.
	Paced []pacedResult `json:"paced"`
}

// backlogDrain is o.events events created while the receiver held every
// delivery, then let go at once with nothing else running: the same shape
// as the queue's ceiling, whose jobs are all inserted before its client
// starts.
type backlogDrain struct {
	Events        int              `json:"events"`
	CreateSeconds float64          `json:"create_seconds"`
	CreateErrors  map[string]int64 `json:"create_errors,omitempty"`
	// Seconds runs from the release to the last receipt.
	Seconds float64 `json:"seconds"`
	PerSec  float64 `json:"per_sec"`
	// CeilingPercent is PerSec as a share of the ceiling, FloorPercent as
	// one of the floor (POST-only jobs).
	CeilingPercent float64 `json:"ceiling_percent"`
	FloorPercent   float64 `json:"floor_percent"`
	Duplicates     int     `json:"duplicates"`
	Missing        int     `json:"missing"`
	// CPU is the machine's CPU time from the release to the last receipt,
	// by process.
	CPU proc.CPUUse `json:"cpu"`
}

// pacedResult is the latency of events created at Rate per second.
type pacedResult struct {
	Rate float64 `json:"rate"`
	// CreatedPerSec is the rate achieved.
	CreatedPerSec float64 `json:"created_per_sec"`
	Latency       latency `json:"latency"`
	Errors        int64   `json:"errors"`
}

// pacedDuration is how long the paced events are created for.
const pacedDuration = 3 * time.Second

// measureDeliveries starts Hitch on a fresh database with one endpoint at
// the receiver, creates o.events TEST events through the API and waits for
// all of them to arrive; then it drains a backlog, and measures the
// latency at each of o.pacedRates.
func measureDeliveries(ctx context.Context, o options, launcher *hitch.Launcher, round int) (deliveryResult, error) {
	res := deliveryResult{CreateConns: o.createConns}
	rcv, err := startReceiverProcess(ctx, launcher.Work, roundName("deliver", round))
	if err != nil {
		return res, err
	}
	defer rcv.close()
	// Deliveries are held at the receiver while the backlog is created.
	h, base, err := startHitch(ctx, o, launcher, roundName("deliver", round), "--webhook-timeout", webhookTimeoutHeld)
	if err != nil {
		return res, err
	}
	defer h.Stop()
	api := launcher.API(base)
	if err := addEndpoint(ctx, api, rcv.hooksURL()); err != nil {
		return res, err
	}

	launcher.Progress("delivery: creating %d events on %d connections (hitch pid %d)", o.events, o.createConns, h.PID())
	sampler := proc.SampleRSS(h.PID())
	cr, err := createEvents(ctx, base, hitch.DevClientID, launcher.Secret, o.events, o.createConns)
	if err != nil {
		sampler.Stop()
		return res, err
	}
	launcher.Progress("delivery: %d created in %.1fs, %d received so far; waiting for the rest",
		len(cr.events), cr.end.Sub(cr.start).Seconds(), rcv.received())
	drainErr := waitDelivered(ctx, rcv, cr.events, 0, h, drainTimeout(len(cr.events)))
	res.PeakRSSBytes = sampler.Stop()
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	if drainErr != nil {
		res.DrainError = drainErr.Error()
	}
	// Give a late duplicate a moment to show.
	time.Sleep(100 * time.Millisecond)

	res.Created = len(cr.events)
	res.CreateSeconds = cr.end.Sub(cr.start).Seconds()
	res.CreatePerSec = cr.perSec()
	if cr.failures.Count() > 0 {
		res.CreateErrors, res.FirstError = cr.failures.ByKind, cr.failures.First
	}
	first, dups, noID := rcv.receipts()
	res.deliveryStats = summarizeDeliveries(cr.events, first, dups, noID)
	res.ReceiverConns = rcv.connections()
	if res.DrainError != "" {
		return res, nil
	}

	launcher.Progress("delivery: a backlog of %d events, created with deliveries held, then let go", o.events)
	cpu := cpuGroups(o.hitch.DatabaseURL, map[string]int{"hitch": h.PID(), "receiver": rcv.child.PID()})
	if res.Backlog, err = drainBacklog(ctx, o, launcher, rcv, h, base, cpu); err != nil {
		return res, err
	}
	if res.Backlog.Missing > 0 {
		res.DrainError = fmt.Sprintf("backlog: %d of %d events missing", res.Backlog.Missing, res.Backlog.Events)
		return res, nil
	}

	for _, rate := range o.pacedRates {
		launcher.Progress("delivery: %g events/s for %v", rate, pacedDuration)
		before := rcv.received()
		paced, err := createPaced(ctx, base, hitch.DevClientID, launcher.Secret, rate, pacedDuration)
		if err != nil {
			return res, err
		}
		if err := waitDelivered(ctx, rcv, paced.events, before, h, drainTimeout(len(paced.events))); err != nil {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			res.DrainError = fmt.Sprintf("paced at %g/s: %v", rate, err)
			return res, nil
		}
		first, _, _ = rcv.receipts()
		res.Paced = append(res.Paced, pacedResult{Rate: rate, CreatedPerSec: paced.perSec(),
			Latency: summarizeDeliveries(paced.events, first, 0, 0).Latency, Errors: paced.failures.Count()})
	}
	return res, nil
}

// apiSettle is how long the backlog waits after its last create before it
// is let go. Hitch's deliveries yield to a busy API, and its API counts as
// busy for 500 ms after its last busy moment (api.Load): let go at once,
// the backlog's first half second drained at --webhook-busy-rate, which is
// the API phase's measure, not this one's. The ceiling and the floor run
// with no API load; after apiSettle, neither does the backlog.
const apiSettle = time.Second

// drainBacklog creates o.events events while rcv holds every delivery,
// waits apiSettle, lets them go, and times their delivery. Hitch must have
// been started with a webhook timeout longer than the creating takes.
func drainBacklog(ctx context.Context, o options, launcher *hitch.Launcher, rcv *receiverProcess, h server, base string, cpu proc.CPUGroups) (backlogDrain, error) {
	var res backlogDrain
	earlier, dupsBefore, _ := rcv.receipts()
	before := len(earlier)
	rcv.hold()
	cr, err := createEvents(ctx, base, hitch.DevClientID, launcher.Secret, o.events, o.createConns)
	if err != nil {
		rcv.release()
		return res, err
	}
	res.Events, res.CreateSeconds = len(cr.events), cr.end.Sub(cr.start).Seconds()
	if cr.failures.Count() > 0 {
		res.CreateErrors = cr.failures.ByKind
	}
	launcher.Progress("delivery: %d created in %.1fs; releasing them %v after the last create", len(cr.events), res.CreateSeconds, apiSettle)
	select {
	case <-time.After(apiSettle):
	case <-ctx.Done():
		rcv.release()
		return res, ctx.Err()
	}
	released, cpuBefore := time.Now(), cpu.Sample()
	rcv.release()
	if err := waitDelivered(ctx, rcv, cr.events, before, h, drainTimeout(len(cr.events))); err != nil && ctx.Err() != nil {
		return res, ctx.Err()
	}
	res.CPU = cpu.Sample().Since(cpuBefore)
	// Give a late duplicate a moment to show.
	time.Sleep(100 * time.Millisecond)
	first, dups, _ := rcv.receipts()
	var last time.Time
	for _, ev := range cr.events {
		rc, ok := first[ev.id]
		if !ok {
			res.Missing++
			continue
		}
		if rc.at.After(last) {
			last = rc.at
		}
	}
	res.Duplicates = dups - dupsBefore
	if res.Seconds = last.Sub(released).Seconds(); res.Seconds > 0 {
		res.PerSec = float64(len(cr.events)-res.Missing) / res.Seconds
	}
	return res, nil
}
