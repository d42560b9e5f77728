package api_test

import (
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/hitchdev/hitch/internal/store"
)

// An endpoint edit (URL or event filter) is recorded as webhook.edit and a
// secret rotation as webhook.update, each named by the endpoint's URL, so
// that GET /audit_logs tells them apart, whether a member or the API made
// them.
func TestWebhookEditAndRotationAuditActions(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		const first, second = "https://93.184.215.14/hooks", "https://93.184.215.14/hooks-v2" // public: no DNS needed
		id := h.addEndpoint(t, first, "CARD_UPDATED").ID
		dev := h.dash()
		dev.mustSignIn("dev@example.com", h.addMember("dev@example.com", store.RoleDeveloper))

		check := func(what, action, name string) {
			t.Helper()
			rec := lastRecord(t, h)
			if rec.Event.Action != action || rec.Event.Outcome.Status != "success" || rec.Target.Type != "webhook_endpoint" ||
				rec.Target.Name == nil || *rec.Target.Name != name || rec.Actor.Email != "dev@example.com" {
				t.Fatalf("%s: audit record %+v, want %s named %s", what, rec, action, name)
			}
		}
		if r := dev.post("/dashboard/webhooks/"+id+"/edit", url.Values{"url": {second}, "events": {"CARD_FAILED"}}); r.status != http.StatusSeeOther {
			t.Fatalf("edit the URL and events: %d %.300s", r.status, r.body)
		}
		check("edit the URL and events", "webhook.edit", second)
		// An edit of the filter alone is an edit too, not an update.
		if r := dev.post("/dashboard/webhooks/"+id+"/edit", url.Values{"url": {second}}); r.status != http.StatusSeeOther {
			t.Fatalf("edit the events: %d %.300s", r.status, r.body)
		}
		check("edit the events", "webhook.edit", second)
		if r := dev.post("/dashboard/webhooks/"+id+"/rotate", nil); r.status != http.StatusOK {
			t.Fatalf("rotate: %d %.300s", r.status, r.body)
		}
		check("rotate", "webhook.update", second)

		apiCheck := func(what, action string) {
			t.Helper()
			rec := lastRecord(t, h)
			if rec.Event.Action != action || rec.Target.Name == nil || *rec.Target.Name != first ||
				rec.Actor.Name != "API credentials" || rec.Actor.Email != "" {
				t.Fatalf("%s: audit record %+v, want %s named %s by the API", what, rec, action, first)
			}
		}
		if r := h.do("PATCH", "/webhooks/endpoints/"+id, map[string]any{"url": first, "events": []string{}}, nil); r.status != http.StatusOK {
			t.Fatalf("PATCH: %d %s", r.status, r.body)
		}
		apiCheck("PATCH", "webhook.edit")
		if r := h.do("POST", "/webhooks/endpoints/"+id+"/rotate-secret", nil, nil); r.status != http.StatusOK {
			t.Fatalf("rotate-secret: %d %s", r.status, r.body)
		}
		apiCheck("rotate-secret", "webhook.update")

		want := []string{"webhook.add:success", "member.add:success", "signin:success", "webhook.edit:success", "webhook.edit:success",
			"webhook.update:success", "webhook.edit:success", "webhook.update:success"}
		if got := actions(auditLog(t, h.api)); !slices.Equal(got, want) {
			t.Fatalf("audit log %v, want %v", got, want)
		}
	})
}
