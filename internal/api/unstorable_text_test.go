package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hitchdev/hitch/internal/api/apitest"
)

// unstorable are bytes that PostgreSQL's text cannot hold and SQLite's
// can, as a client escapes them in a URL.
var unstorable = []struct{ name, escaped string }{
	{"NUL", "a%00b"},
	{"invalid UTF-8", "%ff"},
}

var wildcard = regexp.MustCompile(`\{([^}.]+)(?:\.\.\.)?\}`)

// fillPath puts value in the path's wildcard name and "1" in the others.
func fillPath(path, name, value string) string {
	return wildcard.ReplaceAllStringFunc(path, func(m string) string {
		if wildcard.FindStringSubmatch(m)[1] == name {
			return value
		}
		return "1"
	})
}

// expectUnstorable asserts the 400 INVALID_FIELD naming what.
func expectUnstorable(t *testing.T, r *response, what string) {
	t.Helper()
	if r.status != http.StatusBadRequest {
		t.Fatalf("%d %s, want 400", r.status, r.body)
	}
	e := r.errorBody(t)
	if e.Code != "INVALID_FIELD" || !strings.Contains(e.Message, what) {
		t.Fatalf("%s %q, want INVALID_FIELD naming %s", e.Code, e.Message, what)
	}
}

// Every path value of every route, and every query parameter the document
// gives an operation, holding a NUL or invalid UTF-8 is refused with the
// same 400 on both stores: PostgreSQL answered 500 (invalid byte sequence
// for encoding "UTF8") where SQLite answered 404 or 200. The walk reads
// the route table, so a route added later is walked too.
func TestUnstorablePathAndQueryValuesAreRefused(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		doc := apitest.Load(t)
		walked := 0
		for _, route := range h.server.Routes() {
			method, path, _ := strings.Cut(route, " ")
			for _, m := range wildcard.FindAllStringSubmatch(path, -1) {
				for _, bad := range unstorable {
					t.Run(route+" "+m[1]+" "+bad.name, func(t *testing.T) {
						expectUnstorable(t, h.do(method, fillPath(path, m[1], bad.escaped), nil, nil), m[1]+" path parameter")
					})
					walked++
				}
			}
			for _, param := range doc.QueryParameters(route) {
				for _, bad := range unstorable {
					t.Run(route+" ?"+param+" "+bad.name, func(t *testing.T) {
						expectUnstorable(t, h.do(method, fillPath(path, "", "")+"?"+param+"="+bad.escaped, nil, nil), param+" query parameter")
					})
					walked++
				}
			}
		}
		// The cases of the report, by name, and a parameter no operation reads.
		if walked < 60 {
			t.Errorf("walked %d cases: the route table or the document lost its parameters", walked)
		}
		expectUnstorable(t, h.do("DELETE", "/webhooks/endpoints/a%00b", nil, nil), "id path parameter")
		expectUnstorable(t, h.do("GET", "/webhooks/events?external_user_id=%ff", nil, nil), "external_user_id query parameter")
		expectUnstorable(t, h.do("GET", "/accounts/get?external_user_id=u&unknown=%00", nil, nil), "unknown query parameter")
		r := h.do("GET", "/webhooks/events?%ff=1", nil, nil)
		expectUnstorable(t, r, "name of a query parameter")
		if !utf8.Valid(r.body) {
			t.Errorf("the error repeats the bytes: %q", r.body)
		}
		// Still what they were: well-formed ids not found, listings found.
		if r := h.do("DELETE", "/webhooks/endpoints/ab", nil, nil); r.status != http.StatusNotFound {
			t.Errorf("DELETE /webhooks/endpoints/ab: %d %s, want 404", r.status, r.body)
		}
		if r := h.do("GET", "/webhooks/events?external_user_id=%C3%A9", nil, nil); r.status != http.StatusOK {
			t.Errorf("GET /webhooks/events?external_user_id=é: %d %s, want 200", r.status, r.body)
		}
	})
}

