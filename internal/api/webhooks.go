package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hitchdev/hitch/internal/audit"
	"github.com/hitchdev/hitch/internal/event"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/webhook"
)

type endpointJSON struct {
	ID     string   `json:"id"`
	URL    string   `json:"url"`
	Events []string `json:"events"`
	Status string   `json:"status"`
	// DisabledReason says why a disabled endpoint was disabled.
	DisabledReason *string `json:"disabled_reason"`
	// SecretRotationEndsAt is when the previous secret stops signing.
	SecretRotationEndsAt *time.Time `json:"secret_rotation_ends_at"`
	CreatedAt            time.Time  `json:"created_at"`
	// Secret is shown when the endpoint is created or its secret rotated.
	Secret string `json:"secret,omitempty"`
}

func (s *Server) renderEndpoint(ep *webhook.Endpoint, secret string) endpointJSON {
	return endpointJSON{ID: ep.ID, URL: ep.URL, Events: ep.EventTypes, Status: ep.Status, DisabledReason: ep.DisabledReason,
		SecretRotationEndsAt: ep.RotationEndsAt(s.Now().UTC()), CreatedAt: ep.CreatedAt, Secret: secret}
}

type createEndpointRequest struct {
	URL    *string  `json:"url"`
	Events []string `json:"events"`
}

func (s *Server) createEndpoint(w http.ResponseWriter, r *http.Request) error {
	var req createEndpointRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.URL == nil {
		return errRequired("url")
	}
	p := webhook.CreateParams{ClientID: clientFrom(r.Context()).ID, URL: *req.URL, EventTypes: req.Events}
	ep, secret, err := s.Webhooks.Create(r.Context(), p, webhook.RecordedAdd(r.Context(), s.Audit, s.by(r), p))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.renderEndpoint(ep, secret))
	return nil
}

func (s *Server) listEndpoints(w http.ResponseWriter, r *http.Request) error {
	eps, err := s.Webhooks.List(r.Context(), clientFrom(r.Context()).ID)
	if err != nil {
		return err
	}
	out := make([]endpointJSON, len(eps))
	for i, ep := range eps {
		out[i] = s.renderEndpoint(ep, "")
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": out})
	return nil
}

func (s *Server) deleteEndpoint(w http.ResponseWriter, r *http.Request) error {
	clientID, id := clientFrom(r.Context()).ID, r.PathValue("id")
	if err := s.Webhooks.Delete(r.Context(), clientID, id,
		webhook.Recorded(r.Context(), s.Audit, s.by(r), audit.ActionWebhookRemove, clientID, id)); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, success)
	return nil
}

type updateEndpointRequest struct {
	URL    *string   `json:"url"`
	Events *[]string `json:"events"`
}

// updateEndpoint changes an endpoint's URL or event filter; a field left
// out (or null) stays as it is.
func (s *Server) updateEndpoint(w http.ResponseWriter, r *http.Request) error {
	var req updateEndpointRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	clientID, id := clientFrom(r.Context()).ID, r.PathValue("id")
	ep, err := s.Webhooks.Update(r.Context(), webhook.UpdateParams{ClientID: clientID, ID: id, URL: req.URL, EventTypes: req.Events},
		webhook.Recorded(r.Context(), s.Audit, s.by(r), audit.ActionWebhookEdit, clientID, id))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.renderEndpoint(ep, ""))
	return nil
}

func (s *Server) rotateEndpointSecret(w http.ResponseWriter, r *http.Request) error {
	clientID, id := clientFrom(r.Context()).ID, r.PathValue("id")
	ep, secret, err := s.Webhooks.RotateSecret(r.Context(), clientID, id,
		webhook.Recorded(r.Context(), s.Audit, s.by(r), audit.ActionWebhookUpdate, clientID, id))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.renderEndpoint(ep, secret))
	return nil
}

type eventJSON struct {
	ID             string          `json:"id"`
	Type           string          `json:"type"`
	ExternalUserID *string         `json:"external_user_id"`
	CreatedAt      time.Time       `json:"created_at"`
	Payload        json.RawMessage `json:"payload"`
}

