package api_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/hitchdev/hitch/client"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/webhook"
	"github.com/hitchdev/hitch/internal/whsig/whsigtest"
)

// delivery is one request a receiver got.
type delivery struct {
	header http.Header
	body   []byte
	at     time.Time
}

func (d delivery) event() string {
	var env struct {
		Event string `json:"event"`
	}
	_ = json.Unmarshal(d.body, &env)
	return env.Event
}

// receiver is a webhook endpoint that records deliveries and answers with
// what answer returns for the n-th delivery (from 1).
type receiver struct {
	mu         sync.Mutex
	deliveries []delivery
	arrived    chan struct{}
	answer     func(n int, w http.ResponseWriter)
	url        string
}

func newReceiver(t *testing.T, answer func(n int, w http.ResponseWriter)) *receiver {
	t.Helper()
	r := &receiver{arrived: make(chan struct{}, 1000), answer: answer}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.deliveries = append(r.deliveries, delivery{header: req.Header.Clone(), body: body, at: time.Now()})
		n := len(r.deliveries)
		r.mu.Unlock()
		if r.answer != nil {
			r.answer(n, w)
		}
		r.arrived <- struct{}{}
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/hooks"
	return r
}

// wait returns once n deliveries have arrived in all.
func (r *receiver) wait(t *testing.T, n int) []delivery {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		r.mu.Lock()
		got := append([]delivery(nil), r.deliveries...)
		r.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-r.arrived:
		case <-deadline:
			t.Fatalf("%d deliveries arrived, want %d", len(got), n)
		}
	}
}

type endpointResp struct {
	ID                   string   `json:"id"`
	URL                  string   `json:"url"`
	Events               []string `json:"events"`
	Status               string   `json:"status"`
	DisabledReason       *string  `json:"disabled_reason"`
	SecretRotationEndsAt *string  `json:"secret_rotation_ends_at"`
	Secret               string   `json:"secret"`
}

func (h *harness) addEndpoint(t *testing.T, url string, events ...string) endpointResp {
	t.Helper()
	body := map[string]any{"url": url}
	if len(events) > 0 {
		body["events"] = events
	}
	resp := h.do("POST", "/webhooks/endpoints", body, nil)
	if resp.status != 200 {
		t.Fatalf("add endpoint: %d %s", resp.status, resp.body)
	}
	var ep endpointResp
	if err := json.Unmarshal(resp.body, &ep); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ep.Secret, "whsec_") || ep.Status != "enabled" {
		t.Fatalf("endpoint %+v", ep)
	}
	return ep
}

func (h *harness) endpoints(t *testing.T) []endpointResp {
	t.Helper()
	resp := h.do("GET", "/webhooks/endpoints", nil, nil)
	var out struct{ Data []endpointResp }
	if resp.status != 200 || json.Unmarshal(resp.body, &out) != nil {
		t.Fatalf("list endpoints: %d %s", resp.status, resp.body)
	}
	return out.Data
}

type attemptResp struct {
	EndpointID string `json:"endpoint_id"`
	Attempt    int    `json:"attempt"`
	StatusCode *int   `json:"status_code"`
	Outcome    string `json:"outcome"`
	Error      string `json:"error"`
}

func (h *harness) attempts(t *testing.T, eventID string) []attemptResp {
	t.Helper()
	resp := h.do("GET", "/webhooks/events/"+eventID+"/attempts", nil, nil)
	var out struct{ Data []attemptResp }
	if resp.status != 200 || json.Unmarshal(resp.body, &out) != nil {
		t.Fatalf("attempts: %d %s", resp.status, resp.body)
	}
	return out.Data
}

