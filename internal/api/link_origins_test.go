package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/hitchdev/hitch/client"
	"github.com/hitchdev/hitch/internal/api"
	"github.com/hitchdev/hitch/internal/audit"
	"github.com/hitchdev/hitch/internal/store"
)

// frameAncestors is the frame-ancestors source list GET path is served
// with.
func (h *harness) frameAncestors(path string) string {
	h.t.Helper()
	r := h.page("GET", path, "", nil)
	if r.status != http.StatusOK {
		h.t.Fatalf("GET %s: %d", path, r.status)
	}
	csp := r.header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self'") || strings.Count(csp, "frame-ancestors") != 1 {
		h.t.Fatalf("GET %s: policy %q", path, csp)
	}
	_, ancestors, _ := strings.Cut(csp, "; frame-ancestors ")
	return ancestors
}

// linkPath is /link as the SDK opens it for a developer.
func linkPath(clientID string) string { return "/link?client_id=" + url.QueryEscape(clientID) }

func setOrigins(t *testing.T, c *client.Client, origins ...string) *client.LinkAllowedOrigins {
	t.Helper()
	got, err := c.SetLinkAllowedOrigins(context.Background(), origins)
	if err != nil {
		t.Fatalf("set %q: %v", origins, err)
	}
	return got
}

func getOrigins(t *testing.T, c *client.Client) *client.LinkAllowedOrigins {
	t.Helper()
	got, err := c.LinkAllowedOrigins(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// In development, a developer with no origins keeps the flow framable by
// any site; one with origins gets exactly those (and Hitch); each
// developer's flows get that developer's list, and another's never
// changes it.
func TestLinkOriginsDevelopment(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		other := h.newDeveloper("development")
		otherAPI := h.clientFor(other)

		got := getOrigins(t, h.api)
		if len(got.AllowedOrigins) != 0 || got.FrameAncestors != "*" {
			t.Fatalf("before any: %+v", got)
		}
		for _, path := range []string{"/link", linkPath(h.clientID), linkPath(other.ClientID), linkPath("nobody-at-all")} {
			if fa := h.frameAncestors(path); fa != "*" {
				t.Fatalf("%s with no origins: frame-ancestors %q, want *", path, fa)
			}
		}

		got = setOrigins(t, h.api, "https://app.example.com", "http://localhost:3000", "HTTPS://App.Example.com:443")
		want := []string{"http://localhost:3000", "https://app.example.com"}
		if !slices.Equal(got.AllowedOrigins, want) || got.FrameAncestors != "'self' http://localhost:3000 https://app.example.com" {
			t.Fatalf("set: %+v", got)
		}
		if again := getOrigins(t, h.api); !slices.Equal(again.AllowedOrigins, want) || again.FrameAncestors != got.FrameAncestors {
			t.Fatalf("get after set: %+v", again)
		}
		if fa := h.frameAncestors(linkPath(h.clientID)); fa != "'self' http://localhost:3000 https://app.example.com" {
			t.Fatalf("the developer's flow: frame-ancestors %q", fa)
		}

		// Isolation: the other developer's flows and list are its own.
		if fa := h.frameAncestors(linkPath(other.ClientID)); fa != "*" {
			t.Fatalf("another developer's flow: frame-ancestors %q", fa)
		}
		if o := getOrigins(t, otherAPI); len(o.AllowedOrigins) != 0 {
			t.Fatalf("another developer sees %q", o.AllowedOrigins)
		}
		setOrigins(t, otherAPI, "https://other.example")
		if fa := h.frameAncestors(linkPath(other.ClientID)); fa != "'self' https://other.example" {
			t.Fatalf("the other developer's flow: frame-ancestors %q", fa)
		}
		if fa := h.frameAncestors(linkPath(h.clientID)); fa != "'self' http://localhost:3000 https://app.example.com" {
			t.Fatalf("the developer's flow after the other's change: frame-ancestors %q", fa)
		}
		// A flow whose URL names nobody keeps the default: the page then
		// reloads itself for the developer of the session it is given.
		if fa := h.frameAncestors("/link"); fa != "*" {
			t.Fatalf("/link alone: frame-ancestors %q", fa)
		}

		// An empty list removes them all: the default again.
		if got := setOrigins(t, h.api); len(got.AllowedOrigins) != 0 || got.FrameAncestors != "*" {
			t.Fatalf("emptied: %+v", got)
		}
		if fa := h.frameAncestors(linkPath(h.clientID)); fa != "*" {
			t.Fatalf("after emptying: frame-ancestors %q", fa)
		}
		if fa := h.frameAncestors(linkPath(other.ClientID)); fa != "'self' https://other.example" {
			t.Fatalf("the other developer's flow after the first emptied its list: frame-ancestors %q", fa)
		}
	})
}

