package main

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestConnectorsCommands(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, name string, env []string) {
		t.Parallel()
		code, out, stderr := cli(t, env, "connectors", "create", "--name", "Amazon orders", "--json")
		if code != 0 {
			t.Fatalf("create: %d %s", code, stderr)
		}
		if !regexp.MustCompile(`^\{"id": "conn_[0-9a-f]{24}", "secret": "csec_[A-Za-z0-9_-]{43}"\}\n$`).MatchString(out) {
			t.Fatalf("create --json printed %q", out)
		}
		var creds struct{ ID, Secret string }
		if err := json.Unmarshal([]byte(out), &creds); err != nil {
			t.Fatal(err)
		}
		code, out, _ = cli(t, env, "connectors", "create", "--name", "Netflix plans")
		if code != 0 || !strings.Contains(out, "secret: csec_") || !strings.Contains(out, "shown only now") {
			t.Fatalf("create as text: %d %q", code, out)
		}

		code, out, _ = cli(t, env, "connectors", "list")
		if code != 0 || !strings.Contains(out, creds.ID) || !strings.Contains(out, "Amazon orders") ||
			!strings.Contains(out, "Netflix plans") || strings.Contains(out, "csec_") {
			t.Fatalf("list: %d %q", code, out)
		}
		code, out, stderr = cli(t, env, "connectors", "revoke", "--id", creds.ID)
		if code != 0 || !strings.Contains(out, creds.ID) {
			t.Fatalf("revoke: %d %q %q", code, out, stderr)
		}
		code, out, _ = cli(t, env, "connectors", "list", "--json")
		var rows []struct {
			ID        string     `json:"id"`
			Name      string     `json:"name"`
			CreatedAt time.Time  `json:"created_at"`
			RevokedAt *time.Time `json:"revoked_at"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 2 || strings.Contains(out, "csec_") {
			t.Fatalf("list --json: %d %q", code, out)
		}
		if rows[0].ID != creds.ID || rows[0].RevokedAt == nil || rows[1].RevokedAt != nil || rows[0].CreatedAt.IsZero() {
			t.Fatalf("list --json after revoking the first: %+v", rows)
		}

		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"connectors", "create"}, "--name"},
			{[]string{"connectors", "create", "--name", "   "}, "name"},
			{[]string{"connectors", "revoke"}, "--id"},
			{[]string{"connectors", "revoke", "--id", "conn_nope"}, "no connector"},
		} {
			if code, _, stderr := cli(t, env, tc.args...); code != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("%v: %d %q, want an error naming %q", tc.args, code, stderr, tc.want)
			}
		}
	})
}

// Credentials made by the CLI authenticate a running server's ingestion
// API: serve wires the connectors.
func TestConnectorCredentialsOnServe(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, name string, env []string) {
		t.Parallel()
		code, out, stderr := cli(t, env, "connectors", "create", "--name", "Uber rides", "--json")
		var creds struct{ ID, Secret string }
		if code != 0 || json.Unmarshal([]byte(out), &creds) != nil {
			t.Fatalf("create: %d %q %s", code, out, stderr)
		}
		srv := startServe(t, env, "--log-format", "json")
		logs := srv.logs
		addr := waitFor(t, logs, regexp.MustCompile(`"addr":"([^"]+)"`))
		clientID := waitFor(t, logs, regexp.MustCompile(`client_id: (\S+)`))

		ingest := func(user, secret string) (int, string) {
			t.Helper()
			body := `{"client_id": "` + clientID + `", "external_user_id": "nobody", "merchant_id": 1, "transactions": [` +
				`{"external_id": "o-1", "datetime": "2026-10-01T12:00:00Z", "order_status": "ORDERED",` +
				` "price": {"sub_total": "1.00", "adjustments": [], "total": "1.00", "currency": "USD"}}]}`
			req, _ := http.NewRequest("POST", "http://"+addr+"/internal/ingest/transactions", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.SetBasicAuth(user, secret)
			resp, err := validatedClient(t, http.DefaultTransport).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		// Authenticated, before declaring any merchant: refused.
		if status, body := ingest(creds.ID, creds.Secret); status != 403 || !strings.Contains(body, "MERCHANT_NOT_SERVED") {
			t.Fatalf("ingest before declaring: %d %s", status, body)
		}
		declare, _ := http.NewRequest("PUT", "http://"+addr+"/internal/connector", strings.NewReader(`{"merchant_ids": [1]}`))
		declare.Header.Set("Content-Type", "application/json")
		declare.SetBasicAuth(creds.ID, creds.Secret)
		if resp, err := validatedClient(t, http.DefaultTransport).Do(declare); err != nil || resp.StatusCode != 200 {
			t.Fatalf("declare: %v %v", resp, err)
		}
		// Declared: the answer is about the (unknown) user.
		if status, body := ingest(creds.ID, creds.Secret); status != 404 || !strings.Contains(body, "USER_NOT_FOUND") {
			t.Fatalf("ingest with the CLI's credentials: %d %s", status, body)
		}
		if status, _ := ingest(creds.ID, "csec_wrong"); status != 401 {
			t.Fatalf("wrong secret: %d", status)
		}
		srv.stop(t)
		if strings.Contains(logs.String(), creds.Secret) {
			t.Fatal("the connector secret was logged")
		}
	})
}
