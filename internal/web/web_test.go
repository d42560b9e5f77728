package web

import (
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hitchdev/hitch/internal/merchant"
	"github.com/hitchdev/hitch/internal/npmtest"
)

func newHandler(t *testing.T, env string, demo *Demo) *Handler {
	t.Helper()
	catalog, err := merchant.Load()
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{Environment: env, Catalog: catalog, Demo: demo, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// The demo is routed in development only, and never without its helper.
func TestRoutes(t *testing.T) {
	t.Parallel()
	pages := []string{"GET /{$}", "GET /link", "GET /static/{file}", "GET /sdk/hitch.js"}
	demo := []string{"GET /demo", "POST /demo/session"}
	if got := newHandler(t, "development", &Demo{}).Routes(); !slices.Equal(got, append(pages, demo...)) {
		t.Errorf("development routes %q", got)
	}
	if got := newHandler(t, "production", &Demo{}).Routes(); !slices.Equal(got, pages) {
		t.Errorf("production routes %q", got)
	}
	if got := newHandler(t, "development", nil).Routes(); !slices.Equal(got, pages) {
		t.Errorf("routes without a demo %q", got)
	}
}

// The flow lists every merchant of the catalog once, with the categories;
// the test logins show only in development.
func TestLinkPage(t *testing.T) {
	t.Parallel()
	h := newHandler(t, "development", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/link", nil))
	body := rec.Body.String()
	if rec.Code != 200 || rec.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("GET /link: %d %v", rec.Code, rec.Header())
	}
	catalog, _ := merchant.Load()
	if got, want := strings.Count(body, `class="merchant" data-id=`), len(catalog.All()); got != want {
		t.Errorf("%d merchants on the page, want %d", got, want)
	}
	for _, c := range catalog.Categories() {
		if !strings.Contains(body, `data-category="`+c+`" aria-pressed="false">`+categoryLabel(c)+`<`) {
			t.Errorf("no category chip %s", c)
		}
	}
	if !strings.Contains(body, "user_good_transactions") {
		t.Error("development shows no test logins")
	}
	prod := httptest.NewRecorder()
	newHandler(t, "production", nil).ServeHTTP(prod, httptest.NewRequest("GET", "/link", nil))
	if strings.Contains(prod.Body.String(), "user_good") || strings.Contains(prod.Body.String(), "view-start") {
		t.Error("production shows the test logins or the direct start form")
	}
}

func TestCategoryLabel(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"food_delivery": "Food delivery", "shopping": "Shopping", "": ""} {
		if got := categoryLabel(in); got != want {
			t.Errorf("categoryLabel(%q) = %q, want %q", in, got, want)
		}
	}
}

// Every page and asset is served with a policy that allows no inline
// script or style, and the markup has none.
func TestNoInlineCode(t *testing.T) {
	t.Parallel()
	for _, csp := range []string{cspLink, cspDemo} {
		if strings.Contains(csp, "unsafe") || !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("policy %q", csp)
		}
	}
	inline := regexp.MustCompile(`(?i)<script>|<script\s+[^>]*>[^<\s]|\son[a-z]+=|style="|javascript:`)
	err := fs.WalkDir(templateFS, "templates", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := templateFS.ReadFile(p)
		if err != nil {
			return err
		}
		if m := inline.Find(b); m != nil {
			t.Errorf("%s has inline code: %q", p, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The scripts only ever post to a known origin, never to "*".
func TestScriptsNeverPostToAnyOrigin(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"static/link.js", "sdk/hitch.js", "static/demo.js", "static/landing.js"} {
		b, err := assetFS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if regexp.MustCompile(`postMessage\([^;]*['"]\*['"]`).Match(b) {
			t.Errorf("%s posts a message to any origin", name)
		}
	}
}

// The scripts parse (with node: skipped without it, but for CI).
func TestScriptsParse(t *testing.T) {
	t.Parallel()
	node := npmtest.RequireTool(t, "node", "Node.js")
	dir := t.TempDir()
	for _, name := range []string{"static/link.js", "sdk/hitch.js", "static/demo.js", "static/landing.js"} {
		b, err := assetFS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, filepath.Base(name))
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(node, "--check", path).CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", name, err, out)
		}
	}
}

func TestAssets(t *testing.T) {
	t.Parallel()
	h := newHandler(t, "development", nil)
	for path, typ := range map[string]string{"/static/link.js": "text/javascript", "/static/link.css": "text/css",
		"/static/favicon.svg": "image/svg+xml", "/sdk/hitch.js": "text/javascript"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), typ) || rec.Header().Get("ETag") == "" {
			t.Errorf("GET %s: %d %v", path, rec.Code, rec.Header())
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/static/nope.js", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("unknown asset: %d", rec.Code)
	}
}

func TestSameOrigin(t *testing.T) {
	t.Parallel()
	tests := []struct {
		header http.Header
		want   bool
	}{
		{http.Header{"Sec-Fetch-Site": {"same-origin"}}, true},
		{http.Header{"Sec-Fetch-Site": {"same-site"}}, false},
		{http.Header{"Sec-Fetch-Site": {"cross-site"}, "Origin": {"http://example.com"}}, false},
		{http.Header{"Origin": {"http://example.com"}}, true},
		{http.Header{"Origin": {"http://evil.example"}}, false},
		{http.Header{}, true},
	}
	for _, tc := range tests {
		r := httptest.NewRequest("POST", "http://example.com/demo/session", nil)
		r.Header = tc.header
		if got := sameOrigin(r); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.header, got, tc.want)
		}
	}
}

// The demo answers the public URL's host and loopback names only (DNS
// rebinding): anything else gets the 404 of an unrouted path.
func TestDemoHost(t *testing.T) {
	t.Parallel()
	catalog, err := merchant.Load()
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{Environment: "development", Catalog: catalog, Demo: &Demo{}, Logger: slog.New(slog.DiscardHandler),
		PublicURL: "https://Hitch.Example.com:8443"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		host string
		want int
	}{
		{"hitch.example.com:8443", 200},
		{"hitch.example.com.", 200},
		{"127.0.0.1:8080", 200},
		{"127.0.0.1", 200},
		{"[::1]:8080", 200},
		{"localhost:3000", 200},
		{"evil.example:8443", 404},
		{"hitch.example.com.evil.example", 404},
		{"localhost.evil.example", 404},
		{"10.0.0.1:8080", 404},
		{"", 404},
	}
	for _, tc := range tests {
		r := httptest.NewRequest("GET", "/demo", nil)
		r.Host = tc.host
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != tc.want {
			t.Errorf("Host %q: %d, want %d", tc.host, rec.Code, tc.want)
		}
	}
}
