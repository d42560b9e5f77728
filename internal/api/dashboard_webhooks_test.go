package api_test

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hitchdev/hitch/client"
	"github.com/hitchdev/hitch/internal/store"
)

// count is how many deliveries a receiver has had so far.
func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.deliveries)
}

// endpoint returns the harness developer's endpoint id as the API lists it.
func (h *harness) endpoint(t *testing.T, id string) endpointResp {
	t.Helper()
	for _, ep := range h.endpoints(t) {
		if ep.ID == id {
			return ep
		}
	}
	t.Fatalf("no endpoint %s", id)
	return endpointResp{}
}

// lastRecord is the newest record of the harness developer's audit log.
func lastRecord(t *testing.T, h *harness) client.AuditRecord {
	t.Helper()
	page, err := h.api.AuditLogs(context.Background(), &client.AuditLogsRequest{})
	if err != nil || len(page.Data) == 0 {
		t.Fatalf("audit log: %v", err)
	}
	return page.Data[0]
}

// Editing an endpoint in the dashboard changes where its next delivery
// goes and which events it gets, keeps its secret, and is recorded as
// webhook.edit with the new URL.
func TestDashboardEditEndpoint(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		oldRcv, newRcv := newReceiver(t, nil), newReceiver(t, nil)
		dev := h.dash()
		dev.mustSignIn("dev@example.com", h.addMember("dev@example.com", store.RoleDeveloper))
		r := dev.post("/dashboard/webhooks", url.Values{"url": {oldRcv.url}, "events": {"ACCOUNT_LOGIN_REQUIRED"}})
		if r.status != http.StatusOK {
			t.Fatalf("add endpoint: %d", r.status)
		}
		secret := html.UnescapeString(shown(t, r))
		id := h.endpoints(t)[0].ID

		page := string(dev.get("/dashboard/webhooks").body)
		if !strings.Contains(page, `href="/dashboard/webhooks/endpoints/`+id+`"`) {
			t.Fatalf("no edit link on the webhooks page: %.2000s", page)
		}
		form := string(dev.get("/dashboard/webhooks/endpoints/" + id).body)
		if !strings.Contains(form, `value="`+oldRcv.url+`"`) ||
			!strings.Contains(form, `value="ACCOUNT_LOGIN_REQUIRED" checked`) || strings.Contains(form, `value="AUTHENTICATED" checked`) {
			t.Fatalf("the edit form does not show the endpoint: %.3000s", form)
		}

		r = dev.post("/dashboard/webhooks/"+id+"/edit", url.Values{"url": {newRcv.url}, "events": {"AUTHENTICATED"}})
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/dashboard/webhooks?notice=webhook.updated" {
			t.Fatalf("edit: %d %s %.300s", r.status, r.header.Get("Location"), r.body)
		}
		if ep := h.endpoint(t, id); ep.URL != newRcv.url || !slices.Equal(ep.Events, []string{"AUTHENTICATED"}) || ep.Status != "enabled" {
			t.Fatalf("after the edit: %+v", ep)
		}
		rec := lastRecord(t, h)
		if rec.Event.Action != "webhook.edit" || rec.Target.Type != "webhook_endpoint" || rec.Target.Name == nil ||
			*rec.Target.Name != newRcv.url || rec.Actor.Email != "dev@example.com" {
			t.Fatalf("audit record %+v", rec)
		}

		linkCard(t, h.api, "u1", 1) // AUTHENTICATED: now taken
		if err := h.api.DevDisconnectAccount(ctx, "u1", 1); err != nil {
			t.Fatal(err) // ACCOUNT_LOGIN_REQUIRED: no longer taken
		}
		d := newRcv.wait(t, 1)[0]
		if d.event() != "AUTHENTICATED" {
			t.Fatalf("the new URL got %s", d.event())
		}
		if err := client.VerifyWebhook(d.header, d.body, secret, 0); err != nil {
			t.Fatalf("the secret changed with the edit: %v", err)
		}
		h.settle(t)
		if n, m := oldRcv.count(), newRcv.count(); n != 0 || m != 1 {
			t.Fatalf("the old URL got %d deliveries and the new one %d, want 0 and 1", n, m)
		}

		// Every event again: none checked.
		if r := dev.post("/dashboard/webhooks/"+id+"/edit", url.Values{"url": {newRcv.url}}); r.status != http.StatusSeeOther {
			t.Fatalf("edit to every event: %d", r.status)
		}
		if ep := h.endpoint(t, id); len(ep.Events) != 0 {
			t.Fatalf("events %v, want every type", ep.Events)
		}
		linkCard(t, h.api, "u1", 2)
		if err := h.api.DevDisconnectAccount(ctx, "u1", 2); err != nil {
			t.Fatal(err)
		}
		got := newRcv.wait(t, 3)
		if got[1].event() != "AUTHENTICATED" && got[2].event() != "AUTHENTICATED" ||
			got[1].event() != "ACCOUNT_LOGIN_REQUIRED" && got[2].event() != "ACCOUNT_LOGIN_REQUIRED" {
			t.Fatalf("after taking every event: %s, %s", got[1].event(), got[2].event())
		}
	}, withWorkers)
}

