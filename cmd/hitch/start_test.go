package main

import (
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
)

// hitch help, hitch -h and hitch --help list every command, as the
// README's Commands table does; hitch help COMMAND is COMMAND -h.
func TestHelpListsTheCommands(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	for _, line := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(line, "| `hitch") {
			table.WriteString(line + "\n")
		}
	}
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		code, out, stderr := cli(t, nil, args...)
		if code != 0 || stderr != "" {
			t.Errorf("hitch %v: exit %d, stderr %q", args, code, stderr)
		}
		for _, c := range commands {
			if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(c.name) + ` +\S`).MatchString(out) {
				t.Errorf("hitch %v does not list %q:\n%s", args, c.name, out)
			}
		}
	}
	for _, c := range commands {
		// The table names a command's words, e.g. `hitch clients create
		// --name …` or "`hitch connectors create …`, `list`".
		first, _, _ := strings.Cut(c.name, " ")
		if !strings.Contains(table.String(), "`hitch "+c.name) && !strings.Contains(table.String(), "`hitch "+first) {
			t.Errorf("the README's Commands table does not list hitch %s", c.name)
		}
	}
	code, out, _ := cli(t, nil, "help", "clients", "create")
	if code != 0 || !strings.HasPrefix(out, "usage: hitch clients create [flags]") || !strings.Contains(out, "-name") {
		t.Errorf("hitch help clients create: %d %q", code, out)
	}
}

// members add names the dashboard's URL only when the public URL is
// configured: the command cannot know the port a running serve listens on.
func TestMembersAddNamesOnlyTheConfiguredURL(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, name string, env []string) {
		t.Parallel()
		clientID := cliClient(t, env, "--name", "Acme")
		code, out, stderr := cli(t, env, "members", "add", "--client-id", clientID, "--email", "ada@example.com", "--role", "admin")
		if code != 0 || strings.Contains(out, "http") || !strings.Contains(out, "/dashboard") {
			t.Errorf("members add without a public URL: %d %q %q", code, out, stderr)
		}
		public := append([]string{"HITCH_PUBLIC_URL=https://hitch.example.com/"}, env...)
		code, out, stderr = cli(t, public, "members", "add", "--client-id", clientID, "--email", "bob@example.com", "--role", "viewer")
		if code != 0 || !strings.Contains(out, "Sign in at https://hitch.example.com/dashboard,") {
			t.Errorf("members add with a public URL: %d %q %q", code, out, stderr)
		}
	})
}

// In production, a start names the dashboard at the port it listens on,
// and, while there is no production developer account, says how to create
// one; once there is one, it says nothing of it.
func TestServeProductionSaysHowToBegin(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, name string, env []string) {
		t.Parallel()
		env = append([]string{"HITCH_ENV=production", "HITCH_MASTER_KEY=" + strings.Repeat("ab", 32)}, env...)
		started := func() (*serving, string) {
			srv := startServe(t, env)
			addr := waitFor(t, srv.logs, regexp.MustCompile(`msg="hitch listening" addr=(\S+)`))
			waitFor(t, srv.logs, regexp.MustCompile(`msg="open the dashboard" dashboard=(http://`+regexp.QuoteMeta(addr)+`/dashboard)\n`))
			// Serving begins after the start's messages: once a request is
			// answered, every one of them is in the logs.
			resp, err := http.Get("http://" + addr + "/healthz")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return srv, addr
		}
		srv, _ := started()
		logs := srv.logs.String()
		srv.stop(t)
		if !strings.Contains(logs, "there is no production developer account yet: create one with `hitch clients create --env production --name NAME`") ||
			!strings.Contains(logs, "hitch members add --env production") || strings.Contains(logs, "/demo") {
			t.Fatalf("a production start without a developer account logged:\n%s", logs)
		}
		cliClient(t, env, "--name", "Acme", "--env", "production")
		srv, _ = started()
		logs = srv.logs.String()
		srv.stop(t)
		if strings.Contains(logs, "no production developer account") {
			t.Fatalf("a production start with a developer account logged:\n%s", logs)
		}
	})
}

// A port another program holds stops serve with what to do about it.
func TestServeOnABusyPortSaysWhatToDo(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	code, _, stderr := cli(t, []string{"HITCH_DATA_DIR=" + t.TempDir()}, "serve", "--addr", ln.Addr().String())
	if code != 1 || !strings.Contains(stderr, "another program uses that port") || !strings.Contains(stderr, "--addr") {
		t.Fatalf("serve on a busy port: %d %q", code, stderr)
	}
}
