package storetest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

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

// Attempts inserted together, across more than one statement, read back
// in order with every field.
func TestWebhookAttemptInsertMany(t *testing.T) {
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
		const n = 70 // three statements of at most 32 rows
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
		if err := st.WebhookAttemptInsertMany(ctx, want); err != nil {
			t.Fatal(err)
		}
		got, err := st.WebhookAttemptList(ctx, "a", evID)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			t.Fatalf("%d attempts, want %d", len(got), n)
		}
		for i, g := range got {
			w := want[i]
			if g.Attempt != w.Attempt || !g.StartedAt.Equal(w.StartedAt) || g.Duration != w.Duration || g.ResponseBody != w.ResponseBody ||
				g.Outcome != w.Outcome || g.Error != w.Error || (g.StatusCode == nil) != (w.StatusCode == nil) ||
				(g.StatusCode != nil && *g.StatusCode != *w.StatusCode) {
				t.Fatalf("attempt %d: got %+v, want %+v", i, g, w)
			}
		}
		// The job ids went in too: each succeeded attempt is its job's.
		for i, w := range want {
			ok, err := st.WebhookAttemptSucceeded(ctx, "a", evID, int64(i+1), t0)
			if err != nil || ok != (w.Outcome == store.AttemptSucceeded) {
				t.Fatalf("WebhookAttemptSucceeded(job %d) = %v, %v", i+1, ok, err)
			}
		}
	})
}
