package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hitchdev/hitch/client"
	"github.com/hitchdev/hitch/internal/session"
)

// The hosted flow's calls carry no credentials: the session value is the
// bearer.
var noAuth = http.Header{"Authorization": {""}}

// linkStep is the answer of POST /link/api/login and /answer.
type linkStep struct {
	Status   string `json:"status"`
	Merchant struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	} `json:"merchant"`
	Product      string `json:"product"`
	Message      string `json:"message"`
	Reason       string `json:"reason"`
	Retry        bool   `json:"retry"`
	Wrong        bool   `json:"wrong"`
	Question     string `json:"question"`
	Challenge    string `json:"challenge"`
	AttemptsLeft int    `json:"attempts_left"`
	TaskID       *int64 `json:"task_id"`
}

// flowSession creates a session for the harness developer.
func (h *harness) flowSession(req *client.CreateSessionRequest) *client.Session {
	h.t.Helper()
	s, err := h.api.CreateSession(context.Background(), req)
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

// flowCall posts a call of the hosted flow for session s and returns the
// raw answer.
func (h *harness) flowCall(path, session string, body map[string]any) *response {
	h.t.Helper()
	if body == nil {
		body = map[string]any{}
	}
	body["session"] = session
	if _, ok := body["client_id"]; !ok {
		body["client_id"] = h.clientID
	}
	return h.do("POST", path, body, noAuth)
}

// login logs in at a merchant and decodes the step.
func (h *harness) login(session string, merchantID int64, username, password string) linkStep {
	h.t.Helper()
	return h.step(h.flowCall("/link/api/login", session, map[string]any{"merchant_id": merchantID,
		"username": username, "password": password, "entry_point": "onboarding"}))
}

func (h *harness) answer(session, challenge, answer string) linkStep {
	h.t.Helper()
	return h.step(h.flowCall("/link/api/answer", session, map[string]any{"challenge": challenge, "answer": answer}))
}

func (h *harness) step(resp *response) linkStep {
	h.t.Helper()
	if resp.status != http.StatusOK {
		h.t.Fatalf("login step: %d %s", resp.status, resp.body)
	}
	var s linkStep
	if err := json.Unmarshal(resp.body, &s); err != nil {
		h.t.Fatal(err)
	}
	return s
}

// eventEnvelope is a webhook envelope as recorded.
type eventEnvelope struct {
	Event          string  `json:"event"`
	SessionID      *string `json:"session_id"`
	TaskID         *int64  `json:"task_id"`
	ExternalUserID string  `json:"external_user_id"`
	Merchant       struct {
		ID int64 `json:"id"`
	} `json:"merchant"`
	Data struct {
		CardID     *string           `json:"card_id"`
		SendCard   bool              `json:"send_card"`
		EntryPoint *string           `json:"entrypoint"`
		Metadata   map[string]string `json:"metadata"`
	} `json:"data"`
}

// eventsOf returns the user's events, oldest first.
func (h *harness) eventsOf(user string) []eventEnvelope {
	h.t.Helper()
	var out []eventEnvelope
	evs := h.events(h.clientID)
	for i := len(evs) - 1; i >= 0; i-- {
		var env eventEnvelope
		if err := json.Unmarshal(evs[i].Payload, &env); err != nil {
			h.t.Fatal(err)
		}
		if env.ExternalUserID == user {
			out = append(out, env)
		}
	}
	return out
}

func eventTypes(evs []eventEnvelope) string {
	types := make([]string, len(evs))
	for i, e := range evs {
		types[i] = e.Event
	}
	return strings.Join(types, ",")
}

// A successful login in the hosted flow links the account as
// POST /development/accounts/link does, for every product, with
// AUTHENTICATED carrying the session id, the metadata and the entry point.
func TestLinkFlowSuccessLinks(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		tests := []struct {
			product, username, password string
			cardID                      *string
			merchant                    int64
			wantEvents                  string
			wantTask                    bool
		}{
			{"card_switcher", "user_good", "pass_good", ptr("card-7"), 4, "AUTHENTICATED", true},
			{"transaction_link", "user_good", "pass_good", nil, 1, "AUTHENTICATED", false},
			{"transaction_link", "user_good_transactions", "pass_good", nil, 1, "AUTHENTICATED,NEW_TRANSACTIONS_AVAILABLE", false},
			{"transaction_link", "user_good_transactions", "pass_good_updates", nil, 1,
				"AUTHENTICATED,NEW_TRANSACTIONS_AVAILABLE,UPDATED_TRANSACTIONS_AVAILABLE", false},
			{"vault", "user_good_vault", "pass_good", nil, 1, "AUTHENTICATED", true},
			{"link", "user_good", "pass_good", nil, 6, "AUTHENTICATED", false},
		}
		for i, tc := range tests {
			user := fmt.Sprintf("flow-user-%d", i)
			s := h.flowSession(&client.CreateSessionRequest{Type: tc.product, ExternalUserID: user, CardID: tc.cardID,
				Metadata: map[string]string{"plan": "gold"}})

			resp := h.flowCall("/link/api/session", s.Session, nil)
			var open struct {
				SessionID   string  `json:"session_id"`
				Product     string  `json:"product"`
				MerchantIDs []int64 `json:"merchant_ids"`
				ExpiresIn   int64   `json:"expires_in"`
			}
			if resp.status != 200 || json.Unmarshal(resp.body, &open) != nil {
				t.Fatalf("%s: open: %d %s", tc.product, resp.status, resp.body)
			}
			if open.SessionID != s.SessionID || open.Product != tc.product || open.ExpiresIn != 1800 || len(open.MerchantIDs) == 0 {
				t.Fatalf("%s: open = %+v", tc.product, open)
			}

			step := h.login(s.Session, tc.merchant, tc.username, tc.password)
			if step.Status != "success" || step.Merchant.ID != tc.merchant || (step.TaskID != nil) != tc.wantTask {
				t.Fatalf("%s %s/%s: %+v", tc.product, tc.username, tc.password, step)
			}
			evs := h.eventsOf(user)
			if got := eventTypes(evs); got != tc.wantEvents {
				t.Fatalf("%s %s/%s: events %s, want %s", tc.product, tc.username, tc.password, got, tc.wantEvents)
			}
			auth := evs[0]
			if auth.SessionID == nil || *auth.SessionID != s.SessionID || auth.Data.Metadata["plan"] != "gold" ||
				auth.Data.EntryPoint == nil || *auth.Data.EntryPoint != "onboarding" || auth.Merchant.ID != tc.merchant {
				t.Fatalf("%s: AUTHENTICATED %+v", tc.product, auth)
			}
			if tc.wantTask && (auth.TaskID == nil || *auth.TaskID != *step.TaskID) {
				t.Fatalf("%s: AUTHENTICATED task %v, login task %v", tc.product, auth.TaskID, step.TaskID)
			}
			if tc.product == "card_switcher" && (auth.Data.CardID == nil || *auth.Data.CardID != "card-7" || !auth.Data.SendCard) {
				t.Fatalf("card switcher AUTHENTICATED data %+v", auth.Data)
			}
			if _, err := h.api.GetAccount(context.Background(), user, tc.merchant, ""); err != nil {
				t.Fatalf("%s: the account is not linked: %v", tc.product, err)
			}
		}
	})
}

