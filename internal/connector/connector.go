// Package connector manages merchant connectors: the services that feed
// observed transactions and subscriptions to Hitch through the internal
// ingestion API, and the credentials they authenticate with.
//
// A connector's secret is shown once, when it is created; Hitch keeps only
// its SHA-256 hash. Connector credentials are separate from developers':
// neither works where the other is expected.
package connector

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hitchdev/hitch/internal/authcache"
	"github.com/hitchdev/hitch/internal/store"
)

var (
	// ErrInvalidCredentials is returned for an unknown or revoked connector
	// or a wrong secret.
	ErrInvalidCredentials = errors.New("connector: invalid connector id or secret")
	// ErrNotFound is returned for an unknown connector id.
	ErrNotFound = errors.New("connector: not found")
)

// IDPrefix starts every connector id, and SecretPrefix every secret, so that
// neither can be mistaken for a developer's and secret scanners can
// recognise a leaked secret.
const (
	IDPrefix     = "conn_"
	SecretPrefix = "csec_"
)

// AuthCacheTTL bounds how long a verified credential is trusted without a
// database read: a connector revoked by another process (the CLI) stops
// working within it; one revoked through this Service, at once.
const AuthCacheTTL = 30 * time.Second

var idPattern = regexp.MustCompile(`^conn_[0-9a-f]{24}$`)

// maxSecretLength bounds the secrets Authenticate hashes (generated ones
// are 48 characters).
const maxSecretLength = 256

// maxNameLength bounds a connector's name, in characters.
const maxNameLength = 200

// Connector is a connector as listed: never its secret.
type Connector struct {
	ID        string
	Name      string
	CreatedAt time.Time
	RevokedAt *time.Time // nil while it may authenticate
	// MerchantIDs are the merchants it declared (nil: none yet).
	MerchantIDs []int64
	// LastSeenAt is its last call to the work API.
	LastSeenAt *time.Time
}

// Credentials are a connector's id and secret, shown to the operator once.
type Credentials struct {
	ID     string `json:"id"`
	Secret string `json:"secret"`
}

// Service creates, lists and revokes connectors and authenticates their
// requests.
type Service struct {
	store store.Store
	now   func() time.Time

	cache *authcache.Cache[*Connector]
}

// NewService returns a Service. now is the clock (time.Now in production).
func NewService(st store.Store, now func() time.Time) *Service {
	return &Service{store: st, now: now, cache: authcache.New[*Connector](maxCacheEntries)}
}

// Create makes a connector with a new id and secret.
func (s *Service) Create(ctx context.Context, name string) (*Credentials, error) {
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > maxNameLength || !utf8.ValidString(name) || strings.ContainsRune(name, 0) {
		return nil, fmt.Errorf("connector: name must be 1 to %d characters of text", maxNameLength)
	}
	creds := &Credentials{ID: newID(), Secret: newSecret()}
	hash := sha256.Sum256([]byte(creds.Secret))
	err := s.store.ConnectorInsert(ctx, &store.Connector{ID: creds.ID, Name: name, SecretHash: hash[:], CreatedAt: s.now().UTC()})
	if err != nil {
		return nil, fmt.Errorf("connector: create: %w", err)
	}
	return creds, nil
}

// List returns every connector, revoked ones included, oldest first.
func (s *Service) List(ctx context.Context) ([]*Connector, error) {
	rows, err := s.store.ConnectorList(ctx)
	if err != nil {
		return nil, fmt.Errorf("connector: list: %w", err)
	}
	out := make([]*Connector, len(rows))
	for i, r := range rows {
		out[i] = fromStore(r)
	}
	return out, nil
}

// Revoke stops a connector from authenticating, for good. Revoking a
// revoked connector is a no-op.
func (s *Service) Revoke(ctx context.Context, id string) error {
	err := s.store.ConnectorRevoke(ctx, id, s.now().UTC())
	if errors.Is(err, store.ErrNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	s.cache.Forget(id)
	return nil
}

// Authenticate checks a connector id and secret: the hash is compared in
// constant time, and a revoked connector is refused. Verified pairs are
// cached for at most AuthCacheTTL.
func (s *Service) Authenticate(ctx context.Context, id, secret string) (*Connector, error) {
	if c, ok := s.Cached(id, secret); ok {
		return c, nil
	}
	if !idPattern.MatchString(id) || secret == "" || len(secret) > maxSecretLength {
		return nil, ErrInvalidCredentials
	}
	row, err := s.store.ConnectorGet(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrInvalidCredentials
	}
	if err != nil {
		return nil, fmt.Errorf("connector: authenticate: %w", err)
	}
	hash := sha256.Sum256([]byte(secret))
	if subtle.ConstantTimeCompare(row.SecretHash, hash[:]) != 1 || row.RevokedAt != nil {
		return nil, ErrInvalidCredentials
	}
	c := fromStore(row)
	now := s.now()
	s.cache.Put(id, secret, c, now.Add(AuthCacheTTL), now)
	return c, nil
}

// Cached authenticates from the cache alone: ok is false when the pair was
// not verified recently (it may still be valid). It never reads the
// database, so callers can throttle the uncached path.
func (s *Service) Cached(id, secret string) (*Connector, bool) {
	return s.cache.Get(id, secret, s.now())
}

// maxCacheEntries bounds the authentication cache.
const maxCacheEntries = 1_000

func fromStore(r *store.Connector) *Connector {
	return &Connector{ID: r.ID, Name: r.Name, CreatedAt: r.CreatedAt, RevokedAt: r.RevokedAt,
		MerchantIDs: r.MerchantIDs, LastSeenAt: r.LastSeenAt}
}

// newID returns conn_ and 12 random bytes in hex: safe in a Basic auth
// username, which cannot hold a colon.
func newID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // never fails: crypto/rand crashes the program instead
	return IDPrefix + hex.EncodeToString(b)
}

// newSecret returns the prefix and 32 random bytes, base64url.
func newSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return SecretPrefix + base64.RawURLEncoding.EncodeToString(b)
}
