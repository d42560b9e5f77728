// Package card holds card data intake: the RSA key pairs whose public half
// developers use to encrypt card data (JWE), and, later, card switch tasks.
package card

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hitchdev/hitch/internal/seal"
	"github.com/hitchdev/hitch/internal/store"
)

// KeyBits is the size of generated RSA keys.
const KeyBits = 2048

// keyCacheTTL bounds how long a process serves a key without looking for a
// newer one (another node or `hitch keys rotate` may have made one).
const keyCacheTTL = time.Minute

// PublicJWK is the public half of a key as served by GET /jwe/key.
type PublicJWK struct {
	Alg    string   `json:"alg"`
	E      string   `json:"e"`
	KeyOps []string `json:"key_ops"`
	Kid    string   `json:"kid"`
	Kty    string   `json:"kty"`
	N      string   `json:"n"`
	Use    string   `json:"use"`
}

// Keys holds the JWE key pairs: it serves the current public key, every
// usable one, and decrypts card data with the private halves, which it
// keeps parsed in memory once opened.
type Keys struct {
	store store.Store
	box   *seal.Box
	now   func() time.Time

	ring atomic.Pointer[keyring]
	// mu serializes loading the ring from the database.
	mu sync.Mutex
}

// keyring is an immutable snapshot of the stored keys.
type keyring struct {
	loaded time.Time
	// usable are the public keys not retired, newest first.
	usable  []*PublicJWK
	private map[string]*privateKey
	// retired names keys whose grace period is over.
	retired map[string]bool
}

type privateKey struct {
	key       *rsa.PrivateKey
	retiresAt *time.Time
}

// NewKeys returns a Keys.
func NewKeys(st store.Store, box *seal.Box, now func() time.Time) *Keys {
	return &Keys{store: st, box: box, now: now}
}

// Current returns the newest usable public key, creating one if none exists.
func (k *Keys) Current(ctx context.Context) (*PublicJWK, error) {
	ring, err := k.keyring(ctx, false)
	if err != nil {
		return nil, err
	}
	if len(ring.usable) == 0 {
		if _, err := k.generate(ctx, k.now()); err != nil {
			return nil, err
		}
		if ring, err = k.keyring(ctx, true); err != nil {
			return nil, err
		}
		if len(ring.usable) == 0 {
			return nil, errors.New("card: current key: none usable after creating one")
		}
	}
	return ring.usable[0], nil
}

// Usable returns every public key that still decrypts, newest first (the
// JWKS of GET /jwe/keys).
func (k *Keys) Usable(ctx context.Context) ([]*PublicJWK, error) {
	if _, err := k.Current(ctx); err != nil { // make the first key if need be
		return nil, err
	}
	ring, err := k.keyring(ctx, false)
	if err != nil {
		return nil, err
	}
	return ring.usable, nil
}

