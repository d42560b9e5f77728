package api_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/hitchdev/hitch/client"
)

// A node that begins to shut down (hitch serve drains Work then) answers
// its long polls at once, as if their wait were up, instead of holding the
// shutdown for them: the connector's wait for the user's answer with no
// answer yet, the hosted flow's wait for a connector with "pending". The
// test's clock never moves, so without the drain neither would answer.
func TestLongPollsAnswerOnDrain(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		c := h.newServingConnector(t, refshop)
		s := h.flowSession(&client.CreateSessionRequest{Type: "transaction_link", ExternalUserID: "typing"})
		login := h.asyncFlow("/link/api/login", s.Session, map[string]any{"merchant_id": refshop, "username": "a", "password": "b"})
		w := c.claim(t, "login")
		id, lease := w["id"].(string), w["lease"].(string)
		c.want(t, 200, "POST", "/internal/work/"+id+"/step", map[string]any{"lease": lease, "status": "otp_required"})
		if st := h.stepOf(t, login); st.Status != "otp_required" {
			t.Fatalf("login: %+v", st)
		}
		answer := make(chan *response, 1)
		go func() {
			answer <- c.call("POST", "/internal/work/"+id+"/answer", map[string]any{"lease": lease, "wait_seconds": 25})
		}()
		waiting := h.flowSession(&client.CreateSessionRequest{Type: "transaction_link", ExternalUserID: "waiting"})
		unclaimed := h.asyncFlow("/link/api/login", waiting.Session, map[string]any{"merchant_id": refshop, "username": "c", "password": "d"})

		h.work.Drain()
		select {
		case r := <-answer:
			var out map[string]any
			if r.status != 200 || json.Unmarshal(r.body, &out) != nil || out["answer"] != nil {
				t.Fatalf("the answer's long poll on drain: %d %s, want 200 with no answer", r.status, r.body)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the answer's long poll did not answer on drain")
		}
		if st := h.stepOf(t, unclaimed); st.Status != "pending" || st.Challenge == "" {
			t.Fatalf("the flow's wait for a connector on drain: %+v, want pending", st)
		}
	}, production)
}
