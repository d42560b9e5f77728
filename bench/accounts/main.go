// Command accounts benchmarks one read of Hitch's API on Hitch against a
// bare net/http handler that returns the same bytes behind Basic auth, and
// measures Hitch's cold start and memory. The read is GET /accounts/get for
// a user with ten linked accounts, or with --endpoint sync POST
// /transactions/sync for a full first page of 100 transactions:
//
//	go run ./bench/accounts [--endpoint sync] [--database-url postgres://…] [--conns 64] [--duration 10s]
//
// Both servers run as their own processes on 127.0.0.1 and face the same
// closed-loop load generator. The report goes to stdout as Markdown, progress
// to stderr. See bench/README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/hitchdev/hitch/bench/internal/cli"
	"github.com/hitchdev/hitch/bench/internal/hitch"
)

// options are the command-line flags.
type options struct {
	hitch     hitch.Config // --database-url, --repo, --keep
	endpoint  endpoint
	conns     int
	duration  time.Duration
	warmup    time.Duration
	coldRuns  int
	debugAddr string
	jsonPath  string
}

func main() { cli.Main("bench/accounts", dispatch) }

// dispatch runs the benchmark, or the bare handler when the benchmark has
// re-executed itself with --serve-bare.
func dispatch(ctx context.Context, args []string) error {
	if len(args) > 0 && strings.TrimLeft(args[0], "-") == "serve-bare" {
		return serveBareCommand(ctx, args)
	}
	opts, err := parseFlags(args, os.Stderr)
	if err != nil {
		return err
	}
	return run(ctx, opts, os.Stdout, os.Stderr)
}

// parseFlags reads and checks the benchmark's flags.
func parseFlags(args []string, errOut io.Writer) (options, error) {
	var o options
	var endpointName string
	fs := flag.NewFlagSet("accounts", flag.ContinueOnError)
	o.hitch.AddFlags(fs)
	fs.StringVar(&endpointName, "endpoint", endpoints[0].name,
		"request to load: accounts (GET /accounts/get, ten accounts) or sync (POST /transactions/sync, a full page of 100)")
	fs.IntVar(&o.conns, "conns", 64, "concurrent keep-alive connections of the load generator")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "measured load phase per target")
	fs.DurationVar(&o.warmup, "warmup", 2*time.Second, "unmeasured load before the measured phase")
	fs.IntVar(&o.coldRuns, "cold-runs", 5, "cold starts to time (0 skips them)")
	fs.StringVar(&o.debugAddr, "debug-addr", "", "pass --debug-addr to the loaded hitch, to profile it with pprof (e.g. 127.0.0.1:6060)")
	fs.StringVar(&o.jsonPath, "json", "", "also write the results as JSON to this file")
	if err := cli.ParseFlags(fs, args, errOut, "usage: go run ./bench/accounts [flags]"); err != nil {
		return o, err
	}
	var err error
	if o.endpoint, err = endpointNamed(endpointName); err != nil {
		return o, cli.Usage(err)
	}
	return o, cli.Usage(o.validate())
}

// validate keeps every loop of the benchmark bounded.
func (o options) validate() error {
	switch {
	case o.conns < 1 || o.conns > 4096:
		return fmt.Errorf("--conns %d: want 1 to 4096", o.conns)
	case o.duration <= 0 || o.duration > time.Hour:
		return fmt.Errorf("--duration %v: want more than 0 and at most 1h", o.duration)
	case o.warmup < 0 || o.warmup > 10*time.Minute:
		return fmt.Errorf("--warmup %v: want 0 to 10m", o.warmup)
	case o.coldRuns < 0 || o.coldRuns > 100:
		return fmt.Errorf("--cold-runs %d: want 0 to 100", o.coldRuns)
	}
	if o.debugAddr != "" {
		if _, _, err := net.SplitHostPort(o.debugAddr); err != nil {
			return fmt.Errorf("--debug-addr %q: want host:port", o.debugAddr)
		}
	}
	return o.hitch.Validate()
}
