package main

import (
	"context"
	"time"

	"github.com/hitchdev/hitch/bench/internal/hitch"
	"github.com/hitchdev/hitch/bench/internal/loadgen"
)

// apiLoad is one closed-loop measurement of GET /accounts/get.
type apiLoad struct {
	Requests   int64            `json:"requests"`
	ReqPerSec  float64          `json:"req_per_sec"`
	Latency    latency          `json:"latency"`
	Errors     int64            `json:"errors"`
	ErrorKinds map[string]int64 `json:"error_kinds,omitempty"`
	FirstError string           `json:"first_error,omitempty"`
	Dials      int64            `json:"dials"`
}

func apiLoadOf(s *loadgen.Stats) apiLoad {
	l := apiLoad{Requests: s.Hist.Count(), ReqPerSec: s.ReqPerSec(), Latency: latencyOf(s.Hist),
		Errors: s.Failures.Count(), Dials: s.Dials}
	if l.Errors > 0 {
		l.ErrorKinds, l.FirstError = s.Failures.ByKind, s.Failures.First
	}
	return l
}

// backlogResult is the API's throughput idle and while a backlog drains.
type backlogResult struct {
	Conns int     `json:"conns"`
	Idle  apiLoad `json:"idle"`
	Busy  apiLoad `json:"busy"`
	// IdleAfter is the idle load again once the backlog has drained: the
	// VM's speed drifts between measurements, and busy is compared with
	// the mean of the idle loads before and after it.
	IdleAfter   apiLoad `json:"idle_after"`
	DropPercent float64 `json:"drop_percent"`
	// DropBeforePercent and DropAfterPercent compare busy with each idle
	// load alone; DropPercent, with their mean.
	DropBeforePercent float64 `json:"drop_before_percent"`
	DropAfterPercent  float64 `json:"drop_after_percent"`
	// CreateSeconds is how long creating the backlog took, deliveries held.
	CreateSeconds float64          `json:"create_seconds"`
	CreateErrors  map[string]int64 `json:"create_errors,omitempty"`
	Drain         drainStats       `json:"drain"`
	DrainError    string           `json:"drain_error,omitempty"`
}

// webhookTimeoutHeld is the backlog server's --webhook-timeout: the
// deliveries held at the receiver while the backlog is created must not
// time out (1m is the most Hitch allows).
const webhookTimeoutHeld = "1m"

// measureBacklog starts Hitch on a fresh database with ten linked accounts
// and one endpoint, loads GET /accounts/get on the idle server, then creates
// o.events events while the receiver holds every delivery, releases them
// and loads the API again at once, while the backlog drains, and once more
// when it has drained.
func measureBacklog(ctx context.Context, o options, launcher *hitch.Launcher) (backlogResult, error) {
	res := backlogResult{Conns: o.conns}
	rcv, err := startReceiverProcess(ctx, launcher.Work, "backlog")
	if err != nil {
		return res, err
	}
	defer rcv.close()
	h, base, err := startHitch(ctx, o, launcher, "backlog", "--webhook-timeout", webhookTimeoutHeld)
	if err != nil {
		return res, err
	}
	defer h.Stop()
	api := launcher.API(base)
	if err := hitch.LinkAccounts(ctx, api); err != nil {
		return res, err
	}
	want, err := hitch.FetchAccounts(ctx, api)
	if err != nil {
		return res, err
	}
	if err := addEndpoint(ctx, api, rcv.hooksURL()); err != nil {
		return res, err
	}
	load := func() (*loadgen.Stats, error) {
		return loadgen.Run(ctx, loadgen.Load{
			URL: base + hitch.AccountsPath, User: hitch.DevClientID, Pass: launcher.Secret, Want: want,
			Conns: o.conns, Warmup: o.warmup, Duration: o.duration, RequestTimeout: requestTimeout,
		})
	}

	launcher.Progress("api: idle, %d connections, %v warm-up, %v measured", o.conns, o.warmup, o.duration)
	idle, err := load()
	if err != nil {
		return res, err
	}
	res.Idle = apiLoadOf(idle)

	launcher.Progress("api: creating a backlog of %d events, deliveries held", o.events)
	rcv.hold()
	cr, err := createEvents(ctx, base, hitch.DevClientID, launcher.Secret, o.events, o.createConns)
	if err != nil {
		rcv.release()
		return res, err
	}
	res.CreateSeconds = cr.end.Sub(cr.start).Seconds()
	if cr.failures.Count() > 0 {
		res.CreateErrors = cr.failures.ByKind
	}

	launcher.Progress("api: releasing the backlog and loading the API")
	released := time.Now()
	rcv.release()
	busy, err := load()
	if err != nil {
		return res, err
	}
	res.Busy = apiLoadOf(busy)
	res.DropBeforePercent = dropPercent(res.Idle.ReqPerSec, res.Busy.ReqPerSec)
	res.DropPercent = res.DropBeforePercent // until the idle load after it
	windowEnd := busy.MeasureFrom.Add(o.duration)

	launcher.Progress("api: %d of %d delivered when the load stopped; waiting for the rest", rcv.received(), len(cr.events))
	if err := waitDelivered(ctx, rcv, cr.events, 0, h, drainTimeout(len(cr.events))); err != nil {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		res.DrainError = err.Error()
	}
	first, _, _ := rcv.receipts()
	res.Drain = summarizeDrain(cr.events, first, released, busy.MeasureFrom, windowEnd)
	if res.DrainError != "" {
		return res, nil // not idle: the run has failed, and the drop is against the idle load before
	}

	launcher.Progress("api: idle again, the backlog delivered")
	idleAfter, err := load()
	if err != nil {
		return res, err
	}
	res.IdleAfter = apiLoadOf(idleAfter)
	res.DropAfterPercent = dropPercent(res.IdleAfter.ReqPerSec, res.Busy.ReqPerSec)
	res.DropPercent = dropPercent((res.Idle.ReqPerSec+res.IdleAfter.ReqPerSec)/2, res.Busy.ReqPerSec)
	return res, nil
}
