package refconnector

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hitchdev/hitch/connector"
	"github.com/hitchdev/hitch/connector/browser"
	"github.com/hitchdev/hitch/examples/refshop"
)

const (
	adminToken   = "refconnector-test-admin"
	demoPassword = "correct-horse-battery"
	ada          = "ada@refshop.example"
	// testTimeout bounds one connector call: generous, the tests share a
	// busy machine.
	testTimeout = 60 * time.Second
)

// shared is the browser pool of the tests that do not measure speed,
// started by the first that needs it and stopped by TestMain.
var shared struct {
	once sync.Once
	pool *browser.Pool
	err  error
	dir  string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.pool != nil {
		shared.pool.Close()
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

// needChromium skips the test without Chromium, except on CI where it
// fails.
func needChromium(tb testing.TB) {
	tb.Helper()
	if _, err := os.Stat(browser.DefaultExecPath); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("Chromium is required on CI: %v", err)
		}
		tb.Skipf("skipping the browser test: no Chromium at %s (%v)", browser.DefaultExecPath, err)
	}
}

// sharedPool returns the shared browser pool, whose failed steps leave
// masked screenshots in a temporary directory named in the errors.
func sharedPool(t *testing.T) *browser.Pool {
	t.Helper()
	needChromium(t)
	shared.once.Do(func() {
		shared.dir, shared.err = os.MkdirTemp("", "refconnector-screenshots-")
		if shared.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		shared.pool, shared.err = browser.NewPool(ctx, browser.Options{
			ExecPath: browser.DefaultExecPath, Contexts: 8, ScreenshotDir: shared.dir,
		})
	})
	if shared.err != nil {
		t.Fatalf("browser pool: %v", shared.err)
	}
	return shared.pool
}

// newPool starts a pool of the test's own with n contexts.
func newPool(tb testing.TB, n int) *browser.Pool {
	tb.Helper()
	needChromium(tb)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	p, err := browser.NewPool(ctx, browser.Options{ExecPath: browser.DefaultExecPath, Contexts: n})
	if err != nil {
		tb.Fatalf("browser pool: %v", err)
	}
	tb.Cleanup(func() { p.Close() })
	return p
}

// shop is a reference shop served for one test, with its admin API.
type shop struct {
	tb  testing.TB
	URL string
}

func newShop(tb testing.TB) *shop {
	tb.Helper()
	ts := httptest.NewServer(refshop.New(refshop.Config{AdminToken: adminToken}))
	tb.Cleanup(ts.Close)
	return &shop{tb: tb, URL: ts.URL}
}

// admin calls the admin API and decodes the answer into out (nil: ignore).
func (s *shop) admin(method, path string, body, out any) {
	s.tb.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			s.tb.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		s.tb.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.tb.Fatalf("admin %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		s.tb.Fatalf("admin %s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			s.tb.Fatalf("admin %s %s: %v", method, path, err)
		}
	}
}

// user is what the admin API says of the user.
func (s *shop) user(email string) refshop.User {
	s.tb.Helper()
	var u refshop.User
	s.admin(http.MethodGet, "/admin/api/users/"+url.PathEscape(email), nil, &u)
	return u
}

var codeRE = regexp.MustCompile(`Your sign-in code is (\d{6})`)

// mailedCode is the newest sign-in code in the user's test mailbox, read
// over plain HTTP.
func (s *shop) mailedCode(email string) (string, error) {
	resp, err := http.Get(s.URL + "/mailbox?to=" + url.QueryEscape(email))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	m := codeRE.FindSubmatch(b) // the mailbox lists the newest first
	if m == nil {
		return "", fmt.Errorf("no sign-in code mailed to %s", email)
	}
	return string(m[1]), nil
}

// noAsk is the Asker of a login that must not be asked anything.
func noAsk(tb testing.TB) connector.Asker {
	return func(ctx context.Context, kind, question string, retry bool) (string, error) {
		tb.Errorf("asked %s %q (retry %v) where no challenge was expected", kind, question, retry)
		return "", fmt.Errorf("unexpected challenge")
	}
}

