package health_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hitchdev/hitch/internal/health"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

var now = time.Date(2026, 1, 10, 12, 30, 0, 0, time.UTC)

func at(hhmm string) time.Time {
	t, err := time.Parse("15:04", hhmm)
	if err != nil {
		panic(err)
	}
	return time.Date(2026, 1, 10, t.Hour(), t.Minute(), 1, 0, time.UTC)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// fixture is one developer's data, made through the store.
type fixture struct {
	st  store.Store
	ctx context.Context
	t   *testing.T
}

func (f fixture) client(id string) {
	_, err := f.st.ClientInsert(f.ctx, &store.ClientInsertParams{ID: id, Name: id, Environment: "development", CreatedAt: now.Add(-48 * time.Hour)})
	must(f.t, err)
	for _, ep := range []string{"we_a_" + id, "we_b_" + id} {
		must(f.t, f.st.WebhookEndpointInsert(f.ctx, &store.WebhookEndpoint{ID: ep, ClientID: id, URL: "https://example.com/" + ep,
			SecretSealed: []byte("s"), Status: store.WebhookEndpointEnabled, CreatedAt: now, UpdatedAt: now}))
	}
}

func (f fixture) attempt(client, endpoint, when string, ms int, ok bool) {
	ev := uuid.NewString()
	_, err := f.st.EventInsert(f.ctx, &store.EventInsertParams{ID: ev, ClientID: client, Type: "TEST", Payload: json.RawMessage(`{}`),
		CreatedAt: at(when)})
	must(f.t, err)
	a := &store.WebhookAttempt{ClientID: client, EventID: ev, EndpointID: endpoint + "_" + client, Attempt: 1, StartedAt: at(when),
		Duration: time.Duration(ms) * time.Millisecond, Outcome: store.AttemptFailed, Error: "HTTP 500"}
	if ok {
		a.Outcome, a.Error = store.AttemptSucceeded, ""
	}
	must(f.t, f.st.WebhookAttemptInsert(f.ctx, a))
}

func (f fixture) account(client, user string, merchant int64) (*store.User, *store.Account) {
	u, err := f.st.UserGetOrCreate(f.ctx, &store.UserGetOrCreateParams{ID: uuid.NewString(), ClientID: client, ExternalUserID: user,
		CreatedAt: now.Add(-24 * time.Hour)})
	must(f.t, err)
	a, err := f.st.AccountLink(f.ctx, &store.AccountLinkParams{ID: uuid.NewString(), ClientID: client, UserID: u.ID, MerchantID: merchant,
		Scopes: []string{"transactions"}, Now: now.Add(-24 * time.Hour)})
	must(f.t, err)
	return u, a
}

func (f fixture) login(client string, a *store.Account, status, when string) {
	must(f.t, f.st.InTx(f.ctx, func(ex store.Executor) error {
		return ex.AccountLifecycleSet(f.ctx, &store.AccountLifecycleSetParams{ClientID: client, AccountID: a.ID,
			Product: "transaction_link", Status: status, ActionStatus: "SUCCESS", At: at(when)})
	}))
}

func (f fixture) task(client string, u *store.User, a *store.Account, id int64, product, status, reason, when string) {
	must(f.t, f.st.TaskInsert(f.ctx, &store.Task{ID: id, ClientID: client, ExternalUserID: u.ExternalUserID, UserID: u.ID,
		AccountID: a.ID, MerchantID: a.MerchantID, Product: product, Status: store.TaskPending, CreatedAt: at(when), UpdatedAt: at(when)}))
	var r *string
	if reason != "" {
		r = &reason
	}
	_, err := f.st.TaskFinish(f.ctx, &store.TaskFinishParams{ClientID: client, ID: id, Status: status, Reason: r, Now: at(when)})
	must(f.t, err)
}

func (f fixture) detection(client string, u *store.User, merchant *int64, name, when string) {
	req := &store.DetectionRequest{ID: uuid.NewString(), ClientID: client, UserID: u.ID, EmailSealed: []byte{1}, Status: store.DetectionPending,
		CreatedAt: at(when)}
	must(f.t, f.st.DetectionRequestInsert(f.ctx, req))
	_, err := f.st.DetectedAccountInsert(f.ctx, &store.DetectedAccount{ID: uuid.NewString(), ClientID: client, UserID: u.ID,
		MerchantID: merchant, Name: name, NameKey: "k-" + name, LoginMethod: "EMAIL", Source: "email", Position: 1, DetectedAt: at(when)})
	must(f.t, err)
	_, err = f.st.DetectionRequestSettle(f.ctx, client, req.ID, at(when))
	must(f.t, err)
}

// The delivery figures of each window, per endpoint and bucket, with
// nearest-rank percentiles; another developer's attempts count nowhere.
func TestDeliveries(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		f := fixture{st, context.Background(), t}
		f.client("a")
		f.client("b")
		f.attempt("a", "we_a", "12:00", 100, true)
		f.attempt("a", "we_a", "12:01", 200, true)
		f.attempt("a", "we_a", "12:02", 300, false)
		f.attempt("a", "we_a", "12:10", 400, true)
		f.attempt("a", "we_b", "12:20", 1000, false)
		f.attempt("a", "we_a", "11:00", 50, true) // the day's, not the hour's
		f.attempt("b", "we_a", "12:05", 5, true)  // another developer's

		d, err := health.Deliveries(f.ctx, st, "a", health.WindowNamed("hour"), now)
		must(t, err)
		if d.Succeeded != 3 || d.Failed != 2 || d.SuccessRate() != 60 || d.Truncated || len(d.Endpoints) != 2 ||
			!d.Since.Equal(time.Date(2026, 1, 10, 11, 35, 0, 0, time.UTC)) || len(d.All.Buckets) != 12 {
			t.Fatalf("hour: %d ok, %d failed, %d endpoints, since %v, %d buckets", d.Succeeded, d.Failed, len(d.Endpoints), d.Since, len(d.All.Buckets))
		}
		a := d.Endpoints["we_a_a"]
		ms := time.Millisecond
		if a.Succeeded != 3 || a.Failed != 1 || a.Latency != (health.Latency{P50: 200 * ms, P95: 400 * ms, P99: 400 * ms}) {
			t.Fatalf("we_a: %+v", a)
		}
		// 11:35 … 12:30 in 5 minutes: 12:00 is bucket 5, 12:10 bucket 7.
		if b := a.Buckets[5]; b.Succeeded != 2 || b.Failed != 1 || b.P50 != 200*ms || b.P99 != 300*ms ||
			!b.Start.Equal(time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)) {
			t.Fatalf("we_a 12:00: %+v", b)
		}
		if b := a.Buckets[7]; b.Succeeded != 1 || b.Failed != 0 || b.P50 != 400*ms {
			t.Fatalf("we_a 12:10: %+v", b)
		}
		if b := d.Endpoints["we_b_a"].Buckets[9]; b.Failed != 1 || b.P95 != time.Second {
			t.Fatalf("we_b 12:20: %+v", b)
		}
		if b := d.All.Buckets[5]; b.Succeeded != 2 || b.Failed != 1 {
			t.Fatalf("all 12:00: %+v", b)
		}
		d, err = health.Deliveries(f.ctx, st, "a", health.WindowNamed("day"), now)
		must(t, err)
		if d.Succeeded != 4 || d.Failed != 2 || len(d.All.Buckets) != 24 || d.All.Buckets[23].Succeeded != 3 || d.All.Buckets[22].Succeeded != 1 ||
			d.All.P50 != 200*ms {
			t.Fatalf("day: %d ok, %d failed, buckets %+v", d.Succeeded, d.Failed, d.All.Buckets[22:])
		}

		failed, err := st.WebhookAttemptsFailed(f.ctx, "a", "we_a_a", d.Since, 10)
		must(t, err)
		if len(failed) != 1 || failed[0].Error != "HTTP 500" || !failed[0].StartedAt.Equal(at("12:02")) {
			t.Fatalf("failed attempts: %+v", failed)
		}
		failed, err = st.WebhookAttemptsFailed(f.ctx, "b", "we_a_a", d.Since, 10)
		must(t, err)
		if len(failed) != 0 {
			t.Fatalf("another developer read %d failed attempts", len(failed))
		}
	})
}

