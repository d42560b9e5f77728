package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hitchdev/hitch/internal/card"
	"github.com/hitchdev/hitch/internal/config"
	"github.com/hitchdev/hitch/internal/developer"
	"github.com/hitchdev/hitch/internal/link"
	"github.com/hitchdev/hitch/internal/session"
)

// Demo creates the sessions of the development demo page server-side, as a
// developer's backend would: the page receives a session and the client_id
// (both meant for browsers), never a secret.
type Demo struct {
	Sessions   *session.Service
	Developers *developer.Service
	// Cards takes the test card the demo's server posts for a card
	// switch, as a developer's server posts the user's card; nil leaves
	// POST /demo/card unrouted and the page without the choice of a card.
	Cards *card.Service
	// CardWindow is how long a card switch waits for its card
	// (HITCH_CARD_WINDOW), which the page tells.
	CardWindow time.Duration
	// ClientID names the developer whose sessions the demo creates
	// (HITCH_DEV_CLIENT_ID); empty picks the first development developer.
	ClientID string
}

// errNoDemoClient: there is no development developer to create sessions for.
var errNoDemoClient = errors.New("web: no development client")

// client returns the developer the demo acts for.
func (d *Demo) client(ctx context.Context) (string, error) {
	if d.ClientID != "" {
		return d.ClientID, nil
	}
	clients, err := d.Developers.List(ctx)
	if err != nil {
		return "", err
	}
	for _, c := range clients { // oldest first
		if c.Environment == config.Development {
			return c.ID, nil
		}
	}
	return "", errNoDemoClient
}

// testLogin is one development test login, as the pages list them.
type testLogin struct {
	Username, Password, Outcome string
}

var testLogins = []testLogin{
	{link.TestUser, link.TestPassword, "succeeds"},
	{link.TestUser, link.TestPasswordOTP, "asks for a code: " + link.TestOTP + " is right, 0000 is not"},
	{link.TestUser, link.TestPasswordQuestion, "asks a security question: " + link.TestAnswer + " is right"},
	{link.TestUserTransactions, link.TestPassword, "succeeds; a transaction_link session also gets transactions"},
	{link.TestUserTransactions, link.TestPasswordUpdates, "the same, and 3 of them are updated"},
	{link.TestUserVault, link.TestPassword, "succeeds (for the vault)"},
	{"any", link.ReasonCredentials, "fails: wrong credentials (the user may retry)"},
	{"any", link.ReasonAccount, "fails: a problem with the account at the merchant"},
	{"any", link.ReasonTooManyAttempts, "fails: too many attempts"},
}

// demoCard is a test card the demo may post for a card switch.
type demoCard struct {
	Number, Outcome string
}

// demoCards are the demo's choices: the development simulator decides the
// outcome from the number (card.TestCards).
var demoCards = []demoCard{
	{"4242424242424242", "CARD_UPDATED"},
	{"4000000000000028", "CARD_FAILED, reason " + card.TestCards["4000000000000028"]},
}

type demoData struct {
	Products   []string
	Merchants  []merchantItem
	TestLogins []testLogin
	Cards      []demoCard
	// CardWindow is how long a card switch waits for its card, e.g. "15s".
	CardWindow string
}

// demo serves the demo page: it creates a session and opens the SDK.
func (h *Handler) demo(w http.ResponseWriter, _ *http.Request) {
	data := demoData{Products: session.Types, Merchants: h.linkData().Merchants, TestLogins: testLogins}
	if h.cfg.Demo.Cards != nil {
		data.Cards, data.CardWindow = demoCards, h.cfg.Demo.CardWindow.String()
	}
	page, err := h.render("demo.html", data)
	if err != nil {
		h.cfg.Logger.Error("demo page", "error", err)
		http.Error(w, "The demo page could not be rendered.", http.StatusInternalServerError)
		return
	}
	pageHeaders(w, cspDemo)
	w.Header().Set("X-Frame-Options", "DENY")
	_, _ = w.Write(page)
}

type demoSessionRequest struct {
	Type           string `json:"type"`
	ExternalUserID string `json:"external_user_id"`
	MerchantID     *int64 `json:"merchant_id"`
	CardID         string `json:"card_id"`
}

type demoSessionResponse struct {
	Session        string    `json:"session"`
	SessionID      string    `json:"session_id"`
	ClientID       string    `json:"client_id"`
	Environment    string    `json:"environment"`
	ExternalUserID string    `json:"external_user_id"`
	ExpiresAt      time.Time `json:"expires_at"`
}

