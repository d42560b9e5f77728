package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hitchdev/hitch/client"
	"github.com/hitchdev/hitch/internal/api"
	"github.com/hitchdev/hitch/internal/api/apitest"
	"github.com/hitchdev/hitch/internal/app"
	"github.com/hitchdev/hitch/internal/audit"
	"github.com/hitchdev/hitch/internal/card"
	"github.com/hitchdev/hitch/internal/config"
	"github.com/hitchdev/hitch/internal/connector"
	"github.com/hitchdev/hitch/internal/detection"
	"github.com/hitchdev/hitch/internal/developer"
	"github.com/hitchdev/hitch/internal/link"
	"github.com/hitchdev/hitch/internal/member"
	"github.com/hitchdev/hitch/internal/merchant"
	"github.com/hitchdev/hitch/internal/queue"
	"github.com/hitchdev/hitch/internal/seal"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
	"github.com/hitchdev/hitch/internal/transaction"
	"github.com/hitchdev/hitch/internal/webhook"
)

// clock is a test clock that only moves when told.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// testArgon2id is an argon2id cost of microseconds a hash: the dashboard's
// tests hash and check passwords often, and internal/member's test the
// production cost.
var testArgon2id = member.Argon2id{Memory: 8, Time: 1, Threads: 1}

// noSleeps is the wall clock, but its sleeps return at once: refusals are
// padded as in production, and no test waits for it.
type noSleeps struct{}

func (noSleeps) Now() time.Time                       { return time.Now() }
func (noSleeps) Sleep(context.Context, time.Duration) {}

// syncBuffer collects log output written from many goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// harness is one Hitch API on a real listener over a real store, with the
// first developer's credentials.
type harness struct {
	t            testing.TB
	url          string
	env          string
	store        store.Store
	clock        *clock
	logs         *syncBuffer
	developers   *developer.Service
	server       *api.Server
	http         *http.Client // validates every response against openapi.yaml
	api          *client.Client
	clientID     string
	secret       string
	webhooks     *webhook.Service
	queue        *queue.Queue
	transactions *transaction.Service
	connectors   *connector.Service
	cards        *card.Service
	detections   *detection.Service
	keys         *card.Keys
	links        *link.Service
	audit        *audit.Log
	members      *member.Service
	// memberConfig is the member service's configuration, defaults
	// filled in: tests find their hasher or clock there.
	memberConfig member.Config
	catalog      *merchant.Catalog
	work         *connector.Work
}

type harnessOptions struct {
	env       string
	rateLimit float64
	rateBurst int
	// discardLogs formats logs at info level, as production does, but keeps
	// none (benchmarks).
	discardLogs bool
	// workers runs the job workers, so that webhooks are delivered.
	workers bool
	// retrySchedule replaces the webhook retry schedule (default: fast).
	retrySchedule []time.Duration
	// cardWindow replaces the card switch window (default 15 s; an hour
	// with workers, so that a slow run records no CARD_FAILED a test did
	// not ask for).
	cardWindow time.Duration
	// catalog replaces the seeded merchant catalog.
	catalog *merchant.Catalog
	// members configures the dashboard's member service (default: the
	// defaults, but with testArgon2id and a clock whose sleeps return at
	// once, unless a Hasher and a Clock are set).
	members member.Config
	// noCache turns the response cache off (--cache-size 0).
	noCache bool
	// trustedProxies is --trusted-proxies (default none).
	trustedProxies []netip.Prefix
	// wrap, when set, wraps the server's handler (a test sees requests
	// arrive).
	wrap func(http.Handler) http.Handler
}

// withWorkers runs the job workers in the harness.
func withWorkers(o *harnessOptions) { o.workers = true }