// In production, a developer with no origins gets Hitch's own origin only;
// a URL that names nobody may be framed by any page, as such a page runs
// no session (link.js loads itself again for the init's developer); http
// is refused even for localhost.
func TestLinkOriginsProduction(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		other := h.newDeveloper("production")
		if got := getOrigins(t, h.api); len(got.AllowedOrigins) != 0 || got.FrameAncestors != "'self'" {
			t.Fatalf("before any: %+v", got)
		}
		for _, path := range []string{linkPath(h.clientID), linkPath(other.ClientID), linkPath("nobody-at-all"),
			linkPath(strings.Repeat("x", 300))} {
			if fa := h.frameAncestors(path); fa != "'self'" {
				t.Fatalf("%s with no origins: frame-ancestors %q, want 'self'", path, fa)
			}
		}
		if fa := h.frameAncestors("/link"); fa != "*" {
			t.Fatalf("/link alone: frame-ancestors %q, want *", fa)
		}
		_, err := h.api.SetLinkAllowedOrigins(context.Background(), []string{"http://localhost:3000"})
		expectError(t, err, http.StatusBadRequest, api.TypeInvalidRequest, api.CodeInvalidField)

		got := setOrigins(t, h.api, "https://app.example.com", "https://93.184.215.14:8443")
		if got.FrameAncestors != "'self' https://93.184.215.14:8443 https://app.example.com" {
			t.Fatalf("set: %+v", got)
		}
		if fa := h.frameAncestors(linkPath(h.clientID)); fa != got.FrameAncestors {
			t.Fatalf("the developer's flow: frame-ancestors %q, want %q", fa, got.FrameAncestors)
		}
		if fa := h.frameAncestors(linkPath(other.ClientID)); fa != "'self'" {
			t.Fatalf("another developer's flow: frame-ancestors %q, want 'self'", fa)
		}
	}, production)
}

