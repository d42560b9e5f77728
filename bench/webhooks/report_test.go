package main

import (
	"strings"
	"testing"
)

// A lost event or a failed create fails the run; the latency targets are
// checked at the target rate only, and reported, not failed.
func TestReport(t *testing.T) {
	t.Parallel()
	paced := func(rate, p50, p99 float64) pacedResult {
		p := pacedResult{Rate: rate, CreatedPerSec: rate, deliveryStats: deliveryStats{Events: 10, Delivered: 10}}
		p.Latency.P50Ms, p.Latency.P99Ms = p50, p99
		return p
	}
	for _, tt := range []struct {
		name   string
		r      report
		fail   bool
		checks []string
	}{
		{"fine", report{Backlog: backlogResult{Events: 10}, Paced: []pacedResult{paced(100, 9, 99), paced(500, 12, 300)}}, false,
			[]string{"p50 at 500/s 12.00 ms ≤ 50.00 ms ok", "p99 at 500/s 300 ms ≤ 250 ms MISSED"}},
		{"backlog missing", report{Backlog: backlogResult{Events: 10, Missing: 1}}, true, nil},
		{"backlog late", report{Backlog: backlogResult{Events: 10, DrainError: "late"}}, true, nil},
		{"create failed", report{Backlog: backlogResult{Events: 10, CreateErrors: map[string]int64{"status 500": 1}}}, true, nil},
		{"paced missing", report{Paced: []pacedResult{{Rate: 500, deliveryStats: deliveryStats{Delivered: 9, Missing: 1}}}}, true, nil},
	} {
		tt.r.finish(nil)
		if err := tt.r.failed(); (err != nil) != tt.fail {
			t.Errorf("%s: failed() = %v, want failure %v", tt.name, err, tt.fail)
		}
		checks := tt.r.targetChecks()
		if len(checks) != len(tt.checks) {
			t.Errorf("%s: checks %q, want %q", tt.name, checks, tt.checks)
			continue
		}
		for i, c := range checks {
			if !strings.HasSuffix(c, tt.checks[i]) {
				t.Errorf("%s: check %q, want it to end %q", tt.name, c, tt.checks[i])
			}
		}
		var md strings.Builder
		tt.r.writeMarkdown(&md)
		if !strings.Contains(md.String(), "deliveries/s") {
			t.Errorf("%s: report %s", tt.name, md.String())
		}
	}
}
