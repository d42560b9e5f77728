package storetest_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// A delivery's endpoint and event come back together, only for their own
// developer, and not at all when either is missing.
func TestWebhookDeliveryGet(t *testing.T) {
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
		u := newUser(t, st, "a", "user-1")
		evID := uuid.NewString()
		if _, err := st.EventInsert(ctx, &store.EventInsertParams{ID: evID, ClientID: "a", UserID: &u.ID,
			ExternalUserID: &u.ExternalUserID, Type: "TEST", Sequence: 7,
			Payload: json.RawMessage(`{"event":"TEST"}`), CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
		otherEv := uuid.NewString() // b's event, not readable through a's endpoint
		if _, err := st.EventInsert(ctx, &store.EventInsertParams{ID: otherEv, ClientID: "b", Type: "TEST",
			Payload: json.RawMessage(`{}`), CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
		gotEP, gotEV, err := st.WebhookDeliveryGet(ctx, "a", "we_1", evID)
		if err != nil {
			t.Fatal(err)
		}
		if gotEP.URL != ep.URL || string(gotEP.SecretSealed) != "sealed" || len(gotEP.EventTypes) != 1 || gotEP.Status != ep.Status {
			t.Errorf("endpoint %+v", gotEP)
		}
		if gotEV.ID != evID || gotEV.ClientID != "a" || gotEV.Type != "TEST" || gotEV.Sequence != 7 ||
			gotEV.UserID == nil || *gotEV.UserID != u.ID || gotEV.ExternalUserID == nil || *gotEV.ExternalUserID != "user-1" ||
			string(gotEV.Payload) != `{"event":"TEST"}` || !gotEV.CreatedAt.Equal(t0) {
			t.Errorf("event %+v", gotEV)
		}
		for _, c := range []struct{ client, endpoint, event string }{
			{"b", "we_1", evID},             // another developer
			{"a", "we_2", evID},             // no such endpoint
			{"a", "we_1", uuid.NewString()}, // no such event
			{"a", "we_1", otherEv},          // another developer's event
		} {
			if _, _, err := st.WebhookDeliveryGet(ctx, c.client, c.endpoint, c.event); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("WebhookDeliveryGet(%q, %q, %q) = %v, want ErrNotFound", c.client, c.endpoint, c.event, err)
			}
		}
	})
}
