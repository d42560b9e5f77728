package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hitchdev/hitch/internal/link"
	"github.com/hitchdev/hitch/internal/session"
)

// The hosted link flow's page calls these with the session value in the
// body: it is the bearer, there are no credentials. Each call looks the
// session up by the value's hash; the value is never logged or stored.

// Calls of the hosted flow allowed per client IP: a burst, then a few a
// second (a person clicks and types; a script guessing session values gets
// nowhere faster).
const (
	flowBurst = 60
	flowRate  = 5
	// SDK analytics per client IP: a flow sends a dozen or so.
	eventsBurst = 120
	eventsRate  = 10
)

// Field limits of the flow's calls.
const (
	maxClientIDLength    = 255
	maxSessionLength     = 128
	maxCredentialLength  = 256
	maxChallengeLength   = 4096
	maxEntryPointLength  = 100
	maxEventsBodyBytes   = 16 << 10
	sdkEventLabelOther   = "OTHER"
	sdkEventTypeIdentify = "identify"
	sdkEventTypeTrack    = "track"
)

// flow adapts a handler of the hosted flow: limited per client IP, and never
// cached (the answers describe a live session).
func (s *Server) flow(h handlerFunc) http.Handler {
	return s.public(func(w http.ResponseWriter, r *http.Request) error {
		if ok, retry := s.flowLimiter.Allow(s.limitKey(r)); !ok {
			return errRateLimited(retry)
		}
		w.Header().Set("Cache-Control", "no-store")
		return h(w, r)
	})
}

// flowLimitedPages are the pages limited per client IP with the flow's
// calls (same bucket): the demo's helpers create a session, or post a
// card, per call.
var flowLimitedPages = map[string]bool{"POST /demo/session": true, "POST /demo/card": true}

// page returns the handler of a page pattern.
func (s *Server) page(pattern string) http.Handler {
	if !flowLimitedPages[pattern] {
		return s.Pages
	}
	return s.flow(func(w http.ResponseWriter, r *http.Request) error {
		s.Pages.ServeHTTP(w, r)
		return nil
	})
}

func errSessionExpired() *Error {
	return &Error{Status: http.StatusBadRequest, Type: TypeSessionError, Code: CodeSessionExpired,
		Message: "The session has expired. Create a new session and open the SDK again."}
}

// openLinkSession validates the session and client_id fields and opens the
// live session they name.
func (s *Server) openLinkSession(r *http.Request, value, clientID *string) (*link.Session, error) {
	if value == nil || *value == "" {
		return nil, errRequired("session")
	}
	if len(*value) > maxSessionLength {
		return nil, &Error{Status: http.StatusNotFound, Type: TypeSessionError, Code: CodeSessionNotFound, Message: "The session was not found."}
	}
	if clientID == nil || *clientID == "" {
		return nil, errRequired("client_id")
	}
	// A client_id no developer could have is as unknown as any other:
	// the SDK reports Client_ID_Not_Found for both.
	if utf8.RuneCountInString(*clientID) > maxClientIDLength || !validText(*clientID) {
		return nil, toWireErr(link.ErrClientNotFound)
	}
	sess, err := s.Links.Open(r.Context(), *clientID, *value)
	if errors.Is(err, session.ErrExpired) {
		return nil, errSessionExpired()
	}
	return sess, err
}

type linkSessionRequest struct {
	Session  *string `json:"session"`
	ClientID *string `json:"client_id"`
}

type linkSessionResponse struct {
	SessionID   string    `json:"session_id"`
	Product     string    `json:"product"`
	Environment string    `json:"environment"`
	MerchantID  *int64    `json:"merchant_id"`
	MerchantIDs []int64   `json:"merchant_ids"`
	ExpiresAt   time.Time `json:"expires_at"`
	// ExpiresIn is in seconds, so that the page need not trust its clock.
	ExpiresIn int64 `json:"expires_in"`
}

