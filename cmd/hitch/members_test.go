package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/hitchdev/hitch/internal/audit"
	"github.com/hitchdev/hitch/internal/config"
	"github.com/hitchdev/hitch/internal/member"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// hitch members add creates the first admin with a password shown once;
// hitch audit verify checks every chain and names the first broken record.
func TestMembersAndAuditCommands(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, name string, env []string) {
		t.Parallel()
		creds := struct{ ClientID string }{cliClient(t, env, "--name", "Acme")}
		code, out, stderr := cli(t, env, "members", "add", "--client-id", creds.ClientID, "--email", "Ada@Example.com",
			"--role", "admin", "--name", "Ada Lovelace")
		if code != 0 {
			t.Fatalf("members add: %d %s", code, stderr)
		}
		m := regexp.MustCompile(`(?m)^password: (\S{27})$`).FindStringSubmatch(out)
		if m == nil || !strings.Contains(out, "email:    ada@example.com") || !strings.Contains(out, "shown only now") {
			t.Fatalf("members add printed %q", out)
		}
		code, out, _ = cli(t, env, "members", "add", "--client-id", creds.ClientID, "--email", "bob@example.com", "--role", "viewer", "--json")
		var bob map[string]string
		if code != 0 || json.Unmarshal([]byte(out), &bob) != nil || bob["role"] != "viewer" || len(bob["password"]) != 27 {
			t.Fatalf("members add --json: %d %q", code, out)
		}
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"--client-id", creds.ClientID, "--email", "ada@example.com", "--role", "admin"},
				"ada@example.com is a member of client \"" + creds.ClientID + "\" already"},
			{[]string{"--client-id", "nope-nope", "--email", "c@example.com", "--role", "admin"}, "no client"},
			{[]string{"--client-id", creds.ClientID, "--email", "not an address", "--role", "admin"}, "--email"},
			{[]string{"--client-id", creds.ClientID, "--email", "c@example.com", "--role", "owner"}, "--role"},
			{[]string{"--client-id", creds.ClientID, "--email", "c@example.com"}, "required"},
		} {
			if code, _, stderr := cli(t, env, append([]string{"members", "add"}, c.args...)...); code != 1 || !strings.Contains(stderr, c.want) {
				t.Errorf("members add %v: %d %q, want %q", c.args, code, stderr, c.want)
			}
		}
		// E-mails are unique per developer: another developer may have
		// an ada@example.com of its own.
		other := struct{ ClientID string }{cliClient(t, env, "--name", "Other")}
		code, out, stderr = cli(t, env, "members", "add", "--client-id", other.ClientID, "--email", "ada@example.com", "--role", "viewer", "--json")
		var adaOther map[string]string
		if code != 0 || json.Unmarshal([]byte(out), &adaOther) != nil || adaOther["client_id"] != other.ClientID {
			t.Fatalf("members add of another developer's e-mail: %d %q %q", code, out, stderr)
		}
		// The password signs in, to its developer.
		a := openTestApp(t, env)
		signed, err := a.Members.SignIn(context.Background(), "ada@example.com", m[1], auditOrigin)
		if err != nil || signed.Principal.Client.ID != creds.ClientID || !signed.Principal.Member.MustChangePassword {
			t.Fatalf("sign in with the printed password: %v", err)
		}
		signed, err = a.Members.SignIn(context.Background(), "ada@example.com", adaOther["password"], auditOrigin)
		if err != nil || signed.Principal.Client.ID != other.ClientID {
			t.Fatalf("sign in with the other developer's printed password: %v", err)
		}
		if _, err := a.Members.SignIn(context.Background(), "ada@example.com", "nope", auditOrigin); err != member.ErrInvalidCredentials {
			t.Fatalf("wrong password: %v", err)
		}

		// The first developer's log: the member added, its sign-in, a
		// failure for the other's sign-in (the password was wrong for
		// it), the wrong password.
		code, out, stderr = cli(t, env, "audit", "verify")
		if code != 0 || !regexp.MustCompile(creds.ClientID+`\t5 records\tok\thead [0-9a-f]{64}\n`).MatchString(out) {
			t.Fatalf("verify: %d %q %q", code, out, stderr)
		}
		if code, _, stderr := cli(t, env, "audit", "verify", "--client-id", "nope-nope"); code != 1 || !strings.Contains(stderr, "no client") {
			t.Fatalf("verify unknown: %d %q", code, stderr)
		}
		// Someone with database access rewrites who signed in.
		storetest.ExecRaw(t, a.Store, `UPDATE audit_records SET actor_email = 'eve@example.com' WHERE client_id = $1 AND seq = 3`, creds.ClientID)
		code, _, stderr = cli(t, env, "audit", "verify", "--client-id", creds.ClientID)
		if code != 1 || !strings.Contains(stderr, "broken at record 3") || !strings.Contains(stderr, creds.ClientID) {
			t.Fatalf("verify a tampered chain: %d %q", code, stderr)
		}
		if code, _, stderr := cli(t, env, "audit", "verify"); code != 1 || !strings.Contains(stderr, "broken at record 3") {
			t.Fatalf("verify all: %d %q", code, stderr)
		}
	})
}

var auditOrigin = audit.Origin{IP: "127.0.0.1", UserAgent: "test"}

// openTestApp builds the app a hitch command run with env would, beside
// it, closed when the test ends.
func openTestApp(t *testing.T, env []string) *hitch {
	t.Helper()
	cfg, err := config.NewFlagSet("test", lookupIn(env)).Parse(nil, env)
	if err != nil {
		t.Fatal(err)
	}
	a, err := newHitch(context.Background(), cfg, &lockedBuffer{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}