// Account figures per merchant: states, login steps (one appended per
// lifecycle change), card switches by outcome and reason, detections.
func TestAccountHealth(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		f := fixture{st, context.Background(), t}
		f.client("a")
		f.client("b")
		u1, a1 := f.account("a", "u1", 19)
		u2, a2 := f.account("a", "u2", 19)
		u3, a3 := f.account("a", "u3", 44)
		_, b1 := f.account("b", "u1", 19)
		_, _, err := st.AccountSetConnection(f.ctx, &store.AccountSetConnectionParams{Status: "disconnected",
			AccountRef: store.AccountRef{ClientID: "a", UserID: u2.ID, MerchantID: 19, Now: now}})
		must(t, err)
		must(t, st.AccountUnlink(f.ctx, &store.AccountRef{ClientID: "a", UserID: u3.ID, MerchantID: 44, Now: now}))

		f.login("a", a1, "login_started", "12:00")
		f.login("a", a1, "authenticated", "12:01")
		f.login("a", a2, "login_started", "12:02")
		f.login("a", a2, "login_failed", "12:03")
		f.login("a", a3, "authenticated", "10:00") // the day's only
		f.login("b", b1, "login_failed", "12:00")  // another developer's
		// u1's first login at merchant 52 fails: no account, steps all the same.
		for _, step := range []struct{ status, when string }{{"login_started", "12:10"}, {"login_failed", "12:11"}} {
			must(t, st.AccountLoginAdd(f.ctx, &store.AccountLoginAddParams{ClientID: "a", UserID: u1.ID, MerchantID: 52,
				Product: "transaction_link", Status: step.status, At: at(step.when)}))
		}

		f.task("a", u1, a1, 1, "card_switcher", store.TaskSucceeded, "", "12:05")
		f.task("a", u1, a1, 2, "card_switcher", store.TaskFailed, "card_declined", "12:06")
		f.task("a", u2, a2, 3, "card_switcher", store.TaskFailed, "card_declined", "12:07")
		f.task("a", u1, a1, 4, "vault", store.TaskSucceeded, "", "12:08")

		m19 := int64(19)
		f.detection("a", u1, &m19, "Shop", "12:00")
		f.detection("a", u2, nil, "Elsewhere", "12:01")

		h, err := health.AccountHealth(f.ctx, st, "a", health.WindowNamed("hour"), now)
		must(t, err)
		if h.Connected != 1 || h.Disconnected != 1 || h.Unlinked != 1 || h.Authenticated != 1 || h.LoginFailed != 2 ||
			h.CardSucceeded != 1 || h.CardFailed != 2 || h.DetectionRequests != 2 || h.DetectionDone != 2 || h.DetectionHits != 2 ||
			len(h.Merchants) != 3 {
			t.Fatalf("hour: %+v", h)
		}
		m := h.Merchants[0]
		if m.MerchantID != 19 || m.Connected != 1 || m.Disconnected != 1 || m.Unlinked != 0 || m.Logins["login_started"] != 2 ||
			m.Logins["authenticated"] != 1 || m.Logins["login_failed"] != 1 || m.CardSucceeded != 1 || m.CardFailed != 2 ||
			m.CardReasons["card_declined"] != 2 || m.DetectionHits != 1 {
			t.Fatalf("merchant 19: %+v", m)
		}
		if m := h.Merchants[1]; m.MerchantID != 44 || m.Unlinked != 1 || len(m.Logins) != 0 {
			t.Fatalf("merchant 44: %+v", m)
		}
		if m := h.Merchants[2]; m.MerchantID != 52 || m.Connected+m.Disconnected+m.Unlinked != 0 ||
			m.Logins["login_started"] != 1 || m.Logins["login_failed"] != 1 {
			t.Fatalf("merchant 52: %+v", m)
		}
		if b := h.Logins[5]; b.Authenticated != 1 || b.Failed != 1 || b.Steps != 2 {
			t.Fatalf("logins at 12:00: %+v", b)
		}
		h, err = health.AccountHealth(f.ctx, st, "a", health.WindowNamed("day"), now)
		must(t, err)
		if h.Authenticated != 2 || h.Merchants[1].Logins["authenticated"] != 1 {
			t.Fatalf("day: %+v", h)
		}

		logins, err := st.AccountLoginsOfUser(f.ctx, "a", u1.ID, 10)
		must(t, err)
		if len(logins) != 4 || logins[0].Status != "login_failed" || logins[0].MerchantID != 52 || logins[0].AccountID != "" ||
			logins[3].AccountID != a1.ID {
			t.Fatalf("u1's logins: %+v", logins)
		}
		logins, err = st.AccountLoginsOfUser(f.ctx, "a", u2.ID, 10)
		must(t, err)
		if len(logins) != 2 || logins[0].Status != "login_failed" || logins[1].Status != "login_started" || logins[0].MerchantID != 19 {
			t.Fatalf("u2's logins: %+v", logins)
		}
		tasks, err := st.TaskListByUser(f.ctx, "a", u1.ID, 10)
		must(t, err)
		if len(tasks) != 3 || tasks[0].ID != 4 || tasks[2].ID != 1 {
			t.Fatalf("u1's tasks: %d", len(tasks))
		}
		if tasks, err := st.TaskListByUser(f.ctx, "b", u1.ID, 10); err != nil || len(tasks) != 0 {
			t.Fatalf("another developer read u1's tasks: %d, %v", len(tasks), err)
		}
	})
}

