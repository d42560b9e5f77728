package api_test

import (
	"net/http"
	"strings"
	"testing"
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
