package main

import (
	"context"
	"io"

	"github.com/hitchdev/hitch/bench/internal/benchreport"
	"github.com/hitchdev/hitch/bench/internal/hitch"
)

// run builds Hitch, then measures the queue ceiling, the delivery floor,
// the deliveries and the API under a backlog, each on a fresh database, and
// reports. Every child process, temporary directory and PostgreSQL schema
// it made is gone when it returns, unless --keep.
func run(ctx context.Context, o options, out, errOut io.Writer) error {
	launcher, err := hitch.NewLauncher(ctx, o.hitch, "hitch-bench-webhooks-", errOut)
	if err != nil {
		return err
	}
	defer launcher.Close()
	rep := newReport(o, launcher.Store())

	launcher.Progress("queue ceiling: %d no-op jobs, %d workers", o.events, o.workers)
	if rep.Ceiling, err = measureCeiling(ctx, o, launcher); err != nil {
		return err
	}
	launcher.Progress("queue ceiling: %.0f jobs/s", rep.Ceiling.PerSec)
	launcher.Progress("delivery floor: %d jobs that only POST to the receiver", o.events)
	if rep.Floor, err = measureFloor(ctx, o, launcher); err != nil {
		return err
	}
	launcher.Progress("delivery floor: %.0f jobs/s", rep.Floor.PerSec)
	if rep.Deliver, err = measureDeliveries(ctx, o, launcher); err != nil {
		return err
	}
	launcher.Progress("delivery: %.0f/s", rep.Deliver.PerSec)
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
