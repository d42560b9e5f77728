// Package webhook delivers every event to the developer's endpoints: signed
// twice (Standard Webhooks, and the public service's Knot-Signature), at
// least once per event id, durably. Dispatch inserts one River job per
// matching endpoint in the transaction that records the event; the Worker
// sends it, records each attempt, and retries on a published schedule.
package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/tidwall/gjson"

	"github.com/hitchdev/hitch/internal/audit"
	"github.com/hitchdev/hitch/internal/event"
	"github.com/hitchdev/hitch/internal/field"
	"github.com/hitchdev/hitch/internal/netguard"
	"github.com/hitchdev/hitch/internal/queue"
	"github.com/hitchdev/hitch/internal/seal"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/whsig"
)

// DefaultRetrySchedule is the wait before each attempt after the previous
// one failed; the first, 0, is the first attempt, sent on commit. Eight
// attempts over about 27.5 hours.
var DefaultRetrySchedule = []time.Duration{
	0, 5 * time.Second, 5 * time.Minute, 30 * time.Minute,
	2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour,
}

const (
	// DefaultTimeout bounds one delivery attempt.
	DefaultTimeout = 10 * time.Second
	// DefaultRotationGrace is how long a rotated-out secret keeps signing.
	DefaultRotationGrace = 24 * time.Hour
	// DefaultDisableAfter is how long an endpoint may fail every delivery
	// before it is disabled.
	DefaultDisableAfter = 5 * 24 * time.Hour
	// maxEndpoints caps a developer's endpoints per environment.
	maxEndpoints = 16
	// maxURL bounds an endpoint URL.
	maxURL = 2048
)

var (
	// ErrNotFound: the developer has no such endpoint.
	ErrNotFound = errors.New("webhook: endpoint not found")
	// ErrEventNotFound: the developer has no such event.
	ErrEventNotFound = errors.New("webhook: event not found")
	// ErrTooManyEndpoints: the developer has maxEndpoints already.
	ErrTooManyEndpoints = fmt.Errorf("webhook: at most %d endpoints", maxEndpoints)
)

// Config tunes delivery.
type Config struct {
	// Production refuses http URLs and private destinations.
	Production bool
	// AllowPrivate delivers to http and private addresses in production
	// too (--webhook-allow-private).
	AllowPrivate bool
	// RetrySchedule is the wait before each attempt after a failure
	// (DefaultRetrySchedule); its length is the number of attempts, and its
	// first entry stands for the first attempt, which goes out on commit.
	RetrySchedule []time.Duration
	Timeout       time.Duration
	RotationGrace time.Duration
	DisableAfter  time.Duration
	// Workers is how many deliveries run at once: the HTTP client keeps as
	// many idle connections per receiver.
	Workers int
	// Resolver replaces DNS for URL checks (tests).
	Resolver interface {
		LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
	}
}

// Secrets gives the developer's current API secret, which keys the
// compatibility signature.
type Secrets interface {
	CurrentSecret(ctx context.Context, clientID string) (string, error)
}

// Service manages endpoints and deliveries.
type Service struct {
	store   store.Store
	queue   *queue.Queue
	box     *seal.Box
	secrets Secrets
	events  *event.Log
	log     *slog.Logger
	now     func() time.Time
	cfg     Config
	policy  netguard.Policy
	client  *http.Client
	metrics *Metrics
}