// eventually retries check until it passes or 10 s have gone by.
func eventually(t *testing.T, what string, check func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if check() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func TestWebhookDeliveredSignedEndToEnd(t *testing.T) {
	t.Parallel()
	nodeVerify := whsigtest.NodeVerifier(t)
	each(t, func(t *testing.T, h *harness) {
		rcv := newReceiver(t, nil)
		ep := h.addEndpoint(t, rcv.url)

		linkCard(t, h.api, "u1", 1)
		if err := h.api.DevDisconnectAccount(context.Background(), "u1", 1); err != nil {
			t.Fatal(err)
		}
		got := rcv.wait(t, 2)
		events := h.events(h.clientID) // newest first
		if len(events) != 2 || events[0].Type != "ACCOUNT_LOGIN_REQUIRED" {
			t.Fatalf("events %+v", events)
		}
		byID := map[string]delivery{}
		for _, d := range got {
			byID[d.header.Get("webhook-id")] = d
		}
		for _, ev := range events {
			d, ok := byID[ev.ID]
			if !ok {
				t.Fatalf("event %s (%s) not delivered with its id as webhook-id", ev.ID, ev.Type)
			}
			if string(d.body) != string(ev.Payload) {
				t.Errorf("delivered body %s, recorded payload %s", d.body, ev.Payload)
			}
			if err := client.VerifyWebhook(d.header, d.body, ep.Secret, 0); err != nil {
				t.Errorf("Standard Webhooks signature: %v", err)
			}
			if err := client.VerifyKnotSignature(d.header, d.body, h.secret); err != nil {
				t.Errorf("Knot-Signature: %v", err)
			}
			if err := nodeVerify(d.header, d.body, ep.Secret); err != nil {
				t.Errorf("npm standardwebhooks refused the delivery: %v", err)
			}
			if d.header.Get("Content-Type") != "application/json" {
				t.Errorf("Content-Type %q", d.header.Get("Content-Type"))
			}
		}
		login := byID[events[0].ID]
		var env map[string]any
		if err := json.Unmarshal(login.body, &env); err != nil {
			t.Fatal(err)
		}
		merchant, _ := env["merchant"].(map[string]any)
		if env["event"] != "ACCOUNT_LOGIN_REQUIRED" || env["external_user_id"] != "u1" || env["sequence"] != 2.0 ||
			merchant["id"] != 1.0 || merchant["logo"] == nil || env["timestamp"] == nil {
			t.Errorf("envelope %s", login.body)
		}
		eventually(t, "the attempts to be recorded", func() bool {
			a := h.attempts(t, events[0].ID)
			return len(a) == 1 && a[0].Outcome == "succeeded" && *a[0].StatusCode == 200 && a[0].EndpointID == ep.ID
		})
		// The secret is never stored in plain text.
		if strings.Contains(dumpDatabase(t, h.store), ep.Secret) {
			t.Error("the endpoint secret is in the database in plain text")
		}
	}, withWorkers)
}

func TestWebhookRetriesKeepTheID(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		rcv := newReceiver(t, func(n int, w http.ResponseWriter) {
			if n <= 2 {
				http.Error(w, "not yet", http.StatusInternalServerError)
			}
		})
		h.addEndpoint(t, rcv.url)
		linkCard(t, h.api, "u1", 1)
		got := rcv.wait(t, 3)
		id := got[0].header.Get("webhook-id")
		for _, d := range got {
			if d.header.Get("webhook-id") != id {
				t.Fatalf("webhook-id changed across retries: %q then %q", id, d.header.Get("webhook-id"))
			}
		}
		eventually(t, "three attempts", func() bool {
			a := h.attempts(t, id)
			return len(a) == 3 && a[0].Outcome == "failed" && a[1].Outcome == "failed" && a[2].Outcome == "succeeded" &&
				a[0].Attempt == 1 && a[2].Attempt == 3
		})
		// The job completed with its third attempt: nothing more is sent.
		if jobs := h.settle(t); len(jobs) != 1 || jobs[0].State != rivertype.JobStateCompleted || jobs[0].Attempt != 3 {
			t.Errorf("delivery jobs %s, want one completed at attempt 3", describeJobs(jobs))
		}
		if n := len(rcv.wait(t, 3)); n != 3 {
			t.Errorf("%d deliveries after a success, want 3", n)
		}
	}, withWorkers)
}

