// Command connectors measures production linking through the reference
// connector, on one machine:
//
//	go run ./bench/connectors [--logins 20] [--switches 10] [--refresh-for 60s] [--contexts 4]
//
// It builds cmd/hitch, starts the reference shop, `hitch serve --env
// production` (SQLite in a temporary folder) and one reference connector
// process, each a process of its own, and measures:
//
//   - link time: --logins logins through the hosted flow's API, one after
//     the other, each of its own shop user, from the credentials posted to
//     the answer "success" (the account linked, AUTHENTICATED recorded);
//   - card switch time: --switches card switches, from POST /card (JWE) to
//     the CARD_UPDATED webhook's arrival at a receiver of this process;
//   - refreshes a minute: with every linked account due each second, the
//     refreshes the one connector process ends in --refresh-for;
//   - memory per browser context: the proportional set size (PSS) of all
//     Chromium processes at the end of the refresh window, divided by
//     --contexts.
//
// The report goes to stdout as Markdown, progress to stderr. It needs
// Debian's chromium.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hitchdev/hitch/bench/internal/cli"
	"github.com/hitchdev/hitch/bench/internal/proc"
	"github.com/hitchdev/hitch/client"
)

const (
	merchantID = 114
	password   = "correct-horse-battery"
)

func main() { cli.Main("bench/connectors", run) }

type options struct {
	logins, switches, contexts int
	refreshFor                 time.Duration
}

func run(ctx context.Context, args []string) error {
	var o options
	fs := flag.NewFlagSet("bench/connectors", flag.ContinueOnError)
	fs.IntVar(&o.logins, "logins", 20, "logins to time, one after the other")
	fs.IntVar(&o.switches, "switches", 10, "card switches to time")
	fs.IntVar(&o.contexts, "contexts", 4, "browser contexts of the connector process")
	fs.DurationVar(&o.refreshFor, "refresh-for", time.Minute, "how long to count refreshes")
	if err := cli.ParseFlags(fs, args, os.Stderr, "go run ./bench/connectors [flags]"); err != nil {
		return err
	}
	if o.logins < 2 || o.switches < 1 || o.contexts < 1 {
		return cli.Usage(errors.New("--logins must be at least 2, --switches and --contexts at least 1"))
	}
	work, err := os.MkdirTemp("", "bench-connectors-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	progress("building hitch")
	bin := filepath.Join(work, "hitch")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/hitch").CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v: %s", err, out)
	}
	st, err := start(ctx, bin, work, o)
	if err != nil {
		return err
	}
	defer st.stop()

	progress("timing %d logins", o.logins)
	users := make([]string, o.logins)
	for i := range users {
		users[i] = fmt.Sprintf("bench%03d@refshop.example", i)
		if err := st.shopAdmin("POST", "/users", map[string]any{"email": users[i], "password": password, "name": "Bench", "orders": 10}); err != nil {
			return err
		}
	}
	var linkTimes []time.Duration
	for i, u := range users {
		d, _, err := st.login(ctx, "transaction_link", fmt.Sprintf("user-%d", i), u, nil)
		if err != nil {
			return err
		}
		linkTimes = append(linkTimes, d)
	}

	progress("timing %d card switches", o.switches)
	jwk, err := st.api.JWEKey(ctx)
	if err != nil {
		return err
	}
	var switchTimes []time.Duration
	for i := range o.switches {
		card := fmt.Sprintf("card-%d", i)
		_, task, err := st.login(ctx, "card_switcher", "user-0", users[0], &card)
		if err != nil {
			return err
		}
		jwe, err := client.EncryptCard(jwk, &client.CardPayload{
			User: client.CardUser{Name: client.CardName{FirstName: "Ada", LastName: "Lovelace"},
				Address: client.CardAddress{Street: "1 Main St", City: "Austin", Region: "TX", PostalCode: "78701", Country: "US"}},
			Card: client.CardData{Number: "6011111111111117", Expiration: "08/2031", CVV: "123"}})
		if err != nil {
			return err
		}
		sent := time.Now()
		if _, err := st.api.SubmitCard(ctx, &client.SubmitCardRequest{JWE: jwe, TaskID: &task}); err != nil {
			return err
		}
		at, err := st.hooks.waitTask("CARD_UPDATED", task, 2*time.Minute)
		if err != nil {
			return err
		}
		switchTimes = append(switchTimes, at.Sub(sent))
	}

	// Logins and switches are timed without refreshes beside them; now
	// every linked account is due each second.
	progress("restarting hitch with --refresh-interval 1s")
	if err := st.restartHitch(ctx, work, "HITCH_REFRESH_INTERVAL=1s"); err != nil {
		return err
	}
	progress("counting refreshes for %v", o.refreshFor)
	before, err := st.doneRefreshes(ctx)
	if err != nil {
		return err
	}
	began := time.Now()
	time.Sleep(o.refreshFor)
	pss := chromiumPSS()
	after, err := st.doneRefreshes(ctx)
	if err != nil {
		return err
	}
	perMinute := float64(after-before) / time.Since(began).Minutes()

	host, _ := os.Hostname()
	fmt.Printf("## Connectors (reference shop, one connector process of %d contexts, SQLite)\n\n", o.contexts)
	fmt.Printf("Host %s, %d CPUs; `go run ./bench/connectors --logins %d --switches %d --refresh-for %v --contexts %d`.\n\n",
		host, numCPU(), o.logins, o.switches, o.refreshFor, o.contexts)
	fmt.Println("| figure | p50 | p99 | n |")
	fmt.Println("|---|---|---|---|")
	fmt.Printf("| link time (credentials posted → success) | %s | %s | %d |\n", pct(linkTimes, 50), pct(linkTimes, 99), len(linkTimes))
	fmt.Printf("| card switch (POST /card → CARD_UPDATED) | %s | %s | %d |\n", pct(switchTimes, 50), pct(switchTimes, 99), len(switchTimes))
	fmt.Printf("\nRefreshes: %.0f a minute (%d in %v, accounts of 10 orders).\n", perMinute, after-before, time.Since(began).Round(time.Second))
	fmt.Printf("Chromium memory: %.0f MiB PSS in all, %.0f MiB per context.\n", float64(pss)/(1<<20), float64(pss)/(1<<20)/float64(o.contexts))
	return nil
}