// The SDK's metadata (open's option, sent by the flow with each login
// step) reaches the link's events beside the session's; a key both name
// keeps the session's value. It is held to the session metadata's limits.
func TestLinkFlowSDKMetadata(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		page := map[string]any{"campaign": "spring", "source": "page"}
		merged := map[string]string{"plan": "gold", "campaign": "spring", "source": "backend"}
		check := func(name, user string, want map[string]string, wantEvents string) {
			t.Helper()
			evs := h.eventsOf(user)
			if got := eventTypes(evs); got != wantEvents {
				t.Fatalf("%s: events %s, want %s", name, got, wantEvents)
			}
			for _, ev := range evs {
				if !maps.Equal(ev.Data.Metadata, want) {
					t.Errorf("%s: %s metadata %v, want %v", name, ev.Event, ev.Data.Metadata, want)
				}
			}
		}

		// A login that succeeds at once: AUTHENTICATED and the transactions
		// it generates.
		s := h.flowSession(&client.CreateSessionRequest{Type: "transaction_link", ExternalUserID: "sdk-md-login",
			Metadata: map[string]string{"plan": "gold", "source": "backend"}})
		st := h.step(h.flowCall("/link/api/login", s.Session, map[string]any{"merchant_id": 1,
			"username": "user_good_transactions", "password": "pass_good", "metadata": page}))
		if st.Status != "success" {
			t.Fatalf("login: %+v", st)
		}
		check("login", "sdk-md-login", merged, "AUTHENTICATED,NEW_TRANSACTIONS_AVAILABLE")

		// A one-time code: the answer that links carries it; a session
		// without metadata echoes the SDK's alone.
		s2 := h.flowSession(&client.CreateSessionRequest{Type: "transaction_link", ExternalUserID: "sdk-md-otp"})
		st = h.step(h.flowCall("/link/api/login", s2.Session, map[string]any{"merchant_id": 1,
			"username": "user_good", "password": "pass_otp", "metadata": page}))
		st = h.step(h.flowCall("/link/api/answer", s2.Session, map[string]any{"challenge": st.Challenge, "answer": "1234",
			"metadata": page}))
		if st.Status != "success" {
			t.Fatalf("answer: %+v", st)
		}
		check("answer", "sdk-md-otp", map[string]string{"campaign": "spring", "source": "page"}, "AUTHENTICATED")

		// Neither: no metadata at all, as before.
		s3 := h.flowSession(&client.CreateSessionRequest{Type: "transaction_link", ExternalUserID: "sdk-md-none"})
		if st := h.login(s3.Session, 1, "user_good", "pass_good"); st.Status != "success" {
			t.Fatalf("login without metadata: %+v", st)
		}
		check("none", "sdk-md-none", nil, "AUTHENTICATED")

		// The limits of the session's metadata, on each step; nothing is
		// linked.
		s4 := h.flowSession(&client.CreateSessionRequest{Type: "transaction_link", ExternalUserID: "sdk-md-bad"})
		eleven := map[string]any{}
		for i := range 11 {
			eleven[fmt.Sprintf("k%d", i)] = "v"
		}
		for name, md := range map[string]any{
			"11 keys":      eleven,
			"a long value": map[string]any{"k": strings.Repeat("v", 501)},
			"a long key":   map[string]any{strings.Repeat("k", 65): "v"},
			"a number":     map[string]any{"k": 1},
			"a list":       []string{"v"},
		} {
			for path, body := range map[string]map[string]any{
				"/link/api/login":  {"merchant_id": 1, "username": "user_good", "password": "pass_good"},
				"/link/api/answer": {"challenge": "c", "answer": "1234"},
				"/link/api/wait":   {"challenge": "c"},
			} {
				body["metadata"] = md
				resp := h.flowCall(path, s4.Session, body)
				if resp.status != 400 || resp.errorBody(t).Code != "INVALID_FIELD" || !strings.Contains(resp.errorBody(t).Message, "metadata") {
					t.Errorf("%s, %s: %d %s, want 400 INVALID_FIELD naming metadata", name, path, resp.status, resp.body)
				}
			}
		}
		check("refused", "sdk-md-bad", nil, "")
	})
}

// The same link through POST /development/accounts/link and through the
// flow raise the same events with the same data, but for the session id
// and the entry point the flow adds.
func TestLinkFlowMatchesDevelopmentLink(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		md := map[string]string{"k": "v"}
		if err := h.api.DevLinkAccount(ctx, &client.DevLinkRequest{ExternalUserID: "dev-linked", MerchantID: 1,
			Transactions: &client.DevTransactions{New: true, Updated: true}, Metadata: md}); err != nil {
			t.Fatal(err)
		}
		s := h.flowSession(&client.CreateSessionRequest{Type: "transaction_link", ExternalUserID: "flow-linked", Metadata: md})
		if step := h.login(s.Session, 1, "user_good_transactions", "pass_good_updates"); step.Status != "success" {
			t.Fatalf("login: %+v", step)
		}
		dev, flow := h.eventsOf("dev-linked"), h.eventsOf("flow-linked")
		if eventTypes(dev) != eventTypes(flow) {
			t.Fatalf("development link raised %s, the flow %s", eventTypes(dev), eventTypes(flow))
		}
		if dev[0].SessionID != nil || flow[0].SessionID == nil || dev[0].Data.Metadata["k"] != "v" || flow[0].Data.Metadata["k"] != "v" {
			t.Fatalf("AUTHENTICATED: development %+v, flow %+v", dev[0], flow[0])
		}
		count := func(user string) int {
			resp := h.do("POST", "/transactions/sync", map[string]any{"external_user_id": user, "merchant_id": 1, "limit": 100}, nil)
			var page struct {
				Transactions []json.RawMessage `json:"transactions"`
			}
			if resp.status != 200 || json.Unmarshal(resp.body, &page) != nil {
				t.Fatalf("sync %s: %d %s", user, resp.status, resp.body)
			}
			return len(page.Transactions)
		}
		// Each user has a history of its own; both got theirs.
		if d, f := count("dev-linked"), count("flow-linked"); d == 0 || f == 0 {
			t.Fatalf("transactions: development %d, flow %d", d, f)
		}
	})
}