// A success's attempt and its job's completion commit together: whenever
// one is seen, so is the other, and the attempt names the job.
func TestWebhookSuccessCompletesItsJobWithItsAttempt(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		held := make(chan struct{})
		release := sync.OnceFunc(func() { close(held) })
		rcv := newReceiver(t, func(int, http.ResponseWriter) { <-held })
		t.Cleanup(release) // before the receiver closes: its handler must not wait

		h.addEndpoint(t, rcv.url)
		if resp := h.do("POST", "/development/webhooks/test", map[string]any{"message": "together"}, nil); resp.status != 200 {
			t.Fatalf("create test event: %d %s", resp.status, resp.body)
		}
		var eventID string
		eventually(t, "the delivery to arrive", func() bool {
			rcv.mu.Lock()
			defer rcv.mu.Unlock()
			if len(rcv.deliveries) > 0 {
				eventID = rcv.deliveries[0].header.Get("webhook-id")
			}
			return eventID != ""
		})
		attempts := func() []*store.WebhookAttempt {
			a, err := h.store.WebhookAttemptList(ctx, h.clientID, eventID)
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
		job := func() *rivertype.JobRow {
			jobs := h.deliveryJobs(t)
			if len(jobs) != 1 {
				t.Fatalf("delivery jobs %s, want one", describeJobs(jobs))
			}
			return jobs[0]
		}
		// The receiver holds the answer: the job runs, and nothing is
		// recorded yet.
		if j, a := job(), attempts(); j.State != rivertype.JobStateRunning || len(a) != 0 {
			t.Fatalf("while the receiver holds the answer: job %s, attempts %+v", describeJobs([]*rivertype.JobRow{j}), a)
		}
		release()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			// Each read in turn, then the other: the second sees the
			// first's transaction.
			if a := attempts(); len(a) > 0 {
				if j := job(); j.State != rivertype.JobStateCompleted {
					t.Fatalf("the attempt is recorded while the job is %s", j.State)
				}
			}
			j := job()
			if j.State != rivertype.JobStateCompleted {
				if time.Now().After(deadline) {
					t.Fatalf("job %s 10 s after the answer", describeJobs([]*rivertype.JobRow{j}))
				}
				continue
			}
			a := attempts()
			if len(a) != 1 || a[0].JobID != j.ID || a[0].Attempt != 1 || j.Attempt != 1 || a[0].Outcome != store.AttemptSucceeded ||
				a[0].StatusCode == nil || *a[0].StatusCode != 200 {
				t.Fatalf("the job completed (%s) with attempts %+v, want its one success", describeJobs([]*rivertype.JobRow{j}), a)
			}
			break
		}
	}, withWorkers)
}

// A resend is a job of its own: its first attempt fails, it is retried
// and delivered, and the attempts of both jobs are listed.
func TestWebhookResendAfterASuccess(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		rcv := newReceiver(t, func(n int, w http.ResponseWriter) {
			if n == 2 { // the resend's first attempt
				w.WriteHeader(http.StatusInternalServerError)
			}
		})
		h.addEndpoint(t, rcv.url)
		if resp := h.do("POST", "/development/webhooks/test", nil, nil); resp.status != 200 {
			t.Fatalf("create test event: %d %s", resp.status, resp.body)
		}
		eventID := rcv.wait(t, 1)[0].header.Get("webhook-id")
		h.settle(t)
		if resp := h.do("POST", "/webhooks/events/"+eventID+"/resend", nil, nil); resp.status != 200 {
			t.Fatalf("resend: %d %s", resp.status, resp.body)
		}
		rcv.wait(t, 3)
		eventually(t, "the resend's success", func() bool {
			a := h.attempts(t, eventID)
			return len(a) == 3 && a[1].Outcome == "failed" && a[2].Outcome == "succeeded"
		})
		jobs := h.settle(t)
		if len(jobs) != 2 || jobs[0].State != rivertype.JobStateCompleted || jobs[0].Attempt != 1 ||
			jobs[1].State != rivertype.JobStateCompleted || jobs[1].Attempt != 2 {
			t.Errorf("delivery jobs %s, want the first completed at attempt 1 and the resend at 2", describeJobs(jobs))
		}
	}, withWorkers)
}

// A 2xx whose body holds a NUL byte (which PostgreSQL refuses in text and
// jsonb) is recorded with the byte replaced, and deliveries go on.
func TestWebhookResponseWithNUL(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		rcv := newReceiver(t, func(_ int, w http.ResponseWriter) { _, _ = w.Write([]byte("ok\x00!")) })
		h.addEndpoint(t, rcv.url)
		for i := range 2 {
			if resp := h.do("POST", "/development/webhooks/test", map[string]any{"message": fmt.Sprint(i)}, nil); resp.status != 200 {
				t.Fatalf("create test event: %d %s", resp.status, resp.body)
			}
		}
		got := rcv.wait(t, 2)
		for _, d := range got {
			id := d.header.Get("webhook-id")
			eventually(t, "the attempt of "+id, func() bool {
				resp := h.do("GET", "/webhooks/events/"+id+"/attempts", nil, nil)
				var out struct {
					Data []struct {
						Outcome      string `json:"outcome"`
						ResponseBody string `json:"response_body"`
					}
				}
				return resp.status == 200 && json.Unmarshal(resp.body, &out) == nil && len(out.Data) == 1 &&
					out.Data[0].Outcome == "succeeded" && out.Data[0].ResponseBody == "ok\uFFFD!"
			})
		}
		if jobs := h.settle(t); len(jobs) != 2 || jobs[0].State != rivertype.JobStateCompleted || jobs[1].State != rivertype.JobStateCompleted {
			t.Errorf("delivery jobs %s, want both completed", describeJobs(jobs))
		}
	}, withWorkers)
}

