// Package api is Hitch's HTTP API: the route table, thin handlers that
// decode, validate, call the domain and render, and the middleware around
// them (request ids, access logs, authentication, rate limits).
package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hitchdev/hitch/internal/account"
	"github.com/hitchdev/hitch/internal/audit"
	"github.com/hitchdev/hitch/internal/card"
	"github.com/hitchdev/hitch/internal/clientip"
	"github.com/hitchdev/hitch/internal/connector"
	"github.com/hitchdev/hitch/internal/detection"
	"github.com/hitchdev/hitch/internal/developer"
	"github.com/hitchdev/hitch/internal/link"
	"github.com/hitchdev/hitch/internal/merchant"
	"github.com/hitchdev/hitch/internal/ratelimit"
	"github.com/hitchdev/hitch/internal/reqlog"
	"github.com/hitchdev/hitch/internal/respcache"
	"github.com/hitchdev/hitch/internal/session"
	"github.com/hitchdev/hitch/internal/simulate"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/transaction"
	"github.com/hitchdev/hitch/internal/webhook"
)

// Deps are what the API is built from, wired once in main.
type Deps struct {
	Env        string // development or production
	Store      store.Store
	Developers *developer.Service
	Sessions   *session.Service
	Accounts   *account.Service
	Keys       *card.Keys
	// Detections finds and answers for users' merchant accounts.
	Detections *detection.Service
	// Cards runs card switch and vault tasks.
	Cards    *card.Service
	Webhooks *webhook.Service
	// Transactions serves transactions and subscriptions.
	Transactions *transaction.Service
	// Simulator generates transactions in development.
	Simulator *simulate.Connector
	// Connectors authenticates the internal ingestion API.
	Connectors *connector.Service
	// Work routes logins and refreshes to connectors.
	Work *connector.Work
	// Links links accounts after logins, and runs the hosted flow's logins.
	Links *link.Service
	// Audit records the management API's changes (docs/audit.md).
	Audit *audit.Log
	// RequestLog records the developer-authenticated requests (nil: off).
	RequestLog *reqlog.Writer
	// Pages, when set, serves the web pages (the hosted link flow, the web
	// SDK, the demo) beside the API: see routes.
	Pages Pages
	// Metrics is served at /metrics.
	Metrics *prometheus.Registry
	Catalog *merchant.Catalog
	Logger  *slog.Logger
	// RateLimit and RateBurst limit requests per client (0 turns it off).
	RateLimit float64
	RateBurst int
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client of the per-IP limits (--trusted-proxies). Default none: the
	// client is the connection's peer.
	TrustedProxies []netip.Prefix
	// CacheBytes bounds the memory of rendered account listings and sync
	// pages kept to be served again while their data has not changed
	// (internal/respcache): 0 is DefaultCacheBytes, negative turns it off.
	CacheBytes int64
	// OpenAPI is the contract document served at /openapi.yaml.
	OpenAPI []byte
	Now     func() time.Time
}

// Server is the API's http.Handler.
type Server struct {
	Deps
	mux      *http.ServeMux
	cache    *respcache.Cache // nil when off
	patterns []string
	limiter  *ratelimit.Limiter
	// authFailures throttles failed authentications per client IP, so that
	// bad credentials cannot make every request a database read.
	authFailures *ratelimit.Limiter
	// flowLimiter and eventsLimiter limit the unauthenticated calls of the
	// hosted flow and of the SDK's analytics per client IP.
	flowLimiter   *ratelimit.Limiter
	eventsLimiter *ratelimit.Limiter
	sdkEvents     *prometheus.CounterVec
	handler       http.Handler
}

// Pages is a handler of web pages with its own route table. Its patterns
// are served by the API's mux (behind the same request ids, access log and
// recovery) but are not API operations: they stay out of Routes, which
// openapi.yaml is held against.
type Pages interface {
	http.Handler
	Routes() []string
}

// New builds the server and its routes.
func New(d Deps) *Server {
	s := &Server{Deps: d, mux: http.NewServeMux()}
	if d.RateLimit > 0 {
		s.limiter = ratelimit.New(d.RateLimit, d.RateBurst, d.Now)
	}
	s.authFailures = ratelimit.New(authFailureRate, authFailureBurst, d.Now)
	s.flowLimiter = ratelimit.New(flowRate, flowBurst, d.Now)
	s.eventsLimiter = ratelimit.New(eventsRate, eventsBurst, d.Now)
	s.sdkEvents = newSDKEventsCounter()
	switch {
	case d.CacheBytes == 0:
		s.cache = respcache.New(DefaultCacheBytes)
	case d.CacheBytes > 0:
		s.cache = respcache.New(d.CacheBytes)
	}
	if d.Metrics != nil {
		if err := d.Metrics.Register(s.sdkEvents); err != nil {
			d.Logger.Warn("the SDK event counter is not registered", "error", err)
		}
	}
	s.routes()
	s.handler = s.withRequestID(s.withAccessLog(s.withVersion(s.withRecover(s.dispatch()))))
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// handlerFunc is the shape of every handler: errors are rendered by one
// adapter.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// public adapts a handler that needs no credentials; every API route is
// served through it, so it first refuses path values and query parameters
// that no store can hold (checkRequestText).
func (s *Server) public(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := checkRequestText(r)
		if err == nil {
			err = h(w, r)
		}
		if err != nil {
			writeError(w, r, s.Logger, err)
		}
	})
}

// Failed authentications allowed per client IP: a burst, then one a second.
const (
	authFailureBurst = 20
	authFailureRate  = 1
)

