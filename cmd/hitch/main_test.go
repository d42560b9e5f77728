package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hitchdev/hitch/internal/api/apitest"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// cli runs the command in-process with the given environment.
func cli(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, env, &out, &errOut)
	return code, out.String(), errOut.String()
}

// serving is a hitch serve that a test runs in-process.
type serving struct {
	logs   *lockedBuffer
	cancel context.CancelFunc
	done   chan int
}

// startServe runs hitch serve on a free loopback port, with args and env,
// until stop or the test's end.
func startServe(t *testing.T, env []string, args ...string) *serving {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s := &serving{logs: &lockedBuffer{}, cancel: cancel, done: make(chan int, 1)}
	go func() { s.done <- run(ctx, append([]string{"--addr", "127.0.0.1:0"}, args...), env, s.logs, s.logs) }()
	return s
}

// stop ends the serve, and fails t unless it exits 0 within 20 s.
func (s *serving) stop(t *testing.T) {
	t.Helper()
	s.cancel()
	select {
	case code := <-s.done:
		if code != 0 {
			t.Fatalf("serve exited %d: %s", code, s.logs)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
}

// validatedClient is an HTTP client whose every answer is checked against
// openapi.yaml (internal/api/apitest), sending through next.
func validatedClient(t testing.TB, next http.RoundTripper) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: apitest.Load(t).Transport(t, next)}
}

// forEachStore runs fn as a subtest, named after the store, with the
// environment of a hitch on a fresh store of each backend: SQLite, and
// PostgreSQL in a schema of the subtest's own, which skips saying why when
// HITCH_TEST_DATABASE_URL is not set (and fails when CI=true).
func forEachStore(t *testing.T, fn func(t *testing.T, name string, env []string)) {
	t.Helper()
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) { fn(t, b.Name, databaseEnv(t, b.Name)) })
	}
}

// databaseEnv is the environment of a hitch on a fresh store of the named
// backend of storetest.Backends. Without HITCH_TEST_DATABASE_URL,
// "postgres" skips t, saying why (storetest.RequirePostgres).
func databaseEnv(t *testing.T, backend string) []string {
	t.Helper()
	if backend == "sqlite" {
		return []string{"HITCH_DATA_DIR=" + t.TempDir()}
	}
	url := storetest.RequirePostgres(t)
	schema := storetest.NewSchema(t, url)
	// Test processes run many at once against one server (max_connections
	// 100): each keeps a pool of 16, not the production default.
	return []string{"HITCH_DATA_DIR=" + t.TempDir(),
		"HITCH_DATABASE_URL=" + withSearchPath(url, schema) + "&pool_max_conns=16"}
}

func withSearchPath(url, schema string) string {
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return url + sep + "search_path=" + schema
}

func TestConfigErrorsAreOneLineNamingTheSetting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := []struct {
		env     []string
		args    []string
		setting string
	}{
		{nil, []string{"--env", "staging"}, "--env"},
		{[]string{"HITCH_ENV=staging"}, nil, "HITCH_ENV"},
		{nil, []string{"--addr", "nope"}, "--addr"},
		{nil, []string{"--log-format", "xml"}, "--log-format"},
		{nil, []string{"--database-url", "mysql://x"}, "--database-url"},
		{nil, []string{"--bogus"}, "-bogus"},
		{[]string{"HITCH_DATABSE_URL=x"}, nil, "HITCH_DATABSE_URL"},
		{[]string{"HITCH_RATE_LIMIT=fast"}, nil, "HITCH_RATE_LIMIT"},
		{[]string{"HITCH_TRUSTED_PROXIES=10.0.0.0/8,proxy.internal"}, nil, "HITCH_TRUSTED_PROXIES"},
		{nil, []string{"--trusted-proxies", "10.0.0.0/33"}, "-trusted-proxies"},
		{nil, []string{"--env", "production"}, "HITCH_MASTER_KEY"},
		{[]string{"HITCH_DEV_CLIENT_ID=abcdefgh"}, nil, "HITCH_DEV_SECRET"},
	}
	for _, tc := range cases {
		env := append([]string{"HITCH_DATA_DIR=" + dir}, tc.env...)
		code, _, stderr := cli(t, env, tc.args...)
		if code != 2 {
			t.Errorf("%v %v: exit %d, want 2", tc.env, tc.args, code)
		}
		if strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, tc.setting) {
			t.Errorf("%v %v: stderr %q should be one line naming %s", tc.env, tc.args, stderr, tc.setting)
		}
	}
	if code, _, stderr := cli(t, nil, "frobnicate"); code != 2 || !strings.Contains(stderr, "unknown command") {
		t.Errorf("unknown command: %d %q", code, stderr)
	}
}

// migratedRE is what migrate prints once the latest migration is applied.
var migratedRE = regexp.MustCompile(`^(sqlite|postgres) database is at migration [0-9]{4}\n$`)

