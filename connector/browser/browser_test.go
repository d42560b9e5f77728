package browser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// stepTimeout is generous: the tests share two busy CPUs.
const stepTimeout = 30 * time.Second

// requireChromium fails the test in CI and skips it elsewhere when Chromium
// is missing.
func requireChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(DefaultExecPath); err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is missing; CI must run the browser tests", DefaultExecPath)
	}
	t.Skipf("%s is missing; install Debian's chromium to run the browser tests", DefaultExecPath)
}

var (
	sharedOnce sync.Once
	shared     *Pool
	sharedErr  error
	sharedDir  string
)

// sharedPool returns the Pool most tests share, so that the package starts
// Chromium few times. TestMain closes it.
func sharedPool(t *testing.T) *Pool {
	t.Helper()
	requireChromium(t)
	sharedOnce.Do(func() {
		sharedDir, sharedErr = os.MkdirTemp("", "hitch-browser-test")
		if sharedErr != nil {
			return
		}
		shared, sharedErr = NewPool(context.Background(), Options{
			ExecPath:      DefaultExecPath,
			Contexts:      8,
			StepTimeout:   stepTimeout,
			ScreenshotDir: sharedDir,
		})
	})
	if sharedErr != nil {
		t.Fatalf("shared pool: %v", sharedErr)
	}
	return shared
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		if err := shared.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "close shared pool:", err)
			code = 1
		}
	}
	if sharedDir != "" {
		os.RemoveAll(sharedDir)
	}
	os.Exit(code)
}

