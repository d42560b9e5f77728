package api_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, for a second process's lock

	"github.com/hitchdev/hitch/internal/api"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/postgres"
	"github.com/hitchdev/hitch/internal/store/sqlite"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// tcpProxy forwards connections to a target; cut breaks every connection
// and refuses new ones (each is closed at once) until restore: a database
// that went away and came back, at the same address.
type tcpProxy struct {
	target string
	ln     net.Listener
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]bool
}

func newTCPProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{target: target, ln: ln, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go p.serve()
	return p
}

func (p *tcpProxy) serve() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			client.Close()
			continue
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			client.Close()
			continue
		}
		p.mu.Lock()
		p.conns[client], p.conns[server] = true, true
		p.mu.Unlock()
		go func() { _, _ = io.Copy(server, client); server.Close(); client.Close() }()
		go func() { _, _ = io.Copy(client, server); server.Close(); client.Close() }()
	}
}

func (p *tcpProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func (p *tcpProxy) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

// expectDatabaseUnavailable checks the answer of a request made while the
// database is unavailable.
func expectDatabaseUnavailable(t *testing.T, r *response) {
	t.Helper()
	if r.status != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503: %s", r.status, r.body)
	}
	if got := r.header.Get("Retry-After"); got != "5" {
		t.Fatalf("Retry-After %q", got)
	}
	if e := r.errorBody(t); e.Type != api.TypeAPIError || e.Code != api.CodeDatabaseUnavailable {
		t.Fatalf("error %s/%s", e.Type, e.Code)
	}
}

// While PostgreSQL cannot be reached the API answers 503
// DATABASE_UNAVAILABLE with Retry-After, not a 500, and serves again by
// itself once it is back.
func TestDatabaseOutagePostgres(t *testing.T) {
	t.Parallel()
	dbURL := storetest.RequirePostgres(t)
	schema := storetest.NewSchema(t, dbURL)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	target := u.Host
	if u.Port() == "" {
		target = net.JoinHostPort(u.Hostname(), "5432")
	}
	proxy := newTCPProxy(t, target)
	u.Host = proxy.ln.Addr().String()
	ctx := context.Background()
	st, err := postgres.Open(ctx, u.String(), postgres.Options{Schema: schema, MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, st)
	list := func() *response { return h.do("GET", "/webhooks/endpoints", nil, nil) }
	if r := list(); r.status != http.StatusOK {
		t.Fatalf("before the outage: %d %s", r.status, r.body)
	}
	password := h.addMember("ada@example.com", store.RoleAdmin)
	d := h.dash()
	d.mustSignIn("ada@example.com", password)

	proxy.cut()
	expectDatabaseUnavailable(t, list())
	expectDatabaseUnavailable(t, h.do("POST", "/session/create",
		map[string]any{"type": "link", "external_user_id": "u1"}, nil))
	// The dashboard says so too.
	if r := d.get("/dashboard"); r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "5" {
		t.Fatalf("dashboard during the outage: %d, Retry-After %q", r.status, r.header.Get("Retry-After"))
	}
	if strings.Contains(h.logs.String(), `"request failed"`) || strings.Contains(h.logs.String(), `"msg":"dashboard`) {
		t.Fatalf("the outage was logged as a fault:\n%s", h.logs)
	}

	proxy.restore()
	if r := list(); r.status != http.StatusOK {
		t.Fatalf("after the outage: %d %s", r.status, r.body)
	}
	if r := d.get("/dashboard"); r.status != http.StatusOK {
		t.Fatalf("dashboard after the outage: %d", r.status)
	}
}

// SQLite has no server to lose: its outage is the file locked by another
// process (a long transaction in the sqlite3 shell, a backup tool) past the
// busy timeout, answered as PostgreSQL's is, and over when the lock goes.
func TestDatabaseOutageSQLiteLocked(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "hitch.db")
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, st)
	create := func() *response {
		return h.do("POST", "/session/create", map[string]any{"type": "link", "external_user_id": "u1"}, nil)
	}
	if r := create(); r.status != http.StatusCreated && r.status != http.StatusOK {
		t.Fatalf("before the lock: %d %s", r.status, r.body)
	}

	// The other process waits for the lock as Hitch does: Hitch's request
	// log writer may be inserting the request above.
	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	expectDatabaseUnavailable(t, create()) // after the 10 s busy timeout
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if r := create(); r.status != http.StatusCreated && r.status != http.StatusOK {
		t.Fatalf("after the lock: %d %s", r.status, r.body)
	}
}

// A client that hangs up while its request waits on the database is not a
// fault of Hitch: no ERROR, and the access log records 499 at info level.
func TestClientGoneIsNotAFault(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		arrived := make(chan struct{}, 1)
		const requestID = "req_client_gone_0001"
		h := newHarness(t, st, func(o *harnessOptions) {
			o.wrap = func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Header.Get("X-Request-Id") == requestID {
						arrived <- struct{}{}
					}
					next.ServeHTTP(w, r)
				})
			}
		})
		ctx := context.Background()
		// Hold the table the request needs, so that it waits on the
		// database until the client is gone.
		release := holdWriteLock(t, st)
		defer release()

		reqCtx, cancel := context.WithCancel(ctx)
		req, err := http.NewRequestWithContext(reqCtx, "POST", h.url+"/webhooks/endpoints",
			strings.NewReader(`{"url":"https://example.com/hook"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth(h.clientID, h.secret)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Request-Id", requestID)
		done := make(chan error, 1)
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			done <- err
		}()
		<-arrived
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("the client got an answer: %v", err)
		}

		line := waitForAccessLog(t, h, requestID)
		if line["level"] != "INFO" || line["status"] != float64(499) {
			t.Fatalf("access log of a client gone: %v", line)
		}
		for l := range strings.SplitSeq(h.logs.String(), "\n") {
			if strings.Contains(l, requestID) && strings.Contains(l, `"level":"ERROR"`) {
				t.Fatalf("logged at ERROR: %s", l)
			}
		}
	})
}

// holdWriteLock takes, from another connection, the lock a write of the
// store needs, until release.
func holdWriteLock(t *testing.T, st store.Store) (release func()) {
	t.Helper()
	ctx := context.Background()
	pool, schema := st.Native()
	switch st.Dialect() {
	case "sqlite":
		db := pool.(*sql.DB)
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The writer connection itself: the request waits for it.
		if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
			t.Fatal(err)
		}
		return func() { _, _ = conn.ExecContext(ctx, "ROLLBACK"); conn.Close() }
	default:
		conn, err := pgx.Connect(ctx, storetest.PostgresURL())
		if err != nil {
			t.Fatal(err)
		}
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "LOCK TABLE "+pgx.Identifier{schema, "webhook_endpoints"}.Sanitize()+" IN ACCESS EXCLUSIVE MODE"); err != nil {
			t.Fatal(err)
		}
		return func() { _ = tx.Rollback(ctx); conn.Close(ctx) }
	}
}

// waitForAccessLog waits for the access log line of the request and
// returns it.
func waitForAccessLog(t *testing.T, h *harness, requestID string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for l := range strings.SplitSeq(h.logs.String(), "\n") {
			var line map[string]any
			if json.Unmarshal([]byte(l), &line) == nil && line["msg"] == "request" && line["request_id"] == requestID {
				return line
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no access log line for %s:\n%s", requestID, h.logs)
	return nil
}