func progress(format string, args ...any) { fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...) }

func pct(ds []time.Duration, p int) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)].Round(10 * time.Millisecond).String()
}

// stack is the three processes and what talks to them.
type stack struct {
	base, shop, admin string
	clientID, secret  string
	api               *client.Client
	hooks             *receiver
	children          []*proc.Child
	env               []string
	bin               string
	hitchAddr         string
}

// restartHitch stops hitch serve and starts it again on the same address
// and database, with env added.
func (s *stack) restartHitch(ctx context.Context, work string, env ...string) error {
	s.children[1].Stop()
	c, err := proc.Start("hitch", filepath.Join(work, "hitch-2.log"), append(slices.Clip(s.env), env...), s.bin, "serve", "--addr", s.hitchAddr)
	if err != nil {
		return err
	}
	s.children[1] = c
	_, err = c.WaitReady(ctx, s.base+"/healthz")
	return err
}

func (s *stack) stop() {
	for _, c := range slices.Backward(s.children) {
		c.Stop()
	}
}

func start(ctx context.Context, bin, work string, o options) (*stack, error) {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	st := &stack{admin: hex.EncodeToString(key[:8]), bin: bin, hooks: &receiver{at: map[string]time.Time{}}}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HITCH_") {
			env = append(env, kv)
		}
	}
	env = slices.Clip(env) // each child appends its own variables
	st.env = append(env, "HITCH_ENV=production", "HITCH_MASTER_KEY="+hex.EncodeToString(key), "HITCH_DATA_DIR="+work,
		"HITCH_REFRESH_INTERVAL=1h", "HITCH_WEBHOOK_ALLOW_PRIVATE=true", "HITCH_RATE_LIMIT=0", "HITCH_LOG_LEVEL=warn")
	var dev struct {
		ClientID string `json:"client_id"`
		Secret   string `json:"secret"`
	}
	if err := st.cli(ctx, &dev, "clients", "create", "--name", "Bench", "--env", "production", "--json"); err != nil {
		return nil, err
	}
	var conn struct {
		ID     string `json:"id"`
		Secret string `json:"secret"`
	}
	if err := st.cli(ctx, &conn, "connectors", "create", "--name", "Bench", "--json"); err != nil {
		return nil, err
	}
	st.clientID, st.secret = dev.ClientID, dev.Secret
	shopAddr, _ := proc.FreeLoopbackAddr()
	hitchAddr, _ := proc.FreeLoopbackAddr()
	st.shop, st.base, st.hitchAddr = "http://"+shopAddr, "http://"+hitchAddr, hitchAddr
	for _, c := range []struct {
		name string
		env  []string
		args []string
	}{
		{"refshop", env, []string{"refshop", "--addr", shopAddr, "--admin-token", st.admin, "--log-level", "warn"}},
		{"hitch", st.env, []string{"serve", "--addr", hitchAddr}},
		{"refconnector", append(env, "CONNECTOR_ID="+conn.ID, "CONNECTOR_SECRET="+conn.Secret),
			[]string{"refconnector", "--hitch-url", st.base, "--site", st.shop, "--contexts", strconv.Itoa(o.contexts), "--log-level", "warn"}},
	} {
		child, err := proc.Start(c.name, filepath.Join(work, c.name+".log"), c.env, append([]string{bin}, c.args...)...)
		if err != nil {
			st.stop()
			return nil, err
		}
		st.children = append(st.children, child)
	}
	if _, err := st.children[1].WaitReady(ctx, st.base+"/healthz"); err != nil {
		st.stop()
		return nil, err
	}
	st.api = client.New(st.base, st.clientID, st.secret)
	hooks := httptest.NewServer(st.hooks)
	body, _ := json.Marshal(map[string]string{"url": hooks.URL})
	if _, err := st.call(ctx, "POST", "/webhooks/endpoints", body); err != nil {
		st.stop()
		return nil, err
	}
	// The connector is online once it has declared its merchant.
	deadline := time.Now().Add(time.Minute)
	for {
		var rows []struct {
			MerchantIDs []int64 `json:"merchant_ids"`
		}
		if err := st.cli(ctx, &rows, "connectors", "list", "--json"); err == nil && len(rows) == 1 && len(rows[0].MerchantIDs) == 1 {
			return st, nil
		}
		if time.Now().After(deadline) {
			st.stop()
			return nil, errors.New("the connector did not declare its merchant within a minute")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (s *stack) cli(ctx context.Context, out any, args ...string) error {
	cmd := exec.CommandContext(ctx, s.bin, args...)
	cmd.Env = s.env
	b, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("hitch %s: %w", strings.Join(args[:2], " "), err)
	}
	return json.Unmarshal(b, out)
}

func (s *stack) call(ctx context.Context, method, path string, body []byte) ([]byte, error) {
	req, _ := http.NewRequestWithContext(ctx, method, s.base+path, bytes.NewReader(body))
	req.SetBasicAuth(s.clientID, s.secret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	return b, nil
}

func (s *stack) shopAdmin(method, path string, body any) error {
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, s.shop+"/admin/api"+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+s.admin)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("shop %s %s: %d %s", method, path, resp.StatusCode, b)
	}
	return nil
}

