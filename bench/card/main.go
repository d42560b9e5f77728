// Command card benchmarks POST /card with a JWE, whose cost is dominated by
// the RSA private-key operation, against a bare loop of go-jose decrypts of
// the same kind of JWE in the same run:
//
//	go run ./bench/card [--database-url postgres://…] [--conns 16] [--accounts 1] [--duration 10s] [--warmup 2s] [--json out.json]
//
// Hitch runs as its own process on 127.0.0.1 (--env development,
// --rate-limit 0, a fresh data dir or PostgreSQL schema) with its job
// workers on, so that the card switch task and River job each accepted
// request opens are worked as they would be. The cards go to the accounts
// of one user, linked for the card switcher through
// POST /development/accounts/link, in turn; the JWEs, 64 of them, come
// from client.EncryptCard for the key of GET /jwe/key. Every answer must be
// a 200 {"message":"Success","task_id":…}.
//
// The bare loop runs in this process while Hitch idles: --conns goroutines
// each parse (allowing only RSA-OAEP-256 and A256GCM) and decrypt JWEs of
// the same payload made the same way for a key of the same size, with
// go-jose and nothing else. It has both CPUs to itself; Hitch shares them
// with the load generator, as the comparison has it. The report
// gives, beside the throughputs, the CPU time Hitch, this process and the
// rest of the machine used in each measured phase (from /proc, so Linux
// only), and how long Hitch stayed busy working queued jobs once its load
// stopped. It goes to stdout as Markdown, progress to stderr; the exit
// status is non-zero if a request or a decrypt failed.
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
	hitch     hitch.Config // --database-url, --repo, --keep
	conns     int
	accounts  int
	duration  time.Duration
	warmup    time.Duration
	debugAddr string
	jsonPath  string
}

func main() { cli.Main("bench/card", dispatch) }

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
	fs := flag.NewFlagSet("card", flag.ContinueOnError)
	o.hitch.AddFlags(fs)
	fs.IntVar(&o.conns, "conns", targetConns, "concurrent keep-alive connections loading Hitch, and goroutines of the bare decrypt loop")
	fs.IntVar(&o.accounts, "accounts", 1, fmt.Sprintf("accounts the cards go to, at merchants 1 to N, 1 to %d (the issue's run: 1; more spread the load over account rows)", maxAccounts))
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "measured phase, for Hitch and for the bare loop")
	fs.DurationVar(&o.warmup, "warmup", 2*time.Second, "unmeasured phase before each measured one")
	fs.StringVar(&o.debugAddr, "debug-addr", "", "pass --debug-addr to hitch, to profile it with pprof (e.g. 127.0.0.1:6060)")
	fs.StringVar(&o.jsonPath, "json", "", "also write the results as JSON to this file")
	if err := cli.ParseFlags(fs, args, errOut, "usage: go run ./bench/card [flags]"); err != nil {
		return o, err
	}
	return o, cli.Usage(o.validate())
}

// validate keeps every loop of the benchmark bounded.
func (o options) validate() error {
	switch {
	case o.conns < 1 || o.conns > 1024:
		return fmt.Errorf("--conns %d: want 1 to 1024", o.conns)
	case o.accounts < 1 || o.accounts > maxAccounts:
		return fmt.Errorf("--accounts %d: want 1 to %d", o.accounts, maxAccounts)
	case o.duration <= 0 || o.duration > time.Hour:
		return fmt.Errorf("--duration %v: want more than 0 and at most 1h", o.duration)
	case o.warmup < 0 || o.warmup > 10*time.Minute:
		return fmt.Errorf("--warmup %v: want 0 to 10m", o.warmup)
	}
	if o.debugAddr != "" {
		if _, _, err := net.SplitHostPort(o.debugAddr); err != nil {
			return fmt.Errorf("--debug-addr %q: want host:port", o.debugAddr)
		}
	}
	return o.hitch.Validate()
}
