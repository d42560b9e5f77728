package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The bare handler answers the body, framed as Hitch frames it, only to the
// right credentials.
func TestBareHandler(t *testing.T) {
	t.Parallel()
	body := []byte(`[{"merchant":{"id":1}}]`)
	srv := httptest.NewServer(requireBasicAuth("user", "secret", jsonBody(body)))
	t.Cleanup(srv.Close)

	tests := []struct {
		name       string
		user, pass string
		wantStatus int
	}{
		{"answers", "user", "secret", http.StatusOK},
		{"wrong password", "user", "nope", http.StatusUnauthorized},
		{"wrong user", "other", "secret", http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequest(http.MethodGet, srv.URL+"/accounts/get", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.SetBasicAuth(tt.user, tt.pass)
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			if tt.wantStatus != http.StatusOK {
				return
			}
			if string(got) != string(body) || resp.ContentLength != int64(len(body)) || resp.TransferEncoding != nil {
				t.Errorf("body %q, Content-Length %d, Transfer-Encoding %v; want the body with its length, not chunked",
					got, resp.ContentLength, resp.TransferEncoding)
			}
		})
	}
}

// The hidden flags startBare passes are read back as they were, and checked.
func TestParseBareFlags(t *testing.T) {
	t.Parallel()
	valid := bareOptions{addr: "127.0.0.1:1", bodyFile: "/tmp/b.json", method: http.MethodPost, path: "/transactions/sync", user: "u", pass: "p"}
	if got, err := parseBareFlags(valid.args()); err != nil || got != valid {
		t.Errorf("parseBareFlags(%q) = %+v, %v; want %+v", valid.args(), got, err, valid)
	}
	tests := []struct {
		name   string
		change func(*bareOptions)
	}{
		{"no method", func(o *bareOptions) { o.method = "" }},
		{"other method", func(o *bareOptions) { o.method = http.MethodDelete }},
		{"relative path", func(o *bareOptions) { o.path = "transactions/sync" }},
		{"query", func(o *bareOptions) { o.path = "/accounts/get?external_user_id=u" }},
		{"wildcard", func(o *bareOptions) { o.path = "/transactions/{id}" }},
		{"readyz", func(o *bareOptions) { o.path = "/readyz" }},
		{"no password", func(o *bareOptions) { o.pass = "" }},
	}
	for _, tt := range tests {
		o := valid
		tt.change(&o)
		if _, err := parseBareFlags(o.args()); err == nil {
			t.Errorf("%s: parseBareFlags(%q) accepted it", tt.name, o.args())
		}
	}
}

// bareMux answers the body only to its method and path, and /readyz.
func TestBareMux(t *testing.T) {
	t.Parallel()
	body := []byte(`{"transactions":[]}`)
	srv := httptest.NewServer(bareMux(bareOptions{method: http.MethodPost, path: "/transactions/sync", user: "user", pass: "secret"}, body))
	t.Cleanup(srv.Close)

	tests := []struct {
		method, path string
		wantStatus   int
		wantBody     string
	}{
		{http.MethodPost, "/transactions/sync", http.StatusOK, string(body)},
		{http.MethodGet, "/transactions/sync", http.StatusMethodNotAllowed, ""},
		{http.MethodGet, "/accounts/get", http.StatusNotFound, ""},
		{http.MethodGet, "/readyz", http.StatusOK, `{"status":"ready"}`},
	}
	for _, tt := range tests {
		req, err := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader(`{"limit":100}`))
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth("user", "secret")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != tt.wantStatus || (tt.wantBody != "" && string(got) != tt.wantBody) {
			t.Errorf("%s %s: %d %q; want %d %q", tt.method, tt.path, resp.StatusCode, got, tt.wantStatus, tt.wantBody)
		}
	}
}
