package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hitchdev/hitch/bench/internal/benchreport"
	"github.com/hitchdev/hitch/bench/internal/hitch"
	"github.com/hitchdev/hitch/bench/internal/proc"
	"github.com/hitchdev/hitch/client"
)

const (
	// checkUser is the user of the unmeasured detection that checks the
	// whole path before the measured ones.
	checkUser    = "bench-check"
	checkTimeout = 30 * time.Second
	// lateGrace is how long the receiver keeps listening once every user
	// has an event, for a late extra event or redelivery to show.
	lateGrace = 250 * time.Millisecond
)

// run builds and starts Hitch with an endpoint at the receiver, checks the
// path with one detection, sends the measured ones, waits for their
// webhooks and reports. Every child process, temporary directory and
// PostgreSQL schema it made is gone when it returns, unless --keep.
func run(ctx context.Context, o options, out, errOut io.Writer) error {
	launcher, err := hitch.NewLauncher(ctx, o.hitch, "hitch-bench-detection-", errOut)
	if err != nil {
		return err
	}
	defer launcher.Close()
	rep := newReport(o, launcher.Store())

	rcv, err := startReceiver()
	if err != nil {
		return err
	}
	defer rcv.close()
	h, base, err := startHitch(ctx, launcher, o.debugAddr)
	if err != nil {
		return err
	}
	if _, err := launcher.API(base).PostJSON(ctx, "/webhooks/endpoints", map[string]any{"url": rcv.url}); err != nil {
		return err
	}
	c := newDetectClient(base, hitch.DevClientID, launcher.Secret, o.concurrency)
	if err := checkPath(ctx, launcher, c, rcv, h); err != nil {
		return err
	}

	launcher.Progress("sending POST /detect for %d users: %s", o.users, rep.arrival())
	sampler := proc.SampleRSS(h.PID())
	sends := sendDetects(ctx, c, o.users, o.concurrency, o.rate)
	if err := ctx.Err(); err != nil {
		sampler.Stop()
		return err
	}
	var accepted []string
	for _, s := range sends {
		if s.err == nil {
			accepted = append(accepted, s.user)
		}
	}
	launcher.Progress("%d of %d accepted, %d events so far; waiting up to %v for the rest",
		len(accepted), o.users, len(accepted)-rcv.missing(accepted), o.timeout)
	waitErr := rcv.waitFor(ctx, accepted, h, o.timeout)
	if ctx.Err() != nil {
		sampler.Stop()
		return ctx.Err()
	}
	// Past the timeout an event is missing, even if it arrives during the
	// grace period.
	var cutoff time.Time
	if waitErr != nil {
		cutoff = time.Now()
	}
	time.Sleep(lateGrace)
	rep.PeakRSSBytes = sampler.Stop()

	byUser, other, malformed := rcv.received(cutoff)
	delete(byUser, checkUser)
	rep.Result = summarize(sends, byUser, other, malformed)
	rep.finish(waitErr, launcher.WarnLogs())
	rep.writeMarkdown(out)
	if o.jsonPath != "" {
		if err := benchreport.WriteJSON(o.jsonPath, rep); err != nil {
			return err
		}
	}
	return rep.failed()
}

// startHitch starts Hitch (with --debug-addr when given) and returns it
// once it is ready.
func startHitch(ctx context.Context, launcher *hitch.Launcher, debugAddr string) (*proc.Child, string, error) {
	var flags []string
	if debugAddr != "" {
		flags = append(flags, "--debug-addr", debugAddr)
	}
	c, base, err := launcher.Start(ctx, "detection", flags...)
	if err != nil {
		return nil, "", err
	}
	if _, err := c.WaitReady(ctx, base+"/readyz"); err != nil {
		return nil, "", err
	}
	return c, base, nil
}

// checkPath sends one unmeasured detection and waits for its webhook, so
// that a broken path fails fast and the measured requests find warm
// connections.
func checkPath(ctx context.Context, launcher *hitch.Launcher, c *client.Client, rcv *receiver, h *proc.Child) error {
	start := time.Now()
	if _, err := c.Detect(ctx, &client.DetectRequest{ExternalUserID: checkUser, Email: checkUser + "@example.com"}); err != nil {
		return fmt.Errorf("POST /detect: %w", err)
	}
	if err := rcv.waitFor(ctx, []string{checkUser}, h, checkTimeout); err != nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		return fmt.Errorf("checking the path with one detection: %w", err)
	}
	launcher.Progress("checked: one detection's webhook arrived %s after its request", benchreport.FmtMs(benchreport.Ms(time.Since(start))))
	return nil
}
