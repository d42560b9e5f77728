// Package session issues the short-lived session values that a developer
// hands to the client-side SDK. A session value is a bearer secret for the
// hosted flow: Hitch stores only its SHA-256 hash and never logs it.
package session

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/hitchdev/hitch/internal/detection"
	"github.com/hitchdev/hitch/internal/merchant"
	"github.com/hitchdev/hitch/internal/seal"
	"github.com/hitchdev/hitch/internal/store"
)

// Session types (SDK products).
const (
	TypeCardSwitcher    = "card_switcher"
	TypeTransactionLink = "transaction_link"
	TypeLink            = "link"
	TypeVault           = "vault"
)

// Types lists every session type.
var Types = []string{TypeCardSwitcher, TypeTransactionLink, TypeLink, TypeVault}

const (
	// Lifetime is how long a session lives, and how much an extension adds.
	Lifetime = 30 * time.Minute
	// MaxLifetime caps how long extensions can keep one session alive.
	MaxLifetime = 24 * time.Hour
	// ValuePrefix starts every session value.
	ValuePrefix = "sess_"
)

var (
	// ErrNotFound: no session has this value for this developer.
	ErrNotFound = errors.New("session: not found")
	// ErrExpired: the session is past its expiry.
	ErrExpired = errors.New("session: expired")
	// ErrMaxLifetime: extending would keep the session past MaxLifetime.
	ErrMaxLifetime = errors.New("session: maximum lifetime reached")
	// ErrUnknownMerchant: merchant_id is not in the catalog.
	ErrUnknownMerchant = errors.New("session: unknown merchant")
	// ErrMerchantUnsupported: the merchant does not support the product.
	ErrMerchantUnsupported = errors.New("session: merchant does not support this product")
)

// Service creates and extends sessions.
type Service struct {
	store      store.Store
	box        *seal.Box
	catalog    *merchant.Catalog
	detections Detections
	now        func() time.Time
}

// Detections starts detection in a session's transaction: a session
// created with an e-mail, phone number or processor token detects the
// user's merchant accounts.
type Detections interface {
	StartTx(ctx context.Context, ex store.Executor, p detection.StartParams) (string, error)
}

// NewService returns a Service.
func NewService(st store.Store, box *seal.Box, catalog *merchant.Catalog, detections Detections, now func() time.Time) *Service {
	return &Service{store: st, box: box, catalog: catalog, detections: detections, now: now}
}

// CreateParams are a validated session request.
type CreateParams struct {
	ClientID       string
	Type           string
	ExternalUserID string
	CardID         *string
	MerchantID     *int64
	Email          *string
	PhoneNumber    *string
	ProcessorToken *string
	Metadata       map[string]string
}

// Issued is a session as returned to the developer: the value is shown only
// here.
type Issued struct {
	// Value is the session's bearer value ("" after an extend by id).
	Value     string
	ID        string
	ExpiresAt time.Time
}

