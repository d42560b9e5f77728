// Package developer manages developer accounts (tenants): their client_id,
// their API secrets and the authentication of API requests.
//
// A secret is shown once, when it is created. Hitch keeps its SHA-256 hash to
// authenticate requests and a copy sealed under the master key, because
// webhook signatures are keyed with it.
package developer

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/google/uuid"

	"github.com/hitchdev/hitch/internal/authcache"
	"github.com/hitchdev/hitch/internal/seal"
	"github.com/hitchdev/hitch/internal/store"
)

// ErrInvalidCredentials is returned for an unknown client, a wrong or
// expired secret, or a client of the other environment.
var ErrInvalidCredentials = errors.New("developer: invalid client_id or secret")

// ErrNotFound is returned for an unknown client_id.
var ErrNotFound = errors.New("developer: client not found")

// ErrExists is returned when creating a client whose id is taken.
var ErrExists = errors.New("developer: client already exists")

// SecretPrefix starts every generated secret, so that secret scanners can
// recognise a leaked one.
const SecretPrefix = "hsk_"

// authCacheTTL bounds how long a verified credential is trusted without a
// database read; a rotated-out or deleted secret stops working within it.
const authCacheTTL = 30 * time.Second

var clientIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{8,64}$`)

// maxSecretLength bounds secrets (generated ones are 47 characters).
const maxSecretLength = 256

// Credentials are a client's id and secret, as shown to its owner once.
type Credentials struct {
	ClientID    string `json:"client_id"`
	Secret      string `json:"secret"`
	Environment string `json:"environment"`
}

// Service creates clients, rotates their secrets and authenticates requests.
type Service struct {
	store store.Store
	box   *seal.Box
	now   func() time.Time

	cache *authcache.Cache[*store.Client]
}

// NewService returns a Service. now is the clock (time.Now in production).
func NewService(st store.Store, box *seal.Box, now func() time.Time) *Service {
	return &Service{store: st, box: box, now: now, cache: authcache.New[*store.Client](maxCacheEntries)}
}

// CreateParams describe a new client. ID and Secret are generated when empty.
type CreateParams struct {
	Name        string
	Environment string
	ID          string
	Secret      string
}

// Create makes a client and its first secret in one transaction.
func (s *Service) Create(ctx context.Context, p CreateParams) (*Credentials, error) {
	if p.Name == "" {
		return nil, errors.New("developer: name is required")
	}
	if p.Environment != "development" && p.Environment != "production" {
		return nil, fmt.Errorf("developer: environment must be development or production, not %q", p.Environment)
	}
	if p.ID == "" {
		p.ID = uuid.NewString()
	} else if !clientIDPattern.MatchString(p.ID) {
		return nil, errors.New("developer: client_id must be 8 to 64 letters, digits, '-' or '_'")
	}
	if p.Secret == "" {
		p.Secret = NewSecret()
	} else if len(p.Secret) < 32 || len(p.Secret) > maxSecretLength {
		return nil, fmt.Errorf("developer: secret must be 32 to %d characters", maxSecretLength)
	}
	now := s.now().UTC()
	err := s.store.InTx(ctx, func(ex store.Executor) error {
		if _, err := ex.ClientInsert(ctx, &store.ClientInsertParams{ID: p.ID, Name: p.Name, Environment: p.Environment, CreatedAt: now}); err != nil {
			return err
		}
		return s.insertSecret(ctx, ex, p.ID, p.Secret, now)
	})
	if err != nil {
		if errors.Is(err, store.ErrConflict) {
			return nil, fmt.Errorf("%w: %s", ErrExists, p.ID)
		}
		return nil, err
	}
	return &Credentials{ClientID: p.ID, Secret: p.Secret, Environment: p.Environment}, nil
}

// RotateSecret issues a new secret. The previous ones keep working for grace
// (0 ends them at once). also runs in the same transaction (the
// dashboard's audit record).
func (s *Service) RotateSecret(ctx context.Context, clientID string, grace time.Duration, also ...func(store.Executor) error) (*Credentials, error) {
	secret := NewSecret()
	now := s.now().UTC()
	var client *store.Client
	err := s.store.InTx(ctx, func(ex store.Executor) error {
		var err error
		if client, err = ex.ClientGetByID(ctx, clientID); err != nil {
			return err
		}
		if err := ex.ClientSecretExpireCurrent(ctx, clientID, now.Add(grace)); err != nil {
			return err
		}
		if err := s.insertSecret(ctx, ex, clientID, secret, now); err != nil {
			return err
		}
		for _, fn := range also {
			if err := fn(ex); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return &Credentials{ClientID: clientID, Secret: secret, Environment: client.Environment}, nil
}

func (s *Service) insertSecret(ctx context.Context, ex store.Executor, clientID, secret string, now time.Time) error {
	hash := sha256.Sum256([]byte(secret))
	return ex.ClientSecretInsert(ctx, &store.ClientSecretInsertParams{
		ID:        uuid.NewString(),
		ClientID:  clientID,
		Hash:      hash[:],
		Sealed:    s.box.Seal([]byte(secret), sealPurpose(clientID)),
		CreatedAt: now,
	})
}

func sealPurpose(clientID string) string { return "client_secret:" + clientID }

// CurrentSecret returns the newest live secret of a client in plain text,
// for keying webhook signatures.
func (s *Service) CurrentSecret(ctx context.Context, clientID string) (string, error) {
	secrets, err := s.store.ClientSecretListLive(ctx, clientID, s.now())
	if err != nil {
		return "", err
	}
	if len(secrets) == 0 {
		return "", ErrNotFound
	}
	b, err := s.box.Open(secrets[0].Sealed, sealPurpose(clientID))
	if err != nil {
		return "", fmt.Errorf("developer: open secret: %w", err)
	}
	return string(b), nil
}

// List returns every client.
func (s *Service) List(ctx context.Context) ([]*store.Client, error) {
	return s.store.ClientList(ctx)
}

// Count returns the number of clients.
func (s *Service) Count(ctx context.Context) (int, error) {
	return s.store.ClientCount(ctx)
}

// Get returns a client.
func (s *Service) Get(ctx context.Context, clientID string) (*store.Client, error) {
	c, err := s.store.ClientGetByID(ctx, clientID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrNotFound
	}
	return c, err
}

// Authenticate checks a client_id and secret for the given environment.
// Verified pairs are cached for at most authCacheTTL (and never past the
// secret's own expiry), so most requests cost no database read.
func (s *Service) Authenticate(ctx context.Context, environment, clientID, secret string) (*store.Client, error) {
	if client, ok := s.Cached(environment, clientID, secret); ok {
		return client, nil
	}
	if !clientIDPattern.MatchString(clientID) || secret == "" || len(secret) > maxSecretLength {
		return nil, ErrInvalidCredentials
	}
	now := s.now()
	client, expires, err := s.verify(ctx, clientID, secret, now)
	if err != nil {
		return nil, err
	}
	s.cache.Put(clientID, secret, client, expires, now)
	if client.Environment != environment {
		return nil, ErrInvalidCredentials
	}
	return client, nil
}

// Cached authenticates from the cache alone: ok is false when the pair was
// not verified recently (it may still be valid). It never reads the
// database, so callers can throttle the uncached path.
func (s *Service) Cached(environment, clientID, secret string) (*store.Client, bool) {
	client, ok := s.cache.Get(clientID, secret, s.now())
	if !ok || client.Environment != environment {
		return nil, false
	}
	return client, true
}

// verify checks the secret against every live secret of the client in
// constant time and returns when the match stops being valid.
func (s *Service) verify(ctx context.Context, clientID, secret string, now time.Time) (*store.Client, time.Time, error) {
	hash := sha256.Sum256([]byte(secret))
	secrets, err := s.store.ClientSecretListLive(ctx, clientID, now)
	if err != nil {
		return nil, time.Time{}, err
	}
	var match *store.ClientSecret
	for _, cs := range secrets {
		if subtle.ConstantTimeCompare(cs.Hash, hash[:]) == 1 {
			match = cs
		}
	}
	if match == nil {
		return nil, time.Time{}, ErrInvalidCredentials
	}
	client, err := s.store.ClientGetByID(ctx, clientID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, time.Time{}, ErrInvalidCredentials
	}
	if err != nil {
		return nil, time.Time{}, err
	}
	expires := now.Add(authCacheTTL)
	if match.ExpiresAt != nil && match.ExpiresAt.Before(expires) {
		expires = *match.ExpiresAt
	}
	return client, expires, nil
}

// maxCacheEntries bounds the authentication cache.
const maxCacheEntries = 10_000

// NewSecret returns a new secret: the prefix and 32 random bytes, base64url.
func NewSecret() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic("developer: crypto/rand failed: " + err.Error())
	}
	return SecretPrefix + base64.RawURLEncoding.EncodeToString(b)
}