// newPool starts a pool of its own for a test that changes the pool.
func newPool(t *testing.T, o Options) *Pool {
	t.Helper()
	requireChromium(t)
	o.ExecPath = DefaultExecPath
	p, err := NewPool(t.Context(), o)
	if err != nil {
		t.Fatalf("NewPool: %v", err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p
}

func newSession(t *testing.T, p *Pool, o SessionOptions) *Session {
	t.Helper()
	s, err := p.NewSession(t.Context(), o)
	if err != nil {
		t.Fatalf("NewSession(%s): %v", o.Label, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Session.Close(%s): %v", o.Label, err)
		}
	})
	return s
}

func writePage(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<!doctype html><html><head><title>shop</title></head><body>%s</body></html>", body)
}

// shop is a merchant website with a cookie login.
func shop(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /set", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: r.FormValue("v"), Path: "/"})
		writePage(w, `<p id="who">set</p>`)
	})
	mux.HandleFunc("GET /who", func(w http.ResponseWriter, r *http.Request) {
		who := "anonymous"
		if c, err := r.Cookie("sid"); err == nil {
			who = c.Value
		}
		writePage(w, `<p id="who">`+who+`</p>`)
	})
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		// A session cookie and a persistent one: both must survive.
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "s3cr3t-session", Path: "/", HttpOnly: true})
		http.SetCookie(w, &http.Cookie{Name: "remember", Value: "yes", Path: "/", MaxAge: 3600})
		writePage(w, `<p id="status">welcome</p>`)
	})
	mux.HandleFunc("GET /account", func(w http.ResponseWriter, r *http.Request) {
		s, err1 := r.Cookie("session")
		m, err2 := r.Cookie("remember")
		if err1 != nil || err2 != nil || s.Value != "s3cr3t-session" || m.Value != "yes" {
			writePage(w, `<p id="status">logged out</p>`)
			return
		}
		writePage(w, `<p id="status">logged in</p>`)
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts
}

func TestSessionsDoNotShareCookies(t *testing.T) {
	t.Parallel()
	p := sharedPool(t)
	ts := shop(t)
	a := newSession(t, p, SessionOptions{Label: "isolation/a"})
	b := newSession(t, p, SessionOptions{Label: "isolation/b"})

	var wg sync.WaitGroup
	var whoA, whoB string
	errs := make([]error, 2)
	wg.Go(func() {
		errs[0] = a.Run(t.Context(), "set-then-read",
			Navigate(ts.URL+"/set?v=alice"), Navigate(ts.URL+"/who"), Text("#who", &whoA))
	})
	wg.Go(func() {
		errs[1] = b.Run(t.Context(), "set-then-read",
			Navigate(ts.URL+"/set?v=bob"), Navigate(ts.URL+"/who"), Text("#who", &whoB))
	})
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if whoA != "alice" || whoB != "bob" {
		t.Fatalf("after each set its own cookie: a sees %q, b sees %q", whoA, whoB)
	}

	c := newSession(t, p, SessionOptions{Label: "isolation/c"})
	var whoC string
	if err := c.Run(t.Context(), "read", Navigate(ts.URL+"/who"), Text("#who", &whoC)); err != nil {
		t.Fatal(err)
	}
	if whoC != "anonymous" {
		t.Fatalf("a new session sees cookie %q, want none", whoC)
	}
}

func TestSaveStateRestoresLogin(t *testing.T) {
	t.Parallel()
	p := sharedPool(t)
	ts := shop(t)

	first, err := p.NewSession(t.Context(), SessionOptions{Label: "state/login"})
	if err != nil {
		t.Fatal(err)
	}
	var status string
	if err := first.Run(t.Context(), "login", Navigate(ts.URL+"/login"), Navigate(ts.URL+"/account"), Text("#status", &status)); err != nil {
		t.Fatal(err)
	}
	if status != "logged in" {
		t.Fatalf("after login: %q", status)
	}
	state, err := first.SaveState(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	again := newSession(t, p, SessionOptions{Label: "state/again", State: state})
	if err := again.Run(t.Context(), "account", Navigate(ts.URL+"/account"), Text("#status", &status)); err != nil {
		t.Fatal(err)
	}
	if status != "logged in" {
		t.Fatalf("restored session: %q, want logged in", status)
	}

	fresh := newSession(t, p, SessionOptions{Label: "state/fresh"})
	if err := fresh.Run(t.Context(), "account", Navigate(ts.URL+"/account"), Text("#status", &status)); err != nil {
		t.Fatal(err)
	}
	if status != "logged out" {
		t.Fatalf("fresh session: %q, want logged out", status)
	}
}

// waitFor polls cond until it holds or a deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(stepTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestPoolWaitsForFreeSlot(t *testing.T) {
	t.Parallel()
	p := newPool(t, Options{Contexts: 2, StepTimeout: stepTimeout})

	// A session that cannot start gives its slot back, and its error does not
	// quote the state, which holds session values.
	for _, state := range [][]byte{
		[]byte(`{"version":1,"cookies":[{"name":"sid","value":"s3cr3t"`),
		[]byte(`{"version":9,"cookies":[]}`),
	} {
		_, err := p.NewSession(t.Context(), SessionOptions{Label: "limit/bad-state", State: state})
		if err == nil || strings.Contains(err.Error(), "s3cr3t") {
			t.Fatalf("NewSession with state %q: %v, want an error not quoting it", state, err)
		}
		if s := p.Stats(); s.InUse != 0 {
			t.Fatalf("a failed NewSession kept its slot: %+v", s)
		}
	}

	a := newSession(t, p, SessionOptions{Label: "limit/a"})
	newSession(t, p, SessionOptions{Label: "limit/b"})
	if s := p.Stats(); s.InUse != 2 || s.Capacity != 2 {
		t.Fatalf("Stats = %+v, want 2 of 2 in use", s)
	}

	// A wait bounded by its context gives up.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := p.NewSession(ctx, SessionOptions{Label: "limit/canceled"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("NewSession with a canceled context on a full pool: %v", err)
	}

	got := make(chan error, 1)
	go func() {
		s, err := p.NewSession(t.Context(), SessionOptions{Label: "limit/c"})
		if err == nil {
			err = s.Close()
		}
		got <- err
	}()
	waitFor(t, "the third session to wait", func() bool { return p.Stats().Waiting == 1 })
	select {
	case err := <-got:
		t.Fatalf("third session returned (%v) while the pool was full", err)
	default:
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("third session: %v", err)
		}
	case <-time.After(stepTimeout):
		t.Fatal("third session still waits after a slot was freed")
	}
	if s := p.Stats(); s.Started != 3 || s.Waiting != 0 {
		t.Fatalf("Stats = %+v, want 3 started, none waiting", s)
	}
}

