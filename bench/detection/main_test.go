package main

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hitchdev/hitch/bench/internal/cli"
)

// The defaults are the run: 500 users, here from 8 senders in a
// closed loop.
func TestParseFlagsDefaults(t *testing.T) {
	t.Parallel()
	o, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.users != 500 || o.concurrency != 8 || o.rate != 0 || o.timeout != time.Minute ||
		o.hitch.DatabaseURL != "" || o.debugAddr != "" || o.jsonPath != "" {
		t.Errorf("parseFlags(nil) = %+v", o)
	}
	o, err = parseFlags([]string{"--database-url", "postgres://u@h/db", "--users", "50", "--concurrency", "2",
		"--rate", "25", "--timeout", "5s", "--debug-addr", "127.0.0.1:6060", "--json", "out.json"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.users != 50 || o.concurrency != 2 || o.rate != 25 || o.timeout != 5*time.Second ||
		o.hitch.DatabaseURL != "postgres://u@h/db" || o.debugAddr != "127.0.0.1:6060" || o.jsonPath != "out.json" {
		t.Errorf("parseFlags(every flag) = %+v", o)
	}
}

func TestParseFlagsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--users", "0"}, "--users 0"},
		{[]string{"--concurrency", "0"}, "--concurrency 0"},
		{[]string{"--rate", "-1"}, "--rate -1"},
		{[]string{"--timeout", "0s"}, "--timeout 0s"},
		{[]string{"--debug-addr", "6060"}, `--debug-addr "6060"`},
		{[]string{"--database-url", "mysql://h/db"}, "--database-url"},
		{[]string{"extra"}, "unexpected arguments"},
	}
	for _, tt := range tests {
		_, err := parseFlags(tt.args, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) || cli.ExitCode("detection", err, io.Discard) != 2 {
			t.Errorf("parseFlags(%q) = %v; want a usage error with %q", tt.args, err, tt.want)
		}
	}
}

