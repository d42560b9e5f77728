package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hitchdev/hitch/bench/internal/cli"
	"github.com/hitchdev/hitch/bench/internal/hitch"
)

// --endpoint picks what is loaded; accounts by default, as before the flag.
func TestParseFlagsEndpoint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args       []string
		wantMethod string
		wantPath   string
		wantBody   bool
		wantTarget int
	}{
		{nil, http.MethodGet, hitch.AccountsPath, false, 40},
		{[]string{"--endpoint", "accounts"}, http.MethodGet, hitch.AccountsPath, false, 40},
		{[]string{"--endpoint", "sync"}, http.MethodPost, hitch.SyncPath, true, 30},
	}
	for _, tt := range tests {
		o, err := parseFlags(tt.args, io.Discard)
		if err != nil {
			t.Errorf("parseFlags(%q): %v", tt.args, err)
			continue
		}
		ep := o.endpoint
		if ep.method != tt.wantMethod || ep.path != tt.wantPath || (ep.body != nil) != tt.wantBody || ep.throughputPercent != tt.wantTarget || ep.prepare == nil {
			t.Errorf("parseFlags(%q): %s %s, body %q, target %d%%; want %s %s, a body %v, target %d%%",
				tt.args, ep.method, ep.path, ep.body, ep.throughputPercent, tt.wantMethod, tt.wantPath, tt.wantBody, tt.wantTarget)
		}
	}
}

func TestParseFlagsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--endpoint", "transactions"}, `--endpoint "transactions": want one of accounts, account, sync`},
		{[]string{"--endpoint", "sync", "--conns", "0"}, "--conns 0"},
	}
	for _, tt := range tests {
		_, err := parseFlags(tt.args, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) || cli.ExitCode("accounts", err, io.Discard) != 2 {
			t.Errorf("parseFlags(%q) = %v; want a usage error with %q", tt.args, err, tt.want)
		}
	}
}

// The bare handler serves the endpoint's path without its query.
func TestEndpointRoute(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, wantMethod, wantPath string }{
		{"accounts", http.MethodGet, "/accounts/get"},
		{"sync", http.MethodPost, "/transactions/sync"},
	}
	for _, tt := range tests {
		ep, err := endpointNamed(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		if method, path := ep.route(); method != tt.wantMethod || path != tt.wantPath {
			t.Errorf("%s: route %s %s, want %s %s", tt.name, method, path, tt.wantMethod, tt.wantPath)
		}
	}
}
