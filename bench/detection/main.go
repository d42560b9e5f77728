// Command detection measures detection latency: the time from sending
// POST /detect for a user to receiving that user's
// NEW_DETECTED_ACCOUNTS_AVAILABLE webhook, over many distinct users:
//
//	go run ./bench/detection [--database-url postgres://…] [--users 500] [--concurrency 8] [--rate 0] [--json out.json]
//
// Hitch runs as its own process on 127.0.0.1 (--env development,
// --rate-limit 0, a fresh data dir or PostgreSQL schema), where the
// built-in simulator works each detection request as a River job. One
// webhook endpoint, registered through POST /webhooks/endpoints for every
// event type, points at a receiver in this process that answers 200 at once
// and notes when each delivery arrived, by the envelope's external_user_id.
// Development Hitch accepts http URLs on loopback (netguard's AllowPrivate).
//
// One unmeasured detection for a user of its own checks the whole path
// first. Then --users users, bench-<i> with the address
// bench-<i>@example.com (an ordinary address: the simulator finds 5 to 25
// accounts), are each sent one POST /detect, by --concurrency senders in a
// closed loop (each sends its next request as soon as its previous one is
// answered), or, with --rate, started at that many per second. A user's
// latency runs from just before its request is sent to its webhook's
// arrival. Every user must receive exactly one event, delivered once, within
// --timeout of the last request; the exit status is non-zero otherwise, or
// if a request failed. The report goes to stdout as Markdown, progress to
// stderr.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/hitchdev/hitch/bench/internal/cli"
	"github.com/hitchdev/hitch/bench/internal/hitch"
)

// options are the command-line flags.
type options struct {
	hitch       hitch.Config // --database-url, --repo, --keep
	users       int
	concurrency int
	// rate is requests started per second; 0 means a closed loop.
	rate      float64
	timeout   time.Duration
	debugAddr string
	jsonPath  string
}

func main() { cli.Main("bench/detection", dispatch) }

// dispatch runs the benchmark.
func dispatch(ctx context.Context, args []string) error {
	opts, err := parseFlags(args, os.Stderr)
	if err != nil {
		return err
	}
	return run(ctx, opts, os.Stdout, os.Stderr)
}

// parseFlags reads and checks the benchmark's flags.
func parseFlags(args []string, errOut io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("detection", flag.ContinueOnError)
	o.hitch.AddFlags(fs)
	fs.IntVar(&o.users, "users", targetUsers, "distinct users, one POST /detect each")
	fs.IntVar(&o.concurrency, "concurrency", 8, "concurrent senders of POST /detect")
	fs.Float64Var(&o.rate, "rate", 0, "start this many requests per second, open loop (default 0: closed loop, each sender sends its next request when the previous one is answered)")
	fs.DurationVar(&o.timeout, "timeout", time.Minute, "wait this long after the last request for every webhook")
	fs.StringVar(&o.debugAddr, "debug-addr", "", "pass --debug-addr to hitch, to profile it with pprof (e.g. 127.0.0.1:6060)")
	fs.StringVar(&o.jsonPath, "json", "", "also write the results as JSON to this file")
	if err := cli.ParseFlags(fs, args, errOut, "usage: go run ./bench/detection [flags]"); err != nil {
		return o, err
	}
	return o, cli.Usage(o.validate())
}

// validate keeps every loop of the benchmark bounded.
func (o options) validate() error {
	switch {
	case o.users < 1 || o.users > 100_000:
		return fmt.Errorf("--users %d: want 1 to 100000", o.users)
	case o.concurrency < 1 || o.concurrency > 1024:
		return fmt.Errorf("--concurrency %d: want 1 to 1024", o.concurrency)
	case o.rate < 0 || o.rate > 10_000:
		return fmt.Errorf("--rate %g: want 0 (closed loop) to 10000", o.rate)
	case o.timeout <= 0 || o.timeout > time.Hour:
		return fmt.Errorf("--timeout %v: want more than 0 and at most 1h", o.timeout)
	}
	if o.debugAddr != "" {
		if _, _, err := net.SplitHostPort(o.debugAddr); err != nil {
			return fmt.Errorf("--debug-addr %q: want host:port", o.debugAddr)
		}
	}
	return o.hitch.Validate()
}