// Requests per bucket, and those answered with an error, exactly: the
// edges of the window and of buckets, and another developer's requests.
func TestRequestCounts(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		f := fixture{st, context.Background(), t}
		f.client("a")
		f.client("b")
		var logs []*store.RequestLog
		add := func(client string, when time.Time, status int) {
			logs = append(logs, &store.RequestLog{ClientID: client, RequestID: uuid.NewString(), CreatedAt: when,
				Method: "GET", Path: "/accounts/get", Status: status})
		}
		add("a", now.Add(-time.Hour), 200) // before the hour's window
		add("a", at("11:30").Add(-time.Second), 200)
		add("a", at("11:31"), 200)
		add("a", at("12:00"), 404)
		add("a", at("12:04"), 500)
		add("a", at("12:05"), 200)
		add("a", now, 429)
		add("b", at("12:00"), 401)
		must(t, st.RequestLogInsert(f.ctx, logs))

		r, err := health.RequestCounts(f.ctx, st, "a", health.WindowNamed("hour"), now)
		must(t, err)
		// The hour's buckets start at 11:35; 11:30:00 falls before them.
		if r.Requests != 4 || r.Errors != 3 || r.ErrorRate() != 75 || len(r.Buckets) != 12 {
			t.Fatalf("hour: %d requests, %d errors, %d buckets", r.Requests, r.Errors, len(r.Buckets))
		}
		for i, want := range map[int]store.RequestCount{5: {Requests: 2, Errors: 2}, 6: {Requests: 1}, 11: {Requests: 1, Errors: 1}} {
			if got := r.Buckets[i].RequestCount; got != want {
				t.Errorf("bucket %d (%s): %+v, want %+v", i, r.Buckets[i].Start.Format("15:04"), got, want)
			}
		}
		r, err = health.RequestCounts(f.ctx, st, "a", health.WindowNamed("day"), now)
		must(t, err)
		if r.Requests != 7 || r.Errors != 3 || r.Buckets[22].RequestCount != (store.RequestCount{Requests: 3}) ||
			r.Buckets[23].RequestCount != (store.RequestCount{Requests: 4, Errors: 3}) {
			t.Fatalf("day: %d requests, %d errors; 11:00 %+v, 12:00 %+v", r.Requests, r.Errors, r.Buckets[22], r.Buckets[23])
		}
		r, err = health.RequestCounts(f.ctx, st, "c", health.WindowNamed("day"), now)
		must(t, err)
		if r.Requests != 0 || r.ErrorRate() != -1 {
			t.Fatalf("a developer with no request: %+v", r)
		}
	})
}
