package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hitchdev/hitch/client"
)

func TestCreateSessionEveryType(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		for _, req := range []*client.CreateSessionRequest{
			{Type: "card_switcher", ExternalUserID: "u1", CardID: ptr("card-1"), MerchantID: ptr(int64(1))},
			{Type: "transaction_link", ExternalUserID: "u1", Email: ptr("ada@example.com"), PhoneNumber: ptr("+14155550123")},
			{Type: "link", ExternalUserID: "u1", ProcessorToken: ptr("processor-sandbox-123"), Metadata: map[string]string{"plan": "gold"}},
			{Type: "vault", ExternalUserID: "u1", CardID: ptr("card-2")},
			{Type: "vault", ExternalUserID: "u2"},
		} {
			before := h.clock.Now()
			s, err := h.api.CreateSession(ctx, req)
			if err != nil {
				t.Fatalf("%s: %v", req.Type, err)
			}
			if !strings.HasPrefix(s.Session, "sess_") || len(s.Session) < 40 {
				t.Errorf("%s: session value %q is not a 256-bit value", req.Type, s.Session)
			}
			if !s.ExpiresAt.Equal(before.Add(30 * time.Minute)) {
				t.Errorf("%s: expires_at %v, want 30 minutes after %v", req.Type, s.ExpiresAt, before)
			}
			// Stored only as a hash.
			hash := sha256.Sum256([]byte(s.Session))
			stored, err := h.store.SessionGetByTokenHash(ctx, h.clientID, hash[:])
			if err != nil || stored.ID != s.SessionID || stored.Type != req.Type {
				t.Fatalf("%s: stored session %+v, %v", req.Type, stored, err)
			}
			if req.ProcessorToken != nil && strings.Contains(string(stored.ProcessorTokenSealed), *req.ProcessorToken) {
				t.Errorf("processor token stored in plain text")
			}
		}
	})
}

func TestCreateSessionValidation(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		long := strings.Repeat("x", 501)
		elevenKeys := map[string]any{}
		for _, k := range strings.Split("a b c d e f g h i j k", " ") {
			elevenKeys[k] = "v"
		}
		cases := []struct {
			name    string
			body    any
			status  int
			code    string
			message string // substring
		}{
			{"no type", map[string]any{"external_user_id": "u"}, 400, "INVALID_FIELD", "The type field is required."},
			{"bad type", map[string]any{"type": "bank", "external_user_id": "u"}, 400, "PRODUCT_NOT_VALID", "The selected type is invalid."},
			{"no user", map[string]any{"type": "link"}, 400, "INVALID_FIELD", "The external_user_id field is required."},
			{"blank user", map[string]any{"type": "link", "external_user_id": "  "}, 400, "INVALID_FIELD", "external_user_id"},
			{"long user", map[string]any{"type": "link", "external_user_id": strings.Repeat("u", 256)}, 400, "INVALID_FIELD", "at most 255"},
			{"card switcher without card", map[string]any{"type": "card_switcher", "external_user_id": "u"}, 400, "INVALID_FIELD", "The card_id field is required when type = card_switcher."},
			{"card switcher null card", map[string]any{"type": "card_switcher", "external_user_id": "u", "card_id": nil}, 400, "INVALID_FIELD", "type = card_switcher"},
			{"card on link", map[string]any{"type": "link", "external_user_id": "u", "card_id": "c"}, 400, "INVALID_FIELD", "card_id"},
			{"bad email", map[string]any{"type": "link", "external_user_id": "u", "email": "not-an-email"}, 400, "INVALID_FIELD", "e-mail"},
			{"email with name", map[string]any{"type": "link", "external_user_id": "u", "email": "Ada <ada@example.com>"}, 400, "INVALID_FIELD", "e-mail"},
			{"bad phone", map[string]any{"type": "link", "external_user_id": "u", "phone_number": "4155550123"}, 400, "INVALID_FIELD", "E.164"},
			{"eleven metadata keys", map[string]any{"type": "link", "external_user_id": "u", "metadata": elevenKeys}, 400, "INVALID_FIELD", "at most 10 keys"},
			{"long metadata value", map[string]any{"type": "link", "external_user_id": "u", "metadata": map[string]string{"k": long}}, 400, "INVALID_FIELD", "metadata.k"},
			{"metadata number", map[string]any{"type": "link", "external_user_id": "u", "metadata": map[string]any{"k": 1}}, 400, "INVALID_FIELD", "must be a string"},
			{"merchant string", map[string]any{"type": "link", "external_user_id": "u", "merchant_id": "44"}, 400, "INVALID_FIELD", "The merchant_id field must be an integer."},
			{"unknown merchant", map[string]any{"type": "link", "external_user_id": "u", "merchant_id": 999999}, 400, "INVALID_FIELD", "merchant_id"},
			{"unknown field", map[string]any{"type": "link", "external_user_id": "u", "colour": "red"}, 400, "INVALID_FIELD", "The colour field is not allowed."},
			{"malformed", `{"type": "link",`, 400, "INVALID_FIELD", "not valid JSON"},
			{"array", `[1]`, 400, "INVALID_FIELD", "JSON object"},
			{"two objects", `{"type":"link","external_user_id":"u"} {}`, 400, "INVALID_FIELD", "exactly one"},
			{"empty", ``, 400, "INVALID_FIELD", "JSON object"},
			{"wrong case", `{"TYPE": "link", "external_user_id": "u"}`, 400, "INVALID_FIELD", "The TYPE field is not allowed."},
			{"duplicate key", `{"type": "card_switcher", "type": "link", "external_user_id": "u"}`, 400, "INVALID_FIELD", "The type field appears more than once."},
			{"duplicate nested key", `{"type": "link", "external_user_id": "u", "metadata": {"k": "1", "k": "2"}}`, 400, "INVALID_FIELD", "The metadata.k field appears more than once."},
			{"NUL in user", map[string]any{"type": "link", "external_user_id": "u\x00x"}, 400, "INVALID_FIELD", "without NUL"},
			{"invalid UTF-8 in user", "{\"type\": \"link\", \"external_user_id\": \"u\xffx\"}", 400, "INVALID_FIELD", "valid UTF-8"},
			{"NUL in card", map[string]any{"type": "vault", "external_user_id": "u", "card_id": "c\x00"}, 400, "INVALID_FIELD", "card_id"},
			{"NUL in metadata", map[string]any{"type": "link", "external_user_id": "u", "metadata": map[string]string{"k": "a\x00b"}}, 400, "INVALID_FIELD", "metadata.k"},
		}
		for _, tc := range cases {
			resp := h.do("POST", "/session/create", tc.body, nil)
			if resp.status != tc.status {
				t.Errorf("%s: status %d, want %d (%s)", tc.name, resp.status, tc.status, resp.body)
				continue
			}
			e := resp.errorBody(t)
			if e.Code != tc.code || !strings.Contains(e.Message, tc.message) {
				t.Errorf("%s: got %s %q, want %s containing %q", tc.name, e.Code, e.Message, tc.code, tc.message)
			}
		}
	})
}

