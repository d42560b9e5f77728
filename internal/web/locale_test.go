package web

import (
	"encoding/json"
	"html"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/hitchdev/hitch/internal/merchant"
)

// The Spanish table has every key of the English one and no other, with
// the same placeholders, and every table loads.
func TestLinkStringsSpanish(t *testing.T) {
	t.Parallel()
	var table map[string]map[string]string
	if err := json.Unmarshal(linkStringsJSON, &table); err != nil {
		t.Fatal(err)
	}
	en, es := table["en"], table["es"]
	if len(en) == 0 || len(es) == 0 {
		t.Fatalf("tables: en %d keys, es %d keys", len(en), len(es))
	}
	for key, text := range en {
		other, ok := es[key]
		if !ok || strings.TrimSpace(other) == "" {
			t.Errorf("es has no %q (en %q)", key, text)
			continue
		}
		if got, want := strings.Join(sortedPlaceholders(other), ","), strings.Join(sortedPlaceholders(text), ","); got != want {
			t.Errorf("es %q has placeholders %s, en has %s", key, got, want)
		}
	}
	for key := range es {
		if _, ok := en[key]; !ok {
			t.Errorf("es has %q, which en has not", key)
		}
	}
	if _, err := loadLinkStrings(); err != nil {
		t.Fatal(err)
	}
}

// Every category of the catalog has its label in each table; the English
// one is the label the page renders.
func TestLinkStringsCategories(t *testing.T) {
	t.Parallel()
	table, err := loadLinkStrings()
	if err != nil {
		t.Fatal(err)
	}
	catalog, err := merchant.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range catalog.Categories() {
		if got := table["en"]["category."+c]; got != categoryLabel(c) {
			t.Errorf("en category.%s = %q, want %q", c, got, categoryLabel(c))
		}
	}
}

// Every key the page and its script name is in the table.
func TestLinkStringsKeysExist(t *testing.T) {
	t.Parallel()
	table, err := loadLinkStrings()
	if err != nil {
		t.Fatal(err)
	}
	en := table["en"]
	page, err := templateFS.ReadFile("templates/link.html")
	if err != nil {
		t.Fatal(err)
	}
	attr := regexp.MustCompile(`(?:data-t(?:-label|-placeholder|-title)?="|\{\{t ")([a-z_.]+)"`)
	for _, m := range attr.FindAllSubmatch(page, -1) {
		if key := string(m[1]); !strings.HasSuffix(key, ".") && en[key] == "" {
			t.Errorf("link.html names %q, which is not in the table", key)
		}
	}
	script, err := assetFS.ReadFile("static/link.js")
	if err != nil {
		t.Fatal(err)
	}
	// Keys are the script's quoted literals with a dot and the first
	// arguments of t() and count(), which takes a prefix of .one and .other.
	literal := regexp.MustCompile(`'([a-z_]+(?:\.[a-z_]+)+)'|\b(?:t|count)\('([a-z_.]+)'`)
	found := 0
	for _, m := range literal.FindAllSubmatch(script, -1) {
		key := string(m[1]) + string(m[2])
		found++
		if en[key] == "" && (en[key+".one"] == "" || en[key+".other"] == "") {
			t.Errorf("link.js names %q, which is not in the table", key)
		}
	}
	if found < 30 {
		t.Errorf("found %d keys in link.js: the pattern no longer matches its calls", found)
	}
}

// The page is English, carries every table for its script, and has no
// English left outside the table in its views.
func TestLinkPageCarriesStrings(t *testing.T) {
	t.Parallel()
	h := newHandler(t, "production", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/link", nil))
	body := rec.Body.String()
	m := regexp.MustCompile(`data-strings="([^"]*)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatal("the page carries no strings")
	}
	var table map[string]map[string]string
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &table); err != nil {
		t.Fatalf("data-strings: %v", err)
	}
	if table["es"]["title"] != "Conecta una cuenta" || table["en"]["title"] != "Connect an account" {
		t.Errorf("data-strings tables: en %q, es %q", table["en"]["title"], table["es"]["title"])
	}
	for _, want := range []string{"<title>Connect an account</title>", `data-t="categories.all" data-category="" aria-pressed="true">All<`,
		`id="login-submit" data-t="login.submit">Log in<`, `data-t="footer">Secured by Hitch<`} {
		if !strings.Contains(body, want) {
			t.Errorf("the page has no %s", want)
		}
	}
}

// Without a store of origins, /link gets the environment's default
// policy: any ancestor in development, Hitch only in production.
func TestLinkFrameAncestorsDefault(t *testing.T) {
	t.Parallel()
	for env, want := range map[string]string{"development": "frame-ancestors *", "production": "frame-ancestors 'self'"} {
		rec := httptest.NewRecorder()
		newHandler(t, env, nil).ServeHTTP(rec, httptest.NewRequest("GET", "/link?client_id=somebody", nil))
		if csp := rec.Header().Get("Content-Security-Policy"); !strings.HasSuffix(csp, "; "+want) || !strings.HasPrefix(csp, cspLink) {
			t.Errorf("%s: %q, want it to end with %q", env, csp, want)
		}
	}
}
