package storetest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// Deliveries' endpoints and events come back together (in one query on
// PostgreSQL, two on SQLite), only for their own developer, and not at all
// when either is missing.
func TestWebhookDeliveriesGet(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		newClient(t, st, "a")
		newClient(t, st, "b")
		ep := &store.WebhookEndpoint{ID: "we_1", ClientID: "a", URL: "https://example.com/hooks", EventTypes: []string{"TEST"},
			SecretSealed: []byte("sealed"), Status: store.WebhookEndpointEnabled, CreatedAt: t0, UpdatedAt: t0}
		if err := st.WebhookEndpointInsert(ctx, ep); err != nil {
			t.Fatal(err)
		}
		if err := st.WebhookEndpointInsert(ctx, &store.WebhookEndpoint{ID: "we_2", ClientID: "a", URL: "https://example.com/two",
			SecretSealed: []byte("two"), Status: store.WebhookEndpointDisabled, CreatedAt: t0, UpdatedAt: t0}); err != nil {
			t.Fatal(err)
		}
		u := newUser(t, st, "a", "user-1")
		evID, ev2ID := uuid.NewString(), uuid.NewString()
		if _, err := st.EventInsert(ctx, &store.EventInsertParams{ID: evID, ClientID: "a", UserID: &u.ID,
			ExternalUserID: &u.ExternalUserID, Type: "TEST", Sequence: 7,
			Payload: json.RawMessage(`{"event":"TEST"}`), CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.EventInsert(ctx, &store.EventInsertParams{ID: ev2ID, ClientID: "a", Type: "OTHER", Sequence: 8,
			Payload: json.RawMessage(`{"n":2}`), CreatedAt: t0.Add(time.Second)}); err != nil {
			t.Fatal(err)
		}
		otherEv := uuid.NewString() // b's event, not readable through a's endpoint
		if _, err := st.EventInsert(ctx, &store.EventInsertParams{ID: otherEv, ClientID: "b", Type: "TEST",
			Payload: json.RawMessage(`{}`), CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
		key := func(client, endpoint, event string) store.WebhookDeliveryKey {
			return store.WebhookDeliveryKey{ClientID: client, EndpointID: endpoint, EventID: event}
		}
		found := []store.WebhookDeliveryKey{key("a", "we_1", evID), key("a", "we_2", evID), key("a", "we_1", ev2ID)}
		missing := []store.WebhookDeliveryKey{
			key("b", "we_1", evID),             // another developer
			key("a", "we_3", evID),             // no such endpoint
			key("a", "we_1", uuid.NewString()), // no such event
			key("a", "we_1", otherEv),          // another developer's event
			key("b", "we_1", otherEv),          // another developer's endpoint, with one's own event
		}
		got, err := st.WebhookDeliveriesGet(ctx, append(slices.Clone(missing[:2]), append(found, missing[2:]...)...))
		if err != nil {
			t.Fatal(err)
		}
		byKey := map[store.WebhookDeliveryKey]*store.WebhookDelivery{}
		for _, d := range got {
			byKey[d.Key()] = d
		}
		if len(got) != len(found) || len(byKey) != len(found) {
			t.Fatalf("got %d deliveries (%d keys), want %v", len(got), len(byKey), found)
		}
		d := byKey[found[0]]
		if d == nil {
			t.Fatalf("no delivery for %v", found[0])
		}
		if d.Endpoint.URL != ep.URL || string(d.Endpoint.SecretSealed) != "sealed" || len(d.Endpoint.EventTypes) != 1 ||
			d.Endpoint.Status != ep.Status {
			t.Errorf("endpoint %+v", d.Endpoint)
		}
		if ev := d.Event; ev.ID != evID || ev.ClientID != "a" || ev.Type != "TEST" || ev.Sequence != 7 ||
			ev.UserID == nil || *ev.UserID != u.ID || ev.ExternalUserID == nil || *ev.ExternalUserID != "user-1" ||
			string(ev.Payload) != `{"event":"TEST"}` || !ev.CreatedAt.Equal(t0) {
			t.Errorf("event %+v", ev)
		}
		if d := byKey[found[1]]; d == nil || d.Endpoint.URL != "https://example.com/two" || d.Endpoint.Status != store.WebhookEndpointDisabled || d.Event.ID != evID {
			t.Errorf("second endpoint's delivery %+v", d)
		}
		if d := byKey[found[2]]; d == nil || d.Event.Type != "OTHER" || string(d.Event.Payload) != `{"n":2}` || d.Event.UserID != nil || d.Endpoint.ID != "we_1" {
			t.Errorf("second event's delivery %+v", d)
		}
		// Deliveries go to workers apart: none shares its endpoint or event
		// with another, even when both name the same one.
		if d0, d1, d2 := byKey[found[0]], byKey[found[1]], byKey[found[2]]; d0.Endpoint == d2.Endpoint || d0.Event == d1.Event {
			t.Errorf("deliveries share their endpoint (%v) or event (%v)", d0.Endpoint == d2.Endpoint, d0.Event == d1.Event)
		}
		for _, k := range missing {
			if got, err := st.WebhookDeliveriesGet(ctx, []store.WebhookDeliveryKey{k}); err != nil || len(got) != 0 {
				t.Errorf("WebhookDeliveriesGet(%v) = %v, %v; want nothing", k, got, err)
			}
		}
		if got, err := st.WebhookDeliveriesGet(ctx, nil); err != nil || len(got) != 0 {
			t.Errorf("WebhookDeliveriesGet(nil) = %v, %v", got, err)
		}
	})
}

// Attempts read back in the order they started, with every field.
func TestWebhookAttemptInsert(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		newClient(t, st, "a")
		if err := st.WebhookEndpointInsert(ctx, &store.WebhookEndpoint{ID: "we_1", ClientID: "a", URL: "https://example.com/h",
			SecretSealed: []byte("s"), Status: store.WebhookEndpointEnabled, CreatedAt: t0, UpdatedAt: t0}); err != nil {
			t.Fatal(err)
		}
		evID := uuid.NewString()
		if _, err := st.EventInsert(ctx, &store.EventInsertParams{ID: evID, ClientID: "a", Type: "TEST",
			Payload: json.RawMessage(`{}`), CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
		const n = 70
		var want []*store.WebhookAttempt
		for i := range n {
			a := &store.WebhookAttempt{ClientID: "a", EventID: evID, EndpointID: "we_1", Attempt: i + 1, JobID: int64(i + 1),
				StartedAt: t0.Add(time.Duration(i) * time.Second), Duration: time.Duration(i) * time.Millisecond,
				ResponseBody: fmt.Sprintf("body %d", i), Outcome: store.AttemptFailed, Error: "e"}
			if i%2 == 0 {
				code := 200 + i
				a.StatusCode, a.Outcome, a.Error = &code, store.AttemptSucceeded, ""
			}
			want = append(want, a)
		}
		// An attempt without a job (0) stores none. Written last, it
		// started first, and lists first.
		code := 200
		first := &store.WebhookAttempt{ClientID: "a", EventID: evID, EndpointID: "we_1", Attempt: n + 1,
			StartedAt: t0.Add(-time.Second), StatusCode: &code, Outcome: store.AttemptSucceeded}
		for _, a := range append(want, first) {
			if err := st.WebhookAttemptInsert(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
		got, err := st.WebhookAttemptList(ctx, "a", evID)
		if err != nil {
			t.Fatal(err)
		}
		want = append([]*store.WebhookAttempt{first}, want...)
		if len(got) != n+1 {
			t.Fatalf("%d attempts, want %d", len(got), n+1)
		}
		for i, g := range got {
			w := want[i]
			if g.Attempt != w.Attempt || !g.StartedAt.Equal(w.StartedAt) || g.Duration != w.Duration || g.ResponseBody != w.ResponseBody ||
				g.Outcome != w.Outcome || g.Error != w.Error || (g.StatusCode == nil) != (w.StatusCode == nil) ||
				(g.StatusCode != nil && *g.StatusCode != *w.StatusCode) {
				t.Fatalf("attempt %d: got %+v, want %+v", i, g, w)
			}
		}
	})
}
