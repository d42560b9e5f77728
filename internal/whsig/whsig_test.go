package whsig_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hitchdev/hitch/client"
	"github.com/hitchdev/hitch/internal/whsig"
	"github.com/hitchdev/hitch/internal/whsig/whsigtest"
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
		Name          string  `json:"name"`
		ClientSecret  string  `json:"client_secret"`
		ContentType   string  `json:"content_type"`
		ContentLength int     `json:"content_length"`
		Event         string  `json:"event"`
		SessionID     *string `json:"session_id"`
		Body          string  `json:"body"`
		Signature     string  `json:"signature"`
	} `json:"knot"`
}

func loadVectors(t *testing.T) vectors {
	t.Helper()
	b, err := os.ReadFile("../../testdata/webhooks/vectors.json")
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

func TestSignVectors(t *testing.T) {
	t.Parallel()
	for _, tc := range loadVectors(t).Standard {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			ts := time.Unix(tc.Timestamp, 0)
			got, err := whsig.Sign(tc.ID, ts, []byte(tc.Body), tc.Secrets...)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.Signature {
				t.Errorf("Sign = %q, want %q", got, tc.Signature)
			}
			h, err := whsig.Headers(tc.ID, ts, []byte(tc.Body), tc.Secrets...)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{
				"webhook-id":        tc.ID,
				"webhook-timestamp": strconv.FormatInt(tc.Timestamp, 10),
				"webhook-signature": tc.Signature,
			}
			for name, v := range want {
				if got := h.Get(name); got != v {
					t.Errorf("header %s = %q, want %q", name, got, v)
				}
			}
			if len(h) != len(want) {
				t.Errorf("Headers set %d headers, want %d: %v", len(h), len(want), h)
			}
		})
	}
}

func TestKnotSignatureVectors(t *testing.T) {
	t.Parallel()
	for _, tc := range loadVectors(t).Knot {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			if tc.ContentLength != len(tc.Body) {
				t.Fatalf("vector content_length %d, body has %d bytes", tc.ContentLength, len(tc.Body))
			}
			got := whsig.KnotSignature(tc.ClientSecret, tc.ContentLength, tc.ContentType, tc.Event, tc.SessionID)
			if got != tc.Signature {
				t.Errorf("KnotSignature = %q, want %q", got, tc.Signature)
			}
		})
	}
}

func TestKnotSignatureSessionIDMatters(t *testing.T) {
	t.Parallel()
	empty, other := "", "ses_2"
	none := whsig.KnotSignature("k", 10, "application/json", "CARD_UPDATED", nil)
	withEmpty := whsig.KnotSignature("k", 10, "application/json", "CARD_UPDATED", &empty)
	withOther := whsig.KnotSignature("k", 10, "application/json", "CARD_UPDATED", &other)
	if none == withEmpty || none == withOther || withEmpty == withOther {
		t.Fatalf("signatures collide: nil %q, empty %q, ses_2 %q", none, withEmpty, withOther)
	}
}

func TestNewSecret(t *testing.T) {
	t.Parallel()
	a, err := whsig.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	b, err := whsig.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Fatal("two new secrets are equal")
	}
	if !strings.HasPrefix(a, "whsec_") {
		t.Fatalf("secret %q lacks whsec_ prefix", a)
	}
	key, err := whsig.ParseSecret(a)
	if err != nil {
		t.Fatal(err)
	}
	if len(key) != whsig.SecretSize {
		t.Fatalf("key is %d bytes, want %d", len(key), whsig.SecretSize)
	}
	if enc := base64.StdEncoding.EncodeToString(key); "whsec_"+enc != a {
		t.Fatalf("ParseSecret does not invert NewSecret: %q vs %q", enc, a)
	}
}

func TestParseSecret(t *testing.T) {
	t.Parallel()
	key, err := whsig.ParseSecret("whsec_AAECAw==")
	if err != nil || !bytes.Equal(key, []byte{0, 1, 2, 3}) {
		t.Fatalf("ParseSecret = %v, %v; want [0 1 2 3]", key, err)
	}
	for name, secret := range map[string]string{
		"empty":              "",
		"no prefix":          "AAECAw==",
		"other prefix":       "hsk_AAECAw==",
		"prefix only":        "whsec_",
		"not base64":         "whsec_not base64!",
		"url-safe alphabet":  "whsec_-_-_",
		"missing padding":    "whsec_AAECAw",
		"prefix in the name": "WHSEC_AAECAw==",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, err := whsig.ParseSecret(secret); !errors.Is(err, whsig.ErrInvalidSecret) {
				t.Fatalf("ParseSecret(%q) error = %v, want ErrInvalidSecret", secret, err)
			}
		})
	}
}