// A refused edit says why, shows what was typed, and changes nothing:
// neither the endpoint nor the audit log. So do the roles that may not
// manage webhooks, and another developer's endpoint is not found.
func TestDashboardEditEndpointRefused(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		const good = "https://93.184.215.14/hooks" // public: no DNS needed
		ep := h.addEndpoint(t, good, "CARD_UPDATED")
		dev, viewer := h.dash(), h.dash()
		dev.mustSignIn("dev@example.com", h.addMember("dev@example.com", store.RoleDeveloper))
		viewer.mustSignIn("vic@example.com", h.addMember("vic@example.com", store.RoleViewer))
		before := h.auditSeq(h.clientID)

		for _, c := range []struct {
			form    url.Values
			message string
		}{
			{url.Values{"url": {"https://127.0.0.1/hooks"}}, "The url host is a loopback address (127.0.0.1). Nothing was changed."},
			{url.Values{"url": {"http://93.184.215.14/hooks"}}, "The url must use https. Nothing was changed."},
			{url.Values{"url": {"https://10.1.2.3/hooks"}, "events": {"CARD_FAILED"}}, "The url host is a private address (10.1.2.3). Nothing was changed."},
			{url.Values{"url": {"https://169.254.169.254/latest"}}, "The url host is"},
			{url.Values{"url": {""}}, "The url is required. Nothing was changed."},
			{url.Values{"url": {good}, "events": {"CARD_FAILED", "NOPE"}}, `The events has an unknown event type &#34;NOPE&#34;. Nothing was changed.`},
		} {
			r := dev.post("/dashboard/webhooks/"+ep.ID+"/edit", c.form)
			if got := pageError(r); r.status != http.StatusBadRequest || !strings.HasPrefix(got, c.message) {
				t.Errorf("%v: %d %q, want %q", c.form, r.status, got, c.message)
				continue
			}
			// The form comes back with what was typed.
			if !strings.Contains(string(r.body), `id="edit-endpoint"`) || !strings.Contains(string(r.body), `value="`+c.form.Get("url")+`"`) {
				t.Errorf("%v: the form is not shown again with the URL typed", c.form)
			}
		}
		if got := h.endpoint(t, ep.ID); got.URL != good || !slices.Equal(got.Events, []string{"CARD_UPDATED"}) {
			t.Fatalf("a refused edit changed the endpoint: %+v", got)
		}

		// Viewers may not edit.
		if r := viewer.get("/dashboard/webhooks/endpoints/" + ep.ID); r.status != http.StatusForbidden {
			t.Errorf("viewer GET edit: %d", r.status)
		}
		if r := viewer.post("/dashboard/webhooks/"+ep.ID+"/edit", url.Values{"url": {"https://93.184.215.15/x"}}); r.status != http.StatusForbidden {
			t.Errorf("viewer POST edit: %d", r.status)
		}
		if page := string(viewer.get("/dashboard/webhooks").body); strings.Contains(page, "/dashboard/webhooks/endpoints/") {
			t.Errorf("a viewer is offered the edit link")
		}

		// Another developer's endpoint is not found, and stays as it was.
		other := h.newDeveloper(h.env)
		h2 := *h
		h2.clientID, h2.secret = other.ClientID, other.Secret
		theirs := h2.addEndpoint(t, "https://93.184.215.16/theirs")
		if r := dev.get("/dashboard/webhooks/endpoints/" + theirs.ID); r.status != http.StatusNotFound ||
			strings.Contains(string(r.body), "93.184.215.16") {
			t.Errorf("another developer's endpoint's form: %d", r.status)
		}
		r := dev.post("/dashboard/webhooks/"+theirs.ID+"/edit", url.Values{"url": {good}})
		if got := pageError(r); r.status != http.StatusNotFound || got != "There is no such webhook endpoint." {
			t.Errorf("another developer's endpoint: %d %q", r.status, got)
		}
		if got := h2.endpoint(t, theirs.ID); got.URL != "https://93.184.215.16/theirs" {
			t.Fatalf("another developer's endpoint was changed: %+v", got)
		}

		if n := h.auditSeq(h.clientID); n != before {
			t.Fatalf("refused edits wrote %d records", n-before)
		}
	}, production)
}

