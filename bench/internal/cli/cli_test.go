package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"
)

func TestExitCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		code int
		out  string
	}{
		{"success", nil, 0, ""},
		{"help", Usage(flag.ErrHelp), 0, ""},
		{"usage", Usage(errors.New("--conns 0: want 1 to 4096")), 2, "bench/x: --conns 0: want 1 to 4096\n"},
		{"interrupted", fmt.Errorf("load: %w", context.Canceled), 130, "bench/x: interrupted\n"},
		{"failure", errors.New("3 requests failed"), 1, "bench/x: 3 requests failed\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out strings.Builder
			if code := ExitCode("bench/x", tt.err, &out); code != tt.code || out.String() != tt.out {
				t.Errorf("ExitCode = %d, printed %q; want %d, %q", code, out.String(), tt.code, tt.out)
			}
		})
	}
}

func TestParseFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		args      []string
		wantCode  int
		wantUsage bool
	}{
		{"flags", []string{"--n", "3"}, 0, false},
		{"help", []string{"-h"}, 0, true},
		{"unknown flag", []string{"--nope"}, 2, true},
		{"positional", []string{"extra"}, 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out strings.Builder
			fs := flag.NewFlagSet("x", flag.ContinueOnError)
			fs.Int("n", 1, "a number")
			err := ParseFlags(fs, tt.args, &out, "usage: go run ./bench/x [flags]")
			if code := ExitCode("bench/x", err, &out); code != tt.wantCode {
				t.Errorf("exit code %d (%v), want %d", code, err, tt.wantCode)
			}
			if got := strings.Contains(out.String(), "usage: go run ./bench/x [flags]\n  -n int"); got != tt.wantUsage {
				t.Errorf("printed %q; usage shown %v, want %v", out.String(), got, tt.wantUsage)
			}
		})
	}
}
