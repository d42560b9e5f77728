// Command webhooks benchmarks webhook delivery against a receiver that
// answers 200 at once, on SQLite or PostgreSQL:
//
//	go run ./bench/webhooks [--database-url postgres://…] [--events 20000]
//		[--paced-rate 500] [--paced-duration 10s] [--workers 200]
//
// It measures two figures:
//
//   - the deliveries per second of a backlog: an API-only `hitch serve
//     --workers=false` records --events TEST events, then a `hitch worker`
//     on the same database delivers them, timed from the first receipt to
//     the last;
//   - the commit→receipt latency at a steady rate: a `hitch serve` (API and
//     workers in one process, the default deployment) on a fresh database
//     records events at each --paced-rate for --paced-duration, each timed
//     from the 200 of its create request to its receipt.
//
// Hitch and the receiver run as processes of their own on 127.0.0.1; the
// events are created from this one. An event that is not delivered fails
// the run. The report goes to stdout as Markdown, progress to stderr. See
// bench/README.md.
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
	hitch         hitch.Config // --database-url, --repo, --keep
	events        int
	workers       int
	createConns   int
	pacedRates    rateList
	pacedDuration time.Duration
	debugAddr     string
	jsonPath      string
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
	fs.IntVar(&o.events, "events", 20000, "events in the backlog")
	fs.IntVar(&o.workers, "workers", 200, "hitch --webhook-workers")
	fs.IntVar(&o.createConns, "create-conns", 32, "concurrent connections creating the backlog's events")
	o.pacedRates = rateList{500}
	fs.Var(&o.pacedRates, "paced-rate", "comma-separated events/s, each created at that steady rate for the latency (0 skips)")
	fs.DurationVar(&o.pacedDuration, "paced-duration", 10*time.Second, "how long events are created at each paced rate")
	fs.StringVar(&o.debugAddr, "debug-addr", "", "pass --debug-addr to the hitch process delivering, to profile it with pprof (e.g. 127.0.0.1:6060)")
	fs.StringVar(&o.jsonPath, "json", "", "also write the results as JSON to this file")
	if err := cli.ParseFlags(fs, args, errOut, "usage: go run ./bench/webhooks [flags]"); err != nil {
		return o, err
	}
	return o, cli.Usage(o.validate())
}

// validate keeps every loop of the benchmark bounded.
func (o options) validate() error {
	switch {
	case o.events < 2 || o.events > 1_000_000:
		return fmt.Errorf("--events %d: want 2 to 1000000", o.events)
	case o.workers < 1 || o.workers > 1000:
		return fmt.Errorf("--workers %d: want 1 to 1000", o.workers)
	case o.createConns < 1 || o.createConns > 1024:
		return fmt.Errorf("--create-conns %d: want 1 to 1024", o.createConns)
	case slices.ContainsFunc(o.pacedRates, func(r float64) bool { return r <= 0 || r > 10_000 }):
		return fmt.Errorf("--paced-rate %v: want rates above 0 and at most 10000, or 0 alone", o.pacedRates)
	case o.pacedDuration <= 0 || o.pacedDuration > 10*time.Minute:
		return fmt.Errorf("--paced-duration %v: want more than 0 and at most 10m", o.pacedDuration)
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