// deliveryJobs lists River's delivery jobs, in every state, oldest first.
func (h *harness) deliveryJobs(t *testing.T) []*rivertype.JobRow {
	t.Helper()
	jobs, err := h.queue.Jobs(context.Background(), river.NewJobListParams().Kinds(webhook.JobKind).First(10_000))
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// settle waits until every delivery job has finished (completed, cancelled
// or discarded), after which nothing more is delivered until something
// queues another, and returns the jobs, oldest first.
func (h *harness) settle(t *testing.T) []*rivertype.JobRow {
	t.Helper()
	var jobs []*rivertype.JobRow
	eventually(t, "every delivery job to finish", func() bool {
		jobs = h.deliveryJobs(t)
		return !slices.ContainsFunc(jobs, func(j *rivertype.JobRow) bool { return j.FinalizedAt == nil })
	})
	return jobs
}

// jobArgs decodes a delivery job's arguments.
func jobArgs(t *testing.T, j *rivertype.JobRow) webhook.DeliveryArgs {
	t.Helper()
	var a webhook.DeliveryArgs
	if err := json.Unmarshal(j.EncodedArgs, &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// rawSQL runs a statement in a transaction of st: the SQLite or the
// PostgreSQL text, by the store's dialect. With dest, it scans the one row
// the statement returns.
func rawSQL(t *testing.T, st store.Store, sqlite, postgres string, dest ...any) {
	t.Helper()
	err := st.InTx(context.Background(), func(ex store.Executor) error {
		switch tx := ex.(interface{ Raw() any }).Raw().(type) {
		case *sql.Tx:
			if len(dest) > 0 {
				return tx.QueryRow(sqlite).Scan(dest...)
			}
			_, err := tx.Exec(sqlite)
			return err
		case pgx.Tx:
			if len(dest) > 0 {
				return tx.QueryRow(context.Background(), postgres).Scan(dest...)
			}
			_, err := tx.Exec(context.Background(), postgres)
			return err
		default:
			return fmt.Errorf("unknown transaction %T", tx)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

// describeJobs is jobs' ids, states and attempts, for failure messages.
func describeJobs(jobs []*rivertype.JobRow) string {
	var parts []string
	for _, j := range jobs {
		parts = append(parts, fmt.Sprintf("%d %s (attempt %d, %s)", j.ID, j.State, j.Attempt, j.EncodedArgs))
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

func TestWebhookGoneDisablesTheEndpoint(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		gone := newReceiver(t, func(int, http.ResponseWriter) {})
		gone.answer = func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusGone) }
		other := newReceiver(t, nil)
		goneEP := h.addEndpoint(t, gone.url)
		h.addEndpoint(t, other.url, "ENDPOINT_DISABLED")

		linkCard(t, h.api, "u1", 1)
		gone.wait(t, 1)
		got := other.wait(t, 1)
		if got[0].event() != "ENDPOINT_DISABLED" || !strings.Contains(string(got[0].body), goneEP.ID) {
			t.Fatalf("other endpoint got %s", got[0].body)
		}
		for _, ep := range h.endpoints(t) {
			if ep.ID == goneEP.ID && (ep.Status != "disabled" || ep.DisabledReason == nil || !strings.Contains(*ep.DisabledReason, "410")) {
				t.Fatalf("endpoint after 410: %+v", ep)
			}
		}
		// Disabled endpoints get nothing more: the new events queue no
		// delivery to it.
		before := len(h.events(h.clientID))
		linkCard(t, h.api, "u1", 2)
		if n := len(h.events(h.clientID)); n <= before {
			t.Fatalf("linking a card recorded no event (%d, then %d)", before, n)
		}
		jobs := h.settle(t)
		var toGone []*rivertype.JobRow
		for _, j := range jobs {
			if jobArgs(t, j).EndpointID == goneEP.ID {
				toGone = append(toGone, j)
			}
		}
		if len(toGone) != 1 || toGone[0].State != rivertype.JobStateCancelled {
			t.Errorf("jobs to the disabled endpoint %s, want the one that got 410, cancelled", describeJobs(toGone))
		}
		if n := len(gone.wait(t, 1)); n != 1 {
			t.Errorf("a disabled endpoint got %d deliveries", n)
		}
	}, withWorkers)
}

func TestWebhookHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		rcv := newReceiver(t, func(n int, w http.ResponseWriter) {
			if n == 1 {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusServiceUnavailable)
			}
		})
		h.addEndpoint(t, rcv.url)
		linkCard(t, h.api, "u1", 1)
		got := rcv.wait(t, 2)
		if wait := got[1].at.Sub(got[0].at); wait < time.Second {
			t.Fatalf("second attempt after %v, want at least the 1 s of Retry-After (the schedule says 0)", wait)
		}
	}, withWorkers)
}

func TestWebhookEventFilterAndRotation(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		rcv := newReceiver(t, nil)
		ep := h.addEndpoint(t, rcv.url, "ACCOUNT_LOGIN_REQUIRED")
		resp := h.do("POST", "/webhooks/endpoints/"+ep.ID+"/rotate-secret", nil, nil)
		var rotated endpointResp
		if resp.status != 200 || json.Unmarshal(resp.body, &rotated) != nil || rotated.Secret == ep.Secret ||
			rotated.SecretRotationEndsAt == nil {
			t.Fatalf("rotate: %d %s", resp.status, resp.body)
		}
		linkCard(t, h.api, "u1", 1) // AUTHENTICATED: filtered out
		if err := h.api.DevDisconnectAccount(context.Background(), "u1", 1); err != nil {
			t.Fatal(err)
		}
		d := rcv.wait(t, 1)[0]
		if d.event() != "ACCOUNT_LOGIN_REQUIRED" {
			t.Fatalf("filtered endpoint got %s", d.event())
		}
		if n := len(strings.Fields(d.header.Get("webhook-signature"))); n != 2 {
			t.Errorf("%d signatures during rotation, want 2", n)
		}
		for _, secret := range []string{ep.Secret, rotated.Secret} {
			if err := client.VerifyWebhook(d.header, d.body, secret, 0); err != nil {
				t.Errorf("during rotation, a secret does not verify: %v", err)
			}
		}
	}, withWorkers)
}

