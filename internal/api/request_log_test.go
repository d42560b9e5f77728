package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hitchdev/hitch/internal/reqlog"
	"github.com/hitchdev/hitch/internal/store"
)

// flushRequestLog waits until every request answered so far is in the
// request log.
func (h *harness) flushRequestLog() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.server.RequestLog.Flush(ctx); err != nil {
		h.t.Fatal(err)
	}
}

// requestLogs lists a developer's logged requests, newest first.
func (h *harness) requestLogs(clientID string, params store.RequestLogListParams) []*store.RequestLog {
	h.t.Helper()
	h.flushRequestLog()
	params.ClientID = clientID
	list, err := h.store.RequestLogList(context.Background(), &params)
	if err != nil {
		h.t.Fatal(err)
	}
	return list
}

// loggedRequest is the developer's logged request with this id.
func (h *harness) loggedRequest(t *testing.T, requestID string) *store.RequestLog {
	t.Helper()
	h.flushRequestLog()
	l, err := h.store.RequestLogGet(context.Background(), h.clientID, requestID)
	if err != nil {
		t.Fatalf("request %s: %v", requestID, err)
	}
	return l
}

// Every developer-authenticated request is logged with what it was and how
// it ended; a request whose credentials failed is not.
func TestRequestLogRecordsRequests(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ok := h.do("POST", "/session/create", map[string]any{"type": "link", "external_user_id": "user-logged"}, nil)
		if ok.status != http.StatusOK {
			t.Fatalf("session: %d %s", ok.status, ok.body)
		}
		missing := h.do("GET", "/accounts/get?external_user_id=user-missing&merchant_id=1", nil, nil)
		e := missing.errorBody(t)
		wrong := h.do("GET", "/jwe/key", nil, http.Header{"Authorization": {basic(h.clientID, h.secret+"-wrong")}})
		if wrong.status != http.StatusUnauthorized {
			t.Fatalf("wrong secret: %d", wrong.status)
		}

		got := h.loggedRequest(t, ok.header.Get("X-Request-Id"))
		if got.Method != "POST" || got.Path != "/session/create" || got.Status != 200 || got.ErrorCode != "" ||
			got.ExternalUserID != "user-logged" || got.IP != "127.0.0.1" || got.Latency <= 0 || got.ClientID != h.clientID ||
			!got.CreatedAt.Equal(h.clock.Now()) {
			t.Errorf("logged session request: %+v", got)
		}
		var body map[string]any
		if err := json.Unmarshal([]byte(got.ResponseBody), &body); err != nil || body["session"] != reqlog.Redacted ||
			body["session_id"] == nil {
			t.Errorf("response body %q: %v", got.ResponseBody, err)
		}
		if !strings.Contains(got.RequestBody, `"external_user_id":"user-logged"`) {
			t.Errorf("request body %q", got.RequestBody)
		}

		got = h.loggedRequest(t, e.RequestID)
		if got.Method != "GET" || got.Path != "/accounts/get" || got.Status != missing.status || got.ErrorCode != e.Code ||
			got.ExternalUserID != "user-missing" || got.Query != "external_user_id=user-missing&merchant_id=1" ||
			!strings.Contains(got.ResponseBody, e.RequestID) || got.RequestBody != "" {
			t.Errorf("logged error request: %+v", got)
		}
		if _, err := h.store.RequestLogGet(context.Background(), h.clientID, wrong.header.Get("X-Request-Id")); err == nil {
			t.Error("a request that failed authentication was logged")
		}
		if n := len(h.requestLogs(h.clientID, store.RequestLogListParams{})); n != 2 {
			t.Errorf("%d requests logged, want 2", n)
		}
	})
}

