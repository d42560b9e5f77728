package main

import (
	"strings"
	"testing"
)

// The report holds each endpoint to its own throughput target, and says
// when a run is outside what the targets were set for.
func TestReportTargets(t *testing.T) {
	t.Parallel()
	accounts, err := endpointNamed("accounts")
	if err != nil {
		t.Fatal(err)
	}
	syncEP, err := endpointNamed("sync")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		ep        endpoint
		store     string
		conns     int
		percent   float64
		wantTitle string
		wantCheck string
		wantScope string
	}{
		{"accounts on sqlite", accounts, "sqlite", 64, 35, "## GET /accounts/get, 10 linked accounts\n", "throughput 35% ≥ 40% MISSED", "- targets: "},
		{"accounts on postgres", accounts, "postgres", 64, 45, "## GET /accounts/get", "throughput 45% ≥ 40% ok", "- targets (set for SQLite at 64 connections): "},
		{"sync on sqlite", syncEP, "sqlite", 64, 35, "## POST /transactions/sync, limit 100, full pages\n", "throughput 35% ≥ 30% ok", "- targets: "},
		{"sync on postgres", syncEP, "postgres", 64, 25, "## POST /transactions/sync", "throughput 25% ≥ 30% MISSED", "- targets: "},
		{"sync at 16 connections", syncEP, "postgres", 16, 35, "## POST /transactions/sync", "throughput 35% ≥ 30% ok", "- targets (set for 64 connections): "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := &report{Store: tt.store, Conns: tt.conns, ep: tt.ep, HitchBarePercent: tt.percent,
				Results: []targetResult{{Target: "hitch", Store: tt.store, Conns: tt.conns}}}
			var b strings.Builder
			r.writeMarkdown(&b)
			out := b.String()
			for _, want := range []string{tt.wantTitle, tt.wantCheck, tt.wantScope} {
				if !strings.Contains(out, want) {
					t.Errorf("report lacks %q:\n%s", want, out)
				}
			}
		})
	}
}