// pass_otp asks for a code: 0000 is wrong (twice allowed), 1234 right; a
// third wrong code ends the login. pass_questions asks a question.
func TestLinkFlowChallenges(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		s := h.flowSession(&client.CreateSessionRequest{Type: "card_switcher", ExternalUserID: "otp-user", CardID: ptr("card-1")})
		step := h.login(s.Session, 4, "user_good", "pass_otp")
		if step.Status != "otp_required" || step.Challenge == "" || step.AttemptsLeft != 3 || len(h.eventsOf("otp-user")) != 0 {
			t.Fatalf("pass_otp: %+v", step)
		}
		first := step.Challenge
		wrong := h.answer(s.Session, first, "0000")
		if wrong.Status != "otp_required" || !wrong.Wrong || wrong.AttemptsLeft != 2 || wrong.Challenge == "" ||
			!strings.Contains(wrong.Message, "not right") {
			t.Fatalf("0000: %+v", wrong)
		}
		if len(h.eventsOf("otp-user")) != 0 {
			t.Fatal("a wrong code linked the account")
		}
		right := h.answer(s.Session, wrong.Challenge, "1234")
		if right.Status != "success" || right.TaskID == nil {
			t.Fatalf("1234: %+v", right)
		}
		if got := eventTypes(h.eventsOf("otp-user")); got != "AUTHENTICATED" {
			t.Fatalf("events %s", got)
		}
		// A challenge answered rightly is spent: handed back, with the
		// right code, it links nothing again.
		for _, c := range []string{first, wrong.Challenge} {
			resp := h.flowCall("/link/api/answer", s.Session, map[string]any{"challenge": c, "answer": "1234"})
			if resp.status != 400 || resp.errorBody(t).Code != "INVALID_FIELD" {
				t.Fatalf("a spent challenge: %d %s", resp.status, resp.body)
			}
		}
		if got := eventTypes(h.eventsOf("otp-user")); got != "AUTHENTICATED" {
			t.Fatalf("events after replays %s", got)
		}

		// Three wrong codes fail the login.
		s2 := h.flowSession(&client.CreateSessionRequest{Type: "transaction_link", ExternalUserID: "otp-user-2"})
		c := h.login(s2.Session, 1, "user_good", "pass_otp").Challenge
		for i := range 3 {
			st := h.answer(s2.Session, c, "0000")
			if i < 2 && (st.Status != "otp_required" || !st.Wrong) {
				t.Fatalf("wrong code %d: %+v", i+1, st)
			}
			if i == 2 && (st.Status != "failed" || st.Reason != "too many attempts" || st.Retry) {
				t.Fatalf("third wrong code: %+v", st)
			}
			c = st.Challenge
		}
		// The count is the server's: the first copy of the challenge,
		// handed back, does not start it again.
		s4 := h.flowSession(&client.CreateSessionRequest{Type: "transaction_link", ExternalUserID: "otp-user-4"})
		first4 := h.login(s4.Session, 1, "user_good", "pass_otp").Challenge
		for i := range 3 {
			st := h.answer(s4.Session, first4, "0000")
			if want := 2 - i; i < 2 && (!st.Wrong || st.AttemptsLeft != want) {
				t.Fatalf("wrong code %d with the first challenge: %+v, want %d attempts left", i+1, st, want)
			}
			if i == 2 && (st.Status != "failed" || st.Reason != "too many attempts") {
				t.Fatalf("third wrong code with the first challenge: %+v", st)
			}
		}
		resp := h.flowCall("/link/api/answer", s4.Session, map[string]any{"challenge": first4, "answer": "1234"})
		if resp.status != 400 || resp.errorBody(t).Code != "INVALID_FIELD" || len(h.eventsOf("otp-user-4")) != 0 {
			t.Fatalf("the right code after three wrong ones: %d %s", resp.status, resp.body)
		}

		// Concurrent right answers to one challenge link once.
		s5 := h.flowSession(&client.CreateSessionRequest{Type: "transaction_link", ExternalUserID: "otp-user-5"})
		c5 := h.login(s5.Session, 1, "user_good", "pass_otp").Challenge
		var wg sync.WaitGroup
		var mu sync.Mutex
		statuses := map[int]int{}
		for range 4 {
			wg.Go(func() {
				resp := h.flowCall("/link/api/answer", s5.Session, map[string]any{"challenge": c5, "answer": "1234"})
				mu.Lock()
				statuses[resp.status]++
				mu.Unlock()
			})
		}
		wg.Wait()
		if statuses[200] != 1 || statuses[400] != 3 {
			t.Fatalf("concurrent answers: %v, want one 200 and three 400", statuses)
		}
		if got := eventTypes(h.eventsOf("otp-user-5")); got != "AUTHENTICATED" {
			t.Fatalf("concurrent answers raised %s", got)
		}

		// A challenge belongs to its session: another session's is refused.
		other := h.login(s2.Session, 1, "user_good", "pass_otp").Challenge
		resp = h.flowCall("/link/api/answer", s.Session, map[string]any{"challenge": other, "answer": "1234"})
		if resp.status != 400 || resp.errorBody(t).Code != "INVALID_FIELD" {
			t.Fatalf("another session's challenge: %d %s", resp.status, resp.body)
		}
		// It expires too.
		h.clock.Advance(11 * time.Minute)
		resp = h.flowCall("/link/api/answer", s2.Session, map[string]any{"challenge": other, "answer": "1234"})
		if resp.status != 400 || resp.errorBody(t).Code != "INVALID_FIELD" {
			t.Fatalf("expired challenge: %d %s", resp.status, resp.body)
		}

		// The security question.
		s3 := h.flowSession(&client.CreateSessionRequest{Type: "transaction_link", ExternalUserID: "question-user"})
		q := h.login(s3.Session, 1, "user_good", "pass_questions")
		if q.Status != "questions_required" || q.Question == "" || q.Challenge == "" {
			t.Fatalf("pass_questions: %+v", q)
		}
		if st := h.answer(s3.Session, q.Challenge, "no idea"); st.Status != "questions_required" || !st.Wrong || st.Question != q.Question {
			t.Fatalf("wrong answer: %+v", st)
		}
		if st := h.answer(s3.Session, q.Challenge, "answer_good"); st.Status != "success" {
			t.Fatalf("answer_good: %+v", st)
		}
	})
}

