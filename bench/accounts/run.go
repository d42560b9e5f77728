package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

// Fixed parameters of the benchmark.
const (
	devClientID    = "bench_client_0001"
	externalUserID = "bench-user"
	linkedAccounts = 10
	accountsPath   = "/accounts/get?external_user_id=" + externalUserID
)

// run builds Hitch, times its cold starts, then loads the bare handler and
// Hitch in turn and reports. Every child process, temporary directory and
// PostgreSQL schema it made is gone when it returns, unless --keep.
func run(ctx context.Context, o options, out, errOut io.Writer) error {
	var cl cleanups
	defer cl.run()
	progress := func(format string, args ...any) {
		fmt.Fprintf(errOut, "bench: "+format+"\n", args...)
	}

	repo, err := findRepo(o.repo)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "hitch-bench-")
	if err != nil {
		return err
	}
	if o.keep {
		cl.add(func() { fmt.Fprintf(errOut, "bench: kept %s\n", work) })
	} else {
		cl.add(func() { os.RemoveAll(work) })
	}

	progress("building hitch from %s", repo)
	bin, err := buildHitch(ctx, repo, work)
	if err != nil {
		return err
	}
	dbs := &databases{baseURL: o.databaseURL, cleanups: &cl}
	hitch := &hitchLauncher{bin: bin, work: work, secret: randomHex(20), dbs: dbs}

	rep := newReport(o, dbs.store())
	if rep.ColdStart, err = measureColdStarts(ctx, hitch, o.coldRuns, progress); err != nil {
		return err
	}
	targets, err := startTargets(ctx, hitch, work, &cl, progress)
	if err != nil {
		return err
	}
	for _, t := range targets {
		progress("loading %s: %d connections, %v warm-up, %v measured", t.name, o.conns, o.warmup, o.duration)
		res, err := measureTarget(ctx, t, o)
		if err != nil {
			return err
		}
		rep.Results = append(rep.Results, res)
	}
	rep.finish(hitch.logs())

	rep.writeMarkdown(out)
	if o.jsonPath != "" {
		if err := rep.writeJSON(o.jsonPath); err != nil {
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
func measureColdStarts(ctx context.Context, hitch *hitchLauncher, runs int, progress func(string, ...any)) (coldStart, error) {
	var times []time.Duration
	for i := range runs {
		c, base, err := hitch.start(ctx, fmt.Sprintf("cold-%d", i+1))
		if err != nil {
			return coldStart{}, err
		}
		took, err := c.waitReady(ctx, base+"/readyz")
		c.stop()
		if err != nil {
			return coldStart{}, err
		}
		progress("cold start %d/%d: %v", i+1, runs, took.Round(100*time.Microsecond))
		times = append(times, took)
	}
	return newColdStart(times), nil
}

// startTargets starts Hitch with ten accounts linked to the bench user, then
// the bare handler serving the exact bytes Hitch answered with. They are
// returned in the order they are loaded: bare first.
func startTargets(ctx context.Context, hitch *hitchLauncher, work string, cl *cleanups, progress func(string, ...any)) ([]target, error) {
	h, base, err := hitch.start(ctx, "load")
	if err != nil {
		return nil, err
	}
	cl.add(h.stop)
	if _, err := h.waitReady(ctx, base+"/readyz"); err != nil {
		return nil, err
	}
	api := newAPIClient(base, devClientID, hitch.secret)
	progress("linking %d accounts to %s", linkedAccounts, externalUserID)
	if err := linkAccounts(ctx, api, linkedAccounts); err != nil {
		return nil, err
	}
	body, err := fetchAccounts(ctx, api, linkedAccounts)
	if err != nil {
		return nil, err
	}

	b, bareBase, err := startBare(work, body, devClientID, hitch.secret)
	if err != nil {
		return nil, err
	}
	cl.add(b.stop)
	if _, err := b.waitReady(ctx, bareBase+"/readyz"); err != nil {
		return nil, err
	}
	progress("hitch on %s (pid %d), bare on %s (pid %d), %d-byte response",
		base, h.pid(), bareBase, b.pid(), len(body))
	return []target{
		{name: "bare", store: "-", url: bareBase + accountsPath, user: devClientID, pass: hitch.secret, want: body, server: b},
		{name: "hitch", store: hitch.dbs.store(), url: base + accountsPath, user: devClientID, pass: hitch.secret, want: body, server: h},
	}, nil
}

// cleanups are undo actions, run last-in first-out, once.
type cleanups []func()

func (c *cleanups) add(f func()) { *c = append(*c, f) }

func (c *cleanups) run() {
	for i := len(*c) - 1; i >= 0; i-- {
		(*c)[i]()
	}
	*c = nil
}