func TestClientsCommands(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, name string, env []string) {
		t.Parallel()
		code, out, stderr := cli(t, env, "clients", "create", "--name", "Acme", "--json")
		if code != 0 {
			t.Fatalf("create: %d %s", code, stderr)
		}
		if !regexp.MustCompile(`^\{"client_id": "[^"]+", "secret": "hsk_[^"]+", "environment": "development"\}\n$`).MatchString(out) {
			t.Fatalf("create --json printed %q", out)
		}
		var creds struct {
			ClientID string `json:"client_id"`
			Secret   string `json:"secret"`
		}
		if err := json.Unmarshal([]byte(out), &creds); err != nil {
			t.Fatal(err)
		}
		// A production client needs the production master key.
		if code, _, stderr := cli(t, env, "clients", "create", "--name", "Prod", "--env", "production"); code != 2 || !strings.Contains(stderr, "HITCH_MASTER_KEY") {
			t.Fatalf("create production without a master key: %d %q", code, stderr)
		}
		prodEnv := append([]string{"HITCH_MASTER_KEY=" + devMasterKey(t, env)}, env...)
		code, out, _ = cli(t, prodEnv, "clients", "create", "--name", "Prod", "--env", "production", "--json")
		if code != 0 || !strings.Contains(out, `"environment": "production"`) {
			t.Fatalf("create production: %d %q", code, out)
		}
		code, out, _ = cli(t, env, "clients", "list")
		if code != 0 || !strings.Contains(out, creds.ClientID) || !strings.Contains(out, "Acme") || strings.Contains(out, creds.Secret) {
			t.Fatalf("list: %d %q", code, out)
		}
		code, out, stderr = cli(t, env, "clients", "rotate-secret", "--client-id", creds.ClientID, "--json")
		if code != 0 || strings.Contains(out, creds.Secret) || !strings.Contains(out, creds.ClientID) {
			t.Fatalf("rotate-secret: %d %q %q", code, out, stderr)
		}
		if code, _, stderr := cli(t, env, "clients", "rotate-secret", "--client-id", "nope-nope"); code != 1 || !strings.Contains(stderr, "no client") {
			t.Fatalf("rotate unknown: %d %q", code, stderr)
		}
		if code, _, stderr := cli(t, env, "clients", "create"); code != 1 || !strings.Contains(stderr, "--name") {
			t.Fatalf("create without name: %d %q", code, stderr)
		}
		if code, out, _ := cli(t, env, "migrate"); code != 0 || !migratedRE.MatchString(out) {
			t.Fatalf("migrate: %d %q", code, out)
		}
		// Another master key than the database was first used with is
		// refused at start.
		otherKey := append([]string{"HITCH_MASTER_KEY=" + strings.Repeat("cd", 32)}, env...)
		if code, _, stderr := cli(t, otherKey, "clients", "list"); code != 1 || !strings.Contains(stderr, "master key") {
			t.Fatalf("another master key: %d %q", code, stderr)
		}
	})
}

// TestServe runs the real serve command: it prints development credentials
// once, answers with them, and shuts down cleanly on cancel.
func TestServe(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, name string, env []string) {
		t.Parallel()
		srv := startServe(t, env, "--log-format", "json")
		logs := srv.logs
		addr := waitFor(t, logs, regexp.MustCompile(`"addr":"([^"]+)"`))
		base := "http://" + addr
		clientID := waitFor(t, logs, regexp.MustCompile(`client_id: (\S+)`))
		secret := waitFor(t, logs, regexp.MustCompile(`secret:\s+(hsk_\S+)`))
		if strings.Count(logs.String(), secret) != 2 { // the credential lines and the curl hint
			t.Fatalf("secret printed %d times", strings.Count(logs.String(), secret))
		}

		req, _ := http.NewRequest("GET", base+"/jwe/key", nil)
		req.SetBasicAuth(clientID, secret)
		resp, err := validatedClient(t, http.DefaultTransport).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("jwe key with the printed credentials: %d", resp.StatusCode)
		}
		srv.stop(t)
		if !strings.Contains(logs.String(), `"msg":"stopped"`) {
			t.Fatalf("no clean stop in logs: %s", logs)
		}

		// A second start on the same database prints no new credentials.
		again := startServe(t, env)
		waitFor(t, again.logs, regexp.MustCompile(`addr=(\S+)`))
		again.stop(t)
		if strings.Contains(again.logs.String(), "secret:") {
			t.Fatalf("second start printed credentials again: %s", again.logs)
		}
	})
}

func TestServeFixedDevCredentials(t *testing.T) {
	t.Parallel()
	secret := strings.Repeat("k", 40)
	env := []string{"HITCH_DATA_DIR=" + t.TempDir(), "HITCH_DEV_CLIENT_ID=fixed_client_01", "HITCH_DEV_SECRET=" + secret}
	srv := startServe(t, env)
	logs := srv.logs
	addr := waitFor(t, logs, regexp.MustCompile(`addr=(\S+)`))
	req, _ := http.NewRequest("GET", "http://"+addr+"/jwe/key", nil)
	req.SetBasicAuth("fixed_client_01", secret)
	resp, err := validatedClient(t, http.DefaultTransport).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	srv.stop(t)
	if resp.StatusCode != 200 {
		t.Fatalf("fixed credentials: %d", resp.StatusCode)
	}
	if strings.Contains(logs.String(), secret) {
		t.Fatal("the fixed secret was printed")
	}
	if _, err := os.Stat(filepath.Join(strings.TrimPrefix(env[0], "HITCH_DATA_DIR="), "master.key")); err != nil {
		t.Fatalf("development master key not created: %v", err)
	}
}

