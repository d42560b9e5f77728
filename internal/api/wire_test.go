package api_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"
)

func TestRequestID(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		resp := h.do("GET", "/healthz", nil, nil)
		generated := resp.header.Get("X-Request-Id")
		if !strings.HasPrefix(generated, "req_") {
			t.Fatalf("generated id %q", generated)
		}
		resp = h.do("GET", "/healthz", nil, http.Header{"X-Request-Id": {"trace-0123456789"}})
		if resp.header.Get("X-Request-Id") != "trace-0123456789" {
			t.Fatalf("sane id not honoured: %q", resp.header.Get("X-Request-Id"))
		}
		resp = h.do("GET", "/healthz", nil, http.Header{"X-Request-Id": {"<script>alert(1)</script>"}})
		if got := resp.header.Get("X-Request-Id"); !strings.HasPrefix(got, "req_") {
			t.Fatalf("insane id echoed: %q", got)
		}
	})
}

func TestWireErrors(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		resp := h.do("GET", "/no/such/path", nil, nil)
		if resp.status != 404 || resp.errorBody(t).Code != "NOT_FOUND" {
			t.Fatalf("unknown path: %d %s", resp.status, resp.body)
		}
		resp = h.do("DELETE", "/session/create", nil, nil)
		if resp.status != 405 || resp.header.Get("Allow") != "POST" || resp.errorBody(t).Code != "METHOD_NOT_ALLOWED" {
			t.Fatalf("wrong method: %d %v %s", resp.status, resp.header, resp.body)
		}
		resp = h.do("POST", "/session/create", `{"type":"link","external_user_id":"u"}`, http.Header{"Content-Type": {"text/plain"}})
		if resp.status != 415 || resp.errorBody(t).Code != "UNSUPPORTED_MEDIA_TYPE" {
			t.Fatalf("text/plain body: %d %s", resp.status, resp.body)
		}
		resp = h.do("POST", "/session/create", `{"type":"link","external_user_id":"u"}`, http.Header{"Content-Type": {"application/json; charset=utf-8"}})
		if resp.status != 200 {
			t.Fatalf("JSON with charset: %d %s", resp.status, resp.body)
		}
		big := `{"type":"link","external_user_id":"u","metadata":{"k":"` + strings.Repeat("x", 2<<20) + `"}}`
		resp = h.do("POST", "/session/create", big, nil)
		if resp.status != 413 || resp.errorBody(t).Code != "REQUEST_TOO_LARGE" {
			t.Fatalf("2 MiB body: %d %s", resp.status, resp.body)
		}
		resp = h.do("GET", "/healthz", nil, http.Header{"Knot-Version": {"1.0"}})
		if resp.status != 400 {
			t.Fatalf("unsupported Knot-Version: %d", resp.status)
		}
		resp = h.do("GET", "/healthz", nil, http.Header{"Knot-Version": {"2.0"}})
		if resp.status != 200 || resp.header.Get("Knot-Version") != "2.0" {
			t.Fatalf("Knot-Version 2.0: %d %q", resp.status, resp.header.Get("Knot-Version"))
		}
	})
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		for i := 0; i < 3; i++ {
			if resp := h.do("GET", "/jwe/key", nil, nil); resp.status != 200 {
				t.Fatalf("request %d within the burst: %d", i, resp.status)
			}
		}
		resp := h.do("GET", "/jwe/key", nil, nil)
		if resp.status != 429 || resp.header.Get("Retry-After") == "" || resp.errorBody(t).Code != "RATE_LIMIT_EXCEEDED" {
			t.Fatalf("past the burst: %d %v %s", resp.status, resp.header, resp.body)
		}
		// Another developer has its own bucket.
		other := h.newDeveloper("development")
		if resp := h.do("GET", "/jwe/key", nil, http.Header{"Authorization": {basic(other.ClientID, other.Secret)}}); resp.status != 200 {
			t.Fatalf("other developer: %d", resp.status)
		}
		h.clock.Advance(2e9) // 2 s refill 2 tokens at 1/s
		if resp := h.do("GET", "/jwe/key", nil, nil); resp.status != 200 {
			t.Fatalf("after refill: %d", resp.status)
		}
	}, func(o *harnessOptions) { o.rateLimit, o.rateBurst = 1, 3 })
}

func TestJWEKey(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		k, err := h.api.JWEKey(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if k.Alg != "RSA-OAEP-256" || k.Kty != "RSA" || k.Use != "enc" || len(k.KeyOps) != 1 || k.KeyOps[0] != "encrypt" || k.Kid == "" {
			t.Fatalf("key = %+v", k)
		}
		again, _ := h.api.JWEKey(ctx)
		if again.Kid != k.Kid || again.N != k.N {
			t.Fatal("the key changed between calls")
		}
		// An independent JOSE library reads it and agrees on its thumbprint.
		raw := h.do("GET", "/jwe/key", nil, nil).body
		var jwk jose.JSONWebKey
		if err := jwk.UnmarshalJSON(raw); err != nil {
			t.Fatalf("go-jose cannot parse the key: %v", err)
		}
		thumb, err := jwk.Thumbprint(cryptoSHA256)
		if err != nil {
			t.Fatal(err)
		}
		if got := b64url(thumb); got != k.Kid {
			t.Fatalf("kid %q is not the RFC 7638 thumbprint %q", k.Kid, got)
		}
		if bits := jwk.Valid(); !bits {
			t.Fatal("invalid key")
		}
		if n := len(bytes.TrimLeft(mustB64url(t, k.N), "\x00")) * 8; n < 2048 {
			t.Fatalf("modulus has %d bits", n)
		}
		// The private key is stored sealed, never as PEM or DER in the clear.
		keys, err := h.store.JWEKeyListUsable(ctx, h.clock.Now())
		if err != nil || len(keys) != 1 {
			t.Fatalf("stored keys: %v %d", err, len(keys))
		}
		if bytes.Contains(keys[0].PrivateSealed, []byte("PRIVATE KEY")) || keys[0].PrivateSealed[0] != 1 {
			t.Fatal("private key is not sealed")
		}
	})
}