// linkSession opens the flow: what the session is for and which merchants
// it may link.
func (s *Server) linkSession(w http.ResponseWriter, r *http.Request) error {
	var req linkSessionRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	sess, err := s.openLinkSession(r, req.Session, req.ClientID)
	if err != nil {
		return err
	}
	merchants, err := s.Links.Merchants(r.Context(), sess, "")
	if err != nil {
		return err
	}
	ids := make([]int64, len(merchants))
	for i, m := range merchants {
		ids[i] = m.ID
	}
	writeJSON(w, http.StatusOK, linkSessionResponse{
		SessionID:   sess.ID,
		Product:     sess.Product,
		Environment: s.Env,
		MerchantID:  sess.MerchantID,
		MerchantIDs: ids,
		ExpiresAt:   sess.ExpiresAt,
		ExpiresIn:   max(0, int64(math.Floor(sess.ExpiresAt.Sub(s.Now()).Seconds()))),
	})
	return nil
}

type linkMerchantsRequest struct {
	Session  *string `json:"session"`
	ClientID *string `json:"client_id"`
	Search   *string `json:"search"`
}

type linkMerchantsResponse struct {
	MerchantIDs []int64 `json:"merchant_ids"`
}

// linkMerchants searches the merchants the session may link.
func (s *Server) linkMerchants(w http.ResponseWriter, r *http.Request) error {
	var req linkMerchantsRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	search := ""
	if req.Search != nil {
		// Characters, as the page's input counts them, not bytes.
		if utf8.RuneCountInString(*req.Search) > maxSearchLength || !validText(*req.Search) {
			return errInvalidField("The search field must be at most %d characters.", maxSearchLength)
		}
		search = *req.Search
	}
	sess, err := s.openLinkSession(r, req.Session, req.ClientID)
	if err != nil {
		return err
	}
	merchants, err := s.Links.Merchants(r.Context(), sess, search)
	if err != nil {
		return err
	}
	out := linkMerchantsResponse{MerchantIDs: make([]int64, len(merchants))}
	for i, m := range merchants {
		out.MerchantIDs[i] = m.ID
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

type linkLoginRequest struct {
	Session    *string `json:"session"`
	ClientID   *string `json:"client_id"`
	MerchantID *int64  `json:"merchant_id"`
	Username   *string `json:"username"`
	Password   *string `json:"password"`
	EntryPoint *string `json:"entry_point"`
	// Metadata is the SDK's (open's metadata option): merged into the
	// session's for the link's events (link.MergeMetadata).
	Metadata map[string]string `json:"metadata"`
}

type linkAnswerRequest struct {
	Session    *string           `json:"session"`
	ClientID   *string           `json:"client_id"`
	Challenge  *string           `json:"challenge"`
	Answer     *string           `json:"answer"`
	EntryPoint *string           `json:"entry_point"`
	Metadata   map[string]string `json:"metadata"`
}

type linkMerchantJSON struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

type linkLoginResponse struct {
	Status       string           `json:"status"`
	Merchant     linkMerchantJSON `json:"merchant"`
	Product      string           `json:"product"`
	Message      string           `json:"message"`
	Reason       string           `json:"reason,omitempty"`
	Retry        bool             `json:"retry,omitempty"`
	Wrong        bool             `json:"wrong,omitempty"`
	Question     string           `json:"question,omitempty"`
	Challenge    string           `json:"challenge,omitempty"`
	AttemptsLeft int              `json:"attempts_left,omitempty"`
	TaskID       *int64           `json:"task_id,omitempty"`
}

// credential validates a username, password or answer: required text,
// never echoed in a message.
func credential(field string, v *string) (string, error) {
	if v == nil || *v == "" {
		return "", errRequired(field)
	}
	if utf8.RuneCountInString(*v) > maxCredentialLength || !validText(*v) {
		return "", errInvalidField("The %s field must be 1 to %d characters of text.", field, maxCredentialLength)
	}
	return *v, nil
}

func validateEntryPoint(v *string) error {
	if v != nil && (utf8.RuneCountInString(*v) > maxEntryPointLength || !validText(*v)) {
		return errInvalidField("The entry_point field must be at most %d characters of text.", maxEntryPointLength)
	}
	return nil
}

// linkLogin logs the user in at a merchant (development: the test logins
// choose the outcome; production: a connector, or "unavailable").
func (s *Server) linkLogin(w http.ResponseWriter, r *http.Request) error {
	var req linkLoginRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	merchantID, err := requireMerchantID(req.MerchantID)
	if err != nil {
		return err
	}
	username, err := credential("username", req.Username)
	if err != nil {
		return err
	}
	password, err := credential("password", req.Password)
	if err != nil {
		return err
	}
	if err := validateEntryPoint(req.EntryPoint); err != nil {
		return err
	}
	if err := validateMetadata(req.Metadata); err != nil {
		return err
	}
	sess, err := s.openLinkSession(r, req.Session, req.ClientID)
	if err != nil {
		return err
	}
	res, err := s.Links.Login(r.Context(), link.LoginParams{Session: sess, MerchantID: merchantID,
		Credentials: link.Credentials{Username: username, Password: password}, EntryPoint: req.EntryPoint, Metadata: req.Metadata})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, loginResponse(sess, res))
	return nil
}

// linkAnswer answers the one-time code or security question of a login.
func (s *Server) linkAnswer(w http.ResponseWriter, r *http.Request) error {
	var req linkAnswerRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.Challenge == nil || *req.Challenge == "" {
		return errRequired("challenge")
	}
	if len(*req.Challenge) > maxChallengeLength {
		return toWireErr(link.ErrChallenge)
	}
	answer, err := credential("answer", req.Answer)
	if err != nil {
		return err
	}
	if err := validateEntryPoint(req.EntryPoint); err != nil {
		return err
	}
	if err := validateMetadata(req.Metadata); err != nil {
		return err
	}
	sess, err := s.openLinkSession(r, req.Session, req.ClientID)
	if err != nil {
		return err
	}
	res, err := s.Links.Answer(r.Context(), link.AnswerParams{Session: sess, Challenge: *req.Challenge,
		Answer: answer, EntryPoint: req.EntryPoint, Metadata: req.Metadata})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, loginResponse(sess, res))
	return nil
}

