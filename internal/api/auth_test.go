package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestAuthentication(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		noAuth := http.Header{"Authorization": {""}}
		prod := h.newDeveloper("production")
		cases := []struct {
			name   string
			header http.Header
		}{
			{"missing", noAuth},
			{"not basic", http.Header{"Authorization": {"Bearer " + h.secret}}},
			{"wrong secret", http.Header{"Authorization": {basic(h.clientID, h.secret+"x")}}},
			{"unknown client", http.Header{"Authorization": {basic("unknown-client", h.secret)}}},
			{"secret of the other environment", http.Header{"Authorization": {basic(prod.ClientID, prod.Secret)}}},
			{"garbage", http.Header{"Authorization": {"Basic %%%"}}},
		}
		for _, tc := range cases {
			resp := h.do("GET", "/jwe/key", nil, tc.header)
			if resp.status != http.StatusUnauthorized {
				t.Fatalf("%s: status %d", tc.name, resp.status)
			}
			if !strings.HasPrefix(resp.header.Get("WWW-Authenticate"), "Basic") {
				t.Errorf("%s: WWW-Authenticate = %q", tc.name, resp.header.Get("WWW-Authenticate"))
			}
			e := resp.errorBody(t)
			if e.Type != "INVALID_INPUT" || e.Code != "INVALID_API_KEYS" || e.Message != "Invalid client_id or secret provided." {
				t.Errorf("%s: body %+v", tc.name, e)
			}
		}
		if resp := h.do("GET", "/jwe/key", nil, nil); resp.status != http.StatusOK {
			t.Fatalf("valid credentials: %d %s", resp.status, resp.body)
		}
	})
}

func TestProductionRefusesDevelopmentCredentials(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		dev := h.newDeveloper("development")
		resp := h.do("GET", "/jwe/key", nil, http.Header{"Authorization": {basic(dev.ClientID, dev.Secret)}})
		if resp.status != http.StatusUnauthorized {
			t.Fatalf("development credentials on production: %d", resp.status)
		}
		if resp := h.do("GET", "/jwe/key", nil, nil); resp.status != http.StatusOK {
			t.Fatalf("production credentials: %d", resp.status)
		}
	}, production)
}

func basic(user, pass string) string {
	r, _ := http.NewRequest("GET", "/", nil)
	r.SetBasicAuth(user, pass)
	return r.Header.Get("Authorization")
}

// Failed authentications are throttled per client IP, so that bad
// credentials cannot make every request a database read; credentials
// verified recently keep working meanwhile.
func TestFailedAuthenticationThrottled(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		if resp := h.do("GET", "/jwe/key", nil, nil); resp.status != 200 { // verified, now cached
			t.Fatalf("valid: %d", resp.status)
		}
		bad := http.Header{"Authorization": {basic(h.clientID, "hsk_wrong_secret_wrong_secret_wrong_secret")}}
		for i := 0; i < 20; i++ {
			if resp := h.do("GET", "/jwe/key", nil, bad); resp.status != 401 {
				t.Fatalf("failure %d: %d", i, resp.status)
			}
		}
		resp := h.do("GET", "/jwe/key", nil, bad)
		if resp.status != 429 || resp.header.Get("Retry-After") != "1" {
			t.Fatalf("21st failure: %d Retry-After %q", resp.status, resp.header.Get("Retry-After"))
		}
		if resp := h.do("GET", "/jwe/key", nil, nil); resp.status != 200 {
			t.Fatalf("cached credentials while throttled: %d", resp.status)
		}
		other := h.newDeveloper("development")
		fresh := http.Header{"Authorization": {basic(other.ClientID, other.Secret)}}
		if resp := h.do("GET", "/jwe/key", nil, fresh); resp.status != 429 {
			t.Fatalf("unverified credentials while throttled: %d", resp.status)
		}
		h.clock.Advance(time.Second)
		if resp := h.do("GET", "/jwe/key", nil, fresh); resp.status != 200 {
			t.Fatalf("after a second: %d", resp.status)
		}
	})
}
