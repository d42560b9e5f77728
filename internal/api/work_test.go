package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hitchdev/hitch/client"
	"github.com/hitchdev/hitch/internal/connector"
)

// refshop is the catalog merchant of the reference shop.
const refshop = 114

// conn is a connector as a test drives it, through the connector API.
type conn struct {
	h     *harness
	creds *connector.Credentials
}

// newServingConnector creates a connector that declares the merchants.
func (h *harness) newServingConnector(t *testing.T, merchants ...int64) *conn {
	t.Helper()
	creds, err := h.connectors.Create(context.Background(), "Test connector")
	if err != nil {
		t.Fatal(err)
	}
	c := &conn{h: h, creds: creds}
	if merchants == nil {
		merchants = []int64{}
	}
	c.want(t, 200, "PUT", "/internal/connector", map[string]any{"merchant_ids": merchants})
	return c
}

func (c *conn) call(method, path string, body any) *response {
	c.h.t.Helper()
	return c.h.do(method, path, body, http.Header{"Authorization": {basic(c.creds.ID, c.creds.Secret)}})
}

// want calls and checks the status, decoding a 2xx answer.
func (c *conn) want(t *testing.T, status int, method, path string, body any) map[string]any {
	t.Helper()
	r := c.call(method, path, body)
	if r.status != status {
		t.Fatalf("%s %s: %d %s, want %d", method, path, r.status, r.body, status)
	}
	out := map[string]any{}
	if status < 300 {
		if err := json.Unmarshal(r.body, &out); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// wantError calls and checks the error code.
func (c *conn) wantError(t *testing.T, status int, code, method, path string, body any) {
	t.Helper()
	r := c.call(method, path, body)
	if r.status != status || r.errorBody(t).Code != code {
		t.Fatalf("%s %s: %d %s, want %d %s", method, path, r.status, r.body, status, code)
	}
}

// claim polls until the connector claims one unit of work of the kind.
func (c *conn) claim(t *testing.T, kind string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		out := c.want(t, 200, "POST", "/internal/work/claim", map[string]any{"kinds": []string{kind}})
		if work := out["work"].([]any); len(work) == 1 {
			return work[0].(map[string]any)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %s work to claim", kind)
	return nil
}

// asyncFlow posts a hosted-flow call without blocking the test: the call
// waits for the connector the test plays.
func (h *harness) asyncFlow(path, session string, body map[string]any) <-chan *response {
	body["session"], body["client_id"] = session, h.clientID
	out := make(chan *response, 1)
	data, _ := json.Marshal(body)
	go func() {
		resp, err := h.http.Post(h.url+path, "application/json", bytes.NewReader(data))
		if err != nil {
			out <- &response{status: -1, body: []byte(err.Error())}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		out <- &response{status: resp.StatusCode, header: resp.Header, body: b}
	}()
	return out
}

func (h *harness) stepOf(t *testing.T, ch <-chan *response) linkStep {
	t.Helper()
	select {
	case r := <-ch:
		return h.step(r)
	case <-time.After(30 * time.Second):
		t.Fatal("the flow's call did not answer")
	}
	return linkStep{}
}

// A production login at a merchant a connector serves goes to that
// connector: the credentials once, the code and question through the flow,
// a wrong answer, then authenticated; the account is linked, its first
// refresh is queued with the saved session, and what the refresh ingests
// reaches the developer.
func TestConnectorLoginWithChallenges(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		c := h.newServingConnector(t, refshop)
		s := h.flowSession(&client.CreateSessionRequest{Type: "transaction_link", ExternalUserID: "shopper"})
		login := h.asyncFlow("/link/api/login", s.Session, map[string]any{"merchant_id": refshop,
			"username": "ada@refshop.example", "password": "canary-password-7"})
		w := c.claim(t, "login")
		creds := w["credentials"].(map[string]any)
		if creds["username"] != "ada@refshop.example" || creds["password"] != "canary-password-7" || w["product"] != "transaction_link" {
			t.Fatalf("claimed %v", w)
		}
		id, lease := w["id"].(string), w["lease"].(string)
		// The credentials were given once: a second claim gets nothing.
		if out := c.want(t, 200, "POST", "/internal/work/claim", map[string]any{}); len(out["work"].([]any)) != 0 {
			t.Fatalf("second claim: %v", out)
		}
		c.want(t, 200, "POST", "/internal/work/"+id+"/step", map[string]any{"lease": lease, "status": "otp_required"})
		st := h.stepOf(t, login)
		if st.Status != "otp_required" || st.Challenge == "" {
			t.Fatalf("login: %+v", st)
		}
		// Nothing typed yet: the long poll answers null.
		if out := c.want(t, 200, "POST", "/internal/work/"+id+"/answer", map[string]any{"lease": lease, "wait_seconds": 0}); out["answer"] != nil {
			t.Fatalf("answer before the user typed: %v", out)
		}
		answer := h.asyncFlow("/link/api/answer", s.Session, map[string]any{"challenge": st.Challenge, "answer": "111111"})
		if out := c.want(t, 200, "POST", "/internal/work/"+id+"/answer", map[string]any{"lease": lease, "wait_seconds": 20}); out["answer"] != "111111" {
			t.Fatalf("answer: %v", out)
		}
		c.want(t, 200, "POST", "/internal/work/"+id+"/step", map[string]any{"lease": lease, "status": "wrong_answer"})
		if st := h.stepOf(t, answer); !st.Wrong || st.Status != "otp_required" {
			t.Fatalf("wrong answer: %+v", st)
		}
		answer = h.asyncFlow("/link/api/answer", s.Session, map[string]any{"challenge": st.Challenge, "answer": "222222"})
		if out := c.want(t, 200, "POST", "/internal/work/"+id+"/answer", map[string]any{"lease": lease, "wait_seconds": 20}); out["answer"] != "222222" {
			t.Fatalf("answer: %v", out)
		}
		state := base64.StdEncoding.EncodeToString([]byte(`{"cookies":"session=abc"}`))
		c.want(t, 200, "POST", "/internal/work/"+id+"/step", map[string]any{"lease": lease, "status": "authenticated", "state": state})
		if st := h.stepOf(t, answer); st.Status != "success" {
			t.Fatalf("authenticated: %+v", st)
		}
		acct, err := h.api.GetAccount(context.Background(), "shopper", refshop, "transaction_link")
		if err != nil || acct.Connection.Status != "connected" {
			t.Fatalf("account: %+v %v", acct, err)
		}
		// The finished login refuses more steps.
		c.wantError(t, 409, "WORK_NOT_WAITING", "POST", "/internal/work/"+id+"/step", map[string]any{"lease": lease, "status": "failed", "reason": "otp"})

		r := c.claim(t, "refresh")
		if r["state"] != state || r["external_user_id"] != "shopper" || r["credentials"] != nil {
			t.Fatalf("refresh: %v", r)
		}
		tx := wireTransaction("RS-1", "SHIPPED")
		c.want(t, 200, "POST", "/internal/ingest/transactions", map[string]any{"client_id": h.clientID,
			"external_user_id": "shopper", "merchant_id": refshop, "transactions": []any{tx}})
		c.want(t, 200, "POST", "/internal/work/"+r["id"].(string)+"/complete", map[string]any{"lease": r["lease"], "outcome": "succeeded"})
		if got := eventTypes(h.eventsOf("shopper")); got != "AUTHENTICATED,NEW_TRANSACTIONS_AVAILABLE" {
			t.Fatalf("events: %s", got)
		}

		// The merchant logged the user out: the account is disconnected, and
		// a new login through the flow reconnects it.
		h.refreshNow(t, c)
		r = c.claim(t, "refresh")
		c.want(t, 200, "POST", "/internal/work/"+r["id"].(string)+"/complete", map[string]any{"lease": r["lease"], "outcome": "disconnected"})
		acct, _ = h.api.GetAccount(context.Background(), "shopper", refshop, "transaction_link")
		if acct.Connection.Status != "disconnected" {
			t.Fatalf("after disconnection: %+v", acct.Connection)
		}
		s = h.flowSession(&client.CreateSessionRequest{Type: "transaction_link", ExternalUserID: "shopper"})
		login = h.asyncFlow("/link/api/login", s.Session, map[string]any{"merchant_id": refshop, "username": "ada", "password": "new-password"})
		w = c.claim(t, "login")
		c.want(t, 200, "POST", "/internal/work/"+w["id"].(string)+"/step", map[string]any{"lease": w["lease"], "status": "authenticated", "state": state})
		if st := h.stepOf(t, login); st.Status != "success" {
			t.Fatalf("login again: %+v", st)
		}
		acct, _ = h.api.GetAccount(context.Background(), "shopper", refshop, "transaction_link")
		if acct.Connection.Status != "connected" || acct.Lifecycle.Status == nil || *acct.Lifecycle.Status != "authenticated" {
			t.Fatalf("after login again: %+v", acct)
		}
		if got := eventTypes(h.eventsOf("shopper")); got != "AUTHENTICATED,NEW_TRANSACTIONS_AVAILABLE,ACCOUNT_LOGIN_REQUIRED,AUTHENTICATED" {
			t.Fatalf("events: %s", got)
		}
		metrics := string(h.do("GET", "/metrics", nil, noAuth).body)
		for _, want := range []string{
			`hitch_connector_login_steps_total{connector="` + c.creds.ID + `",step="otp_required"} 1`,
			`hitch_connector_login_steps_total{connector="` + c.creds.ID + `",step="wrong_answer"} 1`,
			`hitch_connector_login_steps_total{connector="` + c.creds.ID + `",step="authenticated"} 2`,
			`hitch_connector_work_total{connector="` + c.creds.ID + `",kind="refresh",outcome="disconnected"} 1`,
			`hitch_connector_work_total{connector="` + c.creds.ID + `",kind="login",outcome="succeeded"} 2`,
		} {
			if !strings.Contains(metrics, want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
	}, production)
}

// refreshNow makes refreshes due and runs the maintenance job's scheduling,
// with c online.
func (h *harness) refreshNow(t *testing.T, c *conn) {
	t.Helper()
	h.clock.Advance(5 * time.Hour)
	c.want(t, 200, "GET", "/internal/connector", nil)
	if _, err := h.work.ScheduleRefreshes(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func wireTransaction(id, status string) map[string]any {
	return map[string]any{"external_id": id, "datetime": "2026-10-01T12:00:00Z", "order_status": status,
		"price": map[string]any{"sub_total": "10.00", "total": "10.00", "currency": "USD"}}
}

// A connector that stops answering loses its login after the lease: the
// user gets a retryable failure, and the connector's late report is
// refused. A login that no online connector can claim fails the same way.
func TestConnectorLeaseEnds(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		c := h.newServingConnector(t, refshop)
		s := h.flowSession(&client.CreateSessionRequest{Type: "vault", ExternalUserID: "u1"})
		login := h.asyncFlow("/link/api/login", s.Session, map[string]any{"merchant_id": refshop, "username": "a", "password": "b"})
		w := c.claim(t, "login")
		h.clock.Advance(connector.DefaultLease + time.Second)
		st := h.stepOf(t, login)
		if st.Status != "failed" || st.Reason != "interrupted" || !st.Retry {
			t.Fatalf("after the lease: %+v", st)
		}
		c.wantError(t, 409, "LEASE_NOT_HELD", "POST", "/internal/work/"+w["id"].(string)+"/step",
			map[string]any{"lease": w["lease"], "status": "authenticated"})

		login = h.asyncFlow("/link/api/login", s.Session, map[string]any{"merchant_id": refshop, "username": "a", "password": "b"})
		// Wait until the login is queued, then let the claim wait pass.
		deadline := time.Now().Add(10 * time.Second)
		for {
			n, err := h.work.Stats(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			pending := 0
			for _, wc := range n {
				if wc.Status == "pending" {
					pending += wc.Count
				}
			}
			if pending == 1 || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		// The connector stops calling: past the claim wait, no connector is
		// online for the merchant.
		h.clock.Advance(connector.OnlineWindow + time.Second)
		if st := h.stepOf(t, login); st.Status != "failed" || st.Reason != "interrupted" || !st.Retry {
			t.Fatalf("unclaimed: %+v", st)
		}
		if evs := h.eventsOf("u1"); len(evs) != 0 {
			t.Fatalf("events: %s", eventTypes(evs))
		}
	}, production)
}

// Bad reports change nothing and get a clear error.
func TestConnectorBadReports(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		c := h.newServingConnector(t, refshop)
		other := h.newServingConnector(t, refshop)
		stranger := h.newServingConnector(t, 1)
		s := h.flowSession(&client.CreateSessionRequest{Type: "transaction_link", ExternalUserID: "u2"})
		login := h.asyncFlow("/link/api/login", s.Session, map[string]any{"merchant_id": refshop, "username": "a", "password": "b"})
		w := c.claim(t, "login")
		id, lease := w["id"].(string), w["lease"].(string)
		step := "/internal/work/" + id + "/step"

		stranger.wantError(t, 403, "MERCHANT_NOT_SERVED", "POST", step, map[string]any{"lease": lease, "status": "authenticated"})
		stranger.wantError(t, 403, "MERCHANT_NOT_SERVED", "POST", "/internal/ingest/transactions", map[string]any{"client_id": h.clientID,
			"external_user_id": "u2", "merchant_id": refshop, "transactions": []any{wireTransaction("x", "SHIPPED")}})
		other.wantError(t, 409, "LEASE_NOT_HELD", "POST", step, map[string]any{"lease": lease, "status": "authenticated"})
		c.wantError(t, 409, "LEASE_NOT_HELD", "POST", step, map[string]any{"lease": "not-the-lease", "status": "authenticated"})
		c.wantError(t, 404, "NOT_FOUND", "POST", "/internal/work/wk_nope/step", map[string]any{"lease": lease, "status": "authenticated"})
		for name, body := range map[string]map[string]any{
			"no lease":             {"status": "authenticated"},
			"unknown status":       {"lease": lease, "status": "logged_in"},
			"failed without why":   {"lease": lease, "status": "failed"},
			"question without one": {"lease": lease, "status": "questions_required"},
			"state not base64":     {"lease": lease, "status": "authenticated", "state": "%%%"},
			"state on a failure":   {"lease": lease, "status": "failed", "reason": "credentials", "state": "YQ=="},
			"unknown field":        {"lease": lease, "status": "authenticated", "cookies": "x"},
		} {
			if r := c.call("POST", step, body); r.status != 400 || r.errorBody(t).Code != "INVALID_FIELD" {
				t.Fatalf("%s: %d %s", name, r.status, r.body)
			}
		}
		c.wantError(t, 400, "INVALID_FIELD", "PUT", "/internal/connector", map[string]any{"merchant_ids": []int64{999999}})
		c.wantError(t, 400, "INVALID_FIELD", "POST", "/internal/work/claim", map[string]any{"kinds": []string{"card"}})
		// None of it moved the login: it still takes the connector's step.
		c.want(t, 200, "POST", step, map[string]any{"lease": lease, "status": "failed", "reason": "credentials"})
		if st := h.stepOf(t, login); st.Status != "failed" || st.Reason != "credentials" || !st.Retry {
			t.Fatalf("login: %+v", st)
		}
	}, production)
}

// Refreshes claimed by two connectors at once are each claimed once.
func TestConnectorClaimsOnce(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		a, b := h.newServingConnector(t, refshop), h.newServingConnector(t, refshop)
		const n = 30
		for i := range n {
			if err := h.work.EnqueueRefresh(context.Background(), h.clientID, "user-"+string(rune('a'+i%26))+string(rune('a'+i/26)), refshop); err != nil {
				t.Fatal(err)
			}
		}
		var mu sync.Mutex
		seen := map[string]int{}
		var wg sync.WaitGroup
		for _, c := range []*conn{a, b} {
			wg.Go(func() {
				for {
					resp, err := c.h.http.Do(c.request(map[string]any{"limit": 3}))
					if err != nil {
						t.Error(err)
						return
					}
					var out struct {
						Work []struct {
							ID string `json:"id"`
						} `json:"work"`
					}
					err = json.NewDecoder(resp.Body).Decode(&out)
					resp.Body.Close()
					if err != nil || resp.StatusCode != 200 {
						t.Errorf("claim: %d %v", resp.StatusCode, err)
						return
					}
					if len(out.Work) == 0 {
						return
					}
					mu.Lock()
					for _, w := range out.Work {
						seen[w.ID]++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(seen) != n {
			t.Fatalf("claimed %d of %d", len(seen), n)
		}
		for id, k := range seen {
			if k != 1 {
				t.Fatalf("%s claimed %d times", id, k)
			}
		}
	}, production)
}

func (c *conn) request(body any) *http.Request {
	data, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", c.h.url+"/internal/work/claim", bytes.NewReader(data))
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth(c.creds.ID, c.creds.Secret)
	return req
}

// A login whose connector takes longer than one wait answers "pending";
// waiting again with its challenge gets the connector's step.
func TestConnectorLoginPending(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		c := h.newServingConnector(t, refshop)
		s := h.flowSession(&client.CreateSessionRequest{Type: "transaction_link", ExternalUserID: "slow"})
		login := h.asyncFlow("/link/api/login", s.Session, map[string]any{"merchant_id": refshop, "username": "a", "password": "b"})
		w := c.claim(t, "login")
		h.clock.Advance(connector.DefaultStepWait + time.Second) // within the lease
		st := h.stepOf(t, login)
		if st.Status != "pending" || st.Challenge == "" {
			t.Fatalf("slow login: %+v", st)
		}
		// A pending challenge is not an answer's.
		if r := h.flowCall("/link/api/answer", s.Session, map[string]any{"challenge": st.Challenge, "answer": "x"}); r.status != 400 {
			t.Fatalf("answer with a pending challenge: %d %s", r.status, r.body)
		}
		wait := h.asyncFlow("/link/api/wait", s.Session, map[string]any{"challenge": st.Challenge})
		c.want(t, 200, "POST", "/internal/work/"+w["id"].(string)+"/step", map[string]any{"lease": w["lease"], "status": "authenticated"})
		if st := h.stepOf(t, wait); st.Status != "success" {
			t.Fatalf("after waiting again: %+v", st)
		}
		// The spent challenge waits no more.
		if r := h.flowCall("/link/api/wait", s.Session, map[string]any{"challenge": st.Challenge}); r.status != 400 {
			t.Fatalf("wait with a spent challenge: %d %s", r.status, r.body)
		}
	}, production)
}
