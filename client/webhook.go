package client

// Webhook verification for receivers. This file imports only the standard
// library so that it can be copied into a project that does not use the rest
// of the client.

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultWebhookTolerance is how far a webhook-timestamp may be from now when
// VerifyWebhook is given a tolerance of 0.
const DefaultWebhookTolerance = 5 * time.Minute

// Reasons a webhook fails verification, for errors.Is. The returned errors
// wrap one of these with detail.
var (
	// ErrMissingHeader: a signature header is absent or empty.
	ErrMissingHeader = errors.New("hitch: webhook: missing header")
	// ErrInvalidTimestamp: webhook-timestamp is not Unix seconds.
	ErrInvalidTimestamp = errors.New("hitch: webhook: invalid timestamp")
	// ErrTimestampTooOld: webhook-timestamp is further in the past than the
	// tolerance, as a replayed delivery would be.
	ErrTimestampTooOld = errors.New("hitch: webhook: timestamp too old")
	// ErrTimestampTooNew: webhook-timestamp is further in the future than
	// the tolerance.
	ErrTimestampTooNew = errors.New("hitch: webhook: timestamp too new")
	// ErrNoMatchingSignature: no signature in the header matches the body
	// under the secret.
	ErrNoMatchingSignature = errors.New("hitch: webhook: no matching signature")
	// ErrInvalidSecret: the secret given to the verifier is malformed.
	ErrInvalidSecret = errors.New("hitch: webhook: invalid secret")
	// ErrUnsupportedEncryption: Encryption-Type is not HMAC-SHA256.
	ErrUnsupportedEncryption = errors.New("hitch: webhook: unsupported encryption type")
	// ErrInvalidBody: the body is not a JSON object with a string event.
	ErrInvalidBody = errors.New("hitch: webhook: invalid body")
)

// VerifyWebhook checks the Standard Webhooks v1 signature of a delivery:
// headers webhook-id, webhook-timestamp and webhook-signature, the raw body as
// received, and the endpoint's signing secret ("whsec_..."). The timestamp
// must be within tolerance of now (0 means DefaultWebhookTolerance), which
// bounds replays; receivers should also drop webhook-id values they have
// already handled. While Hitch rotates a secret it signs with both the old
// and the new one, and either verifies.
func VerifyWebhook(headers http.Header, body []byte, secret string, tolerance time.Duration) error {
	key, err := parseWebhookSecret(secret)
	if err != nil {
		return err
	}
	id, err := requiredHeader(headers, "webhook-id")
	if err != nil {
		return err
	}
	rawTimestamp, err := requiredHeader(headers, "webhook-timestamp")
	if err != nil {
		return err
	}
	signatures, err := requiredHeader(headers, "webhook-signature")
	if err != nil {
		return err
	}

	unix, err := strconv.ParseInt(rawTimestamp, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %q is not Unix seconds", ErrInvalidTimestamp, rawTimestamp)
	}
	if tolerance <= 0 {
		tolerance = DefaultWebhookTolerance
	}
	now := time.Now()
	sent := time.Unix(unix, 0)
	if age := now.Sub(sent); age > tolerance {
		return fmt.Errorf("%w: sent %s ago, tolerance %s", ErrTimestampTooOld, age.Truncate(time.Second), tolerance)
	}
	if ahead := sent.Sub(now); ahead > tolerance {
		return fmt.Errorf("%w: %s in the future, tolerance %s", ErrTimestampTooNew, ahead.Truncate(time.Second), tolerance)
	}

	mac := hmac.New(sha256.New, key)
	// Sign the timestamp as a number, as other Standard Webhooks libraries
	// do, so "+0123" and "123" verify alike.
	mac.Write([]byte(id + "." + strconv.FormatInt(unix, 10) + "."))
	mac.Write(body)
	expected := []byte(base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	for _, versioned := range strings.Split(signatures, " ") {
		version, sig, ok := strings.Cut(versioned, ",")
		if !ok || version != "v1" {
			continue // other schemes may be listed; v1 is the one we check
		}
		if hmac.Equal([]byte(sig), expected) {
			return nil
		}
	}
	return fmt.Errorf("%w for webhook %s", ErrNoMatchingSignature, id)
}

// parseWebhookSecret decodes "whsec_" followed by standard base64.
func parseWebhookSecret(secret string) ([]byte, error) {
	encoded, ok := strings.CutPrefix(secret, "whsec_")
	if !ok {
		return nil, fmt.Errorf(`%w: must start with "whsec_"`, ErrInvalidSecret)
	}
	key, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return nil, fmt.Errorf(`%w: not base64 after "whsec_"`, ErrInvalidSecret)
	}
	if len(key) == 0 {
		return nil, fmt.Errorf("%w: empty key", ErrInvalidSecret)
	}
	return key, nil
}

func requiredHeader(headers http.Header, name string) (string, error) {
	v := headers.Get(name)
	if v == "" {
		return "", fmt.Errorf("%w: %s", ErrMissingHeader, name)
	}
	return v, nil
}

// VerifyKnotSignature checks the Knot-Signature header that Hitch sends for
// receivers written against the public Knot service: base64 of HMAC-SHA256,
// keyed with the client secret, over Content-Length (the body's length),
// Content-Type, Encryption-Type and the body's event and session_id. It
// covers neither the rest of the body nor a time, so prefer VerifyWebhook.
func VerifyKnotSignature(headers http.Header, body []byte, clientSecret string) error {
	if clientSecret == "" {
		return fmt.Errorf("%w: empty client secret", ErrInvalidSecret)
	}
	got, err := requiredHeader(headers, "Knot-Signature")
	if err != nil {
		return err
	}
	encryption, err := requiredHeader(headers, "Encryption-Type")
	if err != nil {
		return err
	}
	if encryption != "HMAC-SHA256" {
		return fmt.Errorf("%w: %q", ErrUnsupportedEncryption, encryption)
	}
	contentType, err := requiredHeader(headers, "Content-Type")
	if err != nil {
		return err
	}
	var envelope struct {
		Event     string  `json:"event"`
		SessionID *string `json:"session_id"`
	}
	if err := json.Unmarshal(body, &envelope); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidBody, err)
	}
	if envelope.Event == "" {
		return fmt.Errorf("%w: no event", ErrInvalidBody)
	}

	signed := "Content-Length|" + strconv.Itoa(len(body)) +
		"|Content-Type|" + contentType +
		"|Encryption-Type|HMAC-SHA256" +
		"|event|" + envelope.Event
	if envelope.SessionID != nil { // absent and null both leave the pair out
		signed += "|session_id|" + *envelope.SessionID
	}
	mac := hmac.New(sha256.New, []byte(clientSecret))
	mac.Write([]byte(signed))
	expected := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if !hmac.Equal([]byte(got), []byte(expected)) {
		return fmt.Errorf("%w: Knot-Signature (event %s)", ErrNoMatchingSignature, envelope.Event)
	}
	return nil
}