func TestWebhookEndpointValidation(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		for _, tc := range []struct{ name, url string }{
			{"http", "http://hooks.example.com/x"},
			{"loopback", "https://127.0.0.1/x"},
			{"metadata", "https://169.254.169.254/latest"},
			{"private", "https://10.1.2.3/x"},
			{"credentials", "https://user:pw@hooks.example.com/x"},
		} {
			resp := h.do("POST", "/webhooks/endpoints", map[string]any{"url": tc.url}, nil)
			if e := resp.errorBody(t); resp.status != 400 || e.Code != "INVALID_FIELD" || !strings.Contains(e.Message, "url") {
				t.Errorf("%s: %d %s", tc.name, resp.status, resp.body)
			}
		}
		resp := h.do("POST", "/webhooks/endpoints", map[string]any{"url": "https://93.184.215.14/x", "events": []string{"NOPE"}}, nil)
		if resp.status != 400 || !strings.Contains(resp.errorBody(t).Message, "NOPE") {
			t.Errorf("unknown event type: %d %s", resp.status, resp.body)
		}
		// An IP literal that is public needs no DNS.
		h.addEndpoint(t, "https://93.184.215.14/hooks")
	}, production)
}

func TestWebhookTenantIsolation(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		rcv := newReceiver(t, nil)
		ep := h.addEndpoint(t, rcv.url)
		linkCard(t, h.api, "u1", 1)
		eventID := h.events(h.clientID)[0].ID

		other := h.newDeveloper("development")
		h2 := *h
		h2.clientID, h2.secret = other.ClientID, other.Secret
		if eps := h2.endpoints(t); len(eps) != 0 {
			t.Fatalf("another developer sees endpoints %+v", eps)
		}
		for _, req := range []struct{ method, path string }{
			{"DELETE", "/webhooks/endpoints/" + ep.ID},
			{"POST", "/webhooks/endpoints/" + ep.ID + "/rotate-secret"},
			{"GET", "/webhooks/events/" + eventID + "/attempts"},
			{"POST", "/webhooks/events/" + eventID + "/resend"},
		} {
			if resp := h2.do(req.method, req.path, nil, nil); resp.status != 404 {
				t.Errorf("%s %s by another developer: %d %s", req.method, req.path, resp.status, resp.body)
			}
		}
		resp := h2.do("GET", "/webhooks/events", nil, nil)
		if !strings.Contains(string(resp.body), `"data":[]`) {
			t.Errorf("another developer lists events: %s", resp.body)
		}
		if resp := h2.do("POST", "/webhooks/replay", map[string]any{"endpoint_id": ep.ID, "since": "2000-01-01T00:00:00Z"}, nil); resp.status != 404 {
			t.Errorf("replay to another developer's endpoint: %d %s", resp.status, resp.body)
		}
	})
}