// Percentiles are nearest-rank: of 500 samples, p99 is the 495th.
func TestDistOf(t *testing.T) {
	t.Parallel()
	var ds []time.Duration
	for i := 500; i >= 1; i-- { // unsorted on purpose
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	got := distOf(ds)
	want := dist{Count: 500, P50Ms: 250, P90Ms: 450, P99Ms: 495, MaxMs: 500}
	if got != want {
		t.Errorf("distOf(1..500 ms) = %+v, want %+v", got, want)
	}
	if got := distOf([]time.Duration{7 * time.Millisecond}); got.P50Ms != 7 || got.P99Ms != 7 || got.MaxMs != 7 {
		t.Errorf("distOf(one sample) = %+v", got)
	}
	if got := distOf(nil); got != (dist{}) {
		t.Errorf("distOf(nil) = %+v", got)
	}
}

// summarize takes each user's first event, and counts every way a user can
// miss having exactly one.
func TestSummarize(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	sends := []sent{
		{user: "bench-0", at: ms(0), answered: ms(10)},
		{user: "bench-1", at: ms(5), answered: ms(20)},
		{user: "bench-2", at: ms(10), answered: ms(30)}, // nothing arrives
		{user: "bench-3", at: ms(15), answered: ms(25), errKind: "status 500", err: errors.New("boom")},
		{user: "bench-4", at: ms(20), answered: ms(40)},
	}
	byUser := map[string][]delivery{
		"bench-0": {{eventID: "e0", at: ms(100), eventMs: ms(80).UnixMilli(), accounts: 5}},
		"bench-1": { // sent twice, and a second event
			{eventID: "e1", at: ms(305), eventMs: ms(290).UnixMilli(), accounts: 25},
			{eventID: "e1", at: ms(400)},
			{eventID: "e1b", at: ms(500)},
		},
		"bench-4": {{eventID: "e4", at: ms(220), eventMs: ms(200).UnixMilli(), accounts: 15}},
		"someone": {{eventID: "x", at: ms(50)}},
	}
	s := summarize(sends, byUser, map[string]int{"TEST": 1}, 2)
	checks := []struct {
		name      string
		got, want any
	}{
		{"users", s.Users, 5},
		{"accepted", s.Accepted, 4},
		{"failed", s.Failed["status 500"], int64(1)},
		{"received", s.Received, 3},
		{"missing", s.Missing, 1},
		{"extra events", s.ExtraEvents, 1},
		{"redeliveries", s.Redeliveries, 1},
		{"strangers", s.Strangers, 1},
		{"malformed", s.Malformed, 2},
		{"latency", s.Latency, dist{Count: 3, P50Ms: 200, P90Ms: 300, P99Ms: 300, MaxMs: 300}},
		{"answer", s.Answer, dist{Count: 4, P50Ms: 15, P90Ms: 20, P99Ms: 20, MaxMs: 20}},
		{"to event", s.ToEvent.P50Ms, 180.0},
		{"event to receipt", s.EventToReceipt.MaxMs, 20.0},
		{"accounts", [3]float64{float64(s.AccountsMin), s.AccountsMean, float64(s.AccountsMax)}, [3]float64{5, 15, 25}},
		{"send seconds", s.SendSeconds, 0.040},
		{"wall seconds", s.WallSeconds, 0.305},
		// A failed request, a missing event, an extra one, a redelivery,
		// a stranger and two malformed deliveries; the TEST event is noted
		// only.
		{"failures", s.failures(), 7},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// The receiver files NEW_DETECTED_ACCOUNTS_AVAILABLE by external_user_id,
// counts other types, and answers 200 to everything.
func TestReceiver(t *testing.T) {
	t.Parallel()
	r := newReceiver("")
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	bodies := []string{
		`{"id":"e1","event":"NEW_DETECTED_ACCOUNTS_AVAILABLE","external_user_id":"bench-1","timestamp":1767322800000,` +
			`"data":{"detected_accounts":[{"id":1},{"id":2}],"unsupported_accounts":[{"name":"Patreon, Inc."}]}}`,
		`{"id":"e2","event":"TEST","data":{"message":"hi"}}`,
		`{"id":"e3","event":"NEW_DETECTED_ACCOUNTS_AVAILABLE","data":{}}`,
		`not json`,
	}
	for _, b := range bodies {
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("POST %s: status %d", b, resp.StatusCode)
		}
	}
	byUser, other, malformed := r.received(time.Time{})
	got := byUser["bench-1"]
	if len(byUser) != 1 || len(got) != 1 || got[0].eventID != "e1" || got[0].eventMs != 1767322800000 ||
		got[0].accounts != 3 || got[0].at.IsZero() {
		t.Errorf("by user = %+v", byUser)
	}
	if other["TEST"] != 1 || len(other) != 1 || malformed != 2 {
		t.Errorf("other = %v, malformed = %d; want TEST 1, 2", other, malformed)
	}
	if n := r.missing([]string{"bench-1", "bench-2"}); n != 1 {
		t.Errorf("missing = %d, want 1", n)
	}
	// What arrived after the wait timed out does not count.
	if byUser, _, _ := r.received(got[0].at.Add(-time.Nanosecond)); len(byUser) != 0 {
		t.Errorf("received(before the delivery) = %+v, want nothing", byUser)
	}
}

// The report holds p99 to 2 s, counts failures against it, says when the
// run is not the issue's, and names the arrival pattern.
func TestReportTarget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		users int
		rate  float64
		p99   float64
		fail  bool
		want  []string
	}{
		{"met", 500, 0, 828, false, []string{"- target: send → receipt p99 ≤ 2 s: 828 ms met", "closed loop: 8 senders"}},
		{"missed", 500, 0, 2100, false, []string{"p99 ≤ 2 s: 2100 ms MISSED"}},
		{"failures", 500, 0, 500, true, []string{"500 ms MISSED (1 failures)", "- note: 1 POST /detect failed map[status 500:1]; first: boom"}},
		{"other run", 50, 20, 40, false, []string{"- target (set for 500 users): ", "open loop: one request started every 50.00 ms (20/s), by 8 senders"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := &report{Store: "sqlite", Users: tt.users, Concurrency: 8, RatePerSec: tt.rate, TargetP99Ms: 2000,
				Result: summary{Users: tt.users, Accepted: tt.users, Received: tt.users, Latency: dist{Count: tt.users, P99Ms: tt.p99}}}
			if tt.fail {
				r.Result.Accepted--
				r.Result.Failed, r.Result.FirstError = map[string]int64{"status 500": 1}, "boom"
			}
			r.finish(nil, nil)
			var b strings.Builder
			r.writeMarkdown(&b)
			out := b.String()
			for _, want := range append(tt.want, "## Detection latency on sqlite: POST /detect to NEW_DETECTED_ACCOUNTS_AVAILABLE") {
				if !strings.Contains(out, want) {
					t.Errorf("report lacks %q:\n%s", want, out)
				}
			}
			if (r.failed() != nil) != tt.fail {
				t.Errorf("failed() = %v, want an error %v", r.failed(), tt.fail)
			}
		})
	}
}