// Passwords named after a failure fail that way; unknown logins fail as
// wrong credentials; nothing is linked.
func TestLinkFlowFailures(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		s := h.flowSession(&client.CreateSessionRequest{Type: "transaction_link", ExternalUserID: "failing-user"})
		tests := []struct {
			username, password, reason string
			retry                      bool
		}{
			{"user_good", "credentials", "credentials", true},
			{"user_good", "account", "account", false},
			{"someone", "too many attempts", "too many attempts", false},
			{"someone", "pass_good", "credentials", true},
			{"user_good", "wrong", "credentials", true},
		}
		for _, tc := range tests {
			st := h.login(s.Session, 1, tc.username, tc.password)
			if st.Status != "failed" || st.Reason != tc.reason || st.Retry != tc.retry || st.Message == "" {
				t.Errorf("%s/%s: %+v", tc.username, tc.password, st)
			}
		}
		if evs := h.eventsOf("failing-user"); len(evs) != 0 {
			t.Fatalf("failed logins raised %s", eventTypes(evs))
		}
		_, err := h.api.GetAccount(context.Background(), "failing-user", 1, "")
		expectError(t, err, 404, "MERCHANT_ACCOUNT_ERROR", "MERCHANT_ACCOUNT_NOT_FOUND")
	})
}

// A session allows 10 logins with wrong credentials, whatever the IPs they
// come from: later logins fail with "too many attempts" without reaching
// the authenticator (the right password fails too). Other outcomes do not
// count, concurrent logins count exactly, and other sessions are unaffected.
func TestLinkFlowLoginFailuresPerSession(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		s := h.flowSession(&client.CreateSessionRequest{Type: "transaction_link", ExternalUserID: "guessed-user"})
		for _, pw := range []string{"account", "too many attempts", "pass_otp"} {
			if st := h.login(s.Session, 1, "user_good", pw); st.Reason == "credentials" {
				t.Fatalf("%s: %+v", pw, st)
			}
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		reasons := map[string]int{}
		for range 15 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp := h.flowCall("/link/api/login", s.Session, map[string]any{"merchant_id": 1, "username": "user_good", "password": "guess"})
				var st linkStep
				if resp.status != 200 || json.Unmarshal(resp.body, &st) != nil || st.Status != "failed" {
					t.Errorf("guess: %d %s", resp.status, resp.body)
				}
				mu.Lock()
				reasons[st.Reason]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		if reasons["credentials"] != 10 || reasons["too many attempts"] != 5 {
			t.Fatalf("15 concurrent guesses: %v, want 10 credentials and 5 too many attempts", reasons)
		}
		st := h.login(s.Session, 1, "user_good", "pass_good")
		if st.Status != "failed" || st.Reason != "too many attempts" || st.Retry || !strings.Contains(st.Message, "too many attempts") {
			t.Fatalf("the right password after 10 failures: %+v", st)
		}
		if evs := h.eventsOf("guessed-user"); len(evs) != 0 {
			t.Fatalf("a login after the limit raised %s", eventTypes(evs))
		}
		other := h.flowSession(&client.CreateSessionRequest{Type: "transaction_link", ExternalUserID: "other-user"})
		if st := h.login(other.Session, 1, "user_good", "pass_good"); st.Status != "success" {
			t.Fatalf("another session: %+v", st)
		}
	})
}

// Lengths are counted in characters, as the page's inputs count them: 100
// accented letters (200 bytes) are a valid search, 256 a valid username.
// A client_id too long to exist is CLIENT_ID_NOT_FOUND, like an unknown one.
func TestLinkFlowFieldLimits(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		s := h.flowSession(&client.CreateSessionRequest{Type: "transaction_link", ExternalUserID: "limits-user"})
		if resp := h.flowCall("/link/api/merchants", s.Session, map[string]any{"search": strings.Repeat("é", 100)}); resp.status != 200 {
			t.Errorf("100-character search: %d %s", resp.status, resp.body)
		}
		if resp := h.flowCall("/link/api/merchants", s.Session, map[string]any{"search": strings.Repeat("é", 101)}); resp.status != 400 {
			t.Errorf("101-character search: %d %s", resp.status, resp.body)
		}
		if st := h.login(s.Session, 1, strings.Repeat("ü", 256), "credentials"); st.Status != "failed" || st.Reason != "credentials" {
			t.Errorf("256-character username: %+v", st)
		}
		if resp := h.flowCall("/link/api/login", s.Session, map[string]any{"merchant_id": 1, "username": strings.Repeat("ü", 257),
			"password": "pass_good"}); resp.status != 400 || resp.errorBody(t).Code != "INVALID_FIELD" {
			t.Errorf("257-character username: %d %s", resp.status, resp.body)
		}
		if resp := h.flowCall("/link/api/session", s.Session, map[string]any{"client_id": strings.Repeat("c", 256)}); resp.status != 404 || resp.errorBody(t).Code != "CLIENT_ID_NOT_FOUND" {
			t.Errorf("256-character client_id: %d %s", resp.status, resp.body)
		}
		// A NUL is no text at all: refused as in every request.
		if resp := h.flowCall("/link/api/session", s.Session, map[string]any{"client_id": "bad\x00id"}); resp.status != 400 || resp.errorBody(t).Code != "INVALID_FIELD" {
			t.Errorf("client_id with a NUL: %d %s", resp.status, resp.body)
		}
	})
}