func TestWebhookEventsResendAndReplay(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		rcv := newReceiver(t, nil)
		for i := int64(1); i <= 5; i++ {
			linkCard(t, h.api, "u1", i) // before any endpoint: recorded, not delivered
		}
		linkCard(t, h.api, "u2", 1)

		// Listing pages newest first and filters.
		var ids []string
		cursor := ""
		for page := 0; page < 10; page++ {
			path := "/webhooks/events?limit=2&external_user_id=u1"
			if cursor != "" {
				path += "&cursor=" + cursor
			}
			resp := h.do("GET", path, nil, nil)
			var out struct {
				Data []struct {
					ID             string `json:"id"`
					ExternalUserID string `json:"external_user_id"`
				}
				NextCursor *string `json:"next_cursor"`
			}
			if resp.status != 200 || json.Unmarshal(resp.body, &out) != nil {
				t.Fatalf("list: %d %s", resp.status, resp.body)
			}
			for _, ev := range out.Data {
				if ev.ExternalUserID != "u1" {
					t.Fatalf("filter leaked %+v", ev)
				}
				ids = append(ids, ev.ID)
			}
			if out.NextCursor == nil {
				break
			}
			cursor = *out.NextCursor
		}
		if len(ids) != 5 {
			t.Fatalf("paged %d events of u1, want 5", len(ids))
		}
		if resp := h.do("GET", "/webhooks/events?cursor=nope", nil, nil); resp.status != 400 || resp.errorBody(t).Code != "INVALID_CURSOR_FORMAT" {
			t.Errorf("bad cursor: %d %s", resp.status, resp.body)
		}

		ep := h.addEndpoint(t, rcv.url)
		resp := h.do("POST", "/webhooks/replay", map[string]any{"endpoint_id": ep.ID, "since": "2000-01-01T00:00:00Z"}, nil)
		if resp.status != 200 || !strings.Contains(string(resp.body), `"deliveries":6`) {
			t.Fatalf("replay: %d %s", resp.status, resp.body)
		}
		got := rcv.wait(t, 6)
		delivered := map[string]bool{}
		for _, d := range got {
			delivered[d.header.Get("webhook-id")] = true
		}
		for _, id := range ids {
			if !delivered[id] {
				t.Errorf("replay did not deliver %s with its id", id)
			}
		}
		resp = h.do("POST", "/webhooks/events/"+ids[0]+"/resend", nil, nil)
		if resp.status != 200 || !strings.Contains(string(resp.body), `"deliveries":1`) {
			t.Fatalf("resend: %d %s", resp.status, resp.body)
		}
		if d := rcv.wait(t, 7)[6]; d.header.Get("webhook-id") != ids[0] {
			t.Errorf("resend delivered %q, want the event id %q", d.header.Get("webhook-id"), ids[0])
		}
		if resp := h.do("POST", "/webhooks/replay", map[string]any{"endpoint_id": ep.ID, "since": "yesterday"}, nil); resp.status != 400 {
			t.Errorf("bad since: %d %s", resp.status, resp.body)
		}
	}, withWorkers)
}

func TestWebhookDevelopmentTestAndSign(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		rcv := newReceiver(t, nil)
		ep := h.addEndpoint(t, rcv.url, "CARD_UPDATED") // test events ignore the filter
		resp := h.do("POST", "/development/webhooks/test", map[string]any{"message": "hello"}, nil)
		if resp.status != 200 {
			t.Fatalf("test: %d %s", resp.status, resp.body)
		}
		d := rcv.wait(t, 1)[0]
		if d.event() != "TEST" || !strings.Contains(string(d.body), "hello") {
			t.Errorf("test delivery %s", d.body)
		}

		resp = h.do("POST", "/development/webhooks/sign", map[string]any{"endpoint_id": ep.ID,
			"payload": map[string]any{"id": "evt-fixture", "event": "CARD_UPDATED", "data": map[string]any{"card_id": "c1"}}}, nil)
		var signed struct {
			Body    string            `json:"body"`
			Headers map[string]string `json:"headers"`
		}
		if resp.status != 200 || json.Unmarshal(resp.body, &signed) != nil {
			t.Fatalf("sign: %d %s", resp.status, resp.body)
		}
		header := http.Header{}
		for k, v := range signed.Headers {
			header.Set(k, v)
		}
		if header.Get("webhook-id") != "evt-fixture" {
			t.Errorf("webhook-id %q", header.Get("webhook-id"))
		}
		if err := client.VerifyWebhook(header, []byte(signed.Body), ep.Secret, 0); err != nil {
			t.Errorf("signed fixture does not verify: %v", err)
		}
		if err := client.VerifyKnotSignature(header, []byte(signed.Body), h.secret); err != nil {
			t.Errorf("signed fixture's Knot-Signature does not verify: %v", err)
		}
	}, withWorkers)
}