type linkWaitRequest struct {
	Session    *string           `json:"session"`
	ClientID   *string           `json:"client_id"`
	Challenge  *string           `json:"challenge"`
	EntryPoint *string           `json:"entry_point"`
	Metadata   map[string]string `json:"metadata"`
}

// linkWait waits again for a login a connector is still working on (the
// previous step answered "pending").
func (s *Server) linkWait(w http.ResponseWriter, r *http.Request) error {
	var req linkWaitRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.Challenge == nil || *req.Challenge == "" {
		return errRequired("challenge")
	}
	if len(*req.Challenge) > maxChallengeLength {
		return toWireErr(link.ErrChallenge)
	}
	if err := validateEntryPoint(req.EntryPoint); err != nil {
		return err
	}
	if err := validateMetadata(req.Metadata); err != nil {
		return err
	}
	sess, err := s.openLinkSession(r, req.Session, req.ClientID)
	if err != nil {
		return err
	}
	res, err := s.Links.Continue(r.Context(), link.ContinueParams{Session: sess, Challenge: *req.Challenge,
		EntryPoint: req.EntryPoint, Metadata: req.Metadata})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, loginResponse(sess, res))
	return nil
}

// toWireErr returns the wire error of a domain error.
func toWireErr(err error) *Error {
	wire, _ := toWire(err)
	return wire
}

// loginResponse renders a login step, with a message for the person.
func loginResponse(sess *link.Session, res *link.Result) linkLoginResponse {
	out := linkLoginResponse{
		Status:       string(res.Status),
		Merchant:     linkMerchantJSON{ID: res.Merchant.ID, Name: res.Merchant.Name},
		Product:      sess.Product,
		Reason:       res.Reason,
		Retry:        res.Retry,
		Wrong:        res.Wrong,
		Question:     res.Question,
		Challenge:    res.Challenge,
		AttemptsLeft: res.AttemptsLeft,
	}
	if res.Linked != nil && res.Linked.TaskID != 0 {
		out.TaskID = &res.Linked.TaskID
	}
	name := res.Merchant.Name
	tries := func() string {
		if res.AttemptsLeft == 1 {
			return " You have 1 try left."
		}
		return fmt.Sprintf(" You have %d tries left.", res.AttemptsLeft)
	}
	switch res.Status {
	case link.StatusSuccess:
		out.Message = "Your " + name + " account is connected."
	case link.StatusOTPRequired:
		out.Message = "Enter the verification code " + name + " sent you."
		if res.Wrong {
			out.Message = "That code is not right." + tries()
		}
	case link.StatusQuestionsRequired:
		out.Message = name + " asks you to answer a security question."
		if res.Wrong {
			out.Message = "That answer is not right." + tries()
		}
	case link.StatusFailed:
		switch res.Reason {
		case link.ReasonCredentials:
			out.Message = "The username or password is not right. Check them and try again."
		case link.ReasonAccount:
			out.Message = name + " needs you to sort something out with your account first. Log in on their site, then try again."
		case link.ReasonTooManyAttempts:
			out.Message = "There were too many attempts. Wait a while before you try again."
		default:
			out.Message = "The login did not go through."
		}
	case link.StatusPending:
		out.Message = "Still logging in to " + name + "…"
	case link.StatusUnavailable:
		out.Message = "Logging in to " + name + " is not available on this deployment: in production, logins are completed by a merchant connector, and none is set up."
	}
	return out
}