func TestSignRejects(t *testing.T) {
	t.Parallel()
	good, _ := whsig.NewSecret()
	now := time.Now()
	if _, err := whsig.Sign("msg_1", now, nil); err == nil {
		t.Error("Sign without secrets succeeded")
	}
	if _, err := whsig.Sign("", now, nil, good); err == nil {
		t.Error("Sign with an empty id succeeded")
	}
	_, err := whsig.Sign("msg_1", now, nil, good, "whsec_%%%")
	if !errors.Is(err, whsig.ErrInvalidSecret) || !strings.Contains(err.Error(), "secret 2 of 2") {
		t.Errorf("Sign with a bad second secret: error = %v, want ErrInvalidSecret naming secret 2", err)
	}
	if h, err := whsig.Headers("msg_1", now, nil, "nope"); err == nil || h != nil {
		t.Errorf("Headers with a bad secret = %v, %v; want nil and an error", h, err)
	}
}

func TestSignRotationListsEachSecret(t *testing.T) {
	t.Parallel()
	oldSecret, _ := whsig.NewSecret()
	newSecret, _ := whsig.NewSecret()
	ts, body := time.Unix(1767225600, 0), []byte(`{"event":"CARD_UPDATED"}`)
	both, err := whsig.Sign("msg_1", ts, body, oldSecret, newSecret)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := whsig.Sign("msg_1", ts, body, oldSecret)
	b, _ := whsig.Sign("msg_1", ts, body, newSecret)
	if both != a+" "+b {
		t.Fatalf("Sign(old, new) = %q, want %q", both, a+" "+b)
	}
}

// TestAgainstNodeStandardWebhooks signs with whsig and checks that the
// reference npm library and client.VerifyWebhook both reach the expected
// verdict.
func TestAgainstNodeStandardWebhooks(t *testing.T) {
	t.Parallel()
	verify := whsigtest.NodeVerifier(t)
	oldSecret, _ := whsig.NewSecret()
	newSecret, _ := whsig.NewSecret()
	otherSecret, _ := whsig.NewSecret()
	body := []byte(`{"event":"CARD_UPDATED","session_id":"ses_1","merchant":{"id":19,"name":"Café"},"timestamp":1767225600123}`)
	now := time.Now()

	for _, tc := range []struct {
		name      string
		signWith  []string
		sentAt    time.Time
		body      []byte // received body; nil means the signed one
		verifyAs  string
		wantValid bool
		nodeSays  string // part of the library's message on rejection
		goWant    error  // client's reason on rejection
	}{
		{name: "valid", signWith: []string{oldSecret}, sentAt: now, verifyAs: oldSecret, wantValid: true},
		{name: "tampered body", signWith: []string{oldSecret}, sentAt: now, body: bytes.Replace(body, []byte("ses_1"), []byte("ses_2"), 1), verifyAs: oldSecret, nodeSays: "No matching signature found", goWant: client.ErrNoMatchingSignature},
		{name: "wrong secret", signWith: []string{oldSecret}, sentAt: now, verifyAs: otherSecret, nodeSays: "No matching signature found", goWant: client.ErrNoMatchingSignature},
		{name: "rotation, old secret", signWith: []string{oldSecret, newSecret}, sentAt: now, verifyAs: oldSecret, wantValid: true},
		{name: "rotation, new secret", signWith: []string{oldSecret, newSecret}, sentAt: now, verifyAs: newSecret, wantValid: true},
		{name: "rotation, unrelated secret", signWith: []string{oldSecret, newSecret}, sentAt: now, verifyAs: otherSecret, nodeSays: "No matching signature found", goWant: client.ErrNoMatchingSignature},
		{name: "too old", signWith: []string{oldSecret}, sentAt: now.Add(-10 * time.Minute), verifyAs: oldSecret, nodeSays: "Message timestamp too old", goWant: client.ErrTimestampTooOld},
		{name: "too new", signWith: []string{oldSecret}, sentAt: now.Add(10 * time.Minute), verifyAs: oldSecret, nodeSays: "Message timestamp too new", goWant: client.ErrTimestampTooNew},
		{name: "within tolerance", signWith: []string{oldSecret}, sentAt: now.Add(-3 * time.Minute), verifyAs: oldSecret, wantValid: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, err := whsig.Headers("msg_"+strings.ReplaceAll(tc.name, " ", "_"), tc.sentAt, body, tc.signWith...)
			if err != nil {
				t.Fatal(err)
			}
			received := body
			if tc.body != nil {
				received = tc.body
			}
			nodeErr := verify(h, received, tc.verifyAs)
			goErr := client.VerifyWebhook(h, received, tc.verifyAs, 0)
			if (nodeErr == nil) != tc.wantValid {
				t.Errorf("standardwebhooks: err = %v, want valid = %v", nodeErr, tc.wantValid)
			}
			if nodeErr != nil && !strings.Contains(nodeErr.Error(), tc.nodeSays) {
				t.Errorf("standardwebhooks rejected for another reason: %v, want %q", nodeErr, tc.nodeSays)
			}
			if (goErr == nil) != tc.wantValid {
				t.Errorf("client.VerifyWebhook: err = %v, want valid = %v", goErr, tc.wantValid)
			}
			if goErr != nil && !errors.Is(goErr, tc.goWant) {
				t.Errorf("client.VerifyWebhook rejected for another reason: %v, want %v", goErr, tc.goWant)
			}
		})
	}
}
