package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/hitchdev/hitch/internal/audit"
)

// cliClient creates a developer account with the CLI and returns its id.
func cliClient(t *testing.T, env []string, args ...string) string {
	t.Helper()
	code, out, stderr := cli(t, env, append([]string{"clients", "create", "--json"}, args...)...)
	var c struct {
		ClientID string `json:"client_id"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &c) != nil {
		t.Fatalf("clients create %v: %d %q %q", args, code, out, stderr)
	}
	return c.ClientID
}

// cliEndpoint adds an endpoint with the CLI and returns its id.
func cliEndpoint(t *testing.T, env []string, args ...string) string {
	t.Helper()
	code, out, stderr := cli(t, env, append([]string{"webhooks", "add", "--json"}, args...)...)
	var ep struct{ ID string }
	if code != 0 || json.Unmarshal([]byte(out), &ep) != nil {
		t.Fatalf("webhooks add %v: %d %q %q", args, code, out, stderr)
	}
	return ep.ID
}

// hitch webhooks update changes an endpoint's URL, its event filter or
// both, checked as the dashboard and PATCH /webhooks/endpoints/{id} check
// them, and records webhook.edit by the operator. Refusals are one line,
// exit 1, and change and record nothing.
func TestWebhooksUpdateCommand(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, name string, env []string) {
		t.Parallel()
		acme, other := cliClient(t, env, "--name", "Acme"), cliClient(t, env, "--name", "Other")
		id := cliEndpoint(t, env, "--client-id", acme, "--url", "http://127.0.0.1:9/hooks", "--events", "ACCOUNT_LOGIN_REQUIRED,AUTHENTICATED")
		otherID := cliEndpoint(t, env, "--client-id", other, "--url", "http://127.0.0.1:9/other")
		update := func(args ...string) (int, string, string) {
			t.Helper()
			return cli(t, env, append([]string{"webhooks", "update", "--client-id", acme, "--id", id}, args...)...)
		}
		listed := func() endpointRow {
			t.Helper()
			code, out, stderr := cli(t, env, "webhooks", "list", "--client-id", acme, "--json")
			var rows []endpointRow
			if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 1 {
				t.Fatalf("list: %d %q %q", code, out, stderr)
			}
			return rows[0]
		}

		// The URL alone: the filter stays.
		code, out, stderr := update("--url", "http://127.0.0.1:9/v2")
		if code != 0 || out != "id:     "+id+"\nurl:    http://127.0.0.1:9/v2\nevents: ACCOUNT_LOGIN_REQUIRED,AUTHENTICATED\nstatus: enabled\n" {
			t.Fatalf("update --url: %d %q %q", code, out, stderr)
		}
		// The filter alone, as JSON: the URL stays.
		code, out, stderr = update("--events", "CARD_UPDATED, CARD_FAILED,CARD_UPDATED", "--json")
		var row endpointRow
		if code != 0 || json.Unmarshal([]byte(out), &row) != nil || row.ID != id || row.URL != "http://127.0.0.1:9/v2" ||
			!slices.Equal(row.Events, []string{"CARD_UPDATED", "CARD_FAILED"}) || row.Status != "enabled" {
			t.Fatalf("update --events --json: %d %q %q", code, out, stderr)
		}
		// Both, and every event again.
		if code, out, stderr := update("--url", "http://127.0.0.1:9/v3", "--events", "all"); code != 0 || !strings.Contains(out, "events: all\n") {
			t.Fatalf("update --url --events all: %d %q %q", code, out, stderr)
		}
		if ep := listed(); ep.URL != "http://127.0.0.1:9/v3" || len(ep.Events) != 0 {
			t.Fatalf("after the updates: %+v", ep)
		}

		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"--client-id", acme, "--id", "we_nope", "--url", "http://127.0.0.1:9/x"}, `no endpoint with that --id for client "` + acme + `"`},
			{[]string{"--client-id", acme, "--id", otherID, "--url", "http://127.0.0.1:9/x"}, `no endpoint with that --id for client "` + acme + `"`},
			{[]string{"--client-id", acme, "--id", id, "--url", "ftp://x"}, "webhooks update: --url "},
			{[]string{"--client-id", acme, "--id", id, "--url", ""}, "webhooks update: --url is required"},
			{[]string{"--client-id", acme, "--id", id, "--events", "CARD_UPDATED,NOPE"}, `webhooks update: --events has an unknown event type "NOPE"`},
			{[]string{"--client-id", acme, "--id", id, "--events", ""}, "webhooks update: --events is empty"},
			{[]string{"--client-id", acme, "--id", id}, "webhooks update: give --url, --events or both"},
			{[]string{"--client-id", acme, "--url", "http://127.0.0.1:9/x"}, "webhooks update: --id is required"},
			{[]string{"--client-id", "nobody-here", "--id", id, "--url", "http://127.0.0.1:9/x"}, `webhooks update: no client "nobody-here"`},
			{[]string{"--id", id, "--url", "http://127.0.0.1:9/x"}, "webhooks update: --client-id is required"},
		} {
			code, _, stderr := cli(t, env, append([]string{"webhooks", "update"}, c.args...)...)
			if code != 1 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("update %v: %d %q, want one line with %q", c.args, code, stderr, c.want)
			}
		}
		if ep := listed(); ep.URL != "http://127.0.0.1:9/v3" || len(ep.Events) != 0 {
			t.Fatalf("a refused update changed the endpoint: %+v", ep)
		}
		if _, out, _ := cli(t, env, "webhooks", "list", "--client-id", other); !strings.Contains(out, "http://127.0.0.1:9/other") {
			t.Fatalf("another developer's endpoint changed: %q", out)
		}

		// In production the URL rules of --env production apply.
		prodEnv := append([]string{"HITCH_MASTER_KEY=" + devMasterKey(t, env)}, env...)
		prod := cliClient(t, prodEnv, "--name", "Prod", "--env", "production")
		prodID := cliEndpoint(t, prodEnv, "--env", "production", "--client-id", prod, "--url", "https://93.184.215.14/hooks")
		if code, _, stderr := cli(t, prodEnv, "webhooks", "update", "--env", "production", "--client-id", prod, "--id", prodID,
			"--url", "https://127.0.0.1/hooks"); code != 1 || !strings.Contains(stderr, "--url host is a loopback address") {
			t.Errorf("production loopback URL: %d %q", code, stderr)
		}

		// Each update is one webhook.edit record by the operator, named by
		// the URL after it; refusals recorded nothing. Each add is a
		// webhook.add.
		a := openTestApp(t, env)
		type rec struct{ action, url string }
		for clientID, want := range map[string][]rec{ // newest first
			acme: {{"webhook.edit", "http://127.0.0.1:9/v3"}, {"webhook.edit", "http://127.0.0.1:9/v2"},
				{"webhook.edit", "http://127.0.0.1:9/v2"}, {"webhook.add", "http://127.0.0.1:9/hooks"}},
			other: {{"webhook.add", "http://127.0.0.1:9/other"}},
			prod:  {{"webhook.add", "https://93.184.215.14/hooks"}},
		} {
			page, err := audit.List(context.Background(), a.Store, audit.ListParams{ClientID: clientID, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Records) != len(want) {
				t.Fatalf("client %s has %d audit records, want %d", clientID, len(page.Records), len(want))
			}
			for i, r := range page.Records {
				command := map[string]string{"webhook.edit": "webhooks update", "webhook.add": "webhooks add"}[want[i].action]
				environment := "development"
				if clientID == prod {
					environment = "production"
				}
				if r.Action != want[i].action || r.Outcome != "success" || r.ActorName != "hitch "+command+" (operator)" ||
					r.ActorEmail != "" || r.TargetType != "webhook_endpoint" || r.TargetName == nil || *r.TargetName != want[i].url ||
					r.UserAgent != "hitch "+command || r.IP != "" || r.Environment != environment {
					t.Errorf("client %s, record %d: %+v, want %+v", clientID, i, r, want[i])
				}
			}
		}
		if code, out, stderr := cli(t, env, "audit", "verify", "--client-id", acme); code != 0 || !strings.Contains(out, "\t4 records\tok") {
			t.Fatalf("verify: %d %q %q", code, out, stderr)
		}
	})
}