func TestWebhookMetrics(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		rcv := newReceiver(t, nil)
		h.addEndpoint(t, rcv.url)
		linkCard(t, h.api, "u1", 1)
		rcv.wait(t, 1)
		eventually(t, "the metrics to count the delivery", func() bool {
			resp := h.do("GET", "/metrics", nil, nil)
			body := string(resp.body)
			return resp.status == 200 && strings.Contains(body, `hitch_webhook_deliveries_total{outcome="succeeded"} 1`) &&
				strings.Contains(body, "hitch_webhook_queue_depth 0") &&
				strings.Contains(body, "hitch_webhook_attempt_duration_seconds_count 1")
		})
	}, withWorkers)
}

func TestWebhookEndpointFailingForFiveDaysIsDisabled(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		failing := newReceiver(t, func(_ int, w http.ResponseWriter) { http.Error(w, "down", http.StatusBadGateway) })
		other := newReceiver(t, nil)
		failingEP := h.addEndpoint(t, failing.url)
		h.addEndpoint(t, other.url, "ENDPOINT_DISABLED")

		linkCard(t, h.api, "u1", 1) // first failure at the clock's now
		failing.wait(t, 1)
		eventually(t, "the first failure to be recorded", func() bool {
			return len(h.attempts(t, h.events(h.clientID)[0].ID)) >= 1
		})
		h.clock.Advance(5*24*time.Hour + time.Minute)
		got := other.wait(t, 1)
		if got[0].event() != "ENDPOINT_DISABLED" || !strings.Contains(string(got[0].body), failingEP.ID) {
			t.Fatalf("other endpoint got %s", got[0].body)
		}
		for _, ep := range h.endpoints(t) {
			if ep.ID == failingEP.ID && (ep.Status != "disabled" || ep.DisabledReason == nil || !strings.Contains(*ep.DisabledReason, "failed")) {
				t.Fatalf("after 5 days of failures: %+v", ep)
			}
		}
	}, withWorkers, func(o *harnessOptions) {
		// Retries keep coming while the clock jumps.
		o.retrySchedule = []time.Duration{0, 50 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond}
	})
}

func TestWebhookRedirectIsAFailure(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		target := newReceiver(t, nil)
		rcv := newReceiver(t, func(n int, w http.ResponseWriter) {
			if n == 1 {
				w.Header().Set("Location", target.url)
				w.WriteHeader(http.StatusFound)
			}
		})
		h.addEndpoint(t, rcv.url)
		linkCard(t, h.api, "u1", 1)
		rcv.wait(t, 2) // retried at the registered URL
		eventID := h.events(h.clientID)[0].ID
		eventually(t, "the attempts", func() bool {
			a := h.attempts(t, eventID)
			return len(a) == 2 && *a[0].StatusCode == 302 && a[0].Outcome == "failed" && a[1].Outcome == "succeeded"
		})
		target.mu.Lock()
		defer target.mu.Unlock()
		if len(target.deliveries) != 0 {
			t.Errorf("the redirect was followed")
		}
	}, withWorkers)
}

