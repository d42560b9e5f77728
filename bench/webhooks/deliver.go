package main

import (
	"context"
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
	// Paced is the commit→receipt latency of events created one at a time
	// at PacedRate per second once the rest were delivered.
	PacedRate   float64 `json:"paced_rate"`
	Paced       latency `json:"paced"`
	PacedErrors int64   `json:"paced_errors"`
}

// pacedDuration is how long the paced events are created for.
const pacedDuration = 3 * time.Second

// measureDeliveries starts Hitch on a fresh database with one endpoint at
// the receiver, creates o.events TEST events through the API and waits for
// all of them to arrive.
func measureDeliveries(ctx context.Context, o options, launcher *hitch.Launcher) (deliveryResult, error) {
	res := deliveryResult{CreateConns: o.createConns}
	rcv, err := startReceiverProcess(ctx, launcher.Work, "deliver")
	if err != nil {
		return res, err
	}
	defer rcv.close()
	h, base, err := startHitch(ctx, o, launcher, "deliver")
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
	drainErr := waitDelivered(ctx, rcv, cr.events, h, drainTimeout(len(cr.events)))
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
	if o.pacedRate <= 0 || res.DrainError != "" {
		return res, nil
	}

	launcher.Progress("delivery: %g events/s, one at a time, for %v", o.pacedRate, pacedDuration)
	paced, err := createPaced(ctx, base, hitch.DevClientID, launcher.Secret, o.pacedRate, pacedDuration)
	if err != nil {
		return res, err
	}
	res.PacedRate, res.PacedErrors = o.pacedRate, paced.failures.Count()
	if err := waitDelivered(ctx, rcv, paced.events, h, drainTimeout(len(paced.events))); err != nil {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		res.DrainError = "paced: " + err.Error()
	}
	first, _, _ = rcv.receipts()
	res.Paced = summarizeDeliveries(paced.events, first, 0, 0).Latency
	return res, nil
}
