package main

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/hitchdev/hitch/bench/internal/cli"
	"github.com/hitchdev/hitch/bench/internal/hitch"
)

// The defaults are the run: 16 connections, one account.
func TestParseFlagsDefaults(t *testing.T) {
	t.Parallel()
	o, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.conns != 16 || o.accounts != 1 || o.duration != 10*time.Second || o.warmup != 2*time.Second ||
		o.hitch.DatabaseURL != "" || o.debugAddr != "" || o.jsonPath != "" {
		t.Errorf("parseFlags(nil) = %+v", o)
	}
	o, err = parseFlags([]string{"--database-url", "postgres://u@h/db", "--conns", "4", "--accounts", "10",
		"--duration", "5s", "--warmup", "0s", "--debug-addr", "127.0.0.1:6060", "--json", "out.json"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.conns != 4 || o.accounts != 10 || o.duration != 5*time.Second || o.warmup != 0 ||
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
		{[]string{"--conns", "0"}, "--conns 0"},
		{[]string{"--accounts", "11"}, "--accounts 11: want 1 to 10"},
		{[]string{"--duration", "0s"}, "--duration 0s"},
		{[]string{"--warmup", "-1s"}, "--warmup -1s"},
		{[]string{"--debug-addr", "6060"}, `--debug-addr "6060"`},
		{[]string{"--database-url", "mysql://h/db"}, "--database-url"},
		{[]string{"extra"}, "unexpected arguments"},
	}
	for _, tt := range tests {
		_, err := parseFlags(tt.args, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) || cli.ExitCode("card", err, io.Discard) != 2 {
			t.Errorf("parseFlags(%q) = %v; want a usage error with %q", tt.args, err, tt.want)
		}
	}
}

// Every answer names its own task, so answers are checked for their shape.
func TestCheckCardAnswer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body string
		ok   bool
	}{
		{`{"message":"Success","task_id":4200213061872401}` + "\n", true},
		{`{"message":"Success","task_id":7}`, true},
		{`{"message":"Success","task_id":0}`, false},
		{`{"message":"Success","task_id":"7"}`, false},
		{`{"message":"Success","task_id":}`, false},
		{`{"message":"Success","task_id":7`, false},
		{`{"message":"Success","task_id":12345678901234567890}`, false},
		{`{"message":"Failure","task_id":7}`, false},
		{`{"error_type":"INVALID_REQUEST"}`, false},
		{``, false},
	}
	for _, tt := range tests {
		if err := checkCardAnswer([]byte(tt.body)); (err == nil) != tt.ok {
			t.Errorf("checkCardAnswer(%q) = %v, want ok %v", tt.body, err, tt.ok)
		}
	}
}

// The bodies name the bench user and go round the accounts.
func TestCardBodies(t *testing.T) {
	t.Parallel()
	bodies := cardBodies([]string{"a", "b", "c", "d"}, 3)
	wantMerchants := []int{1, 2, 3, 1}
	for i, b := range bodies {
		var body struct {
			JWE            string `json:"jwe"`
			ExternalUserID string `json:"external_user_id"`
			MerchantID     int    `json:"merchant_id"`
		}
		if err := json.Unmarshal(b, &body); err != nil {
			t.Fatal(err)
		}
		if body.JWE != string("abcd"[i]) || body.ExternalUserID != hitch.ExternalUserID || body.MerchantID != wantMerchants[i] {
			t.Errorf("body %d = %s; want jwe %c for merchant %d", i, b, "abcd"[i], wantMerchants[i])
		}
	}
}

// The bare loop opens JWEs made by client.EncryptCard, as Hitch gets them,
// and no others.
func TestBareDecrypts(t *testing.T) {
	t.Parallel()
	bare, err := newBareDecrypts(2048)
	if err != nil {
		t.Fatal(err)
	}
	if len(bare.jwes) != poolSize || bare.jwes[0] == bare.jwes[1] {
		t.Errorf("%d JWEs, the first two equal: %v; want %d distinct", len(bare.jwes), bare.jwes[0] == bare.jwes[1], poolSize)
	}
	bits, err := keyBits(publicJWK(&bare.priv.PublicKey, "k"))
	if err != nil || bits != 2048 {
		t.Errorf("keyBits = %d, %v; want 2048", bits, err)
	}
	other, err := newBareDecrypts(2048)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bare.decrypt(other.jwes[0]); err == nil {
		t.Error("decrypted a JWE made for another key")
	}
}

// The report holds Hitch's req/s to 70% of the bare loop's decrypts/s, says
// when a run is outside what the target was set for, and counts failures
// against it.
func TestReportTarget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		conns, accounts int
		hitch, bare     float64
		errors          int64
		want            []string
	}{
		{"met", 16, 1, 750, 1000, 0, []string{"- target: hitch req/s ≥ 70% of bare decrypts/s: 75% met", "hitch/bare throughput: 75%"}},
		{"missed", 16, 1, 500, 1000, 0, []string{"- target: hitch req/s ≥ 70% of bare decrypts/s: 50% MISSED"}},
		{"failures", 16, 1, 750, 1000, 3, []string{"75% MISSED (3 failures)", "- note: hitch: 3 failed requests"}},
		{"other run", 64, 10, 750, 1000, 0, []string{"- target (set for 16 connections, 1 account): ", "for 10 account(s)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := &report{Store: "sqlite", KeyBits: 2048, Conns: tt.conns, Accounts: tt.accounts,
				Bare:  result{PerSec: tt.bare, Seconds: 5, BenchCPUSeconds: 9.5, HitchCPUSeconds: 0.1, MachineCPUSeconds: 10, CPUMsPerOp: 1.9},
				Hitch: result{PerSec: tt.hitch, Seconds: 5, Errors: tt.errors, HitchCPUSeconds: -1, CPUMsPerOp: -1}}
			r.finish(nil)
			var b strings.Builder
			r.writeMarkdown(&b)
			out := b.String()
			for _, want := range append(tt.want, "## POST /card with a JWE (RSA-OAEP-256, A256GCM, 2048-bit key)",
				"| 1.90 ms | 0.02 | 1.90 | 0.08 |", "| n/a | n/a | 0.00 | n/a |") {
				if !strings.Contains(out, want) {
					t.Errorf("report lacks %q:\n%s", want, out)
				}
			}
		})
	}
}