// waitFor polls buf until re matches and returns its first group.
func waitFor(t *testing.T, buf *lockedBuffer, re *regexp.Regexp) string {
	t.Helper()
	// Generous: under -race, with browser tests on both stores in
	// parallel, a first start (RSA key generation included) was seen to
	// take more than 15 s on a loaded 2-CPU machine.
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(buf.String()); m != nil {
			return m[1]
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no %s in output: %s", re, buf)
	return ""
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// devMasterKey reads the development master key that the first command
// generated into the data dir of env.
func devMasterKey(t *testing.T, env []string) string {
	t.Helper()
	for _, kv := range env {
		if dir, ok := strings.CutPrefix(kv, "HITCH_DATA_DIR="); ok {
			b, err := os.ReadFile(filepath.Join(dir, "master.key"))
			if err != nil {
				t.Fatal(err)
			}
			return strings.TrimSpace(string(b))
		}
	}
	t.Fatal("no HITCH_DATA_DIR")
	return ""
}

func TestWebhooksCommands(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, name string, env []string) {
		t.Parallel()
		creds := struct{ ClientID string }{cliClient(t, env, "--name", "Acme")}
		code, out, stderr := cli(t, env, "webhooks", "add", "--client-id", creds.ClientID, "--url", "http://127.0.0.1:9/hooks",
			"--events", "ACCOUNT_LOGIN_REQUIRED,AUTHENTICATED", "--json")
		if code != 0 || !regexp.MustCompile(`^\{"id": "we_[^"]+", "url": "http://127\.0\.0\.1:9/hooks", "secret": "whsec_[^"]+"\}\n$`).MatchString(out) {
			t.Fatalf("add --json: %d %q %s", code, out, stderr)
		}
		var ep struct{ ID, Secret string }
		if err := json.Unmarshal([]byte(out), &ep); err != nil {
			t.Fatal(err)
		}
		code, out, _ = cli(t, env, "webhooks", "list", "--client-id", creds.ClientID)
		if code != 0 || !strings.Contains(out, ep.ID) || !strings.Contains(out, "ACCOUNT_LOGIN_REQUIRED,AUTHENTICATED") || strings.Contains(out, ep.Secret) {
			t.Fatalf("list: %d %q", code, out)
		}
		code, out, _ = cli(t, env, "webhooks", "rotate-secret", "--client-id", creds.ClientID, "--id", ep.ID, "--json")
		if code != 0 || !strings.Contains(out, `"secret": "whsec_`) || strings.Contains(out, ep.Secret) {
			t.Fatalf("rotate-secret: %d %q", code, out)
		}
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"webhooks", "add", "--client-id", creds.ClientID, "--url", "ftp://x"}, "--url"},
			{[]string{"webhooks", "add", "--client-id", creds.ClientID, "--url", "http://127.0.0.1:9/x", "--events", "NOPE"}, "NOPE"},
			{[]string{"webhooks", "add", "--client-id", "nobody-here", "--url", "http://127.0.0.1:9/x"}, "no client"},
			{[]string{"webhooks", "remove", "--client-id", creds.ClientID, "--id", "we_nope"}, "no endpoint"},
			{[]string{"webhooks", "list"}, "--client-id"},
		} {
			if code, _, stderr := cli(t, env, tc.args...); code != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("%v: %d %q, want an error naming %q", tc.args, code, stderr, tc.want)
			}
		}
		// In production, a URL must be https to a public address.
		prodEnv := append([]string{"HITCH_MASTER_KEY=" + devMasterKey(t, env)}, env...)
		prod := struct{ ClientID string }{cliClient(t, prodEnv, "--name", "Prod", "--env", "production")}
		if code, _, stderr := cli(t, prodEnv, "webhooks", "add", "--env", "production", "--client-id", prod.ClientID,
			"--url", "https://127.0.0.1/hooks"); code != 1 || !strings.Contains(stderr, "loopback") {
			t.Errorf("production loopback URL: %d %q", code, stderr)
		}
		if code, out, _ := cli(t, env, "webhooks", "remove", "--client-id", creds.ClientID, "--id", ep.ID); code != 0 || !strings.Contains(out, ep.ID) {
			t.Fatalf("remove: %d %q", code, out)
		}
		if _, out, _ := cli(t, env, "webhooks", "list", "--client-id", creds.ClientID, "--json"); strings.TrimSpace(out) != "[]" {
			t.Errorf("list after remove: %q", out)
		}
	})
}