// PATCH /webhooks/endpoints/{id} changes the URL, the filter or both; the
// next delivery follows it.
func TestWebhookEndpointUpdate(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		oldRcv, newRcv := newReceiver(t, nil), newReceiver(t, nil)
		ep := h.addEndpoint(t, oldRcv.url, "ACCOUNT_LOGIN_REQUIRED")

		patch := func(id string, body any) (*response, endpointResp) {
			t.Helper()
			r := h.do("PATCH", "/webhooks/endpoints/"+id, body, nil)
			var out endpointResp
			if r.status == http.StatusOK {
				if err := json.Unmarshal(r.body, &out); err != nil {
					t.Fatal(err)
				}
			}
			return r, out
		}
		// Nothing given: nothing changes.
		if r, got := patch(ep.ID, map[string]any{}); r.status != http.StatusOK || got.URL != oldRcv.url ||
			!slices.Equal(got.Events, []string{"ACCOUNT_LOGIN_REQUIRED"}) || got.Secret != "" {
			t.Fatalf("empty patch: %d %s", r.status, r.body)
		}
		r, got := patch(ep.ID, map[string]any{"url": newRcv.url, "events": []string{"AUTHENTICATED", "AUTHENTICATED"}})
		if r.status != http.StatusOK || got.ID != ep.ID || got.URL != newRcv.url || !slices.Equal(got.Events, []string{"AUTHENTICATED"}) ||
			got.Status != "enabled" || got.Secret != "" || strings.Contains(string(r.body), "whsec_") {
			t.Fatalf("patch: %d %s", r.status, r.body)
		}
		linkCard(t, h.api, "u1", 1)
		if err := h.api.DevDisconnectAccount(ctx, "u1", 1); err != nil {
			t.Fatal(err)
		}
		d := newRcv.wait(t, 1)[0]
		if d.event() != "AUTHENTICATED" {
			t.Fatalf("the new URL got %s", d.event())
		}
		if err := client.VerifyWebhook(d.header, d.body, ep.Secret, 0); err != nil {
			t.Fatalf("the secret changed: %v", err)
		}

		// Only the filter: the URL stays.
		if r, got := patch(ep.ID, map[string]any{"events": []string{}}); r.status != http.StatusOK || got.URL != newRcv.url || len(got.Events) != 0 {
			t.Fatalf("filter patch: %d %s", r.status, r.body)
		}
		linkCard(t, h.api, "u1", 2)
		if err := h.api.DevDisconnectAccount(ctx, "u1", 2); err != nil {
			t.Fatal(err)
		}
		newRcv.wait(t, 3)
		h.settle(t)
		if n, m := oldRcv.count(), newRcv.count(); n != 0 || m != 3 {
			t.Fatalf("the old URL got %d deliveries and the new one %d, want 0 and 3", n, m)
		}

		// Refused: strict decoding, bad values; nothing changes.
		for _, c := range []struct {
			body    any
			status  int
			message string
		}{
			{`{"URL": "http://127.0.0.1:9/x"}`, 400, "URL"},
			{`{"url": 5}`, 400, "The url field must be a string."},
			{`{"events": "AUTHENTICATED"}`, 400, "The events field must be an array."},
			{`{"secret": "whsec_x"}`, 400, "The secret field is not allowed."},
			{`{"url": "ftp://example.com/x", "events": []}`, 400, "The url field must use http or https."},
			{`{"events": ["AUTHENTICATED", "NOPE"]}`, 400, `The events field has an unknown event type "NOPE".`},
			{`{"url": "http://127.0.0.1:9/x"} {}`, 400, "exactly one JSON object"},
		} {
			r := h.do("PATCH", "/webhooks/endpoints/"+ep.ID, c.body, nil)
			if e := r.errorBody(t); r.status != c.status || e.Code != "INVALID_FIELD" || !strings.Contains(e.Message, c.message) {
				t.Errorf("%v: %d %s", c.body, r.status, r.body)
			}
		}
		if r := h.do("PATCH", "/webhooks/endpoints/"+ep.ID, nil, nil); r.status != http.StatusUnsupportedMediaType {
			t.Errorf("no body: %d %s", r.status, r.body)
		}
		if got := h.endpoint(t, ep.ID); got.URL != newRcv.url || len(got.Events) != 0 {
			t.Fatalf("a refused patch changed the endpoint: %+v", got)
		}

		// Unknown, and another developer's: 404, and theirs is unchanged.
		if r := h.do("PATCH", "/webhooks/endpoints/we_nope", map[string]any{"url": newRcv.url}, nil); r.status != http.StatusNotFound ||
			r.errorBody(t).Code != "NOT_FOUND" {
			t.Errorf("unknown endpoint: %d %s", r.status, r.body)
		}
		other := h.newDeveloper("development")
		h2 := *h
		h2.clientID, h2.secret = other.ClientID, other.Secret
		if r := h2.do("PATCH", "/webhooks/endpoints/"+ep.ID, map[string]any{"url": "http://127.0.0.1:9/stolen"}, nil); r.status != http.StatusNotFound {
			t.Errorf("another developer's patch: %d %s", r.status, r.body)
		}
		if got := h.endpoint(t, ep.ID); got.URL != newRcv.url {
			t.Fatalf("another developer changed the endpoint: %+v", got)
		}
	}, withWorkers)
}