// A burst of deliveries to several endpoints: every event reaches every
// endpoint, each delivery has exactly one succeeded attempt and its job is
// completed, and an endpoint that failed and then recovered is no longer
// marked failing.
func TestWebhookBurstRecordsEachDeliveryOnce(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		const events = 40
		steady := []*receiver{newReceiver(t, nil), newReceiver(t, nil)}
		flaky := newReceiver(t, func(n int, w http.ResponseWriter) {
			if n <= 3 {
				http.Error(w, "warming up", http.StatusServiceUnavailable)
			}
		})
		var ids []string
		for _, r := range steady {
			ids = append(ids, h.addEndpoint(t, r.url).ID)
		}
		flakyID := h.addEndpoint(t, flaky.url).ID

		var wg sync.WaitGroup
		errs := make(chan string, events)
		for i := range events {
			wg.Go(func() {
				resp := h.do("POST", "/development/webhooks/test", map[string]any{"message": strings.Repeat("x", i)}, nil)
				if resp.status != 200 {
					errs <- string(resp.body)
				}
			})
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Fatalf("create test event: %s", e)
		}

		evs := h.events(h.clientID)
		if len(evs) != events {
			t.Fatalf("%d events recorded, want %d", len(evs), events)
		}
		for _, r := range steady {
			seen := map[string]int{}
			for _, d := range r.wait(t, events) {
				seen[d.header.Get("webhook-id")]++
			}
			for _, ev := range evs {
				if seen[ev.ID] != 1 {
					t.Errorf("event %s delivered %d times to one endpoint, want once", ev.ID, seen[ev.ID])
				}
			}
		}
		flaky.wait(t, events+3)
		eventually(t, "every delivery's attempt to be recorded", func() bool {
			for _, ev := range evs {
				succeeded := map[string]int{}
				for _, a := range h.attempts(t, ev.ID) {
					if a.Outcome == "succeeded" {
						succeeded[a.EndpointID]++
					}
				}
				for _, id := range append(ids, flakyID) {
					if succeeded[id] != 1 {
						return false
					}
				}
			}
			return true
		})
		jobs := h.settle(t)
		if len(jobs) != 3*events || slices.ContainsFunc(jobs, func(j *rivertype.JobRow) bool { return j.State != rivertype.JobStateCompleted }) {
			t.Errorf("%d delivery jobs, want %d, all completed: %s", len(jobs), 3*events, describeJobs(jobs))
		}
		ep, err := h.store.WebhookEndpointGet(context.Background(), h.clientID, flakyID)
		if err != nil {
			t.Fatal(err)
		}
		if ep.FailingSince != nil {
			t.Errorf("endpoint still failing since %v after its deliveries succeeded", ep.FailingSince)
		}
	}, withWorkers)
}

// An endpoint removed while its deliveries are in flight cannot have their
// attempts recorded (the endpoint's rows are gone), nor their jobs
// completed with them; that must not fail other endpoints' deliveries,
// and the removed endpoint's jobs are cancelled when they run again
// instead of retrying forever.
func TestWebhookRemovedEndpointDoesNotFailOthers(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		const events = 10
		held := make(chan struct{})
		release := sync.OnceFunc(func() { close(held) })
		hold := func(int, http.ResponseWriter) { <-held }
		kept, removed := newReceiver(t, hold), newReceiver(t, hold)
		// Registered after the receivers, so run before they close: a
		// failure must not leave their handlers, and Close, waiting.
		t.Cleanup(release)
		keptID := h.addEndpoint(t, kept.url).ID
		removedID := h.addEndpoint(t, removed.url).ID
		for i := range events {
			if resp := h.do("POST", "/development/webhooks/test", map[string]any{"message": strings.Repeat("y", i)}, nil); resp.status != 200 {
				t.Fatalf("create test event: %d %s", resp.status, resp.body)
			}
		}
		eventually(t, "every delivery to be in flight", func() bool {
			kept.mu.Lock()
			removed.mu.Lock()
			defer kept.mu.Unlock()
			defer removed.mu.Unlock()
			return len(kept.deliveries) == events && len(removed.deliveries) == events
		})
		if resp := h.do("DELETE", "/webhooks/endpoints/"+removedID, nil, nil); resp.status != 200 {
			t.Fatalf("remove endpoint: %d %s", resp.status, resp.body)
		}
		release()

		eventually(t, "the kept endpoint's attempts to be recorded", func() bool {
			for _, ev := range h.events(h.clientID) {
				n := 0
				for _, a := range h.attempts(t, ev.ID) {
					if a.EndpointID == removedID {
						t.Fatalf("attempt recorded for the removed endpoint: %+v", a)
					}
					if a.EndpointID == keptID && a.Outcome == "succeeded" {
						n++
					}
				}
				if n != 1 {
					return false
				}
			}
			return true
		})
		for _, j := range h.settle(t) {
			want := rivertype.JobStateCompleted
			if jobArgs(t, j).EndpointID == removedID {
				want = rivertype.JobStateCancelled
			}
			if j.State != want {
				t.Errorf("job %s, want %s", describeJobs([]*rivertype.JobRow{j}), want)
			}
		}
		if n := len(kept.wait(t, events)); n != events {
			t.Errorf("kept endpoint got %d deliveries, want %d", n, events)
		}
	}, withWorkers, func(o *harnessOptions) {
		o.retrySchedule = []time.Duration{0, 50 * time.Millisecond, 50 * time.Millisecond}
	})
}
