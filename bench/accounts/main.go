// Command accounts benchmarks GET /accounts/get for a user with ten linked
// accounts on Hitch against a bare net/http handler that returns the same
// bytes behind Basic auth, and measures Hitch's cold start and memory:
//
//	go run ./bench/accounts [--database-url postgres://…] [--conns 64] [--duration 10s]
//
// Both servers run as their own processes on 127.0.0.1 and face the same
// closed-loop load generator. The report goes to stdout as Markdown, progress
// to stderr. See bench/README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// options are the command-line flags.
type options struct {
	databaseURL string
	conns       int
	duration    time.Duration
	warmup      time.Duration
	coldRuns    int
	repo        string
	keep        bool
	jsonPath    string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first Ctrl-C the benchmark cleans up; a second one kills it.
	context.AfterFunc(ctx, stop)
	code := dispatch(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

// dispatch runs the benchmark, or the bare handler when the benchmark has
// re-executed itself with --serve-bare, and returns the exit code.
func dispatch(ctx context.Context, args []string) int {
	if len(args) > 0 && strings.TrimLeft(args[0], "-") == "serve-bare" {
		return exitCode(serveBareCommand(ctx, args))
	}
	opts, err := parseFlags(args, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench/accounts: %v\n", err)
		return 2
	}
	return exitCode(run(ctx, opts, os.Stdout, os.Stderr))
}

func exitCode(err error) int {
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "bench/accounts: interrupted")
		return 130
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench/accounts: %v\n", err)
		return 1
	}
	return 0
}

// parseFlags reads and checks the benchmark's flags.
func parseFlags(args []string, errOut io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("accounts", flag.ContinueOnError)
	fs.SetOutput(errOut)
	fs.StringVar(&o.databaseURL, "database-url", "", "PostgreSQL URL to benchmark Hitch on, each run in a fresh schema (default: SQLite in a fresh data dir)")
	fs.IntVar(&o.conns, "conns", 64, "concurrent keep-alive connections of the load generator")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "measured load phase per target")
	fs.DurationVar(&o.warmup, "warmup", 2*time.Second, "unmeasured load before the measured phase")
	fs.IntVar(&o.coldRuns, "cold-runs", 5, "cold starts to time (0 skips them)")
	fs.StringVar(&o.repo, "repo", "", "Hitch repository root (default: found by walking up from the working directory)")
	fs.BoolVar(&o.keep, "keep", false, "keep the temporary directory (binary, data dirs, server logs)")
	fs.StringVar(&o.jsonPath, "json", "", "also write the results as JSON to this file")
	fs.Usage = func() {
		fmt.Fprintln(errOut, "usage: go run ./bench/accounts [flags]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	return o, o.validate()
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
	case o.databaseURL != "" && !isPostgresURL(o.databaseURL):
		return errors.New("--database-url: want postgres://… (leave it empty for SQLite)")
	}
	return nil
}
