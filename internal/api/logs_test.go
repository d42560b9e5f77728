package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/hitchdev/hitch/client"
	"github.com/hitchdev/hitch/internal/api/apitest"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// The access log carries method, path, status, duration and request id, and
// never a secret, a session value or an Authorization header, even when
// requests fail.
func TestLogsCarryNoSecrets(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		s, err := h.api.CreateSession(ctx, &client.CreateSessionRequest{Type: "card_switcher", ExternalUserID: "user-secretive",
			CardID: ptr("card-1"), ProcessorToken: ptr("processor-token-canary"), Email: ptr("canary@example.com")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.api.ExtendSession(ctx, s.Session); err != nil {
			t.Fatal(err)
		}
		h.do("POST", "/session/extend", map[string]string{"session_id": s.Session + "x"}, nil)
		wrongSecret := h.secret + "-wrong"
		h.do("GET", "/jwe/key", nil, http.Header{"Authorization": {basic(h.clientID, wrongSecret)}})
		h.do("POST", "/session/create", `{"type": "link", "external_user_id": "`+s.Session+`", "bad": 1}`, nil)

		logs := h.logs.String()
		if !strings.Contains(logs, `"path":"/session/create"`) {
			t.Fatalf("no access log lines: %s", logs)
		}
		for _, canary := range []string{h.secret, wrongSecret, s.Session, "processor-token-canary", "canary@example.com",
			"user-secretive", "Authorization", "Basic ", basic(h.clientID, h.secret)} {
			if strings.Contains(logs, canary) {
				t.Errorf("logs contain %q", canary)
			}
		}
		// Every line is structured and has the fields operators need.
		for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("unstructured log line %q", line)
			}
			if rec["msg"] != "request" {
				continue
			}
			for _, k := range []string{"method", "path", "status", "duration", "request_id"} {
				if _, ok := rec[k]; !ok {
					t.Errorf("access log line without %s: %s", k, line)
				}
			}
		}
	})
}

func TestHealthAndContract(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		noAuth := http.Header{"Authorization": {""}}
		if resp := h.do("GET", "/healthz", nil, noAuth); resp.status != 200 {
			t.Fatalf("healthz: %d", resp.status)
		}
		if resp := h.do("GET", "/readyz", nil, noAuth); resp.status != 200 {
			t.Fatalf("readyz: %d %s", resp.status, resp.body)
		}
		resp := h.do("GET", "/openapi.yaml", nil, noAuth)
		if resp.status != 200 || !strings.HasPrefix(string(resp.body), "openapi: 3.1") {
			t.Fatalf("openapi.yaml: %d %.40s", resp.status, resp.body)
		}
		// A closed database makes the deployment unready, not dead.
		h.store.Close()
		if resp := h.do("GET", "/readyz", nil, noAuth); resp.status != 503 || resp.errorBody(t).Code != "SERVICE_UNAVAILABLE" {
			t.Fatalf("readyz with the store closed: %d %s", resp.status, resp.body)
		}
		if resp := h.do("GET", "/healthz", nil, noAuth); resp.status != 200 {
			t.Fatalf("healthz with the store closed: %d", resp.status)
		}
	})
}

// Every route is in openapi.yaml and every documented operation is routed,
// in development (which has the /development/* routes) and production.
func TestRoutesMatchTheContract(t *testing.T) {
	t.Parallel()
	dev := newHarness(t, storetest.OpenSQLite(t))
	routes := dev.server.Routes()
	if err := apitest.Load(t).CheckRoutes(routes); err != nil {
		t.Fatal(err)
	}
	prod := newHarness(t, storetest.OpenSQLite(t), production)
	for _, r := range prod.server.Routes() {
		if strings.Contains(r, "/development/") {
			t.Errorf("production routes %s", r)
		}
	}
}