// authed adapts a handler that needs a developer's Basic credentials of this
// deployment's environment, and applies the client's rate limit.
func (s *Server) authed(h handlerFunc) http.Handler {
	return s.logged(s.public(func(w http.ResponseWriter, r *http.Request) error {
		id, secret, ok := r.BasicAuth()
		if !ok {
			return errInvalidCredentials()
		}
		client, ok := s.Developers.Cached(s.Env, id, secret)
		if !ok {
			ip := s.limitKey(r)
			if ok, retry := s.authFailures.Peek(ip); !ok {
				return errRateLimited(retry)
			}
			var err error
			if client, err = s.Developers.Authenticate(r.Context(), s.Env, id, secret); err != nil {
				if errors.Is(err, developer.ErrInvalidCredentials) {
					s.authFailures.Allow(ip)
				}
				return err
			}
		}
		// The developer is known before the rate limit: a refused request
		// is theirs too (the access log and the request log name them).
		if st := stateFrom(r.Context()); st != nil {
			st.client = client
		} else {
			r = r.WithContext(context.WithValue(r.Context(), requestStateKey{}, &requestState{client: client}))
		}
		if s.limiter != nil {
			if ok, retry := s.limiter.Allow(client.ID); !ok {
				return errRateLimited(retry)
			}
		}
		return h(w, r)
	}))
}

// clientIP is the address the request came from: behind trusted proxies,
// read from X-Forwarded-For.
func (s *Server) clientIP(r *http.Request) string {
	return clientip.FromRequest(r, s.TrustedProxies)
}

// limitKey is the key of the per-IP limits: the client's IPv4 address, or
// its IPv6 /64.
func (s *Server) limitKey(r *http.Request) string {
	return clientip.LimitKey(s.clientIP(r))
}

// by is the actor of an audited change made with the developer's API
// credentials, and where it came from.
func (s *Server) by(r *http.Request) audit.By {
	return audit.API(s.clientIP(r), r.UserAgent())
}

// clientFrom returns the authenticated developer of the request.
func clientFrom(ctx context.Context) *store.Client {
	if st := stateFrom(ctx); st != nil {
		return st.client
	}
	return nil
}

// dispatch serves the route table, answering unmatched paths and methods
// with the wire error body instead of ServeMux's plain text.
func (s *Server) dispatch() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := s.mux.Handler(r)
		if pattern != "" {
			s.mux.ServeHTTP(w, r)
			return
		}
		// Let the mux decide between 404 and 405 (and compute Allow), then
		// replace its body.
		probe := &statusProbe{header: http.Header{}}
		h.ServeHTTP(probe, r)
		switch probe.status {
		case http.StatusMethodNotAllowed:
			w.Header().Set("Allow", probe.header.Get("Allow"))
			writeError(w, r, s.Logger, &Error{Status: http.StatusMethodNotAllowed, Type: TypeInvalidRequest, Code: CodeMethodNotAllowed,
				Message: "Method " + r.Method + " is not allowed on " + r.URL.Path + "; allowed: " + probe.header.Get("Allow") + "."})
		case http.StatusMovedPermanently, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
			s.mux.ServeHTTP(w, r) // path cleaning redirects
		default:
			writeError(w, r, s.Logger, errNotFound("No route matches "+r.Method+" "+r.URL.Path+"."))
		}
	})
}

// statusProbe records what the mux's fallback handler would answer.
type statusProbe struct {
	header http.Header
	status int
}

func (p *statusProbe) Header() http.Header         { return p.header }
func (p *statusProbe) Write(b []byte) (int, error) { return len(b), nil }
func (p *statusProbe) WriteHeader(status int)      { p.status = status }

// bufferPool recycles response buffers: most answers are a few kilobytes.
var bufferPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// writeJSON renders v with status, with a Content-Length.
func writeJSON(w http.ResponseWriter, status int, v any) {
	writeBody(w, status, func(buf *bytes.Buffer) error { return json.NewEncoder(buf).Encode(v) })
}

// marshalJSON is the body writeJSON would write for v.
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	err := json.NewEncoder(&buf).Encode(v)
	return buf.Bytes(), err
}

// writeBody renders the JSON that encode writes into a pooled buffer.
func writeBody(w http.ResponseWriter, status int, encode func(*bytes.Buffer) error) {
	buf := bufferPool.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= 64<<10 { // do not keep rare huge buffers alive
			bufferPool.Put(buf)
		}
	}()
	buf.Reset()
	if err := encode(buf); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"error_type":"API_ERROR","error_code":"INTERNAL_SERVER_ERROR","error_message":"The response could not be encoded."}`)
	}
	writeJSONBytes(w, status, buf.Bytes())
}

// CacheStats returns how many requests were answered from the response
// cache and how many were not (zeros when it is off).
func (s *Server) CacheStats() (hits, misses int64) {
	if s.cache == nil {
		return 0, 0
	}
	return s.cache.Stats()
}

// DefaultCacheBytes is Deps.CacheBytes when it is 0.
const DefaultCacheBytes = 32 << 20

// jsonContentType is the Content-Type header's value for JSON bodies,
// shared by every response (nothing modifies it) so that setting it
// allocates nothing.
var jsonContentType = []string{"application/json"}

// writeRaw writes a rendered JSON body with status 200.
func writeRaw(w http.ResponseWriter, body []byte) { writeJSONBytes(w, http.StatusOK, body) }

// writeJSONBytes writes a rendered JSON body with its headers.
func writeJSONBytes(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// message is the body of endpoints that answer with a success message.
type message struct {
	Message string `json:"message"`
}

var success = message{Message: "Success"}
