package main

import (
	"context"
	"fmt"
	"io"

	"github.com/hitchdev/hitch/bench/internal/benchreport"
	"github.com/hitchdev/hitch/bench/internal/hitch"
)

// run builds Hitch, then measures the queue ceiling, the delivery floor and
// the deliveries --rounds times, and the API under a backlog, each on a
// fresh database, and reports. Every child process, temporary directory
// and PostgreSQL schema it made is gone when it returns, unless --keep.
func run(ctx context.Context, o options, out, errOut io.Writer) error {
	launcher, err := hitch.NewLauncher(ctx, o.hitch, "hitch-bench-webhooks-", errOut)
	if err != nil {
		return err
	}
	defer launcher.Close()
	rep := newReport(o, launcher.Store())

	for n := 1; n <= o.rounds; n++ {
		r, err := measureRound(ctx, o, launcher, n)
		if n == 1 {
			rep.Ceiling, rep.Floor, rep.Deliver = r.Ceiling, r.Floor, r.Deliver
		} else {
			rep.Extra = append(rep.Extra, r)
		}
		if err != nil {
			return err
		}
	}
	if rep.Backlog, err = measureBacklog(ctx, o, launcher); err != nil {
		return err
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

// round is one measurement of the ceiling, the floor and the deliveries,
// in that order, each on a fresh database. On a 2-vCPU VM the backlog's
// share of the ceiling ran from 33% to 68% in runs minutes apart, the
// ceiling moving as much as the deliveries, so the checks take the median
// of a few rounds, interleaved, so that a slow spell of the machine falls
// on all three alike.
type round struct {
	Ceiling jobsResult     `json:"ceiling"`
	Floor   jobsResult     `json:"floor"`
	Deliver deliveryResult `json:"deliver"`
}

// measureRound measures round number n (from 1). Only the first measures
// the paced latencies.
func measureRound(ctx context.Context, o options, launcher *hitch.Launcher, n int) (round, error) {
	var r round
	var err error
	of := ""
	if o.rounds > 1 {
		of = fmt.Sprintf("round %d of %d: ", n, o.rounds)
	}
	if n > 1 {
		o.pacedRates = nil
	}
	launcher.Progress("%squeue ceiling: %d no-op jobs, %d workers", of, o.events, o.workers)
	if r.Ceiling, err = measureCeiling(ctx, o, launcher, n); err != nil {
		return r, err
	}
	launcher.Progress("%squeue ceiling: %.0f jobs/s", of, r.Ceiling.PerSec)
	launcher.Progress("%sdelivery floor: %d jobs that only POST to the receiver", of, o.events)
	if r.Floor, err = measureFloor(ctx, o, launcher, n); err != nil {
		return r, err
	}
	launcher.Progress("%sdelivery floor: %.0f jobs/s", of, r.Floor.PerSec)
	if r.Deliver, err = measureDeliveries(ctx, o, launcher, n); err != nil {
		return r, err
	}
	launcher.Progress("%sdelivery: %.0f/s, a backlog %.0f/s", of, r.Deliver.PerSec, r.Deliver.Backlog.PerSec)
	return r, nil
}

// roundName names a round's data dir, database, process or log: name for
// the first round, name-n for the others.
func roundName(name string, n int) string {
	if n <= 1 {
		return name
	}
	return fmt.Sprintf("%s-%d", name, n)
}