func TestCreateSessionMerchantWithoutProduct(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		// Find a merchant that does not support vault.
		vault := map[int64]bool{}
		for _, m := range mustMerchants(t, h, "vault") {
			vault[m.ID] = true
		}
		var id int64
		for _, m := range mustMerchants(t, h, "link") {
			if !vault[m.ID] {
				id = m.ID
				break
			}
		}
		if id == 0 {
			t.Fatal("every merchant supports vault: the test needs one that does not")
		}
		_, err := h.api.CreateSession(context.Background(), &client.CreateSessionRequest{Type: "vault", ExternalUserID: "u", MerchantID: &id})
		expectError(t, err, 400, "MERCHANT_ERROR", "MERCHANT_UNAVAILABLE")
	})
}

func TestExtendSession(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		s, err := h.api.CreateSession(ctx, &client.CreateSessionRequest{Type: "link", ExternalUserID: "u1"})
		if err != nil {
			t.Fatal(err)
		}
		h.clock.Advance(25 * time.Minute)
		ext, err := h.api.ExtendSession(ctx, s.Session)
		if err != nil {
			t.Fatal(err)
		}
		if ext.Session != s.Session || ext.SessionID != s.SessionID || !ext.ExpiresAt.Equal(h.clock.Now().Add(30*time.Minute)) {
			t.Fatalf("extended = %+v", ext)
		}

		_, err = h.api.ExtendSession(ctx, "sess_"+strings.Repeat("A", 43))
		expectError(t, err, 404, "SESSION_ERROR", "SESSION_NOT_FOUND")
		_, err = h.api.ExtendSession(ctx, "not-a-session")
		expectError(t, err, 404, "SESSION_ERROR", "SESSION_NOT_FOUND")
		resp := h.do("POST", "/session/extend", map[string]any{}, nil)
		if resp.status != 400 || resp.errorBody(t).Message != "The session_id field is required." {
			t.Fatalf("missing session_id: %d %s", resp.status, resp.body)
		}

		// Extensions stop at 24 hours of total life.
		for i := 0; i < 60; i++ {
			h.clock.Advance(29 * time.Minute)
			if _, err := h.api.ExtendSession(ctx, s.Session); err != nil {
				_ = expectError(t, err, 400, "SESSION_ERROR", "EXTEND_NOT_SUPPORTED")
				if h.clock.Now().Add(30*time.Minute).Sub(s.ExpiresAt.Add(-30*time.Minute)) <= 24*time.Hour {
					t.Fatalf("extension refused before 24 h")
				}
				break
			}
			if i == 59 {
				t.Fatal("session extended past 24 hours")
			}
		}

		// An expired session cannot be extended.
		s2, _ := h.api.CreateSession(ctx, &client.CreateSessionRequest{Type: "link", ExternalUserID: "u1"})
		h.clock.Advance(31 * time.Minute)
		_, err = h.api.ExtendSession(ctx, s2.Session)
		expectError(t, err, 400, "SESSION_ERROR", "EXTEND_NOT_SUPPORTED")
	})
}