// No API secret, session value, card number, CVV, cardholder detail,
// webhook signing secret or merchant password reaches the stored request
// log or its pages.
func TestRequestLogRedactsSecrets(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		s := h.do("POST", "/session/create", map[string]any{"type": "link", "external_user_id": "user-canary"}, nil)
		var session struct{ Session string }
		if err := json.Unmarshal(s.body, &session); err != nil || !strings.HasPrefix(session.Session, "sess_") {
			t.Fatalf("session: %s", s.body)
		}
		h.do("POST", "/session/extend", map[string]string{"session_id": session.Session}, nil)
		h.do("POST", "/session/create", `{"type": "link", "external_user_id": "`+session.Session+`"}`, nil)
		ep := h.do("POST", "/webhooks/endpoints", map[string]any{"url": "https://example.com/hook", "events": []string{"TEST"}}, nil)
		var endpoint struct{ ID, Secret string }
		if err := json.Unmarshal(ep.body, &endpoint); err != nil || !strings.HasPrefix(endpoint.Secret, "whsec_") {
			t.Fatalf("endpoint: %d %s", ep.status, ep.body)
		}
		rotated := h.do("POST", "/webhooks/endpoints/"+endpoint.ID+"/rotate-secret", nil, nil)
		var rotatedSecret struct{ Secret string }
		_ = json.Unmarshal(rotated.body, &rotatedSecret)

		number, cvv := canaryNumber(t), canaryCVV(t)
		spaced := number[:4] + " " + number[4:8] + " " + number[8:12] + " " + number[12:]
		card := goodCard(number)
		card.Card.CVV = cvv
		card.User.Name.LastName = "Canarylastname"
		h.do("POST", "/card", map[string]any{"task_id": 1, "card": card.Card, "user": card.User}, nil)
		h.do("POST", "/card", fmt.Sprintf(`{"task_id": 1, "card": {"number": %s, "cvv": %s}}`, number, cvv), nil)
		h.do("POST", "/card", fmt.Sprintf(`{"task_id": "%s", "jwe": "%s"}`, spaced, cvv), nil)
		h.do("POST", "/card", fmt.Sprintf(`{"task_id": 1, "card": {"number": "%s", "cvv": "%s", "extra`, number, cvv), nil)
		h.do("GET", "/accounts/get?external_user_id="+number+"&merchant_id=1", nil, nil)
		// A merchant password goes through the hosted flow, which no
		// developer credentials authenticate (not logged), and one sent to
		// the API by mistake is redacted.
		const merchantPassword = "merchant-password-canary-31"
		h.flowCall("/link/api/login", session.Session, map[string]any{"merchant_id": 1, "username": "ada",
			"password": merchantPassword, "entry_point": "onboarding"})
		h.do("POST", "/session/create", map[string]any{"type": "link", "external_user_id": "u", "password": merchantPassword}, nil)

		logs := h.requestLogs(h.clientID, store.RequestLogListParams{})
		if len(logs) != 11 {
			t.Fatalf("%d requests logged, want 11", len(logs))
		}
		canaries := []string{h.secret, basic(h.clientID, h.secret), session.Session, endpoint.Secret, number, spaced, cvv,
			"Canarylastname", merchantPassword}
		if rotatedSecret.Secret != "" {
			canaries = append(canaries, rotatedSecret.Secret)
		}
		for _, l := range logs {
			row := fmt.Sprintf("%+v", *l)
			for _, c := range canaries {
				if holdsCanary(row, c) {
					t.Errorf("logged %s %s holds canary %q: %s", l.Method, l.Path, c, row)
				}
			}
		}

		// The pages show the log without them.
		d := h.dash()
		password := h.addMember("viewer@example.com", "viewer")
		if r := d.signIn("viewer@example.com", password); r.status != http.StatusSeeOther {
			t.Fatalf("sign in: %d", r.status)
		}
		pages := []string{"/dashboard/requests"}
		for _, l := range logs {
			pages = append(pages, "/dashboard/requests/"+l.RequestID)
		}
		for _, p := range pages {
			r := d.get(p)
			if r.status != http.StatusOK {
				t.Fatalf("GET %s: %d", p, r.status)
			}
			for _, c := range canaries {
				if holdsCanary(string(r.body), c) || holdsCanary(string(r.body), url.QueryEscape(c)) {
					t.Errorf("%s shows canary %q", p, c)
				}
			}
		}
	})
}

// holdsCanary reports whether text holds canary; a short number (a CVV)
// only as a whole number, so that the digits of a hex request id or a
// UUID do not count.
func holdsCanary(text, canary string) bool {
	if len(canary) >= 12 || strings.Trim(canary, "0123456789") != "" {
		return strings.Contains(text, canary)
	}
	return regexp.MustCompile(`(^|[^0-9A-Za-z])` + canary + `([^0-9A-Za-z]|$)`).MatchString(text)
}

var loggedIDs = regexp.MustCompile(`data-request-id="([^"]+)"`)

