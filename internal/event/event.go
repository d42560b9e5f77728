// Package event records what happens to a developer's users as append-only
// events, each with the envelope that webhooks deliver. Record runs inside
// the caller's database transaction, so an event exists if and only if the
// change that caused it committed.
package event

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/hitchdev/hitch/internal/store"
)

// Event types, the public API's and Hitch's own.
const (
	Authenticated                = "AUTHENTICATED"
	CardUpdated                  = "CARD_UPDATED"
	CardFailed                   = "CARD_FAILED"
	NewTransactionsAvailable     = "NEW_TRANSACTIONS_AVAILABLE"
	UpdatedTransactionsAvailable = "UPDATED_TRANSACTIONS_AVAILABLE"
	AccountLoginRequired         = "ACCOUNT_LOGIN_REQUIRED"
	NewDetectedAccountsAvailable = "NEW_DETECTED_ACCOUNTS_AVAILABLE"
	// NewSubscriptionsAvailable and UpdatedSubscriptionsAvailable carry
	// data.subscriptions: [{id}] (the public service's names).
	NewSubscriptionsAvailable     = "NEW_SUBSCRIPTIONS_AVAILABLE"
	UpdatedSubscriptionsAvailable = "UPDATED_SUBSCRIPTIONS_AVAILABLE"
	// VaultingSucceeded and VaultingFailed end a vault task.
	VaultingSucceeded = "VAULTING_SUCCEEDED"
	VaultingFailed    = "VAULTING_FAILED"
	// EndpointDisabled is Hitch's own: a webhook endpoint was disabled, told
	// to the developer's other endpoints.
	EndpointDisabled = "ENDPOINT_DISABLED"
	// Test is sent by POST /development/webhooks/test.
	Test = "TEST"
)

// Types lists every event type, for validating filters.
var Types = []string{Authenticated, CardUpdated, CardFailed, NewTransactionsAvailable,
	UpdatedTransactionsAvailable, AccountLoginRequired, NewDetectedAccountsAvailable, NewSubscriptionsAvailable,
	UpdatedSubscriptionsAvailable, VaultingSucceeded, VaultingFailed, EndpointDisabled, Test}

// Merchant is the merchant reference of an envelope.
type Merchant struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	Logo string `json:"logo,omitempty"`
}

// Ref names a resource that an event is about.
type Ref struct {
	ID string `json:"id"`
}

// Envelope is the webhook payload of an event.
type Envelope struct {
	// ID is stable across delivery attempts; receivers deduplicate on it.
	ID string `json:"id"`
	// Event is the event type.
	Event string `json:"event"`
	// Sequence increases by one per developer and external_user_id.
	Sequence       int64          `json:"sequence"`
	SessionID      *string        `json:"session_id,omitempty"`
	TaskID         *int64         `json:"task_id,omitempty"`
	ExternalUserID string         `json:"external_user_id,omitempty"`
	Merchant       *Merchant      `json:"merchant,omitempty"`
	Data           map[string]any `json:"data"`
	Updated        []Ref          `json:"updated,omitempty"`
	// Timestamp is Unix milliseconds.
	Timestamp int64 `json:"timestamp"`
}

// Params describe an event to record.
type Params struct {
	ClientID string
	// User is the end user the event is about (nil for client-wide events).
	User      *store.User
	Type      string
	SessionID *string
	TaskID    *int64
	Merchant  *Merchant
	// Data is the event-specific data; Metadata, when set, is echoed in it
	// as data.metadata.
	Data     map[string]any
	Metadata map[string]string
	Updated  []Ref
	At       time.Time
}

// ParseMetadata decodes metadata as stored with a session, a task or an
// account (nil for none).
func ParseMetadata(raw json.RawMessage) (map[string]string, error) {
	if raw == nil {
		return nil, nil
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("event: metadata: %w", err)
	}
	return m, nil
}

// Dispatcher is told of every event recorded, inside the recording
// transaction: webhook delivery jobs commit or roll back with the event.
type Dispatcher interface {
	Dispatch(ctx context.Context, ex store.Executor, ev *store.Event) error
}

// Log records events and hands each to its dispatcher.
type Log struct {
	dispatcher Dispatcher
}

// SetDispatcher sets the dispatcher; call it while wiring, before any
// Record.
func (l *Log) SetDispatcher(d Dispatcher) { l.dispatcher = d }

// Record appends an event in the transaction ex, dispatches it in the same
// transaction, and returns it.
func (l *Log) Record(ctx context.Context, ex store.Executor, p Params) (*store.Event, error) {
	ev, err := record(ctx, ex, p)
	if err != nil {
		return nil, err
	}
	if l != nil && l.dispatcher != nil {
		if err := l.dispatcher.Dispatch(ctx, ex, ev); err != nil {
			return nil, fmt.Errorf("event: dispatch: %w", err)
		}
	}
	return ev, nil
}

// NewID makes a time-ordered id: a UUIDv7, whose first 48 bits are the
// time in milliseconds. It names events, and transactions and
// subscriptions too. With random (v4) ids every insert landed on a
// different page of the primary key's index, a page written to the WAL
// (SQLite) or as a full-page image (PostgreSQL) each time: a 1,000-row
// batch of transactions rewrote hundreds of pages once the table held
// 100,000 rows, and events under POST /card grew the WAL by megabytes a
// second. Time-ordered ids append to the index's last pages. An id tells
// when it was made, to the millisecond (an event's timestamp tells it
// anyway), and keeps 62 random bits; every lookup by id is scoped to the
// developer, so ids need not be secret.
func NewID() string {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.NewString()
	}
	return id.String()
}

func record(ctx context.Context, ex store.Executor, p Params) (*store.Event, error) {
	env := Envelope{
		ID:        NewID(),
		Event:     p.Type,
		SessionID: p.SessionID,
		TaskID:    p.TaskID,
		Merchant:  p.Merchant,
		Data:      map[string]any{},
		Updated:   p.Updated,
		Timestamp: p.At.UnixMilli(),
	}
	for k, v := range p.Data {
		env.Data[k] = v
	}
	if p.Metadata != nil {
		env.Data["metadata"] = p.Metadata
	}
	params := &store.EventInsertParams{ID: env.ID, ClientID: p.ClientID, Type: p.Type, CreatedAt: p.At}
	if p.User != nil {
		seq, err := ex.UserNextEventSequence(ctx, p.ClientID, p.User.ID)
		if err != nil {
			return nil, fmt.Errorf("event: record: %w", err)
		}
		env.Sequence = seq
		env.ExternalUserID = p.User.ExternalUserID
		params.UserID, params.ExternalUserID, params.Sequence = &p.User.ID, &p.User.ExternalUserID, seq
	}
	payload, err := json.Marshal(env)
	if err != nil {
		return nil, fmt.Errorf("event: record: %w", err)
	}
	params.Payload = payload
	return ex.EventInsert(ctx, params)
}
