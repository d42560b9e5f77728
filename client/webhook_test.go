package client_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hitchdev/hitch/client"
	"github.com/hitchdev/hitch/internal/whsig"
)

// vectors mirrors testdata/webhooks/vectors.json (see its README).
type vectors struct {
	Standard []struct {
		Name      string   `json:"name"`
		Secrets   []string `json:"secrets"`
		ID        string   `json:"id"`
		Timestamp int64    `json:"timestamp"`
		Body      string   `json:"body"`
		Signature string   `json:"signature"`
	} `json:"standard"`
	Knot []struct {
		Name         string `json:"name"`
		ClientSecret string `json:"client_secret"`
		ContentType  string `json:"content_type"`
		Body         string `json:"body"`
		Signature    string `json:"signature"`
	} `json:"knot"`
}

func loadVectors(t *testing.T) vectors {
	t.Helper()
	b, err := os.ReadFile("../testdata/webhooks/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Standard) == 0 || len(v.Knot) == 0 {
		t.Fatal("vectors.json has no standard or no knot cases")
	}
	return v
}

// forever accepts the vectors' fixed timestamps, the oldest of which is 1970.
const forever = time.Duration(math.MaxInt64)

const unrelatedSecret = "whsec_c2VjcmV0IG9mIGFub3RoZXIgZW5kcG9pbnQ="

func TestVerifyWebhookVectors(t *testing.T) {
	t.Parallel()
	for _, tc := range loadVectors(t).Standard {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			h.Set("webhook-id", tc.ID)
			h.Set("webhook-timestamp", strconv.FormatInt(tc.Timestamp, 10))
			h.Set("webhook-signature", tc.Signature)
			for _, secret := range tc.Secrets {
				if err := client.VerifyWebhook(h, []byte(tc.Body), secret, forever); err != nil {
					t.Errorf("secret %s: %v", secret, err)
				}
			}
			err := client.VerifyWebhook(h, []byte(tc.Body), unrelatedSecret, forever)
			if !errors.Is(err, client.ErrNoMatchingSignature) {
				t.Errorf("unrelated secret: err = %v, want ErrNoMatchingSignature", err)
			}
			err = client.VerifyWebhook(h, append([]byte(tc.Body), ' '), tc.Secrets[0], forever)
			if !errors.Is(err, client.ErrNoMatchingSignature) {
				t.Errorf("body with a space added: err = %v, want ErrNoMatchingSignature", err)
			}
		})
	}
}

func TestVerifyKnotSignatureVectors(t *testing.T) {
	t.Parallel()
	for _, tc := range loadVectors(t).Knot {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			h.Set("Knot-Signature", tc.Signature)
			h.Set("Encryption-Type", "HMAC-SHA256")
			h.Set("Content-Type", tc.ContentType)
			if err := client.VerifyKnotSignature(h, []byte(tc.Body), tc.ClientSecret); err != nil {
				t.Fatal(err)
			}
			// Any change of length alters the signed Content-Length.
			err := client.VerifyKnotSignature(h, append([]byte(tc.Body), '\n'), tc.ClientSecret)
			if !errors.Is(err, client.ErrNoMatchingSignature) {
				t.Errorf("longer body: err = %v, want ErrNoMatchingSignature", err)
			}
		})
	}
}