func newHarness(t testing.TB, st store.Store, opts ...func(*harnessOptions)) *harness {
	t.Helper()
	o := harnessOptions{env: "development"}
	for _, f := range opts {
		f(&o)
	}
	if o.members.Hasher == nil {
		o.members.Hasher = testArgon2id
	}
	if o.members.Clock == nil {
		o.members.Clock = noSleeps{}
	}
	box, err := seal.New(bytes.Repeat([]byte{42}, seal.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: time.Now().UTC().Truncate(time.Microsecond)}
	logs := &syncBuffer{}
	h := &harness{t: t, env: o.env, store: st, clock: clk, logs: logs}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if o.discardLogs {
		logger = slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	srv := httptest.NewUnstartedServer(nil)
	if err := queue.Migrate(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	// The configuration of a plain start, changed below where tests need it.
	masterKey := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{42}, seal.KeySize))
	getenv := func(name string) string {
		if name == "HITCH_MASTER_KEY" {
			return masterKey
		}
		return ""
	}
	cfg, err := config.NewFlagSet("hitch", getenv).Parse([]string{"--env", o.env}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.PublicURL = "http://" + srv.Listener.Addr().String()
	cfg.RateLimit, cfg.RateBurst = o.rateLimit, max(o.rateBurst, 1)
	cfg.TrustedProxies = o.trustedProxies
	cfg.SecretGrace = time.Hour
	if o.noCache {
		cfg.CacheMiB = 0
	}
	// Fast retries; the production timeout: a shorter one let an attempt
	// time out on a loaded CI machine after the receiver had the request,
	// and the retry was counted as a second delivery.
	cfg.WebhookRetrySchedule = []time.Duration{0, 50 * time.Millisecond, 100 * time.Millisecond}
	if o.retrySchedule != nil {
		cfg.WebhookRetrySchedule = o.retrySchedule
	}
	switch {
	case o.cardWindow != 0:
		cfg.CardWindow = o.cardWindow
	case o.workers:
		cfg.CardWindow = time.Hour
	}
	a, err := app.New(cfg, app.Deps{Store: st, Box: box, Log: logger, Clock: clk.Now, Catalog: o.catalog,
		Members: o.members, JobPollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if o.workers {
		if err := a.StartWorkers(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := a.StopWorkers(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	h.developers, h.webhooks, h.queue, h.transactions = a.Developers, a.Webhooks, a.Queue, a.Transactions
	h.connectors, h.cards, h.detections, h.keys = a.Connectors, a.Cards, a.Detections, a.Keys
	h.links, h.audit, h.members, h.server = a.Links, a.Audit, a.Members, a.API
	h.memberConfig = o.members
	h.catalog = a.Catalog
	h.work = a.Work
	// Served as hitch serves it: its limits, and net/http's own refusals in
	// the wire error body.
	srv.Config = h.server.HTTPServer()
	if o.wrap != nil {
		srv.Config.Handler = o.wrap(srv.Config.Handler)
	}
	srv.Listener = h.server.Listener(srv.Listener)
	srv.Start()
	t.Cleanup(srv.Close)
	h.url = srv.URL
	h.http = &http.Client{Transport: apitest.Load(t).Transport(t, http.DefaultTransport), Timeout: 30 * time.Second}
	creds := h.newDeveloper(o.env)
	h.clientID, h.secret = creds.ClientID, creds.Secret
	h.api = h.clientFor(creds)
	return h
}

func production(o *harnessOptions) { o.env = "production" }

// newDeveloper creates another developer account on the same deployment.
func (h *harness) newDeveloper(env string) *developer.Credentials {
	h.t.Helper()
	creds, err := h.developers.Create(context.Background(), developer.CreateParams{Name: "Test " + env, Environment: env})
	if err != nil {
		h.t.Fatal(err)
	}
	return creds
}

func (h *harness) clientFor(creds *developer.Credentials) *client.Client {
	return client.New(h.url, creds.ClientID, creds.Secret, client.WithHTTPClient(h.http))
}

// response is a raw answer of the API.
type response struct {
	status int
	header http.Header
	body   []byte
}

// errorBody decodes the wire error body and checks its shape.
func (r *response) errorBody(t *testing.T) client.Error {
	t.Helper()
	var e client.Error
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatalf("error body %q: %v", r.body, err)
	}
	if e.Type == "" || e.Code == "" || e.Message == "" || e.RequestID == "" {
		t.Fatalf("incomplete error body %s", r.body)
	}
	if e.RequestID != r.header.Get("X-Request-Id") {
		t.Fatalf("request_id %q differs from X-Request-Id %q", e.RequestID, r.header.Get("X-Request-Id"))
	}
	return e
}

// do sends a raw request with the harness developer's credentials unless
// the header says otherwise. body is sent as is when it is a string, else
// encoded as JSON.
func (h *harness) do(method, path string, body any, header http.Header) *response {
	h.t.Helper()
	var reader io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		reader = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		reader = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, h.url+path, reader)
	if err != nil {
		h.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.SetBasicAuth(h.clientID, h.secret)
	for k, vs := range header {
		req.Header[k] = vs
	}
	if _, ok := header["Authorization"]; ok && header.Get("Authorization") == "" {
		req.Header.Del("Authorization")
	}
	resp, err := h.http.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: data}
}

// expectError asserts an API error with status, type and code, and returns
// it.
func expectError(t *testing.T, err error, status int, typ, code string) *client.Error {
	t.Helper()
	apiErr, ok := err.(*client.Error)
	if !ok {
		t.Fatalf("got %v (%T), want API error %d %s/%s", err, err, status, typ, code)
	}
	if apiErr.StatusCode != status || apiErr.Type != typ || apiErr.Code != code {
		t.Fatalf("got %d %s/%s %q, want %d %s/%s", apiErr.StatusCode, apiErr.Type, apiErr.Code, apiErr.Message, status, typ, code)
	}
	return apiErr
}

// events lists the developer's recorded events, newest first.
func (h *harness) events(clientID string) []*store.Event {
	h.t.Helper()
	evs, err := h.store.EventList(context.Background(), &store.EventListParams{ClientID: clientID, Limit: 1000})
	if err != nil {
		h.t.Fatal(err)
	}
	return evs
}

func ptr[T any](v T) *T { return &v }

// each runs fn on every store backend with a fresh harness.
func each(t *testing.T, fn func(t *testing.T, h *harness), opts ...func(*harnessOptions)) {
	t.Helper()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		fn(t, newHarness(t, st, opts...))
	})
}
