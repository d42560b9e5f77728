// Package cli runs a benchmark command: its signals, its command line and
// its exit code.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Main calls run with the command-line arguments and a context that ends at
// the first SIGINT or SIGTERM, so that the benchmark can clean up (a second
// one kills it), then exits with ExitCode.
func Main(name string, run func(ctx context.Context, args []string) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first Ctrl-C the benchmark cleans up; a second one kills it.
	context.AfterFunc(ctx, stop)
	code := ExitCode(name, run(ctx, os.Args[1:]), os.Stderr)
	stop()
	os.Exit(code)
}

// ExitCode is the exit code for err, which it prints to errOut after name:
// 0 for none or -h, 2 for a usage error, 130 when interrupted, 1 otherwise.
func ExitCode(name string, err error, errOut io.Writer) int {
	var usage usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &usage):
		fmt.Fprintf(errOut, "%s: %v\n", name, err)
		return 2
	case errors.Is(err, context.Canceled):
		fmt.Fprintf(errOut, "%s: interrupted\n", name)
		return 130
	}
	fmt.Fprintf(errOut, "%s: %v\n", name, err)
	return 1
}

// usageError is a mistake in the command line.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// Usage marks err, unless nil, as a mistake in the command line, for which
// ExitCode is 2.
func Usage(err error) error {
	if err == nil {
		return nil
	}
	return usageError{err}
}

// ParseFlags parses args with fs, which prints usage and its flags on
// errOut when they are wrong or -h is given, and rejects positional
// arguments. Its errors are usage errors.
func ParseFlags(fs *flag.FlagSet, args []string, errOut io.Writer, usage string) error {
	fs.SetOutput(errOut)
	fs.Usage = func() {
		fmt.Fprintln(errOut, usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return Usage(err)
	}
	if fs.NArg() > 0 {
		return Usage(fmt.Errorf("unexpected arguments: %q", fs.Args()))
	}
	return nil
}