// signed returns Standard Webhooks headers from the server's signer, the
// implementation the client is cross-checked against.
func signed(t *testing.T, id string, at time.Time, body []byte, secrets ...string) http.Header {
	t.Helper()
	h, err := whsig.Headers(id, at, body, secrets...)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func newSecret(t *testing.T) string {
	t.Helper()
	s, err := whsig.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestVerifyWebhookFailures(t *testing.T) {
	t.Parallel()
	secret := newSecret(t)
	body := []byte(`{"event":"CARD_UPDATED","data":{"card_id":"card-1"}}`)
	now := time.Now()
	valid := signed(t, "msg_1", now, body, secret)

	with := func(name, value string) http.Header {
		h := valid.Clone()
		if value == "" {
			h.Del(name)
		} else {
			h.Set(name, value)
		}
		return h
	}
	sig := valid.Get("webhook-signature")
	sigValue := strings.TrimPrefix(sig, "v1,")

	for _, tc := range []struct {
		name      string
		headers   http.Header
		body      []byte // nil means the signed body
		secret    string // "" means the signing secret
		tolerance time.Duration
		want      error // nil means valid
	}{
		{name: "valid", headers: valid},
		{name: "valid with another scheme listed first", headers: with("webhook-signature", "v1a,bm90IGNoZWNrZWQ= "+sig)},
		{name: "valid 4 minutes old", headers: signed(t, "msg_1", now.Add(-4*time.Minute), body, secret)},
		{name: "valid 4 minutes ahead", headers: signed(t, "msg_1", now.Add(4*time.Minute), body, secret)},
		{name: "valid 20 minutes old within a 30 minute tolerance", headers: signed(t, "msg_1", now.Add(-20*time.Minute), body, secret), tolerance: 30 * time.Minute},

		{name: "missing webhook-id", headers: with("webhook-id", ""), want: client.ErrMissingHeader},
		{name: "missing webhook-timestamp", headers: with("webhook-timestamp", ""), want: client.ErrMissingHeader},
		{name: "missing webhook-signature", headers: with("webhook-signature", ""), want: client.ErrMissingHeader},
		{name: "no headers", headers: http.Header{}, want: client.ErrMissingHeader},

		{name: "timestamp not a number", headers: with("webhook-timestamp", "yesterday"), want: client.ErrInvalidTimestamp},
		{name: "timestamp out of range", headers: with("webhook-timestamp", "99999999999999999999"), want: client.ErrInvalidTimestamp},
		{name: "timestamp with fraction", headers: with("webhook-timestamp", strconv.FormatInt(now.Unix(), 10)+".5"), want: client.ErrInvalidTimestamp},
		{name: "timestamp as RFC 3339", headers: with("webhook-timestamp", now.UTC().Format(time.RFC3339)), want: client.ErrInvalidTimestamp},

		{name: "6 minutes old", headers: signed(t, "msg_1", now.Add(-6*time.Minute), body, secret), want: client.ErrTimestampTooOld},
		{name: "90 seconds old with a 1 minute tolerance", headers: signed(t, "msg_1", now.Add(-90*time.Second), body, secret), tolerance: time.Minute, want: client.ErrTimestampTooOld},
		{name: "timestamp in milliseconds", headers: with("webhook-timestamp", strconv.FormatInt(now.UnixMilli(), 10)), want: client.ErrTimestampTooNew},
		{name: "6 minutes ahead", headers: signed(t, "msg_1", now.Add(6*time.Minute), body, secret), want: client.ErrTimestampTooNew},
		{name: "90 seconds ahead with a 1 minute tolerance", headers: signed(t, "msg_1", now.Add(90*time.Second), body, secret), tolerance: time.Minute, want: client.ErrTimestampTooNew},
		{name: "timestamp moved within tolerance", headers: with("webhook-timestamp", strconv.FormatInt(now.Unix()-60, 10)), want: client.ErrNoMatchingSignature},

		{name: "tampered body", headers: valid, body: bytes.Replace(body, []byte("card-1"), []byte("card-2"), 1), want: client.ErrNoMatchingSignature},
		{name: "empty body", headers: valid, body: []byte{}, want: client.ErrNoMatchingSignature},
		{name: "other id", headers: with("webhook-id", "msg_2"), want: client.ErrNoMatchingSignature},
		{name: "wrong secret", headers: valid, secret: unrelatedSecret, want: client.ErrNoMatchingSignature},
		{name: "signature without version", headers: with("webhook-signature", sigValue), want: client.ErrNoMatchingSignature},
		{name: "signature under another version", headers: with("webhook-signature", "v2,"+sigValue), want: client.ErrNoMatchingSignature},
		{name: "signature truncated", headers: with("webhook-signature", sig[:len(sig)-2]), want: client.ErrNoMatchingSignature},
		{name: "blank signature list", headers: with("webhook-signature", "   "), want: client.ErrNoMatchingSignature},

		{name: "secret without prefix", headers: valid, secret: strings.TrimPrefix(secret, "whsec_"), want: client.ErrInvalidSecret},
		{name: "secret not base64", headers: valid, secret: "whsec_***", want: client.ErrInvalidSecret},
		{name: "secret prefix only", headers: valid, secret: "whsec_", want: client.ErrInvalidSecret},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, s := body, secret
			if tc.body != nil {
				b = tc.body
			}
			if tc.secret != "" {
				s = tc.secret
			}
			err := client.VerifyWebhook(tc.headers, b, s, tc.tolerance)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("err = %v, want valid", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestVerifyWebhookErrorNamesTheHeader(t *testing.T) {
	t.Parallel()
	secret := newSecret(t)
	h := signed(t, "msg_1", time.Now(), nil, secret)
	h.Del("webhook-timestamp")
	err := client.VerifyWebhook(h, nil, secret, 0)
	if !errors.Is(err, client.ErrMissingHeader) || !strings.Contains(err.Error(), "webhook-timestamp") {
		t.Fatalf("err = %v, want ErrMissingHeader naming webhook-timestamp", err)
	}
}

// TestVerifyWebhookRoundTrip sends a delivery signed by the server's signer
// over real HTTP and verifies it in the receiving handler, as a receiver
// would, where header names arrive canonicalised.
func TestVerifyWebhookRoundTrip(t *testing.T) {
	t.Parallel()
	oldSecret, newSecret := newSecret(t), newSecret(t)
	body := []byte(`{"event":"NEW_TRANSACTIONS_AVAILABLE","external_user_id":"user-1","merchant":{"id":19,"name":"DoorDash"},"timestamp":1767225600123}`)

	for _, tc := range []struct {
		name       string
		signWith   []string
		receiverAs string
		want       error
	}{
		{"one secret", []string{oldSecret}, oldSecret, nil},
		{"rotation, receiver still on the old secret", []string{oldSecret, newSecret}, oldSecret, nil},
		{"rotation, receiver already on the new secret", []string{oldSecret, newSecret}, newSecret, nil},
		{"rotation, receiver on an unrelated secret", []string{oldSecret, newSecret}, unrelatedSecret, client.ErrNoMatchingSignature},
		{"receiver moved on before the server", []string{oldSecret}, newSecret, client.ErrNoMatchingSignature},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := make(chan error, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, err := io.ReadAll(r.Body)
				if err != nil {
					got <- err
					return
				}
				got <- client.VerifyWebhook(r.Header, b, tc.receiverAs, 0)
			}))
			defer srv.Close()

			req, err := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			for name, values := range signed(t, "msg_round_trip", time.Now(), body, tc.signWith...) {
				req.Header[name] = values
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()

			err = <-got
			if tc.want == nil && err != nil {
				t.Fatalf("err = %v, want valid", err)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestVerifyKnotSignature(t *testing.T) {
	t.Parallel()
	const secret = "hsk_test_client_secret"
	sessionID := "ses_1"
	body := []byte(`{"event":"AUTHENTICATED","session_id":"ses_1","task_id":7,"data":{"card_id":"c1","send_card":true}}`)
	noSession := []byte(`{"event":"NEW_TRANSACTIONS_AVAILABLE","external_user_id":"user-1"}`)
	headersFor := func(b []byte, event string, sid *string) http.Header {
		h := http.Header{}
		h.Set("Knot-Signature", whsig.KnotSignature(secret, len(b), "application/json", event, sid))
		h.Set("Encryption-Type", "HMAC-SHA256")
		h.Set("Content-Type", "application/json")
		return h
	}
	valid := headersFor(body, "AUTHENTICATED", &sessionID)
	with := func(name, value string) http.Header {
		h := valid.Clone()
		if value == "" {
			h.Del(name)
		} else {
			h.Set(name, value)
		}
		return h
	}

	for _, tc := range []struct {
		name    string
		headers http.Header
		body    []byte // nil means body
		secret  string // "" means secret
		want    error
	}{
		{name: "valid", headers: valid},
		{name: "valid without session id", headers: headersFor(noSession, "NEW_TRANSACTIONS_AVAILABLE", nil), body: noSession},

		{name: "missing Knot-Signature", headers: with("Knot-Signature", ""), want: client.ErrMissingHeader},
		{name: "missing Encryption-Type", headers: with("Encryption-Type", ""), want: client.ErrMissingHeader},
		{name: "missing Content-Type", headers: with("Content-Type", ""), want: client.ErrMissingHeader},
		{name: "other encryption type", headers: with("Encryption-Type", "HMAC-SHA1"), want: client.ErrUnsupportedEncryption},

		{name: "body not JSON", headers: valid, body: []byte("event=AUTHENTICATED"), want: client.ErrInvalidBody},
		{name: "body without event", headers: valid, body: []byte(`{"session_id":"ses_1"}`), want: client.ErrInvalidBody},
		{name: "event not a string", headers: valid, body: []byte(`{"event":7}`), want: client.ErrInvalidBody},

		{name: "wrong secret", headers: valid, secret: "hsk_other", want: client.ErrNoMatchingSignature},
		{name: "other content type", headers: with("Content-Type", "text/plain"), want: client.ErrNoMatchingSignature},
		{name: "other event, same length", headers: valid, body: bytes.Replace(body, []byte("AUTHENTICATED"), []byte("AUTHENTICATEE"), 1), want: client.ErrNoMatchingSignature},
		{name: "other session, same length", headers: valid, body: bytes.Replace(body, []byte("ses_1"), []byte("ses_2"), 1), want: client.ErrNoMatchingSignature},
		{name: "session id added", headers: headersFor(noSession, "NEW_TRANSACTIONS_AVAILABLE", nil), body: []byte(`{"event":"NEW_TRANSACTIONS_AVAILABLE","session_id":"x"}`), want: client.ErrNoMatchingSignature},
		{name: "signature for a nil session on a body with one", headers: headersFor(body, "AUTHENTICATED", nil), want: client.ErrNoMatchingSignature},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, s := body, secret
			if tc.body != nil {
				b = tc.body
			}
			if tc.secret != "" {
				s = tc.secret
			}
			err := client.VerifyKnotSignature(tc.headers, b, s)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("err = %v, want valid", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if err := client.VerifyKnotSignature(valid, body, ""); !errors.Is(err, client.ErrInvalidSecret) {
		t.Errorf("empty client secret: err = %v, want ErrInvalidSecret", err)
	}
}