// NewService returns a Service. It becomes events' dispatcher.
func NewService(st store.Store, q *queue.Queue, box *seal.Box, secrets Secrets, events *event.Log,
	log *slog.Logger, now func() time.Time, cfg Config) *Service {
	if len(cfg.RetrySchedule) == 0 {
		cfg.RetrySchedule = DefaultRetrySchedule
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.RotationGrace == 0 {
		cfg.RotationGrace = DefaultRotationGrace
	}
	if cfg.DisableAfter == 0 {
		cfg.DisableAfter = DefaultDisableAfter
	}
	policy := netguard.Policy{AllowPrivate: !cfg.Production || cfg.AllowPrivate}
	if cfg.Resolver != nil {
		policy.Resolver = cfg.Resolver
	}
	s := &Service{store: st, queue: q, box: box, secrets: secrets, events: events, log: log, now: now,
		cfg: cfg, policy: policy, client: netguard.NewHTTPClient(policy, cfg.Timeout, cfg.Workers), metrics: newMetrics()}
	events.SetDispatcher(s)
	return s
}

// Endpoint is a webhook endpoint as the developer sees it.
type Endpoint struct {
	*store.WebhookEndpoint
}

// RotationEndsAt is when the previous secret stops signing, nil when there
// is none.
func (e *Endpoint) RotationEndsAt(now time.Time) *time.Time {
	if e.PreviousExpiresAt == nil || !e.PreviousExpiresAt.After(now) {
		return nil
	}
	return e.PreviousExpiresAt
}

func secretPurpose(endpointID string) string { return "webhook_secret:" + endpointID }

// CreateParams describe a new endpoint.
type CreateParams struct {
	ClientID   string
	URL        string
	EventTypes []string
}

// Also is work that commits with an action, in its transaction: the audit
// record of it.
type Also = func(ex store.Executor) error

// Recorded is the Also that writes by's audit record of action on the
// developer's endpoint id, named by its URL as the action's transaction
// sees it (after an edit, the new one). An unknown endpoint is
// store.ErrNotFound, which the action answers as ErrNotFound.
func Recorded(ctx context.Context, log *audit.Log, by audit.By, action, clientID, id string) Also {
	return func(ex store.Executor) error {
		ep, err := ex.WebhookEndpointGet(ctx, clientID, id)
		if err != nil {
			return err
		}
		return log.Record(ctx, ex, by, clientID, action, audit.TargetWebhookEndpoint, &ep.URL)
	}
}

// RecordedAdd is the Also of Create that writes by's webhook.add record,
// named by the endpoint's URL.
func RecordedAdd(ctx context.Context, log *audit.Log, by audit.By, p CreateParams) Also {
	return func(ex store.Executor) error {
		return log.Record(ctx, ex, by, p.ClientID, audit.ActionWebhookAdd, audit.TargetWebhookEndpoint, &p.URL)
	}
}

// runAlso runs each of also in ex.
func runAlso(ex store.Executor, also []Also) error {
	for _, fn := range also {
		if err := fn(ex); err != nil {
			return err
		}
	}
	return nil
}

// Create registers an endpoint and returns it with its signing secret, which
// is shown this once. also runs in the transaction that inserts it.
func (s *Service) Create(ctx context.Context, p CreateParams, also ...Also) (*Endpoint, string, error) {
	if err := s.checkURL(ctx, p.URL); err != nil {
		return nil, "", err
	}
	types, err := checkTypes("events", p.EventTypes)
	if err != nil {
		return nil, "", err
	}
	secret, err := whsig.NewSecret()
	if err != nil {
		return nil, "", err
	}
	now := s.now()
	id := "we_" + uuid.NewString()
	ep := &store.WebhookEndpoint{ID: id, ClientID: p.ClientID, URL: p.URL, EventTypes: types,
		SecretSealed: s.box.Seal([]byte(secret), secretPurpose(id)), Status: store.WebhookEndpointEnabled,
		CreatedAt: now, UpdatedAt: now}
	err = s.store.InTx(ctx, func(ex store.Executor) error {
		existing, err := ex.WebhookEndpointList(ctx, p.ClientID)
		if err != nil {
			return err
		}
		if len(existing) >= maxEndpoints {
			return ErrTooManyEndpoints
		}
		if err := ex.WebhookEndpointInsert(ctx, ep); err != nil {
			return err
		}
		return runAlso(ex, also)
	})
	if err != nil {
		return nil, "", err
	}
	return &Endpoint{ep}, secret, nil
}

func (s *Service) checkURL(ctx context.Context, raw string) error {
	if raw == "" {
		return field.Invalid("url", "is required")
	}
	if len(raw) > maxURL {
		return field.Invalid("url", fmt.Sprintf("must be at most %d characters", maxURL))
	}
	if _, err := s.policy.CheckURL(ctx, raw); err != nil {
		// netguard's messages begin with "url ".
		return field.Invalid("url", strings.TrimPrefix(err.Error(), "url "))
	}
	return nil
}

func checkTypes(name string, types []string) ([]string, error) {
	out := []string{}
	for _, t := range types {
		if !slices.Contains(event.Types, t) {
			return nil, field.Invalid(name, fmt.Sprintf("has an unknown event type %q", t))
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// List returns the developer's endpoints, oldest first.
func (s *Service) List(ctx context.Context, clientID string) ([]*Endpoint, error) {
	eps, err := s.store.WebhookEndpointList(ctx, clientID)
	if err != nil {
		return nil, err
	}
	out := make([]*Endpoint, len(eps))
	for i, ep := range eps {
		out[i] = &Endpoint{ep}
	}
	return out, nil
}

// Get returns one endpoint.
func (s *Service) Get(ctx context.Context, clientID, id string) (*Endpoint, error) {
	ep, err := s.store.WebhookEndpointGet(ctx, clientID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return &Endpoint{ep}, nil
}

// Delete removes an endpoint; its pending deliveries are dropped when they
// come up. also runs in the same transaction, before the removal, so that
// it still sees the endpoint (an audit record names it by its URL).
func (s *Service) Delete(ctx context.Context, clientID, id string, also ...Also) error {
	err := s.store.InTx(ctx, func(ex store.Executor) error {
		if err := runAlso(ex, also); err != nil {
			return err
		}
		return ex.WebhookEndpointDelete(ctx, clientID, id)
	})
	if errors.Is(err, store.ErrNotFound) {
		return ErrNotFound
	}
	return err
}

// RotateSecret gives the endpoint a new secret and returns it. The previous
// one keeps signing beside it for the rotation grace period, so receivers
// can switch without dropping deliveries. also runs in the same
// transaction.
func (s *Service) RotateSecret(ctx context.Context, clientID, id string, also ...Also) (*Endpoint, string, error) {
	secret, err := whsig.NewSecret()
	if err != nil {
		return nil, "", err
	}
	now := s.now()
	var ep *store.WebhookEndpoint
	err = s.store.InTx(ctx, func(ex store.Executor) error {
		var err error
		ep, err = ex.WebhookEndpointRotateSecret(ctx, &store.WebhookEndpointRotateSecretParams{
			ClientID: clientID, ID: id, SecretSealed: s.box.Seal([]byte(secret), secretPurpose(id)),
			PreviousExpiresAt: now.Add(s.cfg.RotationGrace), Now: now})
		if err != nil {
			return err
		}
		return runAlso(ex, also)
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, "", ErrNotFound
	}
	if err != nil {
		return nil, "", err
	}
	return &Endpoint{ep}, secret, nil
}

// UpdateParams change an endpoint; a nil field is left as it is.
type UpdateParams struct {
	ClientID string
	ID       string
	URL      *string
	// EventTypes replaces the filter; an empty list takes every type.
	EventTypes *[]string
}

// Update changes an endpoint's URL or event filter, checked as Create
// checks them; its id, secret and status stay. Deliveries already queued
// for it look the endpoint up when they run, so they (and their retries)
// go to the new URL; the new filter applies to events dispatched from
// now on. A new URL starts the endpoint's run of failures afresh. also
// runs in the same transaction.
func (s *Service) Update(ctx context.Context, p UpdateParams, also ...Also) (*Endpoint, error) {
	if p.URL != nil {
		if err := s.checkURL(ctx, *p.URL); err != nil {
			return nil, err
		}
	}
	if p.EventTypes != nil {
		types, err := checkTypes("events", *p.EventTypes)
		if err != nil {
			return nil, err
		}
		p.EventTypes = &types
	}
	var ep *store.WebhookEndpoint
	err := s.store.InTx(ctx, func(ex store.Executor) error {
		var err error
		ep, err = ex.WebhookEndpointUpdate(ctx, &store.WebhookEndpointUpdateParams{ClientID: p.ClientID, ID: p.ID,
			URL: p.URL, EventTypes: p.EventTypes, Now: s.now()})
		if err != nil {
			return err
		}
		return runAlso(ex, also)
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return &Endpoint{ep}, nil
}

// Takes reports whether the endpoint, as it is now, is sent events of type
// t when they happen: it is enabled and its filter takes t.
func (e *Endpoint) Takes(t string) bool { return matches(e.WebhookEndpoint, t) }

// signingSecrets returns the secrets that sign for the endpoint now: the
// current one, and the previous one during a rotation.
func (s *Service) signingSecrets(ep *store.WebhookEndpoint, now time.Time) ([]string, error) {
	cur, err := s.box.Open(ep.SecretSealed, secretPurpose(ep.ID))
	if err != nil {
		return nil, fmt.Errorf("webhook: open secret: %w", err)
	}
	secrets := []string{string(cur)}
	if ep.PreviousSealed != nil && ep.PreviousExpiresAt != nil && ep.PreviousExpiresAt.After(now) {
		prev, err := s.box.Open(ep.PreviousSealed, secretPurpose(ep.ID))
		if err != nil {
			return nil, fmt.Errorf("webhook: open previous secret: %w", err)
		}
		secrets = append(secrets, string(prev))
	}
	return secrets, nil
}

// matches reports whether the endpoint takes events of type t. Test events
// go to every endpoint.
func matches(ep *store.WebhookEndpoint, t string) bool {
	return ep.Status == store.WebhookEndpointEnabled &&
		(len(ep.EventTypes) == 0 || t == event.Test || slices.Contains(ep.EventTypes, t))
}

// Dispatch inserts a delivery job per matching endpoint in the transaction
// that records ev (event.Dispatcher).
func (s *Service) Dispatch(ctx context.Context, ex store.Executor, ev *store.Event) error {
	eps, err := ex.WebhookEndpointList(ctx, ev.ClientID)
	if err != nil {
		return err
	}
	var jobs []river.InsertManyParams
	for _, ep := range eps {
		if matches(ep, ev.Type) {
			jobs = append(jobs, s.job(ev.ClientID, ev.ID, ep.ID))
		}
	}
	return s.queue.InsertTx(ctx, ex, jobs)
}

func (s *Service) job(clientID, eventID, endpointID string) river.InsertManyParams {
	return river.InsertManyParams{
		Args: DeliveryArgs{ClientID: clientID, EventID: eventID, EndpointID: endpointID},
		// The endpoint's tag lets the dashboard find its oldest pending
		// delivery through River's job list.
		InsertOpts: &river.InsertOpts{Queue: queue.QueueWebhooks, MaxAttempts: len(s.cfg.RetrySchedule), Tags: []string{endpointID}},
	}
}

// Resend delivers an event again to every enabled endpoint that takes it,
// or to one endpoint when endpointID is set. It returns how many deliveries
// were queued. The webhook-id stays the event id. also runs in the same
// transaction.
func (s *Service) Resend(ctx context.Context, clientID, eventID, endpointID string, also ...Also) (int, error) {
	var n int
	err := s.store.InTx(ctx, func(ex store.Executor) error {
		ev, err := ex.EventGet(ctx, clientID, eventID)
		if errors.Is(err, store.ErrNotFound) {
			return ErrEventNotFound
		}
		if err != nil {
			return err
		}
		eps, err := ex.WebhookEndpointList(ctx, clientID)
		if err != nil {
			return err
		}
		var jobs []river.InsertManyParams
		found := endpointID == ""
		for _, ep := range eps {
			if endpointID != "" && ep.ID != endpointID {
				continue
			}
			found = true
			if ep.Status == store.WebhookEndpointEnabled && (endpointID != "" || matches(ep, ev.Type)) {
				jobs = append(jobs, s.job(clientID, ev.ID, ep.ID))
			}
		}
		if !found {
			return ErrNotFound
		}
		n = len(jobs)
		if err := s.queue.InsertTx(ctx, ex, jobs); err != nil {
			return err
		}
		return runAlso(ex, also)
	})
	return n, err
}

// ReplayParams select the events to deliver again to one endpoint.
type ReplayParams struct {
	ClientID   string
	EndpointID string
	Since      time.Time
	Until      time.Time
	// Types filters when set.
	Types []string
}

// MaxReplay bounds the events one replay sends.
const MaxReplay = 10_000

// Replay queues the events created in [Since, Until] that the endpoint takes
// (narrowed by Types when set) to one endpoint, oldest first, keeping their
// ids. It returns how many were queued. also runs in the same transaction.
func (s *Service) Replay(ctx context.Context, p ReplayParams, also ...Also) (int, error) {
	if p.Until.Before(p.Since) {
		return 0, field.Invalid("until", "must not be before since")
	}
	types, err := checkTypes("types", p.Types)
	if err != nil {
		return 0, err
	}
	// The range is read before the transaction that queues it: a wide range
	// takes a while to read, and on SQLite a writing transaction holds the
	// database's one write lock from its start to its end.
	ep, err := s.enabledEndpoint(ctx, s.store, p.ClientID, p.EndpointID)
	if err != nil {
		return 0, err
	}
	var found []*store.Event // newest first
	before := ""
	for {
		evs, err := s.store.EventList(ctx, &store.EventListParams{ClientID: p.ClientID, Since: &p.Since, Until: &p.Until,
			Before: before, Limit: 500})
		if err != nil {
			return 0, err
		}
		for _, ev := range evs {
			if matches(ep, ev.Type) && (len(types) == 0 || slices.Contains(types, ev.Type)) {
				found = append(found, ev)
			}
		}
		if len(found) > MaxReplay {
			return 0, field.Invalid("since", fmt.Sprintf("the range holds more than %d events: replay a shorter one", MaxReplay))
		}
		if len(evs) < 500 {
			break
		}
		before = evs[len(evs)-1].ID
	}
	var n int
	err = s.store.InTx(ctx, func(ex store.Executor) error {
		// The endpoint as it is now: disabled or refiltered since the read,
		// it gets what it takes now.
		ep, err := s.enabledEndpoint(ctx, ex, p.ClientID, p.EndpointID)
		if err != nil {
			return err
		}
		var jobs []river.InsertManyParams
		for _, ev := range slices.Backward(found) { // oldest first
			if matches(ep, ev.Type) {
				jobs = append(jobs, s.job(p.ClientID, ev.ID, ep.ID))
			}
		}
		n = len(jobs)
		if err := s.queue.InsertTx(ctx, ex, jobs); err != nil {
			return err
		}
		return runAlso(ex, also)
	})
	return n, err
}

// enabledEndpoint returns the developer's endpoint, refusing a disabled one.
func (s *Service) enabledEndpoint(ctx context.Context, ex store.Executor, clientID, endpointID string) (*store.WebhookEndpoint, error) {
	ep, err := ex.WebhookEndpointGet(ctx, clientID, endpointID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if ep.Status != store.WebhookEndpointEnabled {
		return nil, field.Invalid("endpoint_id", "the endpoint is disabled")
	}
	return ep, nil
}

// Test records a TEST event for the developer, which goes to every enabled
// endpoint whatever its filter. also runs in the same transaction.
func (s *Service) Test(ctx context.Context, clientID, message string, also ...Also) (*store.Event, error) {
	var ev *store.Event
	err := s.store.InTx(ctx, func(ex store.Executor) error {
		var err error
		ev, err = s.events.Record(ctx, ex, event.Params{ClientID: clientID, Type: event.Test,
			Data: map[string]any{"message": message}, At: s.now()})
		if err != nil {
			return err
		}
		return runAlso(ex, also)
	})
	return ev, err
}

// Sign returns the body and headers that delivering payload to the endpoint
// would carry now. The webhook-id is payload's "id" when it is a string.
func (s *Service) Sign(ctx context.Context, clientID, endpointID string, payload []byte) ([]byte, http.Header, error) {
	ep, err := s.store.WebhookEndpointGet(ctx, clientID, endpointID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, ErrNotFound
	}
	if err != nil {
		return nil, nil, err
	}
	var body bytes.Buffer
	if err := json.Compact(&body, payload); err != nil {
		return nil, nil, field.Invalid("payload", "must be JSON")
	}
	id, typ := uuid.NewString(), event.Test
	if r := gjson.GetBytes(body.Bytes(), "id"); r.Type == gjson.String {
		id = r.String()
		// The id is signed and sent as the webhook-id header.
		if id == "" || len(id) > 255 || strings.ContainsFunc(id, unicode.IsControl) {
			return nil, nil, field.Invalid("payload.id", "must be a non-empty string of at most 255 bytes without control characters")
		}
	}
	if r := gjson.GetBytes(body.Bytes(), "event"); r.Type == gjson.String {
		typ = r.String()
	}
	h, err := s.headers(ctx, ep, id, typ, body.Bytes())
	return body.Bytes(), h, err
}