// Create issues a session for the user, creating the user on first sight.
func (s *Service) Create(ctx context.Context, p CreateParams) (*Issued, error) {
	if p.MerchantID != nil {
		m, ok := s.catalog.Get(*p.MerchantID)
		if !ok {
			return nil, ErrUnknownMerchant
		}
		if !m.Supports(p.Type) {
			return nil, ErrMerchantUnsupported
		}
	}
	var metadata json.RawMessage
	if p.Metadata != nil {
		var err error
		if metadata, err = json.Marshal(p.Metadata); err != nil {
			return nil, fmt.Errorf("session: create: %w", err)
		}
	}
	value, hash := newValue()
	now := s.now().UTC()
	params := &store.SessionInsertParams{
		ID:         uuid.NewString(),
		ClientID:   p.ClientID,
		Type:       p.Type,
		TokenHash:  hash,
		CardID:     p.CardID,
		MerchantID: p.MerchantID,
		Metadata:   metadata,
		CreatedAt:  now,
		ExpiresAt:  now.Add(Lifetime),
	}
	if p.ProcessorToken != nil {
		// An aggregator token is a credential: sealed like a secret.
		params.ProcessorTokenSealed = s.box.Seal([]byte(*p.ProcessorToken), "processor_token:"+params.ID)
	}
	err := s.store.InTx(ctx, func(ex store.Executor) error {
		user, err := ex.UserGetOrCreate(ctx, &store.UserGetOrCreateParams{
			ID: uuid.NewString(), ClientID: p.ClientID, ExternalUserID: p.ExternalUserID, CreatedAt: now})
		if err != nil {
			return err
		}
		params.UserID = user.ID
		if _, err = ex.SessionInsert(ctx, params); err != nil {
			return err
		}
		// The e-mail and phone number are kept only sealed, in the
		// detection request or its connectors' work.
		in := detection.Input{Email: deref(p.Email), Phone: deref(p.PhoneNumber), ProcessorToken: deref(p.ProcessorToken)}
		if in == (detection.Input{}) {
			return nil
		}
		_, err = s.detections.StartTx(ctx, ex, detection.StartParams{ClientID: p.ClientID, UserID: user.ID,
			ExternalUserID: p.ExternalUserID, SessionID: &params.ID, Metadata: metadata, Input: in})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("session: create: %w", err)
	}
	return &Issued{Value: value, ID: params.ID, ExpiresAt: params.ExpiresAt}, nil
}

// Extend gives a live session another Lifetime from now. ref names it by
// its value, as the public service's extend does, or by its public id (the
// session_id returned beside the value); the Issued carries the value only
// when ref is the value, since only its hash is kept.
func (s *Service) Extend(ctx context.Context, clientID, ref string) (*Issued, error) {
	var sess *store.Session
	var err error
	byValue := strings.HasPrefix(ref, ValuePrefix)
	if byValue {
		sess, err = s.Lookup(ctx, clientID, ref)
	} else {
		sess, err = s.lookupByID(ctx, clientID, ref)
	}
	if err != nil {
		return nil, err
	}
	expires := s.now().UTC().Add(Lifetime)
	if expires.Sub(sess.CreatedAt) > MaxLifetime {
		return nil, ErrMaxLifetime
	}
	if _, err := s.store.SessionUpdateExpiry(ctx, &store.SessionUpdateExpiryParams{ClientID: clientID, ID: sess.ID, ExpiresAt: expires}); err != nil {
		return nil, fmt.Errorf("session: extend: %w", err)
	}
	issued := &Issued{ID: sess.ID, ExpiresAt: expires}
	if byValue {
		issued.Value = ref
	}
	return issued, nil
}

// Lookup returns the live session a developer issued with this value: the
// hosted flow's way in. ErrNotFound covers values of another form, of another
// developer, or never issued; ErrExpired a session past its expiry.
func (s *Service) Lookup(ctx context.Context, clientID, value string) (*store.Session, error) {
	hash, ok := HashValue(value)
	if !ok {
		return nil, ErrNotFound
	}
	sess, err := s.store.SessionGetByTokenHash(ctx, clientID, hash)
	return s.live(sess, err)
}

// lookupByID is Lookup by the session's public id, which only the
// developer's own credentials may use (it is no bearer secret).
func (s *Service) lookupByID(ctx context.Context, clientID, id string) (*store.Session, error) {
	if u, err := uuid.Parse(id); err != nil || u.String() != id {
		return nil, ErrNotFound
	}
	sess, err := s.store.SessionGet(ctx, clientID, id)
	return s.live(sess, err)
}

// live returns a session found (or the error of finding it), or ErrExpired
// when it is past its expiry.
func (s *Service) live(sess *store.Session, err error) (*store.Session, error) {
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("session: lookup: %w", err)
	}
	if !s.now().UTC().Before(sess.ExpiresAt) {
		return nil, ErrExpired
	}
	return sess, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// newValue returns a session value (256 random bits) and its hash.
func newValue() (string, []byte) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic("session: crypto/rand failed: " + err.Error())
	}
	value := ValuePrefix + base64.RawURLEncoding.EncodeToString(b)
	hash := sha256.Sum256([]byte(value))
	return value, hash[:]
}

// HashValue returns the stored hash of a session value, or false when the
// value is not of the session form.
func HashValue(value string) ([]byte, bool) {
	if !strings.HasPrefix(value, ValuePrefix) || len(value) != len(ValuePrefix)+43 {
		return nil, false
	}
	hash := sha256.Sum256([]byte(value))
	return hash[:], true
}