// sdkEventNames are the event names counted by name; any other counts as
// OTHER, so that clients cannot grow the metric's label set.
var sdkEventNames = map[string]bool{
	"OPEN": true, "LOADING_FINISHED": true, "MERCHANT_CLICKED": true, "LOGIN_STARTED": true,
	"OTP_REQUIRED": true, "SECURITY_QUESTIONS_REQUIRED": true, "AUTHENTICATED": true,
	"REFRESH_SESSION_REQUEST": true, "SUCCESS": true, "ERROR": true, "CLOSE": true, "EXIT": true,
	// knotapi-js's own ("SDK Opened", "SDK Closed").
	"SDK_OPENED": true, "SDK_CLOSED": true,
}

func newSDKEventsCounter() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hitch_sdk_events_total",
		Help: "Analytics posts of the web SDK (POST /events), by type and event name (unknown names count as OTHER).",
	}, []string{"type", "event"})
}

// sdkEventLabel names an SDK event for the counter: "login started" and
// "loginStarted" both count as LOGIN_STARTED.
func sdkEventLabel(raw json.RawMessage) string {
	var name string
	if err := json.Unmarshal(raw, &name); err != nil {
		var obj struct {
			Name  string `json:"name"`
			Event string `json:"event"`
		}
		if json.Unmarshal(raw, &obj) != nil {
			return sdkEventLabelOther
		}
		name = obj.Name
		if name == "" {
			name = obj.Event
		}
	}
	var b strings.Builder
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
		case r >= 'A' && r <= 'Z':
			if i > 0 && name[i-1] >= 'a' && name[i-1] <= 'z' {
				b.WriteByte('_') // camelCase
			}
			b.WriteRune(r)
		case r == ' ' || r == '_' || r == '-':
			b.WriteByte('_')
		default:
			return sdkEventLabelOther
		}
	}
	if label := b.String(); sdkEventNames[label] {
		return label
	}
	return sdkEventLabelOther
}

// sdkEvent accepts the web SDK's analytics, {type, session_id, event}. It
// counts them and keeps nothing: session_id is the session value in the
// public SDK, so it is read past and dropped. Unknown fields are allowed
// (SDK versions add them). Pages of any origin post here: CORS is open,
// without credentials.
func (s *Server) sdkEvent(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	if ok, retry := s.eventsLimiter.Allow(s.limitKey(r)); !ok {
		return errRateLimited(retry)
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return &Error{Status: http.StatusUnsupportedMediaType, Type: TypeInvalidRequest, Code: CodeUnsupportedMediaType,
			Message: "Request bodies must be JSON, sent with Content-Type: application/json."}
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxEventsBodyBytes))
	if err != nil {
		return decodeError(err)
	}
	var req struct {
		Type  string          `json:"type"`
		Event json.RawMessage `json:"event"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return errInvalidField("The request body must be a JSON object.")
	}
	if req.Type != sdkEventTypeIdentify && req.Type != sdkEventTypeTrack {
		return errInvalidField("The type field must be identify or track.")
	}
	s.sdkEvents.WithLabelValues(req.Type, sdkEventLabel(req.Event)).Inc()
	writeJSON(w, http.StatusAccepted, success)
	return nil
}

// sdkEventPreflight answers the CORS preflight of POST /events.
func (s *Server) sdkEventPreflight(w http.ResponseWriter, _ *http.Request) error {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "POST")
	h.Set("Access-Control-Allow-Headers", "Content-Type")
	h.Set("Access-Control-Max-Age", "86400")
	w.WriteHeader(http.StatusNoContent)
	return nil
}
