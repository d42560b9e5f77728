package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

const hitchModule = "github.com/hitchdev/hitch"

// findRepo returns the Hitch repository root: dir when given, otherwise the
// first directory up from the working directory whose go.mod declares the
// Hitch module.
func findRepo(dir string) (string, error) {
	if dir != "" {
		if !isHitchRoot(dir) {
			return "", fmt.Errorf("--repo %s: no go.mod for %s there", dir, hitchModule)
		}
		return filepath.Abs(dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if isHitchRoot(d) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod for %s above %s; pass --repo", hitchModule, wd)
		}
	}
}

func isHitchRoot(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if mod, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(mod), `"`) == hitchModule
		}
	}
	return false
}

// buildHitch builds cmd/hitch into work, before anything is timed.
func buildHitch(ctx context.Context, repo, work string) (string, error) {
	bin := filepath.Join(work, "hitch")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/hitch")
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/hitch: %w\n%s", err, out)
	}
	return bin, nil
}

// hitchLauncher starts `hitch serve` processes, each on a fresh data dir and
// a fresh database.
type hitchLauncher struct {
	bin    string
	work   string
	secret string // HITCH_DEV_SECRET, the Basic password
	dbs    *databases
	// started are every process started, for their logs.
	started []*child
}

// start launches Hitch on a free loopback port and returns the process and
// its base URL. The database is made first, so a cold start times Hitch
// alone.
func (h *hitchLauncher) start(ctx context.Context, name string) (*child, string, error) {
	dataDir := filepath.Join(h.work, "data-"+name)
	if err := os.Mkdir(dataDir, 0o700); err != nil {
		return nil, "", err
	}
	dbURL, err := h.dbs.fresh(ctx)
	if err != nil {
		return nil, "", err
	}
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, "", err
	}
	argv := []string{h.bin, "serve", "--addr", addr, "--data-dir", dataDir,
		"--env", "development", "--rate-limit", "0"}
	if dbURL != "" {
		argv = append(argv, "--database-url", dbURL)
	}
	c, err := startChild("hitch "+name, filepath.Join(h.work, "hitch-"+name+".log"), h.env(), argv...)
	if err != nil {
		return nil, "", err
	}
	h.started = append(h.started, c)
	return c, "http://" + addr, nil
}

// env is the benchmark's environment without its HITCH_* variables (Hitch
// refuses unknown ones), plus the fixed development client.
func (h *hitchLauncher) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HITCH_") {
			env = append(env, kv)
		}
	}
	return append(env, "HITCH_DEV_CLIENT_ID="+devClientID, "HITCH_DEV_SECRET="+h.secret)
}

// logs returns what each Hitch process logged at warn level or above, by
// process name, leaving out processes that logged nothing.
func (h *hitchLauncher) logs() map[string][]string {
	out := map[string][]string{}
	for _, c := range h.started {
		b, err := os.ReadFile(c.logPath)
		if err != nil || len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if atLeastWarn(line) {
				out[c.name] = append(out[c.name], line)
			}
		}
	}
	return out
}

// atLeastWarn reports whether a log line, text or JSON, is at warn or error.
func atLeastWarn(line string) bool {
	for _, mark := range []string{"level=WARN", "level=ERROR", `"level":"WARN"`, `"level":"ERROR"`} {
		if strings.Contains(line, mark) {
			return true
		}
	}
	return false
}

// apiClient calls one server's API with Basic auth.
type apiClient struct {
	base       string
	user, pass string
	http       *http.Client
}

func newAPIClient(base, user, pass string) *apiClient {
	return &apiClient{base: base, user: user, pass: pass, http: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}}
}

// do sends one request and returns the status and body.
func (a *apiClient) do(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.SetBasicAuth(a.user, a.pass)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, got, err
}

// linkAccounts links merchants 1..n to the bench user through the
// development endpoint.
func linkAccounts(ctx context.Context, api *apiClient, n int) error {
	for merchantID := 1; merchantID <= n; merchantID++ {
		body, err := json.Marshal(map[string]any{
			"external_user_id": externalUserID,
			"merchant_id":      merchantID,
			"card_switcher":    true,
			"card_id":          "card-1",
		})
		if err != nil {
			return err
		}
		status, got, err := api.do(ctx, http.MethodPost, "/development/accounts/link", body)
		if err != nil {
			return fmt.Errorf("link merchant %d: %w", merchantID, err)
		}
		if status != http.StatusOK {
			return fmt.Errorf("link merchant %d: status %d: %s", merchantID, status, got)
		}
	}
	return nil
}

// fetchAccounts gets the bench user's accounts once and checks there are n.
// The bytes are what the bare handler serves.
func fetchAccounts(ctx context.Context, api *apiClient, n int) ([]byte, error) {
	status, body, err := api.do(ctx, http.MethodGet, accountsPath, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", accountsPath, err)
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("GET %s: status %d: %s", accountsPath, status, body)
	}
	var accounts []json.RawMessage
	if err := json.Unmarshal(body, &accounts); err != nil {
		return nil, fmt.Errorf("GET %s: not a JSON array: %w", accountsPath, err)
	}
	if len(accounts) != n {
		return nil, fmt.Errorf("GET %s: %d accounts, want %d", accountsPath, len(accounts), n)
	}
	return body, nil
}

// randomHex is n random bytes in hex (2n characters).
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand panics instead)
	return hex.EncodeToString(b)
}