// flaky answers 503 for the first failures requests, then 200.
func flaky(t *testing.T, failures int64) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/orders" {
			http.NotFound(w, r)
			return
		}
		if hits.Add(1) <= failures {
			w.WriteHeader(http.StatusServiceUnavailable)
			writePage(w, `<p>try later</p>`)
			return
		}
		writePage(w, `<p id="orders">3 orders</p>`)
	}))
	t.Cleanup(ts.Close)
	return ts, &hits
}

func TestRunRetriesTransient(t *testing.T) {
	t.Parallel()
	p := sharedPool(t)
	ts, hits := flaky(t, 2)
	s := newSession(t, p, SessionOptions{Label: "retry/ok"})
	var orders string
	if err := s.Run(t.Context(), "orders", Navigate(ts.URL+"/orders"), Text("#orders", &orders)); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if orders != "3 orders" || hits.Load() != 3 {
		t.Fatalf("got %q after %d requests, want %q after 3", orders, hits.Load(), "3 orders")
	}
}

func TestRunGivesUpOnTransientAfterRetries(t *testing.T) {
	t.Parallel()
	p := sharedPool(t)
	ts, hits := flaky(t, 1000)
	s := newSession(t, p, SessionOptions{Label: "retry/down"})
	err := s.Run(t.Context(), "orders", Navigate(ts.URL+"/orders?token=abc"))
	var se *StepError
	if !errors.As(err, &se) || se.Attempts != 3 || !IsTransient(err) {
		t.Fatalf("Run = %v, want a transient *StepError after 3 attempts", err)
	}
	if hits.Load() != 3 {
		t.Fatalf("%d requests, want 3", hits.Load())
	}
	if !strings.Contains(err.Error(), "503") || strings.Contains(err.Error(), "token=abc") {
		t.Fatalf("error %q should name the status and not the query", err)
	}
}

func TestRunPermanentFailureTakesOneScreenshot(t *testing.T) {
	t.Parallel()
	p := sharedPool(t)
	ts := shop(t)
	s := newSession(t, p, SessionOptions{Label: "fail/permanent"})
	if err := s.Run(t.Context(), "open", Navigate(ts.URL+"/who")); err != nil {
		t.Fatal(err)
	}
	failedBefore := p.Stats().Failed

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	err := s.Run(ctx, "find-orders", chromedp.WaitVisible(chromedp.CSS("#orders")))
	var se *StepError
	if !errors.As(err, &se) {
		t.Fatalf("Run = %v, want a *StepError", err)
	}
	if se.Attempts != 1 || IsTransient(err) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run = %v (attempts %d), want one non-transient deadline failure", err, se.Attempts)
	}
	if !strings.Contains(err.Error(), `"find-orders"`) {
		t.Fatalf("error %q does not name the step", err)
	}
	shots, _ := filepath.Glob(filepath.Join(sharedDir, "*-fail_permanent-find-orders.png"))
	if len(shots) != 1 || shots[0] != se.Screenshot {
		t.Fatalf("screenshots %v, StepError.Screenshot %q: want exactly that one", shots, se.Screenshot)
	}
	checkPNG(t, se.Screenshot)
	if p.Stats().Failed <= failedBefore {
		t.Fatalf("Stats.Failed did not grow: %+v", p.Stats())
	}
}

func checkPNG(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("%s is not a PNG", path)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s has mode %v, want 0600", path, fi.Mode().Perm())
	}
}

const (
	password = "hunter2 Pa55!"
	card     = "4111111111111111"
	otp      = "913274"
)

// secretsPage shows secrets in text, in attributes and in inputs, and a card
// field whose value is no known secret.
const secretsPage = `
<h1>Hello ann</h1>
<p id="card">Card ` + card + ` on file</p>
<div id="shadow-host"></div>
<input id="pw" type="password" value="` + password + `">
<input id="otp" name="code" value="` + otp + `" title="code ` + otp + `">
<input id="cc" autocomplete="cc-number" value="5500000000000004">
<input id="plain" value="ann@example.com">
<script>
document.getElementById("shadow-host").attachShadow({mode: "open"}).innerHTML = "<span>card ` + card + `</span>";
</script>`

