// Package whsig signs outgoing webhooks. Every delivery carries two
// signatures: Standard Webhooks v1 (https://www.standardwebhooks.com), which
// covers the id, the time and the body, and the Knot-Signature of the public
// service, kept so that receivers written against it work unchanged although
// it covers neither the body nor a time.
//
// Receivers verify with client.VerifyWebhook and client.VerifyKnotSignature,
// a separate implementation that the tests check against this one.
package whsig

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Standard Webhooks header names.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// Knot compatibility header names and the only encryption type.
const (
	HeaderKnotSignature  = "Knot-Signature"
	HeaderEncryptionType = "Encryption-Type"
	EncryptionType       = "HMAC-SHA256"
)

// SecretPrefix starts every signing secret, as in other Standard Webhooks
// senders, so that a secret is recognisable in a config file or a log alert.
const SecretPrefix = "whsec_"

// SecretSize is the number of random bytes in a secret made by NewSecret.
const SecretSize = 32

// ErrInvalidSecret is returned for a signing secret that is not "whsec_"
// followed by standard base64 of at least one byte.
var ErrInvalidSecret = errors.New("whsig: invalid signing secret")

// NewSecret returns a new signing secret: "whsec_" and the standard base64 of
// 32 random bytes.
func NewSecret() (string, error) {
	key := make([]byte, SecretSize)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("whsig: new secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(key), nil
}

// ParseSecret returns the key bytes of a "whsec_" secret.
func ParseSecret(s string) ([]byte, error) {
	encoded, ok := strings.CutPrefix(s, SecretPrefix)
	if !ok {
		return nil, fmt.Errorf("%w: missing %q prefix", ErrInvalidSecret, SecretPrefix)
	}
	key, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return nil, fmt.Errorf("%w: not standard base64 after %q: %v", ErrInvalidSecret, SecretPrefix, err)
	}
	if len(key) == 0 {
		return nil, fmt.Errorf("%w: empty key", ErrInvalidSecret)
	}
	return key, nil
}

// Sign returns the value of the webhook-signature header: one
// "v1,<base64 HMAC-SHA256 of id.timestamp.body>" per secret, separated by
// spaces. Several secrets are given while a secret is being rotated, so that
// receivers holding either the old or the new one accept the delivery.
func Sign(id string, timestamp time.Time, body []byte, secrets ...string) (string, error) {
	if id == "" {
		return "", errors.New("whsig: empty webhook id")
	}
	if len(secrets) == 0 {
		return "", errors.New("whsig: no signing secret")
	}
	signed := signedContent(id, timestamp, body)
	sigs := make([]string, 0, len(secrets))
	for i, secret := range secrets {
		key, err := ParseSecret(secret)
		if err != nil {
			return "", fmt.Errorf("%w (secret %d of %d)", err, i+1, len(secrets))
		}
		mac := hmac.New(sha256.New, key)
		mac.Write(signed)
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	}
	return strings.Join(sigs, " "), nil
}

// signedContent is "<id>.<unix seconds>.<body>", the bytes Standard Webhooks
// v1 signs.
func signedContent(id string, timestamp time.Time, body []byte) []byte {
	ts := strconv.FormatInt(timestamp.Unix(), 10)
	b := make([]byte, 0, len(id)+1+len(ts)+1+len(body))
	b = append(b, id...)
	b = append(b, '.')
	b = append(b, ts...)
	b = append(b, '.')
	return append(b, body...)
}

// Headers returns the webhook-id, webhook-timestamp (Unix seconds) and
// webhook-signature headers of a delivery, signed as Sign does.
func Headers(id string, timestamp time.Time, body []byte, secrets ...string) (http.Header, error) {
	sig, err := Sign(id, timestamp, body, secrets...)
	if err != nil {
		return nil, err
	}
	h := make(http.Header, 3)
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(timestamp.Unix(), 10))
	h.Set(HeaderSignature, sig)
	return h, nil
}

// KnotSignature returns the Knot-Signature header value of the public
// service: base64 of HMAC-SHA256, keyed with the client secret as given, over
// "Content-Length|<len>|Content-Type|<type>|Encryption-Type|HMAC-SHA256|event|<event>"
// followed by "|session_id|<id>" when sessionID is not nil. It is sent with
// the header "Encryption-Type: HMAC-SHA256".
func KnotSignature(clientSecret string, contentLength int, contentType, event string, sessionID *string) string {
	mac := hmac.New(sha256.New, []byte(clientSecret))
	mac.Write([]byte(knotSignedContent(contentLength, contentType, event, sessionID)))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

func knotSignedContent(contentLength int, contentType, event string, sessionID *string) string {
	s := "Content-Length|" + strconv.Itoa(contentLength) +
		"|Content-Type|" + contentType +
		"|Encryption-Type|" + EncryptionType +
		"|event|" + event
	if sessionID != nil {
		s += "|session_id|" + *sessionID
	}
	return s
}
