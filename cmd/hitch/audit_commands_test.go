package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/hitchdev/hitch/client"
)

// The operator's commands that change a developer's credentials, webhook
// endpoints or the deployment's JWE key are recorded in the developer's
// audit log, as GET /audit_logs serves it: actor "hitch <command>
// (operator)" with no e-mail, user agent "hitch <command>", no IP, and no
// secret. A key rotation is in every developer's log. Refused commands
// record nothing, and the chains verify.
func TestOperatorCommandsAreAudited(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, name string, env []string) {
		t.Parallel()
		run := func(wantCode int, args ...string) string {
			t.Helper()
			code, out, stderr := cli(t, env, args...)
			if code != wantCode {
				t.Fatalf("%v: %d %q %q, want exit %d", args, code, out, stderr, wantCode)
			}
			return out
		}
		var acme, other, rotated struct {
			ClientID string `json:"client_id"`
			Secret   string `json:"secret"`
		}
		if err := json.Unmarshal([]byte(run(0, "clients", "create", "--name", "Acme", "--json")), &acme); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(run(0, "clients", "create", "--name", "Other", "--json")), &other); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(run(0, "clients", "rotate-secret", "--client-id", acme.ClientID, "--json")), &rotated); err != nil {
			t.Fatal(err)
		}
		run(1, "clients", "rotate-secret", "--client-id", "nobody-here")
		const hook = "http://127.0.0.1:9/hooks"
		var added, again struct{ ID, Secret string }
		if err := json.Unmarshal([]byte(run(0, "webhooks", "add", "--client-id", acme.ClientID, "--url", hook, "--json")), &added); err != nil {
			t.Fatal(err)
		}
		run(1, "webhooks", "add", "--client-id", acme.ClientID, "--url", "ftp://127.0.0.1/hooks")
		if err := json.Unmarshal([]byte(run(0, "webhooks", "rotate-secret", "--client-id", acme.ClientID, "--id", added.ID, "--json")), &again); err != nil {
			t.Fatal(err)
		}
		run(1, "webhooks", "rotate-secret", "--client-id", other.ClientID, "--id", added.ID)
		run(1, "webhooks", "remove", "--client-id", other.ClientID, "--id", added.ID)
		run(0, "webhooks", "remove", "--client-id", acme.ClientID, "--id", added.ID)
		run(1, "webhooks", "remove", "--client-id", acme.ClientID, "--id", added.ID)
		var key struct {
			Kid string `json:"kid"`
		}
		if err := json.Unmarshal([]byte(run(0, "keys", "rotate", "--json")), &key); err != nil || key.Kid == "" {
			t.Fatalf("keys rotate: %v %+v", err, key)
		}

		srv := startServe(t, env, "--log-format", "json")
		base := "http://" + waitFor(t, srv.logs, regexp.MustCompile(`"addr":"([^"]+)"`))
		type record = client.AuditRecord
		auditLogs := func(clientID, secret string) ([]record, string) {
			t.Helper()
			req, _ := http.NewRequest("GET", base+"/audit_logs", nil)
			req.SetBasicAuth(clientID, secret)
			resp, err := validatedClient(t, http.DefaultTransport).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			var page struct {
				Data []record `json:"data"`
			}
			if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &page) != nil {
				t.Fatalf("GET /audit_logs: %d %s", resp.StatusCode, body)
			}
			return page.Data, string(body)
		}
		type want struct{ command, action, targetType, name string } // name "" for null
		check := func(who string, got []record, wants []want) {
			t.Helper()
			if len(got) != len(wants) {
				t.Fatalf("%s: %d records, want %d: %+v", who, len(got), len(wants), got)
			}
			for i, w := range wants {
				r := got[i]
				name := ""
				if r.Target.Name != nil {
					name = *r.Target.Name
				}
				if r.Event.Action != w.action || r.Event.Outcome.Status != "success" || r.Target.Type != w.targetType || name != w.name ||
					(w.name == "" && r.Target.Name != nil) || r.Target.Environment != "development" ||
					r.Actor.Name != "hitch "+w.command+" (operator)" || r.Actor.Email != "" ||
					r.Context.UserAgent != "hitch "+w.command || r.Context.IP != "" {
					t.Errorf("%s, record %d: %+v, want %+v", who, i, r, w)
				}
			}
		}
		got, body := auditLogs(acme.ClientID, rotated.Secret)
		check("acme", got, []want{ // newest first
			{"keys rotate", "key.rotate", "jwe_key", key.Kid},
			{"webhooks remove", "webhook.remove", "webhook_endpoint", hook},
			{"webhooks rotate-secret", "webhook.update", "webhook_endpoint", hook},
			{"webhooks add", "webhook.add", "webhook_endpoint", hook},
			{"clients rotate-secret", "secret.rotate", "secret", ""},
		})
		for _, secret := range []string{acme.Secret, rotated.Secret, added.Secret, again.Secret} {
			if secret == "" || strings.Contains(body, secret) {
				t.Fatalf("a secret (%d characters) is in the audit log or was not printed: %s", len(secret), body)
			}
		}
		got, _ = auditLogs(other.ClientID, other.Secret)
		check("other", got, []want{{"keys rotate", "key.rotate", "jwe_key", key.Kid}})
		srv.stop(t)

		out := run(0, "audit", "verify")
		for id, n := range map[string]int{acme.ClientID: 5, other.ClientID: 1} {
			if !strings.Contains(out, fmt.Sprintf("%s\t%d records\tok", id, n)) {
				t.Fatalf("verify: %q, want %s with %d records", out, id, n)
			}
		}
	})
}
