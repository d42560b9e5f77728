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

// run builds Hitch, times its cold starts, then loads the bare handler and
// Hitch in turn and reports. Every child process, temporary directory and
// PostgreSQL schema it made is gone when it returns, unless --keep.
func run(ctx context.Context, o options, out, errOut io.Writer) error {
	launcher, err := hitch.NewLauncher(ctx, o.hitch, "hitch-bench-", errOut)
	if err != nil {
		return err
	}
	defer launcher.Close()

	rep := newReport(o, launcher.Store())
	if rep.ColdStart, err = measureColdStarts(ctx, launcher, o.coldRuns); err != nil {
		return err
	}
	targets, err := startTargets(ctx, launcher, o.endpoint, o.debugAddr)
	if err != nil {
		return err
	}
	rep.ResponseBytes = len(targets[0].want)
	defer func() {
		for _, t := range targets {
			t.server.Stop()
		}
	}()
	for _, t := range targets {
		launcher.Progress("loading %s: %d connections, %v warm-up, %v measured", t.name, o.conns, o.warmup, o.duration)
		res, err := measureTarget(ctx, t, o)
		if err != nil {
			return err
		}
		rep.Results = append(rep.Results, res)
	}
	rep.finish(launcher.WarnLogs())

	rep.writeMarkdown(out)
	if o.jsonPath != "" {
		if err := benchreport.WriteJSON(o.jsonPath, rep); err != nil {
			return err
		}
	}
	if n := rep.totalErrors(); n > 0 {
		return fmt.Errorf("%d requests failed", n)
	}
	return nil
}

// measureColdStarts starts Hitch runs times on a fresh data dir and database
// and times each start to its first 200 from /readyz.
func measureColdStarts(ctx context.Context, launcher *hitch.Launcher, runs int) (coldStart, error) {
	var times []time.Duration
	for i := range runs {
		c, base, err := launcher.Start(ctx, fmt.Sprintf("cold-%d", i+1))
		if err != nil {
			return coldStart{}, err
		}
		took, err := c.WaitReady(ctx, base+"/readyz")
		c.Stop()
		if err != nil {
			return coldStart{}, err
		}
		launcher.Progress("cold start %d/%d: %v", i+1, runs, took.Round(100*time.Microsecond))
		times = append(times, took)
	}
	return newColdStart(times), nil
}

// startTargets starts Hitch with ep's fixture, then the bare handler
// serving the exact bytes Hitch answered with. They are returned in the
// order they are loaded: bare first.
func startTargets(ctx context.Context, launcher *hitch.Launcher, ep endpoint, debugAddr string) ([]target, error) {
	var flags []string
	if debugAddr != "" {
		flags = append(flags, "--debug-addr", debugAddr)
	}
	h, base, err := launcher.Start(ctx, "load", flags...)
	if err != nil {
		return nil, err
	}
	if _, err := h.WaitReady(ctx, base+"/readyz"); err != nil {
		return nil, err
	}
	body, err := ep.prepare(ctx, launcher, launcher.API(base))
	if err != nil {
		return nil, err
	}

	method, path := ep.route()
	b, bareBase, err := startBare(launcher.Work, bareOptions{method: method, path: path, user: hitch.DevClientID, pass: launcher.Secret}, body)
	if err != nil {
		return nil, err
	}
	if _, err := b.WaitReady(ctx, bareBase+"/readyz"); err != nil {
		b.Stop()
		return nil, err
	}
	launcher.Progress("hitch on %s (pid %d), bare on %s (pid %d), %d-byte response",
		base, h.PID(), bareBase, b.PID(), len(body))
	newTarget := func(name, store, base string, server *proc.Child) target {
		return target{name: name, store: store, method: ep.method, url: base + ep.path, body: ep.body,
			user: hitch.DevClientID, pass: launcher.Secret, want: body, server: server}
	}
	return []target{newTarget("bare", "-", bareBase, b), newTarget("hitch", launcher.Store(), base, h)}, nil
}
