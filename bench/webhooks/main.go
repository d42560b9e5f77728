// Command webhooks benchmarks webhook delivery: it creates events through
// Hitch's API for a receiver that answers 200 at once, and reports
// deliveries per second and commit-to-receipt latency beside the throughput
// of no-op River jobs on the same store (the queue's own ceiling) and of
// River jobs that only POST to the receiver (a delivery's floor), and how
// much GET /accounts/get slows down while a delivery backlog drains:
//
//	go run ./bench/webhooks [--database-url postgres://…] [--events 20000]
//		[--rounds 3] [--workers 50] [--duration 5s]
//
// The ceiling, the floor and the deliveries are measured --rounds times,
// interleaved, and the targets are checked on their medians.
//
// Hitch and the receiver run as processes of their own on 127.0.0.1; the
// load generator runs in this one. The report goes to stdout as Markdown,
// progress to stderr. See bench/README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hitchdev/hitch/bench/internal/cli"
	"github.com/hitchdev/hitch/bench/internal/hitch"
)

// options are the command-line flags.
type options struct {
	hitch       hitch.Config // --database-url, --repo, --keep
	events      int
	rounds      int
	workers     int
	createConns int
	pacedRates  rateList
	conns       int
	duration    time.Duration
	warmup      time.Duration
	debugAddr   string
	jsonPath    string
}

func main() { cli.Main("bench/webhooks", dispatch) }

// dispatch runs the benchmark, or the receiver when the benchmark has
// re-executed itself with --serve-receiver.
func dispatch(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == serveReceiverFlag {
		return serveReceiverCommand(ctx, args)
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
	fs := flag.NewFlagSet("webhooks", flag.ContinueOnError)
	o.hitch.AddFlags(fs)
	fs.IntVar(&o.events, "events", 20000, "events to deliver, jobs for the ceiling and the floor, and events in the backlog")
	fs.IntVar(&o.rounds, "rounds", 3, "times the ceiling, the floor and the deliveries are measured, interleaved; the checks take their medians")
	fs.IntVar(&o.workers, "workers", 200, "webhook workers (hitch --webhook-workers, and the River workers of the ceiling and the floor)")
	fs.IntVar(&o.createConns, "create-conns", 32, "concurrent connections creating events")
	o.pacedRates = rateList{100, 1500}
	fs.Var(&o.pacedRates, "paced-rate", "comma-separated events/s, each created at that steady rate for 3s after the flood, for the latency of a queue that keeps up (0 skips)")
	fs.IntVar(&o.conns, "conns", 16, "concurrent connections loading GET /accounts/get")
	fs.DurationVar(&o.duration, "duration", 5*time.Second, "measured API load, idle and while the backlog drains")
	fs.DurationVar(&o.warmup, "warmup", time.Second, "unmeasured API load before each measurement")
	fs.StringVar(&o.debugAddr, "debug-addr", "", "pass --debug-addr to hitch, to profile it with pprof (e.g. 127.0.0.1:6060)")
	fs.StringVar(&o.jsonPath, "json", "", "also write the results as JSON to this file")
	if err := cli.ParseFlags(fs, args, errOut, "usage: go run ./bench/webhooks [flags]"); err != nil {
		return o, err
	}
	return o, cli.Usage(o.validate())
}

// validate keeps every loop of the benchmark bounded.
func (o options) validate() error {
	switch {
	case o.events < 1 || o.events > 1_000_000:
		return fmt.Errorf("--events %d: want 1 to 1000000", o.events)
	case o.rounds < 1 || o.rounds > 20:
		return fmt.Errorf("--rounds %d: want 1 to 20", o.rounds)
	case o.workers < 1 || o.workers > 10_000:
		return fmt.Errorf("--workers %d: want 1 to 10000", o.workers)
	case o.createConns < 1 || o.createConns > 1024:
		return fmt.Errorf("--create-conns %d: want 1 to 1024", o.createConns)
	case slices.ContainsFunc(o.pacedRates, func(r float64) bool { return r <= 0 || r > 10_000 }):
		return fmt.Errorf("--paced-rate %v: want rates above 0 and at most 10000, or 0 alone", o.pacedRates)
	case o.conns < 1 || o.conns > 1024:
		return fmt.Errorf("--conns %d: want 1 to 1024", o.conns)
	case o.duration <= 0 || o.duration > 10*time.Minute:
		return fmt.Errorf("--duration %v: want more than 0 and at most 10m", o.duration)
	case o.warmup < 0 || o.warmup > time.Minute:
		return fmt.Errorf("--warmup %v: want 0 to 1m", o.warmup)
	}
	return o.hitch.Validate()
}

// rateList is a flag of comma-separated rates; "0" is none.
type rateList []float64

func (l *rateList) String() string {
	s := make([]string, len(*l))
	for i, r := range *l {
		s[i] = strconv.FormatFloat(r, 'g', -1, 64)
	}
	return strings.Join(s, ",")
}

func (l *rateList) Set(v string) error {
	*l = nil
	if strings.TrimSpace(v) == "0" {
		return nil
	}
	for f := range strings.SplitSeq(v, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return fmt.Errorf("%q is not a rate", f)
		}
		*l = append(*l, r)
	}
	return nil
}
