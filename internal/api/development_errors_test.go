package api_test

import (
	"net/http"
	"testing"
)

// The development endpoints refuse what they cannot do as the API's other
// endpoints do: a merchant outside the catalog and a payload id that cannot
// be a webhook-id are the client's mistakes, not 500s.
func TestDevelopmentRefusals(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		devLinkTransactions(t, h, "u1", 4, false)
		rcv := newReceiver(t, nil)
		ep := h.addEndpoint(t, rcv.url)
		cases := []struct {
			name   string
			path   string
			body   any
			status int
			code   string
		}{
			{"refresh at a merchant outside the catalog", "/transactions/refresh",
				map[string]any{"external_user_id": "u1", "merchant_id": 987654}, 400, "INVALID_FIELD"},
			{"refresh at a merchant the user has no account at", "/transactions/refresh",
				map[string]any{"external_user_id": "u1", "merchant_id": 1}, 404, "MERCHANT_ACCOUNT_NOT_FOUND"},
			{"sign an empty payload id", "/development/webhooks/sign",
				map[string]any{"endpoint_id": ep.ID, "payload": map[string]any{"id": ""}}, 400, "INVALID_FIELD"},
			{"sign a payload id that cannot be a header", "/development/webhooks/sign",
				map[string]any{"endpoint_id": ep.ID, "payload": map[string]any{"id": "evt\r\nX-Injected: 1"}}, 400, "INVALID_FIELD"},
		}
		for _, c := range cases {
			r := h.do("POST", c.path, c.body, nil)
			if r.status != c.status {
				t.Errorf("%s: %d %s, want %d", c.name, r.status, r.body, c.status)
				continue
			}
			if e := r.errorBody(t); e.Code != c.code {
				t.Errorf("%s: %s %q, want %s", c.name, e.Code, e.Message, c.code)
			}
		}
		// A payload id that can be a header is signed as it is.
		if r := h.do("POST", "/development/webhooks/sign", map[string]any{"endpoint_id": ep.ID,
			"payload": map[string]any{"id": "evt-1"}}, nil); r.status != http.StatusOK {
			t.Errorf("sign: %d %s", r.status, r.body)
		}
	})
}