// login signs the user in in a session of its own and returns the saved
// state, as the SDK runtime does.
func login(tb testing.TB, pool *browser.Pool, site *Site, email, password string, ask connector.Asker) ([]byte, error) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	sess, err := pool.NewSession(ctx, browser.SessionOptions{Label: "refshop/login", Secrets: []string{password}})
	if err != nil {
		tb.Fatalf("session: %v", err)
	}
	defer sess.Close()
	if err := site.Login(ctx, sess, connector.UserCredentials{Username: email, Password: password}, ask); err != nil {
		return nil, err
	}
	return sess.SaveState(ctx)
}

// mustLogin is login that must succeed without a challenge.
func mustLogin(tb testing.TB, pool *browser.Pool, site *Site, email string) []byte {
	tb.Helper()
	state, err := login(tb, pool, site, email, demoPassword, noAsk(tb))
	if err != nil {
		tb.Fatalf("login %s: %v", email, err)
	}
	return state
}

// inSession runs f in a new session that starts with the saved state, as
// the SDK runtime runs refreshes and card tasks.
func inSession(tb testing.TB, pool *browser.Pool, state []byte, f func(ctx context.Context, sess *browser.Session)) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	sess, err := pool.NewSession(ctx, browser.SessionOptions{Label: "refshop/task", State: state})
	if err != nil {
		tb.Fatalf("session: %v", err)
	}
	defer sess.Close()
	f(ctx, sess)
}

// refresh runs one refresh in a session restored from state.
func refresh(tb testing.TB, pool *browser.Pool, site *Site, state []byte) (*connector.Snapshot, error) {
	tb.Helper()
	var snap *connector.Snapshot
	var err error
	inSession(tb, pool, state, func(ctx context.Context, sess *browser.Session) {
		snap, err = site.Refresh(ctx, sess)
	})
	return snap, err
}

// diff lists the paths at which got differs from want, such as
// "products[1].price.unit_price: got "5.00", want "6.00"".
func diff(path string, want, got any) []string {
	return diffValues(path, reflect.ValueOf(want), reflect.ValueOf(got))
}

func diffValues(path string, w, g reflect.Value) []string {
	if !w.IsValid() || !g.IsValid() {
		if w.IsValid() != g.IsValid() {
			return []string{fmt.Sprintf("%s: got %v, want %v", path, g, w)}
		}
		return nil
	}
	switch w.Kind() {
	case reflect.Pointer:
		if w.IsNil() || g.IsNil() {
			if w.IsNil() != g.IsNil() {
				return []string{fmt.Sprintf("%s: got %s, want %s", path, show(g), show(w))}
			}
			return nil
		}
		return diffValues(path, w.Elem(), g.Elem())
	case reflect.Struct:
		var out []string
		for i := range w.NumField() {
			f := w.Type().Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" {
				name = f.Name
			}
			out = append(out, diffValues(path+"."+name, w.Field(i), g.Field(i))...)
		}
		return out
	case reflect.Slice:
		if w.Len() != g.Len() {
			return []string{fmt.Sprintf("%s: got %d elements %s, want %d %s", path, g.Len(), show(g), w.Len(), show(w))}
		}
		if w.IsNil() != g.IsNil() && w.Type().Elem().Kind() != reflect.Uint8 {
			return []string{fmt.Sprintf("%s: got %s, want %s (null and [] differ on the wire)", path, show(g), show(w))}
		}
		var out []string
		for i := range w.Len() {
			out = append(out, diffValues(fmt.Sprintf("%s[%d]", path, i), w.Index(i), g.Index(i))...)
		}
		return out
	}
	if !reflect.DeepEqual(w.Interface(), g.Interface()) {
		return []string{fmt.Sprintf("%s: got %s, want %s", path, show(g), show(w))}
	}
	return nil
}

func show(v reflect.Value) string {
	b, err := json.Marshal(v.Interface())
	if err != nil {
		return fmt.Sprint(v.Interface())
	}
	return string(b)
}
