package card

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// MaxJWESize bounds a compact JWE of card data. A card data payload is well
// under 1 KiB; its JWE under a 4096-bit key is under 2 KiB.
const MaxJWESize = 8 << 10

// The only algorithms accepted: RSA-OAEP with SHA-256 for the key, AES-256
// in GCM for the content (the public service's choice).
const (
	KeyAlgorithm      = "RSA-OAEP-256"
	ContentEncryption = "A256GCM"
)

// forcedReloadEvery bounds how often a JWE naming an unknown kid makes this
// node read the keys again (another node may have rotated): a stream of
// made-up kids must not become a stream of database reads.
const forcedReloadEvery = time.Second

// JWEError is a JWE that cannot be accepted. Reason is safe to show: it
// never holds the token or anything decrypted.
type JWEError struct{ Reason string }

func (e *JWEError) Error() string { return "card: invalid JWE: " + e.Reason }

func jweError(reason string) error { return &JWEError{Reason: reason} }

// jweHeader is the protected header, read before any cryptography so that
// every refusal names its reason.
type jweHeader struct {
	Alg  string          `json:"alg"`
	Enc  string          `json:"enc"`
	Kid  string          `json:"kid"`
	Crit json.RawMessage `json:"crit"`
}

// Decrypt opens a compact JWE of card data made with one of the usable
// keys and returns its plaintext. Only RSA-OAEP-256 with A256GCM, with a
// kid, without compression, is accepted; anything else is a *JWEError.
func (k *Keys) Decrypt(ctx context.Context, compact string) ([]byte, error) {
	if len(compact) > MaxJWESize {
		return nil, jweError("the JWE is larger than 8 KiB")
	}
	if strings.HasPrefix(strings.TrimSpace(compact), "{") {
		return nil, jweError("only the compact serialization is accepted")
	}
	if strings.Count(compact, ".") != 4 {
		return nil, jweError("a compact JWE has five parts separated by dots")
	}
	rawHeader, err := base64.RawURLEncoding.DecodeString(compact[:strings.IndexByte(compact, '.')])
	if err != nil {
		return nil, jweError("the protected header is not base64url")
	}
	var header jweHeader
	var fields map[string]json.RawMessage
	if json.Unmarshal(rawHeader, &header) != nil || json.Unmarshal(rawHeader, &fields) != nil {
		return nil, jweError("the protected header is not a JSON object")
	}
	switch {
	case header.Alg != KeyAlgorithm:
		return nil, jweError(`the "alg" header must be ` + KeyAlgorithm)
	case header.Enc != ContentEncryption:
		return nil, jweError(`the "enc" header must be ` + ContentEncryption)
	case header.Kid == "":
		return nil, jweError(`the "kid" header is required`)
	case fields["zip"] != nil:
		return nil, jweError("compressed JWEs are not accepted")
	case header.Crit != nil:
		return nil, jweError(`the "crit" header is not supported`)
	}
	obj, err := jose.ParseEncryptedCompact(compact,
		[]jose.KeyAlgorithm{jose.RSA_OAEP_256}, []jose.ContentEncryption{jose.A256GCM})
	if err != nil {
		return nil, jweError("the JWE cannot be parsed")
	}
	priv, err := k.privateKey(ctx, header.Kid)
	if err != nil {
		return nil, err
	}
	plaintext, err := obj.Decrypt(priv)
	if err != nil {
		// Wrong key, tampered ciphertext or tag: one answer for all, so
		// that the reply tells an attacker nothing about which.
		return nil, jweError("the JWE cannot be decrypted")
	}
	return plaintext, nil
}

// privateKey returns the private key of kid while it is usable.
func (k *Keys) privateKey(ctx context.Context, kid string) (any, error) {
	ring, err := k.keyring(ctx, false)
	if err != nil {
		return nil, err
	}
	key := ring.private[kid]
	if key == nil && !ring.retired[kid] && k.now().Sub(ring.loaded) >= forcedReloadEvery {
		// Perhaps a key made since this node last looked.
		if ring, err = k.keyring(ctx, true); err != nil {
			return nil, err
		}
		key = ring.private[kid]
	}
	switch {
	case key != nil && (key.retiresAt == nil || key.retiresAt.After(k.now())):
		return key.key, nil
	case key != nil || ring.retired[kid]:
		return nil, jweError(`the key named by "kid" has been retired; fetch GET /jwe/key again`)
	default:
		return nil, jweError(`the "kid" header names no key of this deployment`)
	}
}