// login links user's shop account through the hosted flow's API and
// returns how long it took and the task it opened.
func (s *stack) login(ctx context.Context, typ, user, email string, cardID *string) (time.Duration, int64, error) {
	sess, err := s.api.CreateSession(ctx, &client.CreateSessionRequest{Type: typ, ExternalUserID: user, CardID: cardID})
	if err != nil {
		return 0, 0, err
	}
	began := time.Now()
	path := "/link/api/login"
	body := map[string]any{"session": sess.Session, "client_id": s.clientID, "merchant_id": merchantID, "username": email, "password": password}
	for {
		b, _ := json.Marshal(body)
		resp, err := http.Post(s.base+path, "application/json", bytes.NewReader(b))
		if err != nil {
			return 0, 0, err
		}
		var out struct {
			Status    string `json:"status"`
			Challenge string `json:"challenge"`
			TaskID    int64  `json:"task_id"`
			Message   string `json:"message"`
		}
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		switch {
		case err != nil:
			return 0, 0, err
		case out.Status == "success":
			return time.Since(began), out.TaskID, nil
		case out.Status != "pending":
			return 0, 0, fmt.Errorf("login of %s: %s (%s)", email, out.Status, out.Message)
		}
		path, body = "/link/api/wait", map[string]any{"session": sess.Session, "client_id": s.clientID, "challenge": out.Challenge}
	}
}

// doneRefreshes counts the refreshes connectors ended well in the last day.
func (s *stack) doneRefreshes(ctx context.Context) (int, error) {
	var rows []struct {
		Done int `json:"done_24h"`
	}
	if err := s.cli(ctx, &rows, "connectors", "list", "--json"); err != nil {
		return 0, err
	}
	n := 0
	for _, r := range rows {
		n += r.Done
	}
	return n, nil
}

// receiver records when each task's event arrived.
type receiver struct {
	mu sync.Mutex
	at map[string]time.Time
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var ev struct {
		Event  string `json:"event"`
		TaskID int64  `json:"task_id"`
	}
	_ = json.NewDecoder(req.Body).Decode(&ev)
	r.mu.Lock()
	r.at[fmt.Sprintf("%s/%d", ev.Event, ev.TaskID)] = time.Now()
	r.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (r *receiver) waitTask(event string, task int64, limit time.Duration) (time.Time, error) {
	key := fmt.Sprintf("%s/%d", event, task)
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		at, ok := r.at[key]
		r.mu.Unlock()
		if ok {
			return at, nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var got []string
	for k := range r.at {
		if strings.HasSuffix(k, fmt.Sprintf("/%d", task)) {
			got = append(got, k)
		}
	}
	return time.Time{}, fmt.Errorf("no %s for task %d within %v (its events: %v; %d events in all)", event, task, limit, got, len(r.at))
}

var pssLine = regexp.MustCompile(`^Pss:\s+(\d+) kB`)

// chromiumPSS sums the proportional set size of every Chromium process.
func chromiumPSS() int64 {
	var total int64
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		comm, err := os.ReadFile(filepath.Join(d, "comm"))
		if err != nil || !strings.HasPrefix(strings.TrimSpace(string(comm)), "chromium") {
			continue
		}
		f, err := os.Open(filepath.Join(d, "smaps_rollup"))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if m := pssLine.FindStringSubmatch(sc.Text()); m != nil {
				kb, _ := strconv.ParseInt(m[1], 10, 64)
				total += kb << 10
			}
		}
		f.Close()
	}
	return total
}

func numCPU() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(b), "processor\t:")
}