// Rotate makes a new key of bits bits the current one. Every other key
// keeps decrypting until grace has passed (or sooner, if it was already
// retiring), and keys whose grace is over lose their private half. also
// runs in the same transaction, with the new key's kid (the audit records
// of the rotation).
func (k *Keys) Rotate(ctx context.Context, bits int, grace time.Duration, also ...func(ex store.Executor, kid string) error) (*PublicJWK, error) {
	if bits < KeyBits {
		return nil, fmt.Errorf("card: rotate: keys must have at least %d bits", KeyBits)
	}
	if grace < 0 {
		return nil, errors.New("card: rotate: the grace period must not be negative")
	}
	priv, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		return nil, fmt.Errorf("card: rotate: %w", err)
	}
	params, jwk, err := k.insertParams(priv)
	if err != nil {
		return nil, fmt.Errorf("card: rotate: %w", err)
	}
	now := k.now()
	err = k.store.InTx(ctx, func(ex store.Executor) error {
		// Keys are served newest first: the new one must be newer than
		// every other, even when two rotations share a clock tick.
		params.CreatedAt = now
		existing, err := ex.JWEKeyList(ctx)
		if err != nil {
			return err
		}
		if len(existing) > 0 && !existing[0].CreatedAt.Before(now) {
			params.CreatedAt = existing[0].CreatedAt.Add(time.Microsecond)
		}
		if _, err := ex.JWEKeyInsert(ctx, params); err != nil {
			return err
		}
		if err := ex.JWEKeyRetireOthers(ctx, jwk.Kid, now.Add(grace), now); err != nil {
			return err
		}
		for _, fn := range also {
			if err := fn(ex, jwk.Kid); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("card: rotate: %w", err)
	}
	if _, err := k.keyring(ctx, true); err != nil {
		return nil, err
	}
	return jwk, nil
}

// KeyInfo describes a stored key for operators.
type KeyInfo struct {
	Kid       string
	CreatedAt time.Time
	RetiresAt *time.Time
	Retired   bool
}

// List describes every stored key, newest first.
func (k *Keys) List(ctx context.Context) ([]KeyInfo, error) {
	keys, err := k.store.JWEKeyList(ctx)
	if err != nil {
		return nil, fmt.Errorf("card: list keys: %w", err)
	}
	now := k.now()
	out := make([]KeyInfo, len(keys))
	for i, key := range keys {
		out[i] = KeyInfo{Kid: key.KID, CreatedAt: key.CreatedAt, RetiresAt: key.RetiresAt,
			Retired: key.RetiresAt != nil && !key.RetiresAt.After(now)}
	}
	return out, nil
}

// keyring returns the keys, loading them again when the snapshot is older
// than keyCacheTTL or force is set.
func (k *Keys) keyring(ctx context.Context, force bool) (*keyring, error) {
	now := k.now()
	if ring := k.ring.Load(); ring != nil && !force && now.Sub(ring.loaded) < keyCacheTTL {
		return ring, nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	// Another caller may have loaded it while this one waited.
	if ring := k.ring.Load(); ring != nil && !force && now.Sub(ring.loaded) < keyCacheTTL {
		return ring, nil
	}
	stored, err := k.store.JWEKeyList(ctx)
	if err != nil {
		return nil, fmt.Errorf("card: load keys: %w", err)
	}
	ring := &keyring{loaded: now, usable: []*PublicJWK{}, private: map[string]*privateKey{}, retired: map[string]bool{}}
	old := k.ring.Load()
	for _, key := range stored {
		if key.RetiresAt != nil && !key.RetiresAt.After(now) {
			ring.retired[key.KID] = true
			continue
		}
		var jwk PublicJWK
		if err := json.Unmarshal(key.PublicJWK, &jwk); err != nil {
			return nil, fmt.Errorf("card: load key %s: %w", key.KID, err)
		}
		ring.usable = append(ring.usable, &jwk)
		if old != nil && old.private[key.KID] != nil { // parsed already
			ring.private[key.KID] = &privateKey{key: old.private[key.KID].key, retiresAt: key.RetiresAt}
			continue
		}
		der, err := k.box.Open(key.PrivateSealed, "jwe_key:"+key.KID)
		if err != nil {
			return nil, fmt.Errorf("card: load key %s: %w", key.KID, err)
		}
		parsed, err := x509.ParsePKCS8PrivateKey(der)
		clear(der)
		if err != nil {
			return nil, fmt.Errorf("card: load key %s: %w", key.KID, err)
		}
		priv, ok := parsed.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("card: load key %s: not an RSA key", key.KID)
		}
		priv.Precompute()
		ring.private[key.KID] = &privateKey{key: priv, retiresAt: key.RetiresAt}
	}
	k.ring.Store(ring)
	return ring, nil
}

func (k *Keys) insertParams(priv *rsa.PrivateKey) (*store.JWEKeyInsertParams, *PublicJWK, error) {
	jwk := publicJWK(&priv.PublicKey)
	public, err := json.Marshal(jwk)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, nil, err
	}
	sealed := k.box.Seal(der, "jwe_key:"+jwk.Kid)
	clear(der)
	return &store.JWEKeyInsertParams{KID: jwk.Kid, PublicJWK: public, PrivateSealed: sealed}, jwk, nil
}

func (k *Keys) generate(ctx context.Context, now time.Time) (*store.JWEKey, error) {
	priv, err := rsa.GenerateKey(rand.Reader, KeyBits)
	if err != nil {
		return nil, fmt.Errorf("card: generate key: %w", err)
	}
	params, _, err := k.insertParams(priv)
	if err != nil {
		return nil, fmt.Errorf("card: generate key: %w", err)
	}
	params.Bootstrap, params.CreatedAt = true, now
	key, err := k.store.JWEKeyInsert(ctx, params)
	if errors.Is(err, store.ErrConflict) {
		// Another node made the first key at the same time: use theirs.
		keys, err := k.store.JWEKeyListUsable(ctx, now)
		if err != nil {
			return nil, fmt.Errorf("card: generate key: %w", err)
		}
		if len(keys) == 0 {
			return nil, errors.New("card: generate key: the bootstrap key exists but is not usable")
		}
		return keys[0], nil
	}
	if err != nil {
		return nil, fmt.Errorf("card: generate key: %w", err)
	}
	return key, nil
}

// publicJWK describes pub as an encryption JWK whose kid is its RFC 7638
// thumbprint.
func publicJWK(pub *rsa.PublicKey) *PublicJWK {
	n := base64.RawURLEncoding.EncodeToString(pub.N.Bytes())
	e := base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes())
	// RFC 7638: the required members in lexicographic order, no spaces.
	thumb := sha256.Sum256([]byte(`{"e":"` + e + `","kty":"RSA","n":"` + n + `"}`))
	return &PublicJWK{
		Alg:    "RSA-OAEP-256",
		E:      e,
		KeyOps: []string{"encrypt"},
		Kid:    base64.RawURLEncoding.EncodeToString(thumb[:]),
		Kty:    "RSA",
		N:      n,
		Use:    "enc",
	}
}