// A refused list is a 400 with the API's error body naming the origin or
// the limit, and changes nothing; the operations need credentials.
func TestLinkOriginsValidation(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		setOrigins(t, h.api, "https://kept.example")
		many := make([]string, 21)
		for i := range many {
			many[i] = fmt.Sprintf("https://app%d.example", i)
		}
		manyJSON, _ := json.Marshal(map[string]any{"allowed_origins": many})
		tests := []struct {
			body    any
			message string
		}{
			{map[string]any{"allowed_origins": []string{"https://app.example.com/"}}, `"https://app.example.com/"`},
			{map[string]any{"allowed_origins": []string{"https://ok.example", "ftp://app.example.com"}}, "must use https"},
			{map[string]any{"allowed_origins": []string{"http://app.example.com"}}, "must use https"},
			{map[string]any{"allowed_origins": []string{"https://*.example.com"}}, "wildcard"},
			{map[string]any{"allowed_origins": []string{"https://app.example.com?x=1"}}, "query"},
			{map[string]any{"allowed_origins": []string{"app.example.com"}}, "scheme://host"},
			{map[string]any{"allowed_origins": []string{""}}, "is empty"},
			{map[string]any{"allowed_origins": []string{"https://app.example.com; script-src *"}}, "allowed_origins"},
			{string(manyJSON), "at most 20"},
			{map[string]any{}, "allowed_origins field is required"},
			{map[string]any{"allowed_origins": nil}, "allowed_origins field is required"},
			{map[string]any{"allowed_origins": "https://app.example.com"}, "allowed_origins"},
			{map[string]any{"allowed_origins": []any{1}}, "allowed_origins"},
			{map[string]any{"allowed_origins": []string{}, "origins": []string{}}, "origins"},
		}
		for _, tc := range tests {
			r := h.do("PUT", "/link/allowed_origins", tc.body, nil)
			if r.status != http.StatusBadRequest {
				t.Fatalf("%v: %d %s", tc.body, r.status, r.body)
			}
			e := r.errorBody(t)
			if e.Type != api.TypeInvalidRequest || e.Code != api.CodeInvalidField || !strings.Contains(e.Message, tc.message) {
				t.Fatalf("%v: %s/%s %q, want INVALID_REQUEST/INVALID_FIELD mentioning %q", tc.body, e.Type, e.Code, e.Message, tc.message)
			}
		}
		if got := getOrigins(t, h.api); !slices.Equal(got.AllowedOrigins, []string{"https://kept.example"}) {
			t.Fatalf("after refused lists: %q", got.AllowedOrigins)
		}
		// Twenty, with duplicates, are fine.
		if got := setOrigins(t, h.api, append(many[:20:20], many[0], strings.ToUpper(many[1]))...); len(got.AllowedOrigins) != 20 {
			t.Fatalf("twenty origins: %d stored", len(got.AllowedOrigins))
		}
		if r := h.do("PUT", "/link/allowed_origins", `{"allowed_origins": []}`, http.Header{"Content-Type": {"text/plain"}}); r.status != http.StatusUnsupportedMediaType {
			t.Fatalf("text/plain: %d", r.status)
		}
		for _, method := range []string{"GET", "PUT"} {
			r := h.do(method, "/link/allowed_origins", map[string]any{"allowed_origins": []string{}}, noAuth)
			if method == "GET" {
				r = h.do(method, "/link/allowed_origins", nil, noAuth)
			}
			if r.status != http.StatusUnauthorized || r.errorBody(t).Code != api.CodeInvalidAPIKeys {
				t.Fatalf("%s without credentials: %d %s", method, r.status, r.body)
			}
		}
		if got := getOrigins(t, h.api); len(got.AllowedOrigins) != 20 {
			t.Fatalf("after unauthenticated calls: %d origins", len(got.AllowedOrigins))
		}
	})
}

