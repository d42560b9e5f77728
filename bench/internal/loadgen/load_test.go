package loadgen

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// basicAuthJSON answers body, with a Content-Length, behind Basic auth
// user:secret.
func basicAuthJSON(body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "user" || p != "secret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	})
}

func TestRun(t *testing.T) {
	t.Parallel()
	body := []byte(`[{"merchant":{"id":1}}]`)
	srv := httptest.NewServer(basicAuthJSON(body))
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
			stats, err := Run(context.Background(), Load{
				URL: srv.URL + "/accounts/get?external_user_id=u", User: "user", Pass: tt.pass, Want: tt.want,
				Conns: conns, Warmup: 20 * time.Millisecond, Duration: 100 * time.Millisecond, RequestTimeout: time.Second,
			})
			if err != nil {
				t.Fatal(err)
			}
			if stats.Dials > conns {
				t.Errorf("%d connections dialed for %d workers", stats.Dials, conns)
			}
			if tt.wantErrors == "" {
				if stats.Failures.Count() > 0 || stats.Hist.Count() == 0 || stats.ReqPerSec() <= 0 {
					t.Errorf("errors %v, %d measured requests; want none and some", stats.Failures.ByKind, stats.Hist.Count())
				}
				return
			}
			if stats.Failures.ByKind[tt.wantErrors] == 0 || len(stats.Failures.ByKind) != 1 || stats.Hist.Count() != 0 {
				t.Errorf("errors %v, %d measured requests; want only %q", stats.Failures.ByKind, stats.Hist.Count(), tt.wantErrors)
			}
		})
	}
}

// Load.Method and Load.Body are sent with every request, the body as JSON
// with its length; without them the request is a GET with no body.
func TestRunPost(t *testing.T) {
	t.Parallel()
	// The server echoes the body of a POST, so that every answer shows what
	// its request carried.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil || r.Header.Get("Content-Type") != "application/json" || r.ContentLength != int64(len(body)) {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		basicAuthJSON(body).ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	body := []byte(`{"external_user_id":"u","merchant_id":1,"limit":100}`)

	tests := []struct {
		name       string
		method     string
		body       []byte
		wantErrors string // the only failure kind expected; "" for none
	}{
		{"post with a body", http.MethodPost, body, ""},
		{"get by default", "", nil, "status 405"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			const conns = 2
			stats, err := Run(context.Background(), Load{
				Method: tt.method, URL: srv.URL + "/transactions/sync", Body: tt.body, User: "user", Pass: "secret", Want: body,
				Conns: conns, Duration: 100 * time.Millisecond, RequestTimeout: time.Second,
			})
			if err != nil {
				t.Fatal(err)
			}
			if stats.Dials > conns {
				t.Errorf("%d connections dialed for %d workers", stats.Dials, conns)
			}
			if tt.wantErrors == "" {
				if stats.Failures.Count() > 0 || stats.Hist.Count() < conns {
					t.Errorf("errors %v (first: %s), %d measured requests; want none and several",
						stats.Failures.ByKind, stats.Failures.First, stats.Hist.Count())
				}
				return
			}
			if stats.Failures.ByKind[tt.wantErrors] == 0 || len(stats.Failures.ByKind) != 1 || stats.Hist.Count() != 0 {
				t.Errorf("errors %v, %d measured requests; want only %q", stats.Failures.ByKind, stats.Hist.Count(), tt.wantErrors)
			}
		})
	}
}

// A server that closes each connection after its answer still gets every
// request answered: the worker dials again.
func TestRunRedials(t *testing.T) {
	t.Parallel()
	body := []byte(`[]`)
	handler := basicAuthJSON(body)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	stats, err := Run(context.Background(), Load{
		URL: srv.URL + "/", User: "user", Pass: "secret", Want: body,
		Conns: 2, Duration: 100 * time.Millisecond, RequestTimeout: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(stats.Failures.ByKind) > 0 || stats.Hist.Count() < 2 || stats.Dials < stats.Hist.Count() {
		t.Errorf("errors %v, %d requests over %d dials; want none, several, one dial each", stats.Failures.ByKind, stats.Hist.Count(), stats.Dials)
	}
}

func TestConnPost(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || r.ContentLength != 2 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	var dials atomic.Int64
	c := NewConn(u.Host, time.Second, &dials)
	defer c.Close()
	for range 2 {
		status, _, err := c.Do(Request(http.MethodPost, u, "user", "secret", []byte("{}")), time.Now())
		if err != nil || status != http.StatusOK || string(c.Body()) != "ok" {
			t.Errorf("POST: %d %q %v", status, c.Body(), err)
		}
	}
	if dials.Load() != 1 {
		t.Errorf("%d dials for two requests, want 1", dials.Load())
	}
}

// A refused connection is a "transport" failure.
func TestConnRefused(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.Listener.Addr().String()
	srv.Close()
	var dials atomic.Int64
	c := NewConn(addr, time.Second, &dials)
	if _, kind, err := c.Do([]byte("GET / HTTP/1.1\r\n\r\n"), time.Now()); err == nil || kind != "transport" {
		t.Errorf("Do on a closed port: kind %q, err %v; want transport", kind, err)
	}
}

func TestFailures(t *testing.T) {
	t.Parallel()
	var a, b Failures
	a.Add("timeout", errors.New("i/o timeout"))
	b.Add("status 500", errors.New("status 500: boom"))
	b.Add("status 500", errors.New("status 500: again"))
	var all Failures
	all.Merge(Failures{}) // nothing to add
	all.Merge(a)
	all.Merge(b)
	if all.Count() != 3 || all.ByKind["status 500"] != 2 || all.First != "i/o timeout" {
		t.Errorf("merged %+v; want 3 failures, the first a timeout", all)
	}
}

// ClosedLoop counts the successes after the warm-up and every failure by
// kind.
func TestClosedLoop(t *testing.T) {
	t.Parallel()
	n := 0
	ops := []Op{
		func(time.Time) (string, error) { time.Sleep(time.Millisecond); return "", nil },
		func(time.Time) (string, error) {
			time.Sleep(time.Millisecond)
			if n++; n%2 == 0 {
				return "decrypt", errors.New("bad tag")
			}
			return "", nil
		},
	}
	stats, err := ClosedLoop(context.Background(), ops, 20*time.Millisecond, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Hist.Count() == 0 || stats.Failures.ByKind["decrypt"] == 0 || stats.Failures.First != "bad tag" ||
		len(stats.Failures.ByKind) != 1 || stats.Elapsed < 50*time.Millisecond {
		t.Errorf("stats: %d successes, failures %v (first %q), elapsed %v", stats.Hist.Count(), stats.Failures.ByKind, stats.Failures.First, stats.Elapsed)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ClosedLoop(ctx, ops, 0, time.Second); !errors.Is(err, context.Canceled) {
		t.Errorf("ClosedLoop after cancel = %v, want context.Canceled", err)
	}
}