const maxEventPage = 100

func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	clientID := clientFrom(r.Context()).ID
	p := &store.EventListParams{ClientID: clientID, Type: q.Get("type"), ExternalUserID: q.Get("external_user_id"), Limit: maxEventPage}
	if p.Type != "" {
		if err := checkEventType("type", p.Type); err != nil {
			return err
		}
	}
	var err error
	if p.Since, err = queryTime(q, "since"); err != nil {
		return err
	}
	if p.Until, err = queryTime(q, "until"); err != nil {
		return err
	}
	if n, ok, err := queryInt(q, "limit"); err != nil {
		return err
	} else if ok {
		if n > maxEventPage {
			return errInvalidField("The limit field must be between 1 and %d.", maxEventPage)
		}
		p.Limit = int(n)
	}
	if cursor := q.Get("cursor"); cursor != "" {
		if _, err := uuid.Parse(cursor); err != nil {
			return errInvalidCursor()
		}
		if _, err := s.Store.EventGet(r.Context(), clientID, cursor); err != nil {
			return errInvalidCursor()
		}
		p.Before = cursor
	}
	// One more than the page tells whether another page follows.
	p.Limit++
	evs, err := s.Store.EventList(r.Context(), p)
	if err != nil {
		return err
	}
	var next *string
	if len(evs) == p.Limit {
		evs = evs[:len(evs)-1]
		next = &evs[len(evs)-1].ID
	}
	out := make([]eventJSON, len(evs))
	for i, ev := range evs {
		out[i] = eventJSON{ID: ev.ID, Type: ev.Type, ExternalUserID: ev.ExternalUserID, CreatedAt: ev.CreatedAt, Payload: ev.Payload}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": out, "next_cursor": next})
	return nil
}

// checkEventID refuses what cannot be an event id before it reaches a
// query (PostgreSQL keeps event ids as uuid).
func checkEventID(id string) error {
	if _, err := uuid.Parse(id); err != nil {
		return webhook.ErrEventNotFound
	}
	return nil
}

func errInvalidCursor() *Error {
	return &Error{Status: http.StatusBadRequest, Type: TypeInvalidRequest, Code: CodeInvalidCursorFormat,
		Message: "The cursor is not one this listing returned."}
}

func checkEventType(field, t string) error {
	if slices.Contains(event.Types, t) {
		return nil
	}
	return errInvalidField("The %s field must be one of %s.", field, strings.Join(event.Types, ", "))
}

// queryTime reads an optional RFC 3339 time parameter.
func queryTime(q url.Values, name string) (*time.Time, error) {
	raw := q.Get(name)
	if raw == "" {
		return nil, nil
	}
	t, err := parseTime(name, raw)
	return &t, err
}

// parseTime reads the RFC 3339 time of field.
func parseTime(field, raw string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, raw)
	if err != nil {
		return time.Time{}, errInvalidField("The %s field must be an RFC 3339 time such as 2026-01-02T15:04:05Z.", field)
	}
	return t, nil
}

type attemptJSON struct {
	EndpointID   string    `json:"endpoint_id"`
	Attempt      int       `json:"attempt"`
	StartedAt    time.Time `json:"started_at"`
	DurationMS   float64   `json:"duration_ms"`
	StatusCode   *int      `json:"status_code"`
	ResponseBody string    `json:"response_body"`
	Error        string    `json:"error"`
	Outcome      string    `json:"outcome"`
}