// searchIDs is the request ids the request log page lists for a search.
func searchIDs(t *testing.T, d *dash, query url.Values) []string {
	t.Helper()
	r := d.get("/dashboard/requests?" + query.Encode())
	if r.status != http.StatusOK {
		t.Fatalf("search %v: %d %s", query, r.status, r.body)
	}
	var ids []string
	for _, m := range loggedIDs.FindAllSubmatch(r.body, -1) {
		ids = append(ids, string(m[1]))
	}
	return ids
}

// The request log is searched by request id, status class, path, error
// code and user, newest first and paged, and a viewer may read it; a
// request id alone opens its request; another developer's requests are
// not found.
func TestRequestLogSearch(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		id := func(r *response) string { return r.header.Get("X-Request-Id") }
		a := id(h.do("POST", "/session/create", map[string]any{"type": "link", "external_user_id": "alice"}, nil))
		b := id(h.do("GET", "/accounts/get?external_user_id=alice&merchant_id=1", nil, nil))
		c := id(h.do("GET", "/transactions/nope", nil, nil))
		dd := id(h.do("POST", "/session/create", map[string]any{"type": "nope", "external_user_id": "bob"}, nil))
		other := h.newDeveloper(h.env)
		otherResp, err := http.NewRequest("GET", h.url+"/jwe/key", nil)
		if err != nil {
			t.Fatal(err)
		}
		otherResp.SetBasicAuth(other.ClientID, other.Secret)
		resp, err := http.DefaultClient.Do(otherResp)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		otherID := resp.Header.Get("X-Request-Id")
		h.flushRequestLog()
		bLog := h.loggedRequest(t, b)

		d := h.dash()
		password := h.addMember("viewer@example.com", "viewer")
		if r := d.signIn("viewer@example.com", password); r.status != http.StatusSeeOther {
			t.Fatalf("sign in: %d", r.status)
		}
		for _, tc := range []struct {
			query url.Values
			want  []string
		}{
			{url.Values{}, []string{dd, c, b, a}},
			{url.Values{"status": {"2xx"}}, []string{a}},
			{url.Values{"status": {"4xx"}}, []string{dd, c, b}},
			{url.Values{"status": {"5xx"}}, nil},
			{url.Values{"path": {"/session"}}, []string{dd, a}},
			{url.Values{"path": {"/transactions/"}}, []string{c}},
			{url.Values{"error_code": {bLog.ErrorCode}}, []string{b}},
			{url.Values{"user": {"alice"}}, []string{b, a}},
			{url.Values{"user": {"bob"}, "status": {"4xx"}}, []string{dd}},
			{url.Values{"request_id": {c}, "status": {"4xx"}}, []string{c}},
			{url.Values{"request_id": {otherID}, "status": {"2xx"}}, nil},
		} {
			if got := searchIDs(t, d, tc.query); strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("search %v: %v, want %v", tc.query, got, tc.want)
			}
		}
		// A request id alone opens the request's page.
		r := d.get("/dashboard/requests?request_id=" + c)
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/dashboard/requests/"+c {
			t.Errorf("search by id: %d %s", r.status, r.header.Get("Location"))
		}
		r = d.get("/dashboard/requests/" + c)
		if r.status != http.StatusOK || !strings.Contains(string(r.body), "/transactions/nope") {
			t.Errorf("request page: %d", r.status)
		}
		// Another developer's request is not found.
		if r := d.get("/dashboard/requests/" + otherID); r.status != http.StatusNotFound {
			t.Errorf("another developer's request: %d", r.status)
		}
		if bad := d.get("/dashboard/requests?status=6xx"); bad.status != http.StatusBadRequest {
			t.Errorf("status 6xx: %d", bad.status)
		}
		// The overview counts the day's requests and errors the log holds,
		// not another developer's.
		all := h.requestLogs(h.clientID, store.RequestLogListParams{})
		errs := h.requestLogs(h.clientID, store.RequestLogListParams{StatusClass: 4})
		overview := string(d.get("/dashboard").body)
		if got := shownNumber(t, overview, "overview-requests-count"); len(all) != 4 || got != "4" {
			t.Errorf("overview: %s requests, the log holds %d", got, len(all))
		}
		if got := shownNumber(t, overview, "overview-error-rate"); len(errs) != 3 || got != "75%" {
			t.Errorf("overview: error rate %s, the log holds %d errors of %d", got, len(errs), len(all))
		}
		if !strings.Contains(overview, `id="overview-requests-chart"`) {
			t.Errorf("the overview has no chart of requests")
		}
	})
}