func secretsSite(t *testing.T) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writePage(w, secretsPage)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// pageSnapshot is what the page shows: its text (with shadow roots), input
// values and markup, read from the page's own world.
type pageSnapshot struct {
	Text   string            `json:"text"`
	Inputs map[string]string `json:"inputs"`
	HTML   string            `json:"html"`
}

func snapshot(t *testing.T, s *Session) pageSnapshot {
	t.Helper()
	snap, err := chromedp.Run(s.Context(), chromedp.Evaluate[pageSnapshot](`({
		text: document.body.innerText + " " + document.getElementById("shadow-host").shadowRoot.textContent,
		inputs: Object.fromEntries(Array.from(document.querySelectorAll("input"), (e) => [e.id, e.value])),
		html: document.documentElement.outerHTML,
	})`))
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func assertNoSecret(t *testing.T, where, s string) {
	t.Helper()
	for _, v := range []string{password, url.QueryEscape(password), card, otp} {
		if strings.Contains(s, v) {
			t.Errorf("%s shows secret %q: %s", where, v, s)
		}
	}
}

func TestMaskPageHidesSecretsAndUndoes(t *testing.T) {
	t.Parallel()
	p := sharedPool(t)
	ts := secretsSite(t)
	s := newSession(t, p, SessionOptions{Label: "mask/page"})
	if err := s.Run(t.Context(), "open", Navigate(ts.URL)); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, s)

	world, err := chromedp.Run(s.Context(), maskPage([]string{password, card, otp}))
	if err != nil {
		t.Fatal(err)
	}
	masked := snapshot(t, s)
	assertNoSecret(t, "masked text", masked.Text)
	assertNoSecret(t, "masked markup", masked.HTML)
	for id, v := range masked.Inputs {
		assertNoSecret(t, "masked input "+id, v)
	}
	if masked.Inputs["cc"] != mask {
		t.Errorf("card field shows %q, want it masked", masked.Inputs["cc"])
	}
	if masked.Inputs["plain"] != "ann@example.com" || !strings.Contains(masked.Text, "Hello ann") {
		t.Errorf("masking changed what is no secret: %+v", masked)
	}

	// The page's own scripts never received the secrets.
	leaked, err := chromedp.Run(s.Context(), chromedp.Evaluate[bool](`typeof globalThis.__hitchUnmask !== "undefined"`))
	if err != nil || leaked {
		t.Fatalf("masking state visible to the page (%v, %v)", leaked, err)
	}

	if err := chromedp.Do(s.Context(), unmaskPage(world)); err != nil {
		t.Fatal(err)
	}
	after := snapshot(t, s)
	if after.Text != before.Text || fmt.Sprint(after.Inputs) != fmt.Sprint(before.Inputs) {
		t.Fatalf("page not restored:\nbefore %+v\nafter  %+v", before, after)
	}
}

func TestFailedStepMasksScreenshotAndError(t *testing.T) {
	t.Parallel()
	p := sharedPool(t)
	ts := secretsSite(t)
	s := newSession(t, p, SessionOptions{Label: "mask/step", Secrets: []string{password, card}})
	s.AddSecret(otp)
	if err := s.Run(t.Context(), "open", Navigate(ts.URL)); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, s)

	// An action whose error quotes secrets, plainly and URL-escaped.
	leaky := chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		return fmt.Errorf("card %s rejected for /pay?pw=%s&otp=%s", card, url.QueryEscape(password), otp)
	})
	err := s.Run(t.Context(), "pay", leaky)
	var se *StepError
	if !errors.As(err, &se) {
		t.Fatalf("Run = %v, want a *StepError", err)
	}
	assertNoSecret(t, "error", err.Error())
	if !strings.Contains(err.Error(), `"pay"`) || !strings.Contains(err.Error(), mask) {
		t.Fatalf("error %q should name the step and show the mask", err)
	}
	shots, _ := filepath.Glob(filepath.Join(sharedDir, "*-mask_step-pay.png"))
	if len(shots) != 1 {
		t.Fatalf("screenshots %v, want one", shots)
	}
	checkPNG(t, shots[0])

	// The page was put back after the capture, so the connector can go on.
	after := snapshot(t, s)
	if fmt.Sprint(after.Inputs) != fmt.Sprint(before.Inputs) {
		t.Fatalf("inputs not restored after the screenshot:\nbefore %v\nafter  %v", before.Inputs, after.Inputs)
	}
}