// Extend takes in session_id either the value (as the public service's
// extend does) or the session_id returned beside it; both set the expiry to
// 30 minutes after the call, and only the value is echoed back.
func TestExtendSessionByValueOrID(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		s, err := h.api.CreateSession(ctx, &client.CreateSessionRequest{Type: "card_switcher", ExternalUserID: "u1", CardID: ptr("card-1")})
		if err != nil {
			t.Fatal(err)
		}
		extend := func(ref string) (map[string]any, *response) {
			t.Helper()
			r := h.do("POST", "/session/extend", map[string]string{"session_id": ref}, nil)
			var body map[string]any
			if r.status == 200 {
				if err := json.Unmarshal(r.body, &body); err != nil {
					t.Fatal(err)
				}
			}
			return body, r
		}
		want := func(body map[string]any, session any) {
			t.Helper()
			expires := h.clock.Now().Add(30 * time.Minute).Format(time.RFC3339Nano)
			if body["session"] != session || body["session_id"] != s.SessionID || body["expires_at"] != expires {
				t.Fatalf("extended = %v, want session %v, expires_at %s", body, session, expires)
			}
		}

		h.clock.Advance(20 * time.Minute)
		body, r := extend(s.Session)
		if r.status != 200 {
			t.Fatalf("extend by value: %d %s", r.status, r.body)
		}
		want(body, s.Session)
		h.clock.Advance(20 * time.Minute) // past the creation's expiry
		body, r = extend(s.SessionID)
		if r.status != 200 {
			t.Fatalf("extend by session_id: %d %s", r.status, r.body)
		}
		want(body, nil)
		// The value still opens the session the id extended.
		h.clock.Advance(20 * time.Minute)
		if body, r = extend(s.Session); r.status != 200 {
			t.Fatalf("extend by value after the id: %d %s", r.status, r.body)
		}
		want(body, s.Session)

		other := h.clientFor(h.newDeveloper("development"))
		// An unknown id, and the id in another spelling than the one returned.
		for _, ref := range []string{"0b8f8f4e-3c1d-4b7a-9a55-2f6f0e4c9d21", strings.ToUpper(s.SessionID), "{" + s.SessionID + "}"} {
			_, err := h.api.ExtendSession(ctx, ref)
			expectError(t, err, 404, "SESSION_ERROR", "SESSION_NOT_FOUND")
		}
		_, err = other.ExtendSession(ctx, s.SessionID)
		expectError(t, err, 404, "SESSION_ERROR", "SESSION_NOT_FOUND")

		h.clock.Advance(31 * time.Minute)
		_, err = h.api.ExtendSession(ctx, s.SessionID)
		expectError(t, err, 400, "SESSION_ERROR", "EXTEND_NOT_SUPPORTED")
	})
}

func mustMerchants(t *testing.T, h *harness, product string) []client.Merchant {
	t.Helper()
	ms, err := h.api.ListMerchants(context.Background(), &client.ListMerchantsRequest{Type: product})
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func TestListMerchants(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		all := mustMerchants(t, h, "link")
		if len(all) < 60 {
			t.Fatalf("catalog has %d merchants", len(all))
		}
		uber, err := h.api.ListMerchants(ctx, &client.ListMerchantsRequest{Type: "card_switcher", Search: ptr("uber"), Platform: ptr("web")})
		if err != nil || len(uber) != 2 || uber[0].Name != "Uber" || uber[1].Name != "Uber Eats" {
			t.Fatalf("search uber = %+v, %v", uber, err)
		}
		if !strings.HasPrefix(uber[0].Logo, h.url+"/merchants/") {
			t.Fatalf("logo %q is not served by this deployment", uber[0].Logo)
		}
		logo := h.do("GET", strings.TrimPrefix(uber[0].Logo, h.url), nil, http.Header{"Authorization": {""}})
		if logo.status != 200 || logo.header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(string(logo.body), "<svg") {
			t.Fatalf("logo: %d %s", logo.status, logo.header.Get("Content-Type"))
		}
		if resp := h.do("GET", "/merchants/999999/logo.svg", nil, nil); resp.status != 404 {
			t.Fatalf("unknown logo: %d", resp.status)
		}
		_, err = h.api.ListMerchants(ctx, &client.ListMerchantsRequest{Type: "bank"})
		expectError(t, err, 400, "INVALID_INPUT", "PRODUCT_NOT_VALID")
		_, err = h.api.ListMerchants(ctx, &client.ListMerchantsRequest{Type: "link", Platform: ptr("tv")})
		expectError(t, err, 400, "INVALID_REQUEST", "INVALID_FIELD")
		if resp := h.do("POST", "/merchant/list", map[string]any{}, nil); resp.status != 400 || resp.errorBody(t).Message != "The type field is required." {
			t.Fatalf("no type: %d %s", resp.status, resp.body)
		}
	})
}
