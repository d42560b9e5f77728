package storetest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

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
			if g.Attempt != w.Attempt || g.JobID != w.JobID || !g.StartedAt.Equal(w.StartedAt) || g.Duration != w.Duration || g.ResponseBody != w.ResponseBody ||
				g.Outcome != w.Outcome || g.Error != w.Error || (g.StatusCode == nil) != (w.StatusCode == nil) ||
				(g.StatusCode != nil && *g.StatusCode != *w.StatusCode) {
				t.Fatalf("attempt %d: got %+v, want %+v", i, g, w)
			}
		}
	})
}