// Unknown, expired and foreign sessions, unknown client ids and bad
// requests get the errors the flow maps to the SDK's error codes.
func TestLinkFlowSessionErrors(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		s := h.flowSession(&client.CreateSessionRequest{Type: "card_switcher", ExternalUserID: "err-user", CardID: ptr("c")})
		check := func(name string, resp *response, status int, code string) {
			t.Helper()
			if resp.status != status || resp.errorBody(t).Code != code {
				t.Errorf("%s: %d %s, want %d %s", name, resp.status, resp.body, status, code)
			}
		}
		unknown := "sess_" + strings.Repeat("A", 43)
		check("unknown session", h.flowCall("/link/api/session", unknown, nil), 404, "SESSION_NOT_FOUND")
		check("malformed session", h.flowCall("/link/api/session", "nope", nil), 404, "SESSION_NOT_FOUND")
		check("unknown client", h.flowCall("/link/api/session", s.Session, map[string]any{"client_id": "no-such-client"}), 404, "CLIENT_ID_NOT_FOUND")
		other := h.newDeveloper("development")
		check("another developer's client", h.flowCall("/link/api/session", s.Session, map[string]any{"client_id": other.ClientID}), 404, "SESSION_NOT_FOUND")
		prod := h.newDeveloper("production")
		check("a production client", h.flowCall("/link/api/session", s.Session, map[string]any{"client_id": prod.ClientID}), 404, "CLIENT_ID_NOT_FOUND")
		// A production developer's own session (both environments can share
		// a database) opens nothing on a development deployment, so a test
		// login can never link a production account.
		prodSession, err := session.NewService(h.store, nil, nil, h.detections, h.clock.Now).Create(context.Background(),
			session.CreateParams{ClientID: prod.ClientID, Type: "link", ExternalUserID: "prod-user"})
		if err != nil {
			t.Fatal(err)
		}
		check("a production session", h.flowCall("/link/api/session", prodSession.Value, map[string]any{"client_id": prod.ClientID}), 404, "CLIENT_ID_NOT_FOUND")
		check("a login with a production session", h.flowCall("/link/api/login", prodSession.Value, map[string]any{"client_id": prod.ClientID,
			"merchant_id": 4, "username": "user_good", "password": "pass_good"}), 404, "CLIENT_ID_NOT_FOUND")
		if n := len(h.events(prod.ClientID)); n != 0 {
			t.Fatalf("a production developer got %d events from a development login", n)
		}
		check("no session", h.do("POST", "/link/api/session", map[string]any{"client_id": h.clientID}, noAuth), 400, "INVALID_FIELD")
		check("unknown field", h.flowCall("/link/api/session", s.Session, map[string]any{"extra": 1}), 400, "INVALID_FIELD")
		check("not JSON", h.do("POST", "/link/api/session", "session="+s.Session, http.Header{"Authorization": {""}, "Content-Type": {"application/x-www-form-urlencoded"}}), 415, "UNSUPPORTED_MEDIA_TYPE")
		check("unknown merchant", h.flowCall("/link/api/login", s.Session, map[string]any{"merchant_id": 999999, "username": "user_good", "password": "pass_good"}), 400, "INVALID_FIELD")
		check("no password", h.flowCall("/link/api/login", s.Session, map[string]any{"merchant_id": 4, "username": "user_good"}), 400, "INVALID_FIELD")

		// Extended sessions live on; expired ones end the flow.
		h.clock.Advance(25 * time.Minute)
		if _, err := h.api.ExtendSession(context.Background(), s.Session); err != nil {
			t.Fatal(err)
		}
		h.clock.Advance(25 * time.Minute)
		if resp := h.flowCall("/link/api/session", s.Session, nil); resp.status != 200 {
			t.Fatalf("extended session: %d %s", resp.status, resp.body)
		}
		h.clock.Advance(6 * time.Minute)
		check("expired session", h.flowCall("/link/api/session", s.Session, nil), 400, "SESSION_EXPIRED")
		check("login with an expired session", h.flowCall("/link/api/login", s.Session, map[string]any{"merchant_id": 4, "username": "user_good", "password": "pass_good"}), 400, "SESSION_EXPIRED")
		if evs := h.eventsOf("err-user"); len(evs) != 0 {
			t.Fatalf("events %s", eventTypes(evs))
		}
	})
}

// Search uses the catalog's rules, within the session's product.
func TestLinkFlowMerchants(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		s := h.flowSession(&client.CreateSessionRequest{Type: "card_switcher", ExternalUserID: "search-user", CardID: ptr("c")})
		var got struct {
			MerchantIDs []int64 `json:"merchant_ids"`
		}
		resp := h.flowCall("/link/api/merchants", s.Session, map[string]any{"search": "netfl"})
		if resp.status != 200 || json.Unmarshal(resp.body, &got) != nil || len(got.MerchantIDs) != 1 || got.MerchantIDs[0] != 4 {
			t.Fatalf("search netfl: %d %s", resp.status, resp.body)
		}
		resp = h.flowCall("/link/api/merchants", s.Session, map[string]any{"search": "amzn mktp"})
		if resp.status != 200 || json.Unmarshal(resp.body, &got) != nil || len(got.MerchantIDs) != 1 || got.MerchantIDs[0] != 1 {
			t.Fatalf("search by alias: %d %s", resp.status, resp.body)
		}
		all, err := h.api.ListMerchants(context.Background(), &client.ListMerchantsRequest{Type: "card_switcher"})
		if err != nil {
			t.Fatal(err)
		}
		resp = h.flowCall("/link/api/merchants", s.Session, nil)
		if resp.status != 200 || json.Unmarshal(resp.body, &got) != nil || len(got.MerchantIDs) != len(all) {
			t.Fatalf("no search: %d merchants, /merchant/list %d", len(got.MerchantIDs), len(all))
		}
	})
}

// In production nothing fakes a login: every login answers "unavailable",
// links nothing and raises nothing. The demo does not exist there.
func TestLinkFlowProductionRefusesToFakeLogins(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		s := h.flowSession(&client.CreateSessionRequest{Type: "transaction_link", ExternalUserID: "prod-user"})
		if resp := h.flowCall("/link/api/session", s.Session, nil); resp.status != 200 {
			t.Fatalf("open: %d %s", resp.status, resp.body)
		}
		for _, pw := range []string{"pass_good", "pass_otp", "anything"} {
			st := h.login(s.Session, 1, "user_good", pw)
			if st.Status != "unavailable" || !strings.Contains(st.Message, "connector") {
				t.Fatalf("production login %s: %+v", pw, st)
			}
		}
		if evs := h.eventsOf("prod-user"); len(evs) != 0 {
			t.Fatalf("production login raised %s", eventTypes(evs))
		}
		_, err := h.api.GetAccount(context.Background(), "prod-user", 1, "")
		expectError(t, err, 404, "MERCHANT_ACCOUNT_ERROR", "MERCHANT_ACCOUNT_NOT_FOUND")

		if resp := h.page("GET", "/demo", "", nil); resp.status != 404 {
			t.Fatalf("GET /demo in production: %d", resp.status)
		}
		for _, path := range []string{"/demo/session", "/demo/card"} {
			if resp := h.page("POST", path, `{}`, http.Header{"Content-Type": {"application/json"}}); resp.status != 404 {
				t.Fatalf("POST %s in production: %d", path, resp.status)
			}
		}
		resp := h.page("GET", "/link", "", nil)
		if resp.status != 200 || strings.Contains(string(resp.body), "Test logins") || !strings.Contains(string(resp.body), `data-environment="production"`) {
			t.Fatalf("GET /link in production: %d", resp.status)
		}
	}, production)
}

// page requests a web page (not an API operation: the contract does not
// describe it) without credentials.
func (h *harness) page(method, path, body string, header http.Header) *response {
	h.t.Helper()
	var reader io.Reader
	if body != "" {
		reader = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, h.url+path, reader)
	if err != nil {
		h.t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: data}
}

