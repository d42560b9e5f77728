package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestGenerateLoad(t *testing.T) {
	t.Parallel()
	body := []byte(`[{"merchant":{"id":1}}]`)
	srv := httptest.NewServer(requireBasicAuth("user", "secret", jsonBody(body)))
	t.Cleanup(srv.Close)

	tests := []struct {
		name       string
		pass       string
		want       []byte
		wantErrors string // the only failure kind expected; "" for none
	}{
		{"answers", "secret", body, ""},
		{"wrong password", "nope", body, "status 401"},
		{"other body", "secret", []byte(`[]`), "body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			const conns = 4
			tgt := target{name: "test", url: srv.URL + accountsPath, user: "user", pass: tt.pass, want: tt.want}
			stats, err := generateLoad(context.Background(), tgt, conns, 20*time.Millisecond, 100*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			if stats.dials > conns {
				t.Errorf("%d connections dialed for %d workers", stats.dials, conns)
			}
			if tt.wantErrors == "" {
				if len(stats.errors) > 0 || stats.hist.total == 0 {
					t.Errorf("errors %v, %d measured requests; want none and some", stats.errors, stats.hist.total)
				}
				return
			}
			if stats.errors[tt.wantErrors] == 0 || len(stats.errors) != 1 || stats.hist.total != 0 {
				t.Errorf("errors %v, %d measured requests; want only %q", stats.errors, stats.hist.total, tt.wantErrors)
			}
		})
	}
}

// A server that closes each connection after its answer still gets every
// request answered: the worker dials again.
func TestGenerateLoadRedials(t *testing.T) {
	t.Parallel()
	body := []byte(`[]`)
	handler := requireBasicAuth("user", "secret", jsonBody(body))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	tgt := target{name: "test", url: srv.URL + accountsPath, user: "user", pass: "secret", want: body}
	stats, err := generateLoad(context.Background(), tgt, 2, 0, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(stats.errors) > 0 || stats.hist.total < 2 || stats.dials < stats.hist.total {
		t.Errorf("errors %v, %d requests over %d dials; want none, several, one dial each", stats.errors, stats.hist.total, stats.dials)
	}
}

func TestWithSearchPath(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"postgres://u@h:5432/db?sslmode=disable", "postgres://u@h:5432/db?options=-c%20search_path%3Dbench_1&sslmode=disable"},
		{"postgres://u@h/db?options=-c%20statement_timeout%3D5s", "postgres://u@h/db?options=-c%20statement_timeout%3D5s%20-c%20search_path%3Dbench_1"},
	}
	for _, tt := range tests {
		got, err := withSearchPath(tt.in, "bench_1")
		if err != nil || got != tt.want {
			t.Errorf("withSearchPath(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestRedactPassword(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"postgres://u:pw@h/db", "postgres://u:xxxxx@h/db"},
		{"--database-url=postgres://u:pw@h/db", "--database-url=postgres://u:xxxxx@h/db"},
		{"--conns=8", "--conns=8"},
	}
	for _, tt := range tests {
		if got := redactPassword(tt.in); got != tt.want {
			t.Errorf("redactPassword(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
