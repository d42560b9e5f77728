package api_test

import (
	"crypto"
	_ "crypto/sha256" // registers crypto.SHA256 for go-jose
	"encoding/base64"
	"testing"
)

const cryptoSHA256 = crypto.SHA256

func b64url(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func mustB64url(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