// The pages carry their security headers; the demo creates sessions that
// the flow opens, for its own page only.
func TestLinkPages(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		link := h.page("GET", "/link", "", nil)
		csp := link.header.Get("Content-Security-Policy")
		if link.status != 200 || !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors *") ||
			strings.Contains(csp, "unsafe-inline") || link.header.Get("X-Content-Type-Options") != "nosniff" ||
			link.header.Get("Cache-Control") != "no-store" || link.header.Get("Referrer-Policy") != "no-referrer" {
			t.Fatalf("GET /link: %d %v", link.status, link.header)
		}
		body := string(link.body)
		if strings.Contains(body, "<script>") {
			t.Fatal("the flow has inline script")
		}
		if !strings.Contains(body, `data-name="Netflix"`) || !strings.Contains(body, "Test logins") {
			t.Fatal("the flow does not list the catalog and the test logins")
		}

		demo := h.page("GET", "/demo", "", nil)
		if demo.status != 200 || !strings.Contains(demo.header.Get("Content-Security-Policy"), "frame-ancestors 'none'") ||
			demo.header.Get("X-Frame-Options") != "DENY" {
			t.Fatalf("GET /demo: %d %v", demo.status, demo.header)
		}
		sdk := h.page("GET", "/sdk/hitch.js", "", nil)
		if sdk.status != 200 || !strings.HasPrefix(sdk.header.Get("Content-Type"), "text/javascript") ||
			!strings.Contains(string(sdk.body), "window.KnotapiJS") || sdk.header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("GET /sdk/hitch.js: %d %v", sdk.status, sdk.header)
		}
		if again := h.page("GET", "/sdk/hitch.js", "", http.Header{"If-None-Match": {sdk.header.Get("ETag")}}); again.status != 304 {
			t.Fatalf("revalidation: %d", again.status)
		}
		if js := h.page("GET", "/static/link.js", "", nil); js.status != 200 || !strings.Contains(string(js.body), "postMessage") {
			t.Fatalf("GET /static/link.js: %d", js.status)
		}

		// The demo's session helper: same origin and JSON only.
		sameSite := http.Header{"Content-Type": {"application/json"}, "Sec-Fetch-Site": {"same-origin"}}
		resp := h.page("POST", "/demo/session", `{"type": "card_switcher", "external_user_id": "demo-1"}`, sameSite)
		var created struct {
			Session   string `json:"session"`
			SessionID string `json:"session_id"`
			ClientID  string `json:"client_id"`
		}
		if resp.status != 200 || json.Unmarshal(resp.body, &created) != nil || created.ClientID != h.clientID {
			t.Fatalf("POST /demo/session: %d %s", resp.status, resp.body)
		}
		if strings.Contains(string(resp.body), h.secret) {
			t.Fatal("the demo hands out the secret")
		}
		if st := h.login(created.Session, 4, "user_good", "pass_good"); st.Status != "success" {
			t.Fatalf("login with a demo session: %+v", st)
		}
		if evs := h.eventsOf("demo-1"); len(evs) != 1 || evs[0].Data.Metadata["source"] != "demo" {
			t.Fatalf("demo events %+v", evs)
		}
		crossSite := http.Header{"Content-Type": {"application/json"}, "Sec-Fetch-Site": {"cross-site"}}
		if resp := h.page("POST", "/demo/session", `{}`, crossSite); resp.status != 403 {
			t.Fatalf("cross-site demo session: %d", resp.status)
		}
		if resp := h.page("POST", "/demo/session", `type=link`, http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}); resp.status != 415 {
			t.Fatalf("form demo session: %d", resp.status)
		}
		if resp := h.page("POST", "/demo/session", `{"type": "nope"}`, sameSite); resp.status != 400 {
			t.Fatalf("bad type: %d", resp.status)
		}
	})
}

// The root is a landing page linking to the demo, the dashboard, the docs
// and the contract; but a frame's request for it (knotapi-js opens its
// flow at the root of its host) gets the flow, as /link serves it.
func TestRootPage(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		landing := h.page("GET", "/", "", nil)
		body := string(landing.body)
		if landing.status != 200 || !strings.HasPrefix(landing.header.Get("Content-Type"), "text/html") ||
			!strings.Contains(landing.header.Get("Vary"), "Sec-Fetch-Dest") ||
			!strings.Contains(landing.header.Get("Content-Security-Policy"), "script-src 'self'") {
			t.Fatalf("GET /: %d %v", landing.status, landing.header)
		}
		for _, href := range []string{"/demo", "/dashboard", "/openapi.yaml", "/docs/link.md", "/docs/webhooks.md"} {
			if !strings.Contains(body, `href="`+href+`"`) {
				t.Errorf("the landing page does not link to %s", href)
			}
			if got := h.page("GET", href, "", nil); got.status != 200 {
				t.Errorf("GET %s, linked from the landing page: %d", href, got.status)
			}
		}
		if strings.Contains(body, `id="flow"`) {
			t.Error("a plain GET / got the flow")
		}
		doc := h.page("GET", "/docs/link.md", "", nil)
		if !strings.HasPrefix(doc.header.Get("Content-Type"), "text/plain") || !strings.HasPrefix(string(doc.body), "# The hosted link flow") {
			t.Errorf("GET /docs/link.md: %v %.40q", doc.header, doc.body)
		}
		if resp := h.page("GET", "/docs/nope.md", "", nil); resp.status != 404 {
			t.Errorf("GET /docs/nope.md: %d", resp.status)
		}

		link := h.page("GET", "/link", "", nil)
		for _, dest := range []string{"iframe", "frame"} {
			flow := h.page("GET", "/", "", http.Header{"Sec-Fetch-Dest": {dest}})
			if flow.status != 200 || string(flow.body) != string(link.body) ||
				flow.header.Get("Content-Security-Policy") != link.header.Get("Content-Security-Policy") {
				t.Errorf("GET / from a %s: %d %v, want the flow as /link serves it", dest, flow.status, flow.header)
			}
		}
		if resp := h.page("GET", "/", "", http.Header{"Sec-Fetch-Dest": {"document"}}); string(resp.body) != body {
			t.Error("GET / as a document did not get the landing page")
		}
		// Other paths are still the API's.
		if resp := h.page("GET", "/nope", "", nil); resp.status != 404 || resp.errorBody(t).Code != "NOT_FOUND" {
			t.Errorf("GET /nope: %d %s", resp.status, resp.body)
		}
	})
}

// pageAt requests a page with the Host header a browser would send for
// host, as a page of a rebound DNS name would.
func (h *harness) pageAt(host, method, path, body string, header http.Header) *response {
	h.t.Helper()
	req, err := http.NewRequest(method, h.url+path, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Host = host
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: data}
}

