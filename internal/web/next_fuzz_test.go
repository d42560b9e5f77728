package web

import (
	"net/url"
	"path"
	"strings"
	"testing"
)

// FuzzSafeNext checks the sign-in's destination: whatever next a link
// carries, the page a browser reaches from the answer's Location is a page
// of the dashboard on this site.
func FuzzSafeNext(f *testing.F) {
	for _, seed := range []string{
		"/dashboard", "/dashboard/webhooks?page=2", "/dashboard/../%5Cevil.example", "/dashboard/../../evil",
		`/\evil.example`, "//evil.example/dashboard", "https://evil.example/dashboard", "/dashboard/%2e%2e/x",
		"/dashboard/..%2fx", "/dashboard%2f..", "", "dashboard", "/dashboard/\t/x", "/dashboard#frag",
	} {
		f.Add(seed)
	}
	site, _ := url.Parse("https://hitch.example/dashboard/signin")
	f.Fuzz(func(t *testing.T, next string) {
		got := safeNext(next)
		// A browser resolves Location against the page, reading a backslash
		// as a slash.
		loc, err := url.Parse(strings.ReplaceAll(got, `\`, "/"))
		if err != nil {
			t.Fatalf("safeNext(%q) = %q, not a URL: %v", next, got, err)
		}
		to := site.ResolveReference(loc)
		if to.Host != site.Host || to.Scheme != site.Scheme || to.User != nil {
			t.Fatalf("safeNext(%q) = %q leaves the site: %s", next, got, to)
		}
		p := path.Clean(to.Path)
		if p != "/dashboard" && !strings.HasPrefix(p, "/dashboard/") {
			t.Fatalf("safeNext(%q) = %q leaves the dashboard: %s", next, got, to)
		}
		if unescaped, err := url.PathUnescape(to.EscapedPath()); err != nil || path.Clean(unescaped) != p {
			t.Fatalf("safeNext(%q) = %q holds an encoded separator: %s", next, got, to.EscapedPath())
		}
	})
}