var demoUserID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

const (
	defaultDemoUser = "demo-user"
	defaultDemoCard = "demo-card"
)

// demoSession creates a session for the demo page. Only the page itself may
// call it: a JSON body (which a form cannot send) from the same origin.
func (h *Handler) demoSession(w http.ResponseWriter, r *http.Request) {
	var req demoSessionRequest
	ok, decoded := demoJSON(w, r, "create demo sessions", &req)
	if !ok {
		return
	}
	if !decoded {
		writeError(w, http.StatusBadRequest, "INVALID_REQUEST", "INVALID_FIELD", "The body must be a JSON object with type, external_user_id, merchant_id and card_id.")
		return
	}
	if req.Type == "" {
		req.Type = session.TypeTransactionLink
	}
	if !slices.Contains(session.Types, req.Type) {
		writeError(w, http.StatusBadRequest, "INVALID_INPUT", "PRODUCT_NOT_VALID", "The selected type is invalid.")
		return
	}
	if req.ExternalUserID == "" {
		req.ExternalUserID = defaultDemoUser
	}
	if !demoUserID.MatchString(req.ExternalUserID) {
		writeError(w, http.StatusBadRequest, "INVALID_REQUEST", "INVALID_FIELD", "The external_user_id field must be 1 to 64 letters, digits or ._:-")
		return
	}
	// The metadata shows up in the webhooks: the demo's mark on them.
	p := session.CreateParams{Type: req.Type, ExternalUserID: req.ExternalUserID, MerchantID: req.MerchantID,
		Metadata: map[string]string{"source": "demo"}}
	switch {
	case req.Type == session.TypeCardSwitcher && req.CardID == "":
		p.CardID = ptr(defaultDemoCard)
	case req.CardID != "" && (req.Type == session.TypeCardSwitcher || req.Type == session.TypeVault):
		if !demoUserID.MatchString(req.CardID) {
			writeError(w, http.StatusBadRequest, "INVALID_REQUEST", "INVALID_FIELD", "The card_id field must be 1 to 64 letters, digits or ._:-")
			return
		}
		p.CardID = ptr(req.CardID)
	}
	clientID, err := h.cfg.Demo.client(r.Context())
	if errors.Is(err, errNoDemoClient) {
		writeError(w, http.StatusServiceUnavailable, "API_ERROR", "SERVICE_UNAVAILABLE",
			"There is no development client yet: restart `hitch serve` in development, or run `hitch clients create`.")
		return
	}
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	p.ClientID = clientID
	issued, err := h.cfg.Demo.Sessions.Create(r.Context(), p)
	switch {
	case errors.Is(err, session.ErrUnknownMerchant):
		writeError(w, http.StatusBadRequest, "INVALID_REQUEST", "INVALID_FIELD", "The selected merchant_id is invalid.")
		return
	case errors.Is(err, session.ErrMerchantUnsupported):
		writeError(w, http.StatusBadRequest, "MERCHANT_ERROR", "MERCHANT_UNAVAILABLE", "The merchant does not support this session type.")
		return
	case err != nil:
		h.serverError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, demoSessionResponse{Session: issued.Value, SessionID: issued.ID, ClientID: clientID,
		Environment: h.cfg.Environment, ExternalUserID: req.ExternalUserID, ExpiresAt: issued.ExpiresAt})
}

type demoCardRequest struct {
	TaskID int64  `json:"task_id"`
	Number string `json:"number"`
}