// In production a PATCH is held to the registration rules.
func TestWebhookEndpointUpdateProduction(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ep := h.addEndpoint(t, "https://93.184.215.14/hooks")
		for _, u := range []string{"http://93.184.215.14/hooks", "https://127.0.0.1/x", "https://10.1.2.3/x",
			"https://169.254.169.254/latest", "https://localhost/x", "https://user:pw@93.184.215.14/x"} {
			r := h.do("PATCH", "/webhooks/endpoints/"+ep.ID, map[string]any{"url": u}, nil)
			if e := r.errorBody(t); r.status != 400 || e.Code != "INVALID_FIELD" || !strings.HasPrefix(e.Message, "The url ") {
				t.Errorf("%s: %d %s", u, r.status, r.body)
			}
		}
		if got := h.endpoint(t, ep.ID); got.URL != "https://93.184.215.14/hooks" {
			t.Fatalf("a refused URL was stored: %+v", got)
		}
		if r := h.do("PATCH", "/webhooks/endpoints/"+ep.ID, map[string]any{"url": "https://93.184.215.15/hooks"}, nil); r.status != 200 {
			t.Fatalf("a public URL: %d %s", r.status, r.body)
		}
	}, production)
}

// Deliveries queued before a URL change, retries included, go to the new
// URL, and the endpoint's run of failures starts again there.
func TestWebhookEndpointUpdateMovesQueuedDeliveries(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		down := func(_ int, w http.ResponseWriter) { http.Error(w, "down", http.StatusBadGateway) }
		oldRcv, newRcv := newReceiver(t, down), newReceiver(t, down)
		ep := h.addEndpoint(t, oldRcv.url)
		linkCard(t, h.api, "u1", 1)
		first := oldRcv.wait(t, 1)[0]
		eventID := first.header.Get("webhook-id")
		eventually(t, "the first failure to be recorded", func() bool { return len(h.attempts(t, eventID)) == 1 })
		failing, err := h.store.WebhookEndpointGet(context.Background(), h.clientID, ep.ID)
		if err != nil || failing.FailingSince == nil || !failing.FailingSince.Equal(h.clock.Now()) {
			t.Fatalf("failing since %v (%v)", failing.FailingSince, err)
		}

		h.clock.Advance(time.Hour)
		if r := h.do("PATCH", "/webhooks/endpoints/"+ep.ID, map[string]any{"url": newRcv.url}, nil); r.status != 200 {
			t.Fatalf("patch: %d %s", r.status, r.body)
		}
		retry := newRcv.wait(t, 1)[0] // the queued retry, at the new URL
		if retry.header.Get("webhook-id") != eventID || string(retry.body) != string(first.body) {
			t.Fatalf("the new URL got %s, want the retry of %s", retry.header.Get("webhook-id"), eventID)
		}
		eventually(t, "the retry's failure to be recorded", func() bool { return len(h.attempts(t, eventID)) >= 2 })
		moved, err := h.store.WebhookEndpointGet(context.Background(), h.clientID, ep.ID)
		if err != nil || moved.FailingSince == nil || !moved.FailingSince.Equal(h.clock.Now()) {
			t.Fatalf("failing since %v after the move, want the first failure at the new URL, %v (%v)", moved.FailingSince, h.clock.Now(), err)
		}
		if n := oldRcv.count(); n != 1 {
			t.Fatalf("the old URL got %d deliveries, want only the one before the change", n)
		}
	}, withWorkers, func(o *harnessOptions) {
		o.retrySchedule = []time.Duration{0, time.Second, time.Second}
	})
}