// Pages of the request log hold requestsPerPage requests and go back in
// time without repeating one.
func TestRequestLogPaging(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		entries := make([]*store.RequestLog, 120)
		for i := range entries {
			entries[i] = &store.RequestLog{ClientID: h.clientID, RequestID: fmt.Sprintf("req_paging_%03d", i),
				CreatedAt: h.clock.Now(), Method: "GET", Path: "/jwe/key", Status: 200, IP: "192.0.2.1"}
		}
		if err := h.store.RequestLogInsert(context.Background(), entries); err != nil {
			t.Fatal(err)
		}
		d := h.dash()
		password := h.addMember("viewer@example.com", "viewer")
		d.signIn("viewer@example.com", password)
		var seen []string
		next := "/dashboard/requests"
		nextRE := regexp.MustCompile(`id="requests-next" href="([^"]+)"|href="([^"]+)" id="requests-next"`)
		for next != "" {
			r := d.get(strings.ReplaceAll(next, "&amp;", "&"))
			if r.status != http.StatusOK {
				t.Fatalf("GET %s: %d", next, r.status)
			}
			for _, m := range loggedIDs.FindAllSubmatch(r.body, -1) {
				seen = append(seen, string(m[1]))
			}
			next = ""
			if m := nextRE.FindSubmatch(r.body); m != nil {
				next = string(m[2])
			}
		}
		if len(seen) != 120 || seen[0] != "req_paging_119" || seen[119] != "req_paging_000" {
			t.Errorf("paged through %d requests: first %v", len(seen), seen[:min(3, len(seen))])
		}
	})
}

// The pruning job deletes requests older than the retention, of every
// developer, in batches, and keeps newer ones.
func TestRequestLogPruning(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		other := h.newDeveloper(h.env)
		insert := func(clientID, prefix string, at time.Time, n int) {
			for start := 0; start < n; start += 100 {
				var batch []*store.RequestLog
				for i := start; i < min(n, start+100); i++ {
					batch = append(batch, &store.RequestLog{ClientID: clientID, RequestID: fmt.Sprintf("%s_%04d", prefix, i),
						CreatedAt: at, Method: "GET", Path: "/jwe/key", Status: 200})
				}
				if err := h.store.RequestLogInsert(context.Background(), batch); err != nil {
					t.Fatal(err)
				}
			}
		}
		retention := reqlog.DefaultRetention
		insert(h.clientID, "old", now.Add(-retention-time.Second), 2100)
		insert(other.ClientID, "otherold", now.Add(-retention-time.Hour), 5)
		insert(h.clientID, "new", now.Add(-retention+time.Second), 3)
		insert(other.ClientID, "othernew", now, 2)
		p := &reqlog.Pruner{Store: h.store, Retention: retention, Now: func() time.Time { return now }}
		n, err := p.Prune(context.Background())
		if err != nil || n != 2105 {
			t.Fatalf("pruned %d: %v", n, err)
		}
		count := func(clientID string) int {
			list, err := h.store.RequestLogList(context.Background(), &store.RequestLogListParams{ClientID: clientID, Limit: 5000})
			if err != nil {
				t.Fatal(err)
			}
			return len(list)
		}
		if a, b := count(h.clientID), count(other.ClientID); a != 3 || b != 2 {
			t.Errorf("kept %d and %d requests, want 3 and 2", a, b)
		}
	})
}

// noCanaries fails when a logged request of the developer, or a page of the
// request log, holds one of canaries; it returns the logged requests.
func noCanaries(t *testing.T, h *harness, canaries []string) []*store.RequestLog {
	t.Helper()
	logs := h.requestLogs(h.clientID, store.RequestLogListParams{})
	for _, l := range logs {
		row := fmt.Sprintf("%+v", *l)
		for _, c := range canaries {
			if holdsCanary(row, c) {
				t.Errorf("logged %s %s holds canary %q: %s", l.Method, l.Path, c, row)
			}
		}
	}
	d := h.dash()
	d.mustSignIn("viewer@example.com", h.addMember("viewer@example.com", store.RoleViewer))
	pages := []string{"/dashboard/requests"}
	for _, l := range logs {
		pages = append(pages, "/dashboard/requests/"+url.PathEscape(l.RequestID))
	}
	for _, p := range pages {
		r := d.get(p)
		if r.status != http.StatusOK {
			t.Fatalf("GET %s: %d", p, r.status)
		}
		for _, c := range canaries {
			if holdsCanary(string(r.body), c) || holdsCanary(string(r.body), url.QueryEscape(c)) {
				t.Errorf("%s shows canary %q", p, c)
			}
		}
	}
	return logs
}