// demoCard posts a test card for a card switch task of the demo's
// developer, as the developer's server posts the user's card with
// POST /card: CARD_UPDATED or CARD_FAILED follows. Only the demo page may
// call it, as demoSession, and only with one of demoCards.
func (h *Handler) demoCard(w http.ResponseWriter, r *http.Request) {
	var req demoCardRequest
	ok, decoded := demoJSON(w, r, "post demo cards", &req)
	if !ok {
		return
	}
	if !decoded || req.TaskID <= 0 ||
		!slices.ContainsFunc(demoCards, func(c demoCard) bool { return c.Number == req.Number }) {
		writeError(w, http.StatusBadRequest, "INVALID_REQUEST", "INVALID_FIELD", "The body must be a JSON object with a task_id and the number of one of the demo's cards.")
		return
	}
	clientID, err := h.cfg.Demo.client(r.Context())
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	now := time.Now().UTC()
	payload := &card.Payload{
		User: card.PayloadUser{Name: card.PayloadName{FirstName: "Ada", LastName: "Lovelace"},
			Address: card.PayloadAddress{Street: "12 Analytical Way", City: "New York", Region: "US-NY", PostalCode: "10001", Country: "US"}},
		Card: card.PayloadCard{Number: req.Number, Expiration: now.AddDate(3, 0, 0).Format("01/2006"), CVV: "123"},
	}
	if ferr := payload.Validate(now); ferr != nil {
		h.serverError(w, r, ferr)
		return
	}
	task, err := h.cfg.Demo.Cards.Submit(r.Context(), card.SubmitParams{ClientID: clientID, TaskID: &req.TaskID, Payload: payload})
	switch {
	case errors.Is(err, card.ErrTaskNotFound):
		writeError(w, http.StatusNotFound, "INVALID_REQUEST", "TASK_NOT_FOUND", "No task has this task_id.")
	case errors.Is(err, card.ErrTaskNotAwaitingCard):
		writeError(w, http.StatusConflict, "INVALID_REQUEST", "TASK_NOT_AWAITING_CARD", "The task is not waiting for card data.")
	case errors.Is(err, card.ErrCardWindowClosed):
		writeError(w, http.StatusConflict, "INVALID_REQUEST", "CARD_WINDOW_CLOSED", "The task's window for card data has closed.")
	case err != nil:
		h.serverError(w, r, err)
	default:
		writeJSON(w, http.StatusOK, map[string]any{"message": "Success", "task_id": task.ID})
	}
}

// demoHost serves fn only for requests addressed to a loopback name
// (127.0.0.1, ::1, localhost, any port) or to the public URL's host. The
// Host header is the browser's, so this is what defeats DNS rebinding: a
// page of evil.example whose name comes to resolve to 127.0.0.1 sends
// "Host: evil.example", and sameOrigin alone (which compares Origin with
// that Host) would let it create sessions. Others get the 404 of an
// unrouted path.
func (h *Handler) demoHost(fn http.HandlerFunc) http.HandlerFunc {
	public := ""
	if u, err := url.Parse(h.cfg.PublicURL); err == nil {
		public = normalHost(u.Hostname())
	}
	return func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if name, _, err := net.SplitHostPort(host); err == nil {
			host = name
		}
		host = normalHost(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
		if host == "" || (!loopbackHost(host) && host != public) {
			writeError(w, http.StatusNotFound, "INVALID_REQUEST", "NOT_FOUND", "No route matches "+r.Method+" "+r.URL.Path+".")
			return
		}
		fn(w, r)
	}
}

// normalHost lower-cases a host name and drops a trailing dot.
func normalHost(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }

// loopbackHost reports whether a (normalized) host name is one that only
// this machine answers to: localhost or a loopback address.
func loopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// sameOrigin reports whether a request comes from a page of this origin,
// by the Fetch metadata or, from older browsers, the Origin header. A
// request with neither (curl) is allowed: it is no cross-site forgery.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin"
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		return origin == "http://"+r.Host || origin == "https://"+r.Host
	}
	return true
}

func (h *Handler) serverError(w http.ResponseWriter, r *http.Request, err error) {
	id := w.Header().Get("X-Request-Id")
	h.cfg.Logger.ErrorContext(r.Context(), "demo session", "request_id", id, "error", err)
	writeError(w, http.StatusInternalServerError, "API_ERROR", "INTERNAL_SERVER_ERROR",
		"An internal error occurred. Quote the request_id when contacting support.")
}

// writeError writes the API's error body; the request id is the one the
// API's middleware put in X-Request-Id.
func writeError(w http.ResponseWriter, status int, typ, code, message string) {
	writeJSON(w, status, map[string]string{"error_type": typ, "error_code": code, "error_message": message,
		"request_id": w.Header().Get("X-Request-Id")})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client went away
}

func ptr[T any](v T) *T { return &v }

// demoJSON reads the JSON body of a call only the demo page may make: a
// JSON body (which a form cannot send) from the same origin. ok is false
// when it answered the refusal itself; decoded, whether the body was a
// JSON object of v's fields.
func demoJSON(w http.ResponseWriter, r *http.Request, what string, v any) (ok, decoded bool) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, "INVALID_REQUEST", "UNSUPPORTED_MEDIA_TYPE", "Send JSON, with Content-Type: application/json.")
		return false, false
	}
	if !sameOrigin(r) {
		writeError(w, http.StatusForbidden, "INVALID_REQUEST", "NO_ACCESS", "Only the demo page may "+what+".")
		return false, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 4<<10))
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	return true, err == nil && dec.Decode(v) == nil
}
