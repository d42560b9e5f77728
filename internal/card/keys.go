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

// Keys serves the current JWE key, generating the first one on demand.
type Keys struct {
	store store.Store
	box   *seal.Box
	now   func() time.Time

	mu      sync.Mutex
	current *PublicJWK
	loaded  time.Time
}

// NewKeys returns a Keys.
func NewKeys(st store.Store, box *seal.Box, now func() time.Time) *Keys {
	return &Keys{store: st, box: box, now: now}
}

// Current returns the newest usable public key, creating one if none exists.
func (k *Keys) Current(ctx context.Context) (*PublicJWK, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := k.now()
	if k.current != nil && now.Sub(k.loaded) < keyCacheTTL {
		return k.current, nil
	}
	keys, err := k.store.JWEKeyListUsable(ctx, now)
	if err != nil {
		return nil, fmt.Errorf("card: current key: %w", err)
	}
	var stored *store.JWEKey
	if len(keys) > 0 {
		stored = keys[0]
	} else if stored, err = k.generate(ctx, now); err != nil {
		return nil, err
	}
	var jwk PublicJWK
	if err := json.Unmarshal(stored.PublicJWK, &jwk); err != nil {
		return nil, fmt.Errorf("card: current key: %w", err)
	}
	k.current, k.loaded = &jwk, now
	return k.current, nil
}

func (k *Keys) generate(ctx context.Context, now time.Time) (*store.JWEKey, error) {
	priv, err := rsa.GenerateKey(rand.Reader, KeyBits)
	if err != nil {
		return nil, fmt.Errorf("card: generate key: %w", err)
	}
	jwk := publicJWK(&priv.PublicKey)
	public, err := json.Marshal(jwk)
	if err != nil {
		return nil, fmt.Errorf("card: generate key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("card: generate key: %w", err)
	}
	key, err := k.store.JWEKeyInsert(ctx, &store.JWEKeyInsertParams{
		KID:           jwk.Kid,
		PublicJWK:     public,
		PrivateSealed: k.box.Seal(der, "jwe_key:"+jwk.Kid),
		Bootstrap:     true,
		CreatedAt:     now,
	})
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