// A session value or card number is redacted wherever a caller puts it:
// in a path (an id), in a key of a body or a query, and in an
// external_user_id cut to its column's size, where a cut must not keep
// the first digits of a card number.
func TestRequestLogRedactsPathsKeysAndCutValues(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		s := h.do("POST", "/session/create", map[string]any{"type": "link", "external_user_id": "user-canary"}, nil)
		var session struct{ Session string }
		if err := json.Unmarshal(s.body, &session); err != nil || !strings.HasPrefix(session.Session, "sess_") {
			t.Fatalf("session: %s", s.body)
		}
		number := canaryNumber(t)
		h.do("GET", "/transactions/"+session.Session, nil, nil)
		h.do("GET", "/subscriptions/"+number, nil, nil)
		h.do("POST", "/session/create", map[string]any{"type": "link", "external_user_id": "u", session.Session: 1, number: 2}, nil)
		h.do("GET", "/accounts/get?external_user_id=u&"+session.Session+"=1&"+number+"=2", nil, nil)
		long := strings.Repeat("a", 245) + number
		h.do("POST", "/session/create", map[string]any{"type": "link", "external_user_id": long}, nil)
		h.do("GET", "/accounts/get?merchant_id=1&external_user_id="+long, nil, nil)
		if logs := noCanaries(t, h, []string{session.Session, number, number[:11]}); len(logs) != 7 {
			t.Errorf("%d requests logged, want 7", len(logs))
		}
	})
}

// POST /card keeps only its target in the log: card data sent under other
// names than the API's (flattened, misnamed, in another letter case or a
// Unicode spelling of "user", in a body that is not an object, nested
// under a kept key) is redacted as well, in the body and the query.
func TestRequestLogRedactsMisplacedCardData(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		number := canaryNumber(t)
		h.do("POST", "/card", map[string]any{"task_id": 1, "first_name": "Canaryfirst", "cardholder_name": "Canaryholder",
			"exp_month": "canary-month-11", "exp_year": "canary-year-2039", "cvv2": "canary-cvv-827", "card_number": number,
			"billing": map[string]any{"postal_code": "canary-zip-94107"}, "uſer": map[string]any{"last_name": "Canaryfold"}}, nil)
		h.do("POST", "/card", []any{map[string]any{"task_id": 1, "first_name": "Canaryarray"}}, nil)
		h.do("POST", "/card", map[string]any{"task_id": map[string]any{"last_name": "Canarynested"},
			"external_user_id": []any{"Canarylisted"}}, nil)
		h.do("POST", "/card?name=Canaryquery&security_code=canary-csc-55&task_id=1",
			map[string]any{"task_id": "1", "merchant_id": 1, "external_user_id": "card-user"}, nil)
		logs := noCanaries(t, h, []string{"Canaryfirst", "Canaryholder", "canary-month", "canary-year", "canary-cvv", number,
			"canary-zip", "Canaryfold", "Canaryarray", "Canarynested", "Canarylisted", "Canaryquery", "canary-csc"})
		if len(logs) != 4 {
			t.Fatalf("%d requests logged, want 4", len(logs))
		}
		// What names the card's target is kept.
		if l := logs[0]; l.ExternalUserID != "card-user" || !strings.Contains(l.RequestBody, `"merchant_id":1`) ||
			!strings.Contains(l.Query, "task_id=1") {
			t.Errorf("the target was not kept: %+v", l)
		}
		if l := logs[3]; !strings.Contains(l.RequestBody, `"task_id":1`) {
			t.Errorf("the task was not kept: %s", l.RequestBody)
		}
	})
}