func (s *Server) listAttempts(w http.ResponseWriter, r *http.Request) error {
	clientID, id := clientFrom(r.Context()).ID, r.PathValue("id")
	if err := checkEventID(id); err != nil {
		return err
	}
	if _, err := s.Store.EventGet(r.Context(), clientID, id); errors.Is(err, store.ErrNotFound) {
		return webhook.ErrEventNotFound
	} else if err != nil {
		return err
	}
	attempts, err := s.Store.WebhookAttemptList(r.Context(), clientID, id)
	if err != nil {
		return err
	}
	out := make([]attemptJSON, len(attempts))
	for i, a := range attempts {
		out[i] = attemptJSON{EndpointID: a.EndpointID, Attempt: a.Attempt, StartedAt: a.StartedAt,
			DurationMS: float64(a.Duration.Microseconds()) / 1000, StatusCode: a.StatusCode,
			ResponseBody: a.ResponseBody, Error: a.Error, Outcome: a.Outcome}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": out})
	return nil
}

type deliveriesJSON struct {
	Deliveries int `json:"deliveries"`
}

func (s *Server) resendEvent(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		EndpointID *string `json:"endpoint_id"`
	}
	if err := decodeOptional(r, &req); err != nil {
		return err
	}
	if err := checkEventID(r.PathValue("id")); err != nil {
		return err
	}
	endpointID := ""
	if req.EndpointID != nil {
		endpointID = *req.EndpointID
	}
	n, err := s.Webhooks.Resend(r.Context(), clientFrom(r.Context()).ID, r.PathValue("id"), endpointID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, deliveriesJSON{n})
	return nil
}

type replayRequest struct {
	EndpointID *string   `json:"endpoint_id"`
	Since      *string   `json:"since"`
	Until      *string   `json:"until"`
	Types      *[]string `json:"types"`
}

func (s *Server) replayEvents(w http.ResponseWriter, r *http.Request) error {
	var req replayRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.EndpointID == nil {
		return errRequired("endpoint_id")
	}
	if req.Since == nil {
		return errRequired("since")
	}
	p := webhook.ReplayParams{ClientID: clientFrom(r.Context()).ID, EndpointID: *req.EndpointID, Until: s.Now().UTC()}
	var err error
	if p.Since, err = parseTime("since", *req.Since); err != nil {
		return err
	}
	if req.Until != nil {
		if p.Until, err = parseTime("until", *req.Until); err != nil {
			return err
		}
	}
	if req.Types != nil {
		p.Types = *req.Types
	}
	n, err := s.Webhooks.Replay(r.Context(), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, deliveriesJSON{n})
	return nil
}

// decodeOptional decodes a body that may be left out altogether.
func decodeOptional(r *http.Request, dst any) error {
	if r.ContentLength == 0 {
		return nil
	}
	return decode(r, dst)
}

// devTestWebhook records a TEST event, delivered to every enabled endpoint.
func (s *Server) devTestWebhook(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Message *string `json:"message"`
	}
	if err := decodeOptional(r, &req); err != nil {
		return err
	}
	msg := "This is a test event from Hitch."
	if req.Message != nil {
		if utf8.RuneCountInString(*req.Message) > 500 || !validText(*req.Message) {
			return errInvalidField("The message field must be at most 500 characters of text.")
		}
		msg = *req.Message
	}
	ev, err := s.Webhooks.Test(r.Context(), clientFrom(r.Context()).ID, msg)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"event_id": ev.ID})
	return nil
}

type signRequest struct {
	EndpointID *string         `json:"endpoint_id"`
	Payload    json.RawMessage `json:"payload"`
}

// devSignWebhook returns the exact body and headers a delivery of payload to
// an endpoint would carry, so developers can build signed fixtures.
func (s *Server) devSignWebhook(w http.ResponseWriter, r *http.Request) error {
	var req signRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.EndpointID == nil {
		return errRequired("endpoint_id")
	}
	if len(req.Payload) == 0 || req.Payload[0] != '{' {
		return errInvalidField("The payload field must be a JSON object.")
	}
	body, h, err := s.Webhooks.Sign(r.Context(), clientFrom(r.Context()).ID, *req.EndpointID, req.Payload)
	if err != nil {
		return err
	}
	headers := map[string]string{}
	for k := range h {
		headers[k] = h.Get(k)
	}
	writeJSON(w, http.StatusOK, map[string]any{"body": string(body), "headers": headers})
	return nil
}

// metrics serves the Prometheus metrics.
func (s *Server) metricsHandler() http.Handler {
	return promhttp.HandlerFor(s.Metrics, promhttp.HandlerOpts{})
}