// The demo answers only requests addressed to a loopback name (or the
// public URL's host): a page whose DNS name is rebound to 127.0.0.1 sends
// its own name as Host, and its Origin matches it, so it must get nothing.
func TestDemoRefusesOtherHosts(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		port := strings.TrimPrefix(h.url[strings.LastIndex(h.url, ":"):], ":")
		json := http.Header{"Content-Type": {"application/json"}}
		for _, host := range []string{"evil.example:" + port, "evil.example", "127.0.0.1.evil.example:" + port, "localhost.evil.example"} {
			origin := http.Header{"Content-Type": {"application/json"}, "Origin": {"http://" + host}}
			if resp := h.pageAt(host, "POST", "/demo/session", `{}`, origin); resp.status != 404 || resp.errorBody(t).Code != "NOT_FOUND" {
				t.Errorf("POST /demo/session for %s: %d %s", host, resp.status, resp.body)
			}
			if resp := h.pageAt(host, "GET", "/demo", "", nil); resp.status != 404 {
				t.Errorf("GET /demo for %s: %d", host, resp.status)
			}
		}
		for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST", "[::1]:" + port} {
			if resp := h.pageAt(host, "POST", "/demo/session", `{}`, json); resp.status != 200 {
				t.Errorf("POST /demo/session for %s: %d %s", host, resp.status, resp.body)
			}
			if resp := h.pageAt(host, "GET", "/demo", "", nil); resp.status != 200 {
				t.Errorf("GET /demo for %s: %d", host, resp.status)
			}
		}
		// The flow itself is for every host: developers' pages embed it.
		if resp := h.pageAt("evil.example", "GET", "/link", "", nil); resp.status != 200 {
			t.Errorf("GET /link: %d", resp.status)
		}
	})
}

// The demo's session helper writes a session per call: it shares the
// flow's per-IP limit.
func TestDemoSessionRateLimited(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		json := http.Header{"Content-Type": {"application/json"}}
		var last *response
		for i := 0; i < 100; i++ {
			if last = h.page("POST", "/demo/session", `{}`, json); last.status != 200 {
				break
			}
		}
		if last.status != 429 || last.errorBody(t).Code != "RATE_LIMIT_EXCEEDED" || last.header.Get("Retry-After") == "" {
			t.Fatalf("100 demo sessions at once: %d %s", last.status, last.body)
		}
		if resp := h.flowCall("/link/api/session", "sess_x", nil); resp.status != 429 {
			t.Fatalf("the flow's calls after the demo's: %d, want the same bucket", resp.status)
		}
		h.clock.Advance(time.Second)
		if resp := h.page("POST", "/demo/session", `{}`, json); resp.status != 200 {
			t.Fatalf("after a second: %d %s", resp.status, resp.body)
		}
	})
}

// POST /events accepts the SDK's analytics from any origin, counts them,
// stores nothing and limits each client IP.
func TestSDKEvents(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		canary := "sess_" + strings.Repeat("Z", 43)
		resp := h.do("POST", "/events", map[string]any{"type": "track", "session_id": canary, "event": "merchant clicked", "extra": true}, noAuth)
		if resp.status != 202 || resp.header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("POST /events: %d %s %v", resp.status, resp.body, resp.header)
		}
		if resp := h.do("POST", "/events", map[string]any{"type": "identify", "event": map[string]string{"name": "OPEN"}}, noAuth); resp.status != 202 {
			t.Fatalf("identify: %d %s", resp.status, resp.body)
		}
		// knotapi-js 1.1.1's track post.
		if resp := h.do("POST", "/events", map[string]any{"type": "track", "session_id": canary, "event": map[string]any{
			"event": "SDK Opened", "properties": map[string]any{"entry_point": nil, "search_enabled": false, "merchant_id": nil},
			"context": map[string]any{"traits": map[string]string{"platform": "web", "sdk_version": "1.1.1"}}}}, noAuth); resp.status != 202 {
			t.Fatalf("knotapi-js track: %d %s", resp.status, resp.body)
		}
		if resp := h.do("POST", "/events", map[string]any{"type": "page"}, noAuth); resp.status != 400 {
			t.Fatalf("unknown type: %d %s", resp.status, resp.body)
		}
		pre := h.do("OPTIONS", "/events", nil, http.Header{"Authorization": {""}, "Origin": {"https://app.example"},
			"Access-Control-Request-Method": {"POST"}})
		if pre.status != 204 || pre.header.Get("Access-Control-Allow-Methods") != "POST" || pre.header.Get("Access-Control-Allow-Headers") != "Content-Type" {
			t.Fatalf("preflight: %d %v", pre.status, pre.header)
		}
		metrics := string(h.do("GET", "/metrics", nil, noAuth).body)
		for _, want := range []string{`hitch_sdk_events_total{event="MERCHANT_CLICKED",type="track"} 1`, `hitch_sdk_events_total{event="OPEN",type="identify"} 1`,
			`hitch_sdk_events_total{event="SDK_OPENED",type="track"} 1`} {
			if !strings.Contains(metrics, want) {
				t.Errorf("metrics lack %s", want)
			}
		}
		// The harness clock stands still: the burst is all an IP gets.
		limited := 0
		for range 150 {
			if resp := h.do("POST", "/events", map[string]any{"type": "track", "event": "x y z"}, noAuth); resp.status == 429 {
				limited++
				if resp.header.Get("Retry-After") == "" {
					t.Fatal("429 without Retry-After")
				}
			}
		}
		if limited == 0 {
			t.Fatal("POST /events is not rate limited")
		}
		if !strings.Contains(string(h.do("GET", "/metrics", nil, noAuth).body), `hitch_sdk_events_total{event="OTHER",type="track"}`) {
			t.Error("unknown event names are not counted as OTHER")
		}
		if strings.Contains(h.logs.String(), canary) {
			t.Fatal("the logs contain the session value posted to /events")
		}
	})
}

// No session value, password, code or challenge reaches the logs, even when
// the calls fail.
func TestLinkFlowLogsNoSecrets(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		s := h.flowSession(&client.CreateSessionRequest{Type: "transaction_link", ExternalUserID: "quiet-user"})
		h.flowCall("/link/api/session", s.Session, nil)
		st := h.login(s.Session, 1, "user_good", "pass_otp")
		// A wrong code, distinct enough not to turn up by chance in a
		// duration, timestamp or id (a plain "5829" once did).
		h.answer(s.Session, st.Challenge, "58291736-canary-code")
		h.login(s.Session, 1, "user_good", "credentials")
		h.flowCall("/link/api/login", s.Session, map[string]any{"merchant_id": 1, "username": "canary-username", "password": "canary-password", "bogus": 1})
		h.flowCall("/link/api/answer", s.Session, map[string]any{"challenge": "canary-challenge", "answer": "canary-answer"})
		h.clock.Advance(31 * time.Minute)
		h.flowCall("/link/api/login", s.Session, map[string]any{"merchant_id": 1, "username": "user_good", "password": "canary-password"})
		logs := h.logs.String()
		if !strings.Contains(logs, `"path":"/link/api/login"`) {
			t.Fatalf("no access log lines: %s", logs)
		}
		for _, canary := range []string{s.Session, "pass_otp", "canary-username", "canary-password", "canary-challenge",
			"canary-answer", st.Challenge, "58291736-canary-code", "quiet-user"} {
			if strings.Contains(logs, canary) {
				t.Errorf("logs contain %q", canary)
			}
		}
	})
}

