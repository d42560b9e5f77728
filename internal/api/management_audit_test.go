package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/hitchdev/hitch/internal/audit"
	"github.com/hitchdev/hitch/internal/webhook"
)

// Every change the management API makes to webhook endpoints and allowed
// origins is recorded in the developer's log, as the dashboard's are:
// actor "API credentials" with no e-mail, the caller's address and user
// agent, the target named as the dashboard names it. A refused change
// records nothing, and no record holds a secret.
func TestManagementAPIChangesAreAudited(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		const ua = "acme-deploy/1.0"
		// Public addresses: no DNS needed. The second carries a token in its
		// query, which the log must not keep.
		const first, second = "https://93.184.215.14/hooks", "https://93.184.215.14/hooks-v2?token=query-canary-7f3a"
		send := func(method, path string, body any, want int) []byte {
			t.Helper()
			r := h.do(method, path, body, http.Header{"User-Agent": {ua}})
			if r.status != want {
				t.Fatalf("%s %s: %d %s, want %d", method, path, r.status, r.body, want)
			}
			return r.body
		}
		var secrets []string
		endpoint := func(body []byte) endpointResp {
			t.Helper()
			var ep endpointResp
			if err := json.Unmarshal(body, &ep); err != nil {
				t.Fatal(err)
			}
			if ep.Secret != "" {
				secrets = append(secrets, ep.Secret)
			}
			return ep
		}

		send("PUT", "/link/allowed_origins", map[string]any{"allowed_origins": []string{"https://b.example", "https://a.example"}}, 200)
		send("PUT", "/link/allowed_origins", map[string]any{"allowed_origins": []string{"ftp://a.example"}}, 400)
		send("PUT", "/link/allowed_origins", map[string]any{"allowed_origins": []string{}}, 200)
		id := endpoint(send("POST", "/webhooks/endpoints", map[string]any{"url": first, "events": []string{"CARD_UPDATED"}}, 200)).ID
		send("POST", "/webhooks/endpoints", map[string]any{"url": "ftp://93.184.215.14/hooks"}, 400)
		send("PATCH", "/webhooks/endpoints/"+id, map[string]any{"url": second}, 200)
		send("PATCH", "/webhooks/endpoints/we_nope", map[string]any{"url": second}, 404)
		endpoint(send("POST", "/webhooks/endpoints/"+id+"/rotate-secret", nil, 200))
		send("POST", "/webhooks/endpoints/we_nope/rotate-secret", nil, 404)
		send("DELETE", "/webhooks/endpoints/"+id, nil, 200)
		send("DELETE", "/webhooks/endpoints/"+id, nil, 404)
		// Another developer's endpoint is not found, and its log stays empty.
		other := h.newDeveloper("development")
		otherEP, _, err := h.webhooks.Create(context.Background(), webhook.CreateParams{ClientID: other.ClientID, URL: first})
		if err != nil {
			t.Fatal(err)
		}
		send("DELETE", "/webhooks/endpoints/"+otherEP.ID, nil, 404)

		type want struct {
			action, targetType string
			name               *string
		}
		origins, url1, url2 := "https://a.example https://b.example", first, "https://93.184.215.14/hooks-v2?…"
		secrets = append(secrets, "query-canary-7f3a")
		wants := []want{ // newest first
			{"webhook.remove", "webhook_endpoint", &url2},
			{"webhook.update", "webhook_endpoint", &url2},
			{"webhook.edit", "webhook_endpoint", &url2},
			{"webhook.add", "webhook_endpoint", &url1},
			{"link.origins_update", "link_origins", nil},
			{"link.origins_update", "link_origins", &origins},
		}
		recs := auditLog(t, h.api)
		if len(recs) != len(wants) {
			t.Fatalf("audit log %v, want %d records", actions(recs), len(wants))
		}
		for i, w := range wants {
			r := recs[i]
			if r.Event.Action != w.action || r.Event.Outcome.Status != "success" || r.Target.Type != w.targetType ||
				!equalName(r.Target.Name, w.name) || r.Target.Environment != "development" ||
				r.Actor.Name != audit.APIActorName || r.Actor.Email != "" || r.Context.IP != "127.0.0.1" || r.Context.UserAgent != ua {
				t.Errorf("record %d: %+v, want %s on %s %v", i, r, w.action, w.targetType, deref(w.name))
			}
		}
		if recs := auditLog(t, h.clientFor(other)); len(recs) != 0 {
			t.Fatalf("another developer's log: %v", actions(recs))
		}
		if head, err := audit.Verify(context.Background(), h.store, h.clientID); err != nil || head.Records != int64(len(wants)) {
			t.Fatalf("verify: %v %+v", err, head)
		}

		// No secret in the log as GET /audit_logs serves it.
		body := h.do("GET", "/audit_logs", nil, nil).body
		for _, s := range append(secrets, h.secret) {
			if strings.Contains(string(body), s) {
				t.Fatalf("the audit log holds a secret: %s", body)
			}
		}
		if len(secrets) != 3 || strings.Contains(string(body), "whsec_") || strings.Contains(string(body), "hsk_") {
			t.Fatalf("secrets %d; log %s", len(secrets), body)
		}
	})
}

func equalName(a, b *string) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func deref(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}