// A JSON string holding a NUL (the \u0000 escape: a raw control character
// is not JSON, and invalid UTF-8 is refused with the body) is refused
// naming its field, wherever it is in the request, before any store sees
// it. The error repeats no part of the value.
func TestUnstorableJSONStringsAreRefused(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		for _, c := range []struct {
			method, path, body, field string
		}{
			{"POST", "/webhooks/replay", `{"endpoint_id": "a\u0000b", "since": "2026-01-01T00:00:00Z"}`, "endpoint_id field"},
			{"POST", "/development/webhooks/sign", `{"endpoint_id": "a\u0000b", "payload": {"id": "evt", "event": "TEST"}}`, "endpoint_id field"},
			{"POST", "/session/create", `{"type": "transaction_link", "external_user_id": "u\u0000"}`, "external_user_id field"},
			{"POST", "/session/create", `{"type": "transaction_link", "external_user_id": "u", "metadata": {"k\u0000": "v"}}`, "metadata field"},
			{"POST", "/session/create", `{"type": "transaction_link", "external_user_id": "u", "metadata": {"k": "v\u0000"}}`, "metadata.k field"},
			{"POST", "/accounts/unlink", `{"external_user_id": "\u0000", "merchant_id": 19}`, "external_user_id field"},
			{"POST", "/transactions/sync", `{"external_user_id": "u\u0000", "merchant_id": 19}`, "external_user_id field"},
			{"POST", "/webhooks/endpoints", `{"url": "https://93.184.215.14/\u0000"}`, "url field"},
			{"PUT", "/link/allowed_origins", `{"allowed_origins": ["https://a.example", "https://b\u0000.example"]}`, "allowed_origins[1] field"},
			{"POST", "/development/accounts/link", `{"external_user_id": "u", "merchant_id": 19, "card_id": "c\u0000"}`, "card_id field"},
		} {
			t.Run(c.path+" "+c.field, func(t *testing.T) {
				r := h.do(c.method, c.path, c.body, nil)
				expectUnstorable(t, r, c.field)
				if strings.Contains(string(r.body), "k\\u0000") || strings.Contains(string(r.body), "b\\u0000") {
					t.Errorf("the error repeats the value: %s", r.body)
				}
			})
		}
		// An escaped backslash before u0000 is no NUL.
		r := h.do("POST", "/session/create", `{"type": "transaction_link", "external_user_id": "a\\u0000"}`, nil)
		if r.status != http.StatusOK {
			t.Fatalf(`external_user_id "a\\u0000": %d %s, want 200`, r.status, r.body)
		}
	})
}

// A user agent is recorded with an audited change, not refused: one that
// is not UTF-8 (HTTP allows such bytes) is recorded with its invalid bytes
// replaced, the same on both stores.
func TestAuditRecordsInvalidUTF8UserAgent(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		r := h.do("PUT", "/link/allowed_origins", map[string]any{"allowed_origins": []string{"https://a.example"}},
			http.Header{"User-Agent": {"agent/\xff1.0"}})
		if r.status != http.StatusOK {
			t.Fatalf("PUT /link/allowed_origins: %d %s", r.status, r.body)
		}
		var logs struct {
			Data []struct {
				Context struct {
					UserAgent string `json:"user_agent"`
				} `json:"context"`
			} `json:"data"`
		}
		r = h.do("GET", "/audit_logs", nil, nil)
		if err := json.Unmarshal(r.body, &logs); err != nil || len(logs.Data) != 1 {
			t.Fatalf("GET /audit_logs: %d %s", r.status, r.body)
		}
		if got := logs.Data[0].Context.UserAgent; got != "agent/\uFFFD1.0" {
			t.Errorf("user agent %q, want %q", got, "agent/\uFFFD1.0")
		}
	})
}

// The dashboard's pages answer a NUL or invalid UTF-8 in a path value, a
// query parameter or a form field the same on both stores, which refuse
// such text before the database sees it: 400, or what the page answers a
// malformed value anyway.
func TestDashboardRefusesUnstorableText(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		password := h.addMember("admin@example.com", "admin")
		d := h.dash()
		// Not an e-mail address: the credentials are wrong.
		if r := d.signIn("admin@example.com\xff", password); r.status != http.StatusUnauthorized {
			t.Errorf("sign in with an e-mail that is not UTF-8: %d %.300s, want 401", r.status, r.body)
		}
		d.mustSignIn("admin@example.com", password)
		for _, c := range []struct {
			method, path string
			want         int
		}{
			{"GET", "/dashboard/webhooks/endpoints/a%00b", http.StatusBadRequest},
			{"GET", "/dashboard/webhooks/endpoints/%ff", http.StatusBadRequest},
			{"POST", "/dashboard/webhooks/%ff/remove", http.StatusBadRequest},
			{"POST", "/dashboard/webhooks/a%00b/edit", http.StatusBadRequest},
			{"POST", "/dashboard/members/a%00b/remove", http.StatusNotFound}, // member ids are UUIDs
			{"GET", "/dashboard/users?q=%ff", http.StatusBadRequest},
			{"GET", "/dashboard/user?id=a%00b", http.StatusBadRequest},
		} {
			var r *response
			if c.method == "GET" {
				r = d.get(c.path)
			} else {
				r = d.post(c.path, url.Values{"url": {"https://93.184.215.14/hooks"}})
			}
			if r.status != c.want {
				t.Errorf("%s %s: %d %.300s, want %d", c.method, c.path, r.status, r.body, c.want)
			}
		}
	})
}