func TestHelpers(t *testing.T) {
	t.Parallel()
	p := sharedPool(t)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writePage(w, `<ul><li class="order"> A-1 </li><li class="order">B-2</li></ul><a id="next" href="/p2">next</a>`)
	}))
	t.Cleanup(ts.Close)
	s := newSession(t, p, SessionOptions{Label: "helpers"})

	var first, href string
	var all, none []string
	var yes, no bool
	if err := s.Run(t.Context(), "read",
		Navigate(ts.URL),
		Text("li.order", &first),
		Attr("#next", "href", &href),
		Texts("li.order", &all),
		Texts("li.refund", &none),
		Exists("#next", &yes),
		Exists("#missing", &no),
	); err != nil {
		t.Fatal(err)
	}
	if first != "A-1" || href != "/p2" || fmt.Sprint(all) != "[A-1 B-2]" || none == nil || len(none) != 0 || !yes || no {
		t.Fatalf("Text %q, Attr %q, Texts %q and %q, Exists %v and %v", first, href, all, none, yes, no)
	}

	var missing string
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := s.Run(ctx, "attr", Attr("#next", "data-id", &missing)); err == nil || !strings.Contains(err.Error(), "data-id") {
		t.Fatalf("Attr of a missing attribute: %v", err)
	}
}

// processGone reports whether pid has exited and been reaped: a zombie still
// has a /proc entry.
func processGone(pid int) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return errors.Is(err, os.ErrNotExist)
}

func chromiumPID(p *Pool) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return chromedp.FromContext(p.proc.ctx).Browser.Process().Pid
}

func TestChromiumRestartedOnce(t *testing.T) {
	t.Parallel()
	requireChromium(t)
	p, err := NewPool(t.Context(), Options{ExecPath: DefaultExecPath, Contexts: 2, StepTimeout: stepTimeout})
	if err != nil {
		t.Fatal(err)
	}
	ts := shop(t)

	crash := func() int {
		t.Helper()
		pid := chromiumPID(p)
		proc, err := os.FindProcess(pid)
		if err != nil {
			t.Fatal(err)
		}
		if err := proc.Kill(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the pool to see Chromium exit", func() bool {
			p.mu.Lock()
			defer p.mu.Unlock()
			return p.proc.ctx.Err() != nil
		})
		return pid
	}

	first := crash()
	s, err := p.NewSession(t.Context(), SessionOptions{Label: "crash/after-restart"})
	if err != nil {
		t.Fatalf("NewSession after a crash: %v", err)
	}
	var who string
	if err := s.Run(t.Context(), "read", Navigate(ts.URL+"/who"), Text("#who", &who)); err != nil || who != "anonymous" {
		t.Fatalf("session on the restarted Chromium: %q, %v", who, err)
	}
	waitFor(t, "the crashed Chromium to be reaped", func() bool { return processGone(first) })

	second := crash()
	if _, err := p.NewSession(t.Context(), SessionOptions{Label: "crash/again"}); err == nil {
		t.Fatal("NewSession after a second crash succeeded; want an error")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("closing a session of a dead Chromium: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if !processGone(second) {
		t.Fatalf("Chromium %d left a zombie after Close", second)
	}
	if s := p.Stats(); s.InUse != 0 {
		t.Fatalf("Stats after Close = %+v, want no session in use", s)
	}
	if _, err := p.NewSession(t.Context(), SessionOptions{Label: "crash/closed"}); err == nil {
		t.Fatal("NewSession on a closed pool succeeded")
	}
}

func TestChromiumFlags(t *testing.T) {
	t.Parallel()
	p := sharedPool(t)
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", chromiumPID(p)))
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Split(string(cmdline), "\x00")
	want := []string{"--headless=new", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run",
		"--disable-extensions", "--disable-background-networking"}
	if os.Geteuid() == 0 {
		want = append(want, "--no-sandbox")
	}
	for _, w := range want {
		if !slices.Contains(args, w) {
			t.Errorf("Chromium runs without %s: %q", w, args)
		}
	}
}