// An admin changes the origins on the dashboard's Link flow page: the flow's
// header follows, and the change is audited as link.origins_update naming
// the list stored (null once emptied). Other roles read the page but
// cannot change it; a refused list shows why and records nothing.
func TestLinkOriginsDashboard(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		admin := h.dash()
		admin.mustSignIn("ada@example.com", h.addMember("ada@example.com", store.RoleAdmin))
		page := admin.get("/dashboard/link")
		if page.status != http.StatusOK || !strings.Contains(string(page.body), `id="no-origins"`) ||
			!strings.Contains(string(page.body), `<code id="frame-ancestors">frame-ancestors *</code>`) ||
			!strings.Contains(string(page.body), `id="link-origins"`) {
			t.Fatalf("GET /dashboard/link: %d %.2000s", page.status, page.body)
		}

		r := admin.post("/dashboard/link/origins", url.Values{"origins": {"https://b.example\r\n\r\n  https://a.example  \nhttps://B.example:443\n"}})
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/dashboard/link?notice=origins.updated" {
			t.Fatalf("save: %d %s %.500s", r.status, r.header.Get("Location"), r.body)
		}
		if fa := h.frameAncestors(linkPath(h.clientID)); fa != "'self' https://a.example https://b.example" {
			t.Fatalf("after the dashboard's change: frame-ancestors %q", fa)
		}
		rec := lastRecord(t, h)
		if rec.Event.Action != audit.ActionLinkOriginsUpdate || rec.Event.Outcome.Status != "success" ||
			rec.Target.Type != audit.TargetLinkOrigins || rec.Target.Name == nil || *rec.Target.Name != "https://a.example https://b.example" ||
			rec.Actor.Email != "ada@example.com" || rec.Target.Environment != "development" || rec.Context.UserAgent != dashUA {
			t.Fatalf("audit record %+v", rec)
		}
		if p := admin.get("/dashboard/link?notice=origins.updated"); !strings.Contains(string(p.body), "The allowed origins were saved") ||
			!strings.Contains(string(p.body), "<li><code>https://a.example</code></li>") {
			t.Fatalf("the page after saving: %.2000s", p.body)
		}

		// A refused list: the form again with the reason; nothing changes
		// or is recorded.
		seq := h.auditSeq(h.clientID)
		r = admin.post("/dashboard/link/origins", url.Values{"origins": {"https://ok.example\nhttp://evil.example/"}})
		if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "http://evil.example/") ||
			!strings.Contains(string(r.body), "https://ok.example") {
			t.Fatalf("refused list: %d %.2000s", r.status, r.body)
		}
		if h.auditSeq(h.clientID) != seq {
			t.Fatal("a refused list was recorded")
		}

		// Other roles see the list, not the form, and cannot post.
		for _, role := range []string{store.RoleDeveloper, store.RoleViewer} {
			email := role + "@example.com"
			d := h.dash()
			d.mustSignIn(email, h.addMember(email, role))
			if p := d.get("/dashboard/link"); p.status != http.StatusOK || strings.Contains(string(p.body), `id="link-origins"`) ||
				!strings.Contains(string(p.body), "https://a.example") {
				t.Fatalf("%s reads the page: %d", role, p.status)
			}
			seq := h.auditSeq(h.clientID)
			if r := d.post("/dashboard/link/origins", url.Values{"origins": {""}}); r.status != http.StatusForbidden {
				t.Fatalf("%s saves: %d", role, r.status)
			}
			if h.auditSeq(h.clientID) != seq {
				t.Fatalf("%s's refused change was recorded", role)
			}
		}
		if got := getOrigins(t, h.api); !slices.Equal(got.AllowedOrigins, []string{"https://a.example", "https://b.example"}) {
			t.Fatalf("after refused changes: %q", got.AllowedOrigins)
		}

		// Emptied: recorded with no name, and the default again.
		if r := admin.post("/dashboard/link/origins", url.Values{"origins": {"\n"}}); r.status != http.StatusSeeOther {
			t.Fatalf("empty: %d", r.status)
		}
		if rec := lastRecord(t, h); rec.Event.Action != audit.ActionLinkOriginsUpdate || rec.Target.Name != nil {
			t.Fatalf("audit record of emptying %+v", rec)
		}
		if fa := h.frameAncestors(linkPath(h.clientID)); fa != "*" {
			t.Fatalf("after emptying: frame-ancestors %q", fa)
		}
		// The management API's changes are audited too, by the API
		// credentials.
		setOrigins(t, h.api, "https://c.example")
		if rec := lastRecord(t, h); rec.Event.Action != audit.ActionLinkOriginsUpdate || rec.Target.Name == nil ||
			*rec.Target.Name != "https://c.example" || rec.Actor.Name != audit.APIActorName || rec.Actor.Email != "" {
			t.Fatalf("audit record of the API's change %+v", rec)
		}
		// Another developer's log has none of this.
		other := h.newDeveloper("development")
		if recs := auditLog(t, h.clientFor(other)); len(recs) != 0 {
			t.Fatalf("another developer's log: %d records", len(recs))
		}
	})
}

// Every audit action is in the contract's enum (GET /audit_logs answers
// are validated against it).
func TestLinkOriginsAuditAction(t *testing.T) {
	t.Parallel()
	if !slices.Contains(audit.Actions, audit.ActionLinkOriginsUpdate) {
		t.Fatalf("audit.Actions lacks %s", audit.ActionLinkOriginsUpdate)
	}
}