// The signatures POST /development/webhooks/sign answers are not kept: the
// compatibility Knot-Signature covers neither the body nor a time, so a
// stored one would sign any body of the same length and event.
func TestRequestLogRedactsSignatures(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ep := h.do("POST", "/webhooks/endpoints", map[string]any{"url": "https://example.com/hook", "events": []string{"TEST"}}, nil)
		var endpoint struct{ ID string }
		if err := json.Unmarshal(ep.body, &endpoint); err != nil || endpoint.ID == "" {
			t.Fatalf("endpoint: %d %s", ep.status, ep.body)
		}
		r := h.do("POST", "/development/webhooks/sign", map[string]any{"endpoint_id": endpoint.ID,
			"payload": map[string]any{"id": "evt-1", "event": "TEST"}}, nil)
		var signed struct{ Headers map[string]string }
		if err := json.Unmarshal(r.body, &signed); err != nil || r.status != http.StatusOK {
			t.Fatalf("sign: %d %s", r.status, r.body)
		}
		var canaries []string
		for _, k := range []string{"Knot-Signature", "Webhook-Signature"} {
			if signed.Headers[k] == "" {
				t.Fatalf("no %s in %s", k, r.body)
			}
			canaries = append(canaries, signed.Headers[k])
		}
		noCanaries(t, h, canaries)
	})
}

// The two headers the log keeps something of, X-Request-Id (the caller's
// when it looks like an id) and the Content-Type a placeholder names, are
// redacted by the same value rules.
func TestRequestLogRedactsHeadersItKeeps(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		s := h.do("POST", "/session/create", map[string]any{"type": "link", "external_user_id": "user-canary"}, nil)
		var session struct{ Session string }
		if err := json.Unmarshal(s.body, &session); err != nil || !strings.HasPrefix(session.Session, "sess_") {
			t.Fatalf("session: %s", s.body)
		}
		number := canaryNumber(t)
		h.do("GET", "/jwe/key", nil, http.Header{"X-Request-Id": {session.Session}})
		h.do("GET", "/jwe/key", nil, http.Header{"X-Request-Id": {"req-" + number}})
		h.do("POST", "/session/create", "not JSON", http.Header{"Content-Type": {"application/json; x=" + session.Session}})
		if logs := noCanaries(t, h, []string{session.Session, number}); len(logs) != 4 {
			t.Errorf("%d requests logged, want 4", len(logs))
		}
	})
}

// A card number in free text is masked when digits follow or precede it
// with a space or dash between them (its CVV or expiry), which made one
// run of digits too long for a card number, or one failing the Luhn check.
func TestRequestLogMasksCardNumbersAmongDigits(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		number := canaryNumber(t)
		spaced := number[:4] + " " + number[4:8] + " " + number[8:12] + " " + number[12:]
		for _, note := range []string{number + " 123", spaced + " 12 30 123", "cvv 321 " + number, "1-" + number + "-1230"} {
			h.do("POST", "/session/create", map[string]any{"type": "link", "external_user_id": "u",
				"metadata": map[string]string{"note": note}}, nil)
		}
		noCanaries(t, h, []string{number, spaced, number[:12], spaced[:14]})
	})
}

// A request log that cannot keep up leaves out successful reads first and
// keeps the developer's errors and writes, and its page says how many of
// the developer's requests it left out. A stopped writer stands for one
// that has fallen behind: nothing drains its queue.
func TestRequestLogLeavesOutReadsFirst(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		writer := h.server.RequestLog
		if err := writer.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		for range reqlog.QueueSize/2 + 25 {
			if r := h.do("GET", "/jwe/key", nil, nil); r.status != http.StatusOK {
				t.Fatalf("GET /jwe/key: %d", r.status)
			}
		}
		// At least 25: the queue's bytes may run out first, the capture
		// buffers coming from a pool shared with bigger bodies.
		readsLeftOut := writer.Dropped(h.clientID)
		if readsLeftOut < 25 {
			t.Fatalf("%d successful reads left out of a full log, want at least 25", readsLeftOut)
		}
		h.do("GET", "/accounts/get?external_user_id=nobody", nil, nil)
		h.do("POST", "/session/create", map[string]any{"type": "link", "external_user_id": "writer"}, nil)
		if n := writer.Dropped(h.clientID); n != readsLeftOut {
			t.Errorf("%d errors and writes left out, want none", n-readsLeftOut)
		}

		d := h.dash()
		d.mustSignIn("viewer@example.com", h.addMember("viewer@example.com", "viewer"))
		page := string(d.get("/dashboard/requests").body)
		m := regexp.MustCompile(`id="requests-dropped">(\d+) of your requests`).FindStringSubmatch(page)
		if m == nil || m[1] != fmt.Sprint(readsLeftOut) {
			t.Errorf("the request log page says %q of %d requests left out", m, readsLeftOut)
		}
	})
}