// The demo's server posts a test card for a card switcher login's task,
// as a developer's server posts the user's card: one of the page's test
// cards, for a task of the demo's developer, from the page itself only.
func TestDemoCard(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		sameSite := http.Header{"Content-Type": {"application/json"}, "Sec-Fetch-Site": {"same-origin"}}
		task := func(user string) int64 {
			t.Helper()
			resp := h.page("POST", "/demo/session", `{"type": "card_switcher", "external_user_id": "`+user+`"}`, sameSite)
			var created struct{ Session string }
			if resp.status != 200 || json.Unmarshal(resp.body, &created) != nil {
				t.Fatalf("POST /demo/session: %d %s", resp.status, resp.body)
			}
			st := h.login(created.Session, 4, "user_good", "pass_good")
			if st.Status != "success" || st.TaskID == nil {
				t.Fatalf("card switcher login: %+v", st)
			}
			return *st.TaskID
		}
		post := func(body string, header http.Header) *response {
			t.Helper()
			return h.page("POST", "/demo/card", body, header)
		}

		// A card that succeeds, and one that is declined.
		for number, outcome := range map[string]string{"4242424242424242": "CARD_UPDATED", "4000000000000028": "CARD_FAILED"} {
			id := task("demo-card-" + number)
			body := fmt.Sprintf(`{"task_id": %d, "number": %q}`, id, number)
			if resp := post(body, sameSite); resp.status != 200 || string(resp.body) != fmt.Sprintf(`{"message":"Success","task_id":%d}`+"\n", id) {
				t.Fatalf("POST /demo/card %s: %d %s", number, resp.status, resp.body)
			}
			ev := h.waitEvent(t, h.clientID, outcome, id)
			if outcome == "CARD_FAILED" && ev.Data["reason"] != "card" {
				t.Errorf("the declined test card failed with %v", ev.Data)
			}
			// The task has its card: a second one is refused.
			if resp := post(body, sameSite); resp.status != 409 || resp.errorBody(t).Code != "TASK_NOT_AWAITING_CARD" {
				t.Errorf("a second card for task %d: %d %s", id, resp.status, resp.body)
			}
		}

		id := task("demo-card-refusals")
		// Another developer's task waiting for its card. The demo acts for
		// the oldest development developer: this one is younger.
		h.clock.Advance(time.Second)
		other := h.newDeveloper(h.env)
		if err := h.clientFor(other).DevLinkAccount(context.Background(), &client.DevLinkRequest{ExternalUserID: "theirs",
			MerchantID: 4, CardSwitcher: true, CardID: ptr("card-1")}); err != nil {
			t.Fatal(err)
		}
		var theirs envelope
		if evs := h.events(other.ClientID); len(evs) != 1 || json.Unmarshal(evs[0].Payload, &theirs) != nil || theirs.TaskID == nil {
			t.Fatalf("the other developer's events: %+v", evs)
		}
		for _, c := range []struct {
			body   string
			header http.Header
			status int
		}{
			{fmt.Sprintf(`{"task_id": %d, "number": "4242424242424242"}`, id), http.Header{"Content-Type": {"application/json"}, "Sec-Fetch-Site": {"cross-site"}}, 403},
			{fmt.Sprintf(`task_id=%d&number=4242424242424242`, id), http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "Sec-Fetch-Site": {"same-origin"}}, 415},
			// Only the page's test cards: the demo is no way to post any card.
			{fmt.Sprintf(`{"task_id": %d, "number": "5555555555554444"}`, id), sameSite, 400},
			{fmt.Sprintf(`{"task_id": %d, "number": "4242424242424242", "cvv": "123"}`, id), sameSite, 400},
			{`{"task_id": 1, "number": "4242424242424242"}`, sameSite, 404},
			{fmt.Sprintf(`{"task_id": %d, "number": "4242424242424242"}`, *theirs.TaskID), sameSite, 404},
		} {
			if resp := post(c.body, c.header); resp.status != c.status {
				t.Errorf("POST /demo/card %s (%v): %d %s, want %d", c.body, c.header, resp.status, resp.body, c.status)
			}
		}
	}, withWorkers)
}

// Each step of a login in the hosted flow is the product's lifecycle at
// the merchant, for a user who has an account there: started, asked for a
// code or a question, failed, authenticated. Other products keep theirs.
func TestLinkFlowLifecycle(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		s := h.flowSession(&client.CreateSessionRequest{Type: "transaction_link", ExternalUserID: "steps"})
		if st := h.login(s.Session, 4, "user_good", "pass_good"); st.Status != "success" {
			t.Fatalf("first login: %+v", st)
		}
		lifecycle := func(product string) (status, action string) {
			t.Helper()
			a, err := h.api.GetAccount(ctx, "steps", 4, product)
			if err != nil {
				t.Fatal(err)
			}
			if a.Lifecycle.Status != nil {
				status = *a.Lifecycle.Status
			}
			if a.LastUserAction.Status != nil {
				action = *a.LastUserAction.Status
			}
			return status, action
		}
		want := func(step, product, status, action string) {
			t.Helper()
			if gs, ga := lifecycle(product); gs != status || ga != action {
				t.Fatalf("after %s: %s lifecycle %q, last action %q; want %q, %q", step, product, gs, ga, status, action)
			}
		}
		want("the first login", "transaction_link", "authenticated", "success")

		s = h.flowSession(&client.CreateSessionRequest{Type: "transaction_link", ExternalUserID: "steps"})
		otp := h.login(s.Session, 4, "user_good", "pass_otp")
		if otp.Status != "otp_required" {
			t.Fatalf("pass_otp: %+v", otp)
		}
		want("a code was asked", "transaction_link", "otp_required", "pending")
		wrong := h.answer(s.Session, otp.Challenge, "0000")
		want("a wrong code", "transaction_link", "otp_required", "pending")
		if st := h.answer(s.Session, wrong.Challenge, "1234"); st.Status != "success" {
			t.Fatalf("1234: %+v", st)
		}
		want("the right code", "transaction_link", "authenticated", "success")

		if st := h.login(s.Session, 4, "user_good", "pass_questions"); st.Status != "questions_required" {
			t.Fatalf("pass_questions: %+v", st)
		}
		want("a question was asked", "transaction_link", "questions_required", "pending")
		if st := h.login(s.Session, 4, "user_good", "wrong-password"); st.Status != "failed" || st.Reason != "credentials" {
			t.Fatalf("wrong password: %+v", st)
		}
		want("wrong credentials", "transaction_link", "login_failed", "failure")
		// Three wrong codes end the login.
		otp = h.login(s.Session, 4, "user_good", "pass_otp")
		for range 3 {
			otp = h.answer(s.Session, otp.Challenge, "0000")
		}
		if otp.Status != "failed" {
			t.Fatalf("three wrong codes: %+v", otp)
		}
		want("three wrong codes", "transaction_link", "login_failed", "failure")
		want("logins for another product", "card_switcher", "", "")
	})
}