var resendOptionRE = regexp.MustCompile(`<option value="(we_[^"]+)">`)

// The event page resends to one endpoint of those that take the event, or
// to all of them; one endpoint gets exactly one delivery.
func TestDashboardResendToOneEndpoint(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		all, auth, cards := newReceiver(t, nil), newReceiver(t, nil), newReceiver(t, nil)
		allEP := h.addEndpoint(t, all.url)
		authEP := h.addEndpoint(t, auth.url, "AUTHENTICATED")
		h.addEndpoint(t, cards.url, "CARD_UPDATED")
		linkCard(t, h.api, "u1", 1)
		all.wait(t, 1)
		auth.wait(t, 1)
		eventID := h.events(h.clientID)[0].ID
		eventually(t, "both deliveries to be recorded", func() bool { return len(h.attempts(t, eventID)) == 2 })

		dev, viewer := h.dash(), h.dash()
		dev.mustSignIn("dev@example.com", h.addMember("dev@example.com", store.RoleDeveloper))
		viewer.mustSignIn("vic@example.com", h.addMember("vic@example.com", store.RoleViewer))
		page := dev.get("/dashboard/webhooks/events/" + eventID)
		var options []string
		for _, m := range resendOptionRE.FindAllSubmatch(page.body, -1) {
			options = append(options, string(m[1]))
		}
		want := []string{allEP.ID, authEP.ID}
		slices.Sort(options)
		slices.Sort(want)
		if !slices.Equal(options, want) || !strings.Contains(string(page.body), `<option value="">every endpoint that takes it (2)</option>`) {
			t.Fatalf("resend choices %v: %.3000s", options, page.body)
		}
		if strings.Contains(string(viewer.get("/dashboard/webhooks/events/"+eventID).body), `id="resend-form"`) {
			t.Errorf("a viewer is offered the resend")
		}

		before := h.auditSeq(h.clientID)
		r := dev.post("/dashboard/webhooks/events/"+eventID+"/resend", url.Values{"endpoint_id": {authEP.ID}})
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/dashboard/webhooks/events/"+eventID+"?notice=event.resent.one" {
			t.Fatalf("resend to one: %d %s", r.status, r.header.Get("Location"))
		}
		if d := auth.wait(t, 2)[1]; d.header.Get("webhook-id") != eventID {
			t.Fatalf("resent %s, want %s", d.header.Get("webhook-id"), eventID)
		}
		eventually(t, "the resend's attempt to be recorded", func() bool { return len(h.attempts(t, eventID)) == 3 })
		h.settle(t)
		if a, b, c := all.count(), auth.count(), cards.count(); a != 1 || b != 2 || c != 0 {
			t.Fatalf("deliveries %d, %d, %d; want 1, 2, 0: the resend went to more than the endpoint chosen; attempts %+v",
				a, b, c, h.attempts(t, eventID))
		}
		perEndpoint := map[string]int{}
		for _, at := range h.attempts(t, eventID) {
			perEndpoint[at.EndpointID]++
		}
		if perEndpoint[authEP.ID] != 2 || perEndpoint[allEP.ID] != 1 || len(perEndpoint) != 2 {
			t.Fatalf("attempts per endpoint %v", perEndpoint)
		}
		rec := lastRecord(t, h)
		if rec.Event.Action != "event.resend" || rec.Target.Type != "event" || rec.Target.Name == nil || *rec.Target.Name != eventID ||
			h.auditSeq(h.clientID) != before+1 {
			t.Fatalf("audit record %+v", rec)
		}

		// Every endpoint that takes it: the default.
		if r := dev.post("/dashboard/webhooks/events/"+eventID+"/resend", url.Values{"endpoint_id": {""}}); r.status != http.StatusSeeOther ||
			!strings.HasSuffix(r.header.Get("Location"), "?notice=event.resent") {
			t.Fatalf("resend to all: %d %s", r.status, r.header.Get("Location"))
		}
		all.wait(t, 2)
		auth.wait(t, 3)
		h.settle(t)
		if a, b, c := all.count(), auth.count(), cards.count(); a != 2 || b != 3 || c != 0 {
			t.Fatalf("deliveries %d, %d, %d; want 2, 3, 0; attempts %+v", a, b, c, h.attempts(t, eventID))
		}

		// Another developer's endpoint is not found; nothing is queued or
		// recorded.
		other := h.newDeveloper("development")
		h2 := *h
		h2.clientID, h2.secret = other.ClientID, other.Secret
		theirs := h2.addEndpoint(t, cards.url)
		before = h.auditSeq(h.clientID)
		if r := dev.post("/dashboard/webhooks/events/"+eventID+"/resend", url.Values{"endpoint_id": {theirs.ID}}); r.status != http.StatusNotFound {
			t.Fatalf("resend to another developer's endpoint: %d", r.status)
		}
		h.settle(t)
		if c := cards.count(); c != 0 || h.auditSeq(h.clientID) != before {
			t.Fatalf("a refused resend delivered %d or wrote a record", c)
		}
	}, withWorkers)
}
