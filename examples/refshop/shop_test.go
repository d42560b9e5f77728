package refshop

import (
	"bytes"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	testAdminToken = "test-admin-token"
	demoPassword   = "correct-horse-battery"
)

var testStart = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

// clock is a settable Config.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// newTestShop serves a shop with the admin token and a clock the test
// moves.
func newTestShop(t *testing.T) (*httptest.Server, *clock) {
	t.Helper()
	clk := &clock{t: testStart}
	ts := httptest.NewServer(New(Config{AdminToken: testAdminToken, Now: clk.Now}))
	t.Cleanup(ts.Close)
	return ts, clk
}

// client is a plain HTTP client with cookies that does not follow
// redirects, so that tests see them.
type client struct {
	t    *testing.T
	base string
	hc   *http.Client
}

func newClient(t *testing.T, ts *httptest.Server) *client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	return &client{t: t, base: ts.URL, hc: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// response is what a test reads of an answer.
type response struct {
	status   int
	body     string
	location string
}

func (c *client) do(req *http.Request) response {
	c.t.Helper()
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{resp.StatusCode, string(b), resp.Header.Get("Location")}
}

func (c *client) get(path string) response {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.base+path, nil)
	return c.do(req)
}

func (c *client) post(path string, form url.Values) response {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.do(req)
}

var (
	csrfRe      = regexp.MustCompile(`name="csrf_token" value="([^"]*)"`)
	challengeRe = regexp.MustCompile(`data-challenge="([^"]*)"`)
)

func submatch(t *testing.T, re *regexp.Regexp, body string) string {
	t.Helper()
	m := re.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no %s in page:\n%s", re, body)
	}
	return html.UnescapeString(m[1])
}

// signinForm is the sign-in post a browser would make from page, the
// js_proof computed as the page's script does.
func signinForm(t *testing.T, page, email, password string) url.Values {
	t.Helper()
	return url.Values{
		"csrf_token": {submatch(t, csrfRe, page)},
		"js_proof":   {jsProof(submatch(t, challengeRe, page))},
		"email":      {email},
		"password":   {password},
	}
}

// signIn signs a user without a second factor in and returns its client.
func signIn(t *testing.T, ts *httptest.Server, email, password string) *client {
	t.Helper()
	c := newClient(t, ts)
	r := c.post("/signin", signinForm(t, c.get("/signin").body, email, password))
	if r.status != http.StatusSeeOther || r.location != "/account" {
		t.Fatalf("sign in as %s: %d to %q, want 303 to /account:\n%s", email, r.status, r.location, r.body)
	}
	return c
}

// admin calls the admin API with token and decodes the answer into out
// (when not nil); it returns the status and the raw body.
func admin(t *testing.T, ts *httptest.Server, token, method, path string, in, out any) (int, string) {
	t.Helper()
	var body io.Reader
	if in != nil {
		b, _ := json.Marshal(in)
		body = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, ts.URL+path, body)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: decoding %s: %v", method, path, b, err)
		}
	}
	return resp.StatusCode, string(b)
}

func getUser(t *testing.T, ts *httptest.Server, email string) User {
	t.Helper()
	var u User
	if status, body := admin(t, ts, testAdminToken, "GET", "/admin/api/users/"+email, nil, &u); status != http.StatusOK {
		t.Fatalf("get user %s: %d %s", email, status, body)
	}
	return u
}

func wantContains(t *testing.T, r response, want string) {
	t.Helper()
	if !strings.Contains(r.body, want) {
		t.Fatalf("page (%d) lacks %q:\n%s", r.status, want, r.body)
	}
}

const enableJS = "Please enable JavaScript and try again."

func TestSigninRefusesPostsWithoutCSRF(t *testing.T) {
	t.Parallel()
	ts, _ := newTestShop(t)
	tests := []struct {
		name    string
		getPage bool // whether the client loaded the form (and got its pre-session cookie)
		csrf    func(page string) string
	}{
		{"no pre-session cookie", false, func(string) string { return "whatever" }},
		{"no token", true, func(string) string { return "" }},
		{"wrong token", true, func(string) string { return "forged-token" }},
		{"another browser's token", true, func(string) string {
			return submatch(t, csrfRe, newClient(t, ts).get("/signin").body)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, ts)
			form := url.Values{"email": {"ada@refshop.example"}, "password": {demoPassword}}
			if tt.getPage {
				page := c.get("/signin").body
				form = signinForm(t, page, "ada@refshop.example", demoPassword)
				form.Set("csrf_token", tt.csrf(page))
			} else {
				form.Set("csrf_token", tt.csrf(""))
			}
			r := c.post("/signin", form)
			if r.status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400", r.status)
			}
			wantContains(t, r, enableJS)
		})
	}
}

// TestSigninRefusesPlainClients shows that a client posting the form
// without running the page's script is refused, and that the same post with
// the script's proof signs in.
func TestSigninRefusesPlainClients(t *testing.T) {
	t.Parallel()
	ts, _ := newTestShop(t)
	for _, proof := range []string{"", "deadbeef", "not a proof"} {
		c := newClient(t, ts)
		page := c.get("/signin")
		wantContains(t, page, `id="js_proof" value=""`)
		form := signinForm(t, page.body, "ada@refshop.example", demoPassword)
		form.Set("js_proof", proof)
		r := c.post("/signin", form)
		if r.status != http.StatusBadRequest {
			t.Fatalf("js_proof %q: status %d, want 400", proof, r.status)
		}
		wantContains(t, r, enableJS)
	}

	c := newClient(t, ts)
	form := signinForm(t, c.get("/signin").body, "ada@refshop.example", demoPassword)
	if r := c.post("/signin", form); r.status != http.StatusSeeOther || r.location != "/account" {
		t.Fatalf("with the proof: %d to %q, want 303 to /account", r.status, r.location)
	}
	wantContains(t, c.get("/account"), `<span id="account-name">Ada Lovelace</span>`)

	// A proof is good for one post: a replay is refused.
	c2 := newClient(t, ts)
	form = signinForm(t, c2.get("/signin").body, "ada@refshop.example", "wrong")
	c2.post("/signin", form)
	form.Set("password", demoPassword)
	if r := c2.post("/signin", form); r.status != http.StatusBadRequest {
		t.Fatalf("replayed proof: status %d, want 400", r.status)
	}
}

func TestSigninErrors(t *testing.T) {
	t.Parallel()
	ts, _ := newTestShop(t)
	tests := []struct {
		email, password, want string
	}{
		{"ada@refshop.example", "wrong-password", `<p class="error" id="signin-error">Your email or password is incorrect.</p>`},
		{"nobody@refshop.example", demoPassword, `<p class="error" id="signin-error">Your email or password is incorrect.</p>`},
		{"locked@refshop.example", demoPassword, `<p class="error" id="signin-error">Your account is locked. Contact support.</p>`},
	}
	for _, tt := range tests {
		c := newClient(t, ts)
		r := c.post("/signin", signinForm(t, c.get("/signin").body, tt.email, tt.password))
		if r.status != http.StatusOK {
			t.Fatalf("%s: status %d, want the form again", tt.email, r.status)
		}
		wantContains(t, r, tt.want)
		// The form comes back ready for another try.
		if r := c.post("/signin", signinForm(t, r.body, "ada@refshop.example", demoPassword)); r.status != http.StatusSeeOther {
			t.Fatalf("%s: the retry got %d, want 303", tt.email, r.status)
		}
	}
}

var codeRe = regexp.MustCompile(`code is (\d{6})\.`)

// startOTP signs otp@ in up to the code form and returns the code mailed.
func startOTP(t *testing.T, ts *httptest.Server) (*client, string) {
	t.Helper()
	c := newClient(t, ts)
	r := c.post("/signin", signinForm(t, c.get("/signin").body, "otp@refshop.example", demoPassword))
	if r.location != "/signin/verify" {
		t.Fatalf("otp@ sign-in went to %q (%d), want /signin/verify", r.location, r.status)
	}
	wantContains(t, c.get("/signin/verify"), `<span id="verify-destination">o***@refshop.example</span>`)
	box := newClient(t, ts).get("/mailbox?to=otp@refshop.example")
	return c, submatch(t, codeRe, box.body) // the newest message comes first
}

func TestEmailTwoFactor(t *testing.T) {
	t.Parallel()
	ts, clk := newTestShop(t)

	t.Run("right code after a wrong one", func(t *testing.T) {
		c, code := startOTP(t, ts)
		wrong := "000000"
		if code == wrong {
			wrong = "111111"
		}
		r := c.post("/signin/verify", url.Values{"csrf_token": {submatch(t, csrfRe, c.get("/signin/verify").body)}, "code": {wrong}})
		wantContains(t, r, `<p class="error" id="verify-error">That code is not right.</p>`)
		r = c.post("/signin/verify", url.Values{"csrf_token": {submatch(t, csrfRe, r.body)}, "code": {" " + code + " "}})
		if r.status != http.StatusSeeOther || r.location != "/account" {
			t.Fatalf("right code: %d to %q", r.status, r.location)
		}
		wantContains(t, c.get("/account"), `id="account-email">otp@refshop.example<`)
	})

	t.Run("three wrong codes start over", func(t *testing.T) {
		c, code := startOTP(t, ts)
		wrong := "000000"
		if code == wrong {
			wrong = "111111"
		}
		csrf := submatch(t, csrfRe, c.get("/signin/verify").body)
		var r response
		for range 3 {
			r = c.post("/signin/verify", url.Values{"csrf_token": {csrf}, "code": {wrong}})
		}
		if r.location != "/signin" {
			t.Fatalf("third wrong code: %d to %q, want /signin", r.status, r.location)
		}
		wantContains(t, c.get("/signin"), "Too many attempts")
		// The code is spent.
		r = c.post("/signin/verify", url.Values{"csrf_token": {csrf}, "code": {code}})
		if r.location != "/signin" {
			t.Fatalf("code after starting over: %d to %q, want /signin", r.status, r.location)
		}
	})

	t.Run("code expires after ten minutes", func(t *testing.T) {
		c, code := startOTP(t, ts)
		csrf := submatch(t, csrfRe, c.get("/signin/verify").body)
		clk.Advance(10*time.Minute + time.Second)
		r := c.post("/signin/verify", url.Values{"csrf_token": {csrf}, "code": {code}})
		if r.location != "/signin" {
			t.Fatalf("expired code: %d to %q, want /signin", r.status, r.location)
		}
		wantContains(t, c.get("/signin"), "That code has expired.")
	})
}

func TestSecurityQuestion(t *testing.T) {
	t.Parallel()
	ts, _ := newTestShop(t)
	c := newClient(t, ts)
	r := c.post("/signin", signinForm(t, c.get("/signin").body, "quiz@refshop.example", demoPassword))
	if r.location != "/signin/question" {
		t.Fatalf("quiz@ sign-in went to %q, want /signin/question", r.location)
	}
	page := c.get("/signin/question")
	wantContains(t, page, `<p id="question-text">What was the name of your first pet?</p>`)
	r = c.post("/signin/question", url.Values{"csrf_token": {submatch(t, csrfRe, page.body)}, "answer": {"Fido"}})
	wantContains(t, r, `<p class="error" id="question-error">That answer is not right.</p>`)
	r = c.post("/signin/question", url.Values{"csrf_token": {submatch(t, csrfRe, r.body)}, "answer": {"  rEX "}})
	if r.status != http.StatusSeeOther || r.location != "/account" {
		t.Fatalf("right answer: %d to %q", r.status, r.location)
	}
}

func TestAccountPagesNeedASession(t *testing.T) {
	t.Parallel()
	ts, _ := newTestShop(t)
	c := newClient(t, ts)
	for _, path := range []string{"/account", "/orders?page=2", "/orders/RS-100-1000", "/subscriptions", "/wallet"} {
		r := c.get(path)
		if want := "/signin?next=" + url.QueryEscape(path); r.status != http.StatusSeeOther || r.location != want {
			t.Errorf("GET %s: %d to %q, want 303 to %q", path, r.status, r.location, want)
		}
	}
	// Signing in from there comes back to the page asked for.
	page := c.get("/signin?next=" + url.QueryEscape("/orders?page=2"))
	form := signinForm(t, page.body, "ada@refshop.example", demoPassword)
	form.Set("next", "/orders?page=2")
	if r := c.post("/signin", form); r.location != "/orders?page=2" {
		t.Fatalf("after sign-in: to %q, want /orders?page=2", r.location)
	}
}

func TestSessionExpiresWhenIdle(t *testing.T) {
	t.Parallel()
	ts, clk := newTestShop(t)
	c := signIn(t, ts, "ada@refshop.example", demoPassword)
	for range 3 { // each visit within the TTL keeps the session alive
		clk.Advance(23 * time.Hour)
		if r := c.get("/account"); r.status != http.StatusOK {
			t.Fatalf("visit within the TTL: %d", r.status)
		}
	}
	clk.Advance(24*time.Hour + time.Second)
	if r := c.get("/orders"); r.status != http.StatusSeeOther || r.location != "/signin?next=%2Forders" {
		t.Fatalf("after the TTL idle: %d to %q, want 303 to /signin?next=%%2Forders", r.status, r.location)
	}
}

func TestPasswordChangeRevokesSessions(t *testing.T) {
	t.Parallel()
	ts, _ := newTestShop(t)
	laptop := signIn(t, ts, "ada@refshop.example", demoPassword)
	phone := signIn(t, ts, "ada@refshop.example", demoPassword)
	other := signIn(t, ts, "empty@refshop.example", demoPassword)

	var out struct {
		RevokedSessions int `json:"revoked_sessions"`
	}
	status, body := admin(t, ts, testAdminToken, "POST", "/admin/api/users/ada@refshop.example/password",
		map[string]string{"password": "a-new-password"}, &out)
	if status != http.StatusOK || out.RevokedSessions != 2 {
		t.Fatalf("password change: %d %s, want 200 revoking 2 sessions", status, body)
	}
	for _, c := range []*client{laptop, phone} {
		if r := c.get("/wallet"); r.location != "/signin?next=%2Fwallet" {
			t.Fatalf("revoked session: %d to %q, want /signin?next=%%2Fwallet", r.status, r.location)
		}
	}
	if r := other.get("/wallet"); r.status != http.StatusOK {
		t.Fatalf("another user's session: %d, want 200", r.status)
	}
	c := newClient(t, ts)
	r := c.post("/signin", signinForm(t, c.get("/signin").body, "ada@refshop.example", demoPassword))
	wantContains(t, r, "Your email or password is incorrect.")
	signIn(t, ts, "ada@refshop.example", "a-new-password")
}

func TestAdminAPIAuth(t *testing.T) {
	t.Parallel()
	ts, _ := newTestShop(t)
	endpoints := []struct{ method, path string }{
		{"GET", "/admin/api/users/ada@refshop.example"},
		{"POST", "/admin/api/users"},
		{"POST", "/admin/api/users/ada@refshop.example/orders"},
		{"POST", "/admin/api/users/ada@refshop.example/password"},
		{"POST", "/admin/api/orders/RS-100-1000/status"},
		{"POST", "/admin/api/faults"},
	}
	for _, ep := range endpoints {
		for _, auth := range []string{"", "Bearer", "Bearer wrong-token", "Bearer " + testAdminToken + "x", "Basic " + testAdminToken, testAdminToken} {
			req, _ := http.NewRequest(ep.method, ts.URL+ep.path, strings.NewReader(`{}`))
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var e struct{ Error string }
			json.NewDecoder(resp.Body).Decode(&e)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || e.Error == "" {
				t.Errorf("%s %s with %q: %d %q, want 401 with an error", ep.method, ep.path, auth, resp.StatusCode, e.Error)
			}
		}
	}
	if status, body := admin(t, ts, testAdminToken, "GET", "/admin/api/users/ada@refshop.example", nil, nil); status != http.StatusOK {
		t.Fatalf("with the token: %d %s", status, body)
	}

	// Without a configured token the admin is off.
	off := httptest.NewServer(New(Config{}))
	defer off.Close()
	if status, _ := admin(t, off, "", "GET", "/admin/api/users/ada@refshop.example", nil, nil); status != http.StatusForbidden {
		t.Fatalf("admin off: %d, want 403", status)
	}

	// The admin page takes the token once in the address and keeps a cookie.
	c := newClient(t, ts)
	if r := c.get("/admin"); r.status != http.StatusUnauthorized {
		t.Fatalf("admin page without token: %d", r.status)
	}
	if r := c.get("/admin?token=wrong"); r.status != http.StatusUnauthorized {
		t.Fatalf("admin page with a wrong token: %d", r.status)
	}
	if r := c.get("/admin?token=" + testAdminToken); r.status != http.StatusSeeOther || r.location != "/admin" {
		t.Fatalf("admin page with the token: %d to %q", r.status, r.location)
	}
	page := c.get("/admin")
	wantContains(t, page, `data-email="ada@refshop.example"`)
	r := c.post("/admin/orders", url.Values{"csrf_token": {submatch(t, csrfRe, page.body)}, "email": {"empty@refshop.example"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("admin page order: %d %s", r.status, r.body)
	}
	if n := len(getUser(t, ts, "empty@refshop.example").Orders); n != 1 {
		t.Fatalf("empty@ has %d orders after the admin page made one", n)
	}
}

func TestAdminAPIErrors(t *testing.T) {
	t.Parallel()
	ts, _ := newTestShop(t)
	tests := []struct {
		name, method, path string
		body               any
		want               int
	}{
		{"existing user", "POST", "/admin/api/users", map[string]any{"email": "Ada@refshop.example", "password": "x"}, 409},
		{"bad e-mail", "POST", "/admin/api/users", map[string]any{"email": "nope", "password": "x"}, 400},
		{"no password", "POST", "/admin/api/users", map[string]any{"email": "a@b.example"}, 400},
		{"bad second factor", "POST", "/admin/api/users", map[string]any{"email": "a@b.example", "password": "x", "two_factor": "sms"}, 400},
		{"question without answer", "POST", "/admin/api/users", map[string]any{"email": "a@b.example", "password": "x", "two_factor": "question", "question": "Q?"}, 400},
		{"unknown field", "POST", "/admin/api/users", map[string]any{"email": "a@b.example", "password": "x", "pets": 2}, 400},
		{"too many orders", "POST", "/admin/api/users", map[string]any{"email": "a@b.example", "password": "x", "orders": 10000}, 400},
		{"unknown user", "GET", "/admin/api/users/nobody@refshop.example", nil, 404},
		{"order for unknown user", "POST", "/admin/api/users/nobody@refshop.example/orders", map[string]any{}, 404},
		{"payments not adding up", "POST", "/admin/api/users/ada@refshop.example/orders", map[string]any{
			"items":    []map[string]any{{"sku": "RS-MUG-002", "quantity": 1}},
			"payments": []map[string]any{{"method": "card", "brand": "Visa", "last4": "4242", "amount_cents": 1}},
		}, 400},
		{"positive discount", "POST", "/admin/api/users/ada@refshop.example/orders", map[string]any{
			"items":       []map[string]any{{"sku": "RS-MUG-002"}},
			"adjustments": []map[string]any{{"kind": "discount", "amount_cents": 100}},
		}, 400},
		{"no default card", "POST", "/admin/api/users/empty@refshop.example/orders", map[string]any{
			"items": []map[string]any{{"sku": "RS-MUG-002"}},
		}, 400},
		{"bad status", "POST", "/admin/api/orders/RS-100-1000/status", map[string]any{"status": "Lost"}, 400},
		{"unknown order", "POST", "/admin/api/orders/RS-000-0000/status", map[string]any{"status": "Shipped"}, 404},
		{"no password to set", "POST", "/admin/api/users/ada@refshop.example/password", map[string]any{}, 400},
		{"fail rate above 1", "POST", "/admin/api/faults", map[string]any{"orders_fail_rate": 1.5}, 400},
		{"unknown endpoint", "GET", "/admin/api/nothing", nil, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := admin(t, ts, testAdminToken, tt.method, tt.path, tt.body, nil)
			var e struct{ Error string }
			if status != tt.want || json.Unmarshal([]byte(body), &e) != nil || e.Error == "" {
				t.Fatalf("%d %s, want %d with {\"error\": ...}", status, body, tt.want)
			}
		})
	}
}

func TestAdminCreatesUsersAndOrders(t *testing.T) {
	t.Parallel()
	ts, _ := newTestShop(t)
	created := testStart.AddDate(-3, 0, 0)
	var out struct{ Email string }
	status, body := admin(t, ts, testAdminToken, "POST", "/admin/api/users", map[string]any{
		"email": "New.User@Example.com", "password": "pw-123456", "name": "New User", "phone": "+1 212 555 0199",
		"two_factor": "question", "question": "Favourite colour?", "answer": "Teal",
		"orders": 30, "subscriptions": true, "created_at": created,
	}, &out)
	if status != http.StatusCreated || out.Email != "new.user@example.com" {
		t.Fatalf("create user: %d %s", status, body)
	}
	u := getUser(t, ts, "new.user@example.com")
	if len(u.Orders) != 30 || len(u.Subscriptions) != 2 || !u.CreatedAt.Equal(created) || u.Question != "Favourite colour?" {
		t.Fatalf("created user: %d orders, %d subscriptions, created %v, question %q", len(u.Orders), len(u.Subscriptions), u.CreatedAt, u.Question)
	}
	fam := u.Subscriptions[1]
	if !fam.FamilyPlan || fam.Cycle != "Annual" || fam.CancelsOn == nil {
		t.Fatalf("second plan: %+v, want an annual family plan that cancels", fam)
	}

	// An order given in full; the shop computes lines and totals.
	placed := testStart.Add(-48 * time.Hour)
	var num struct{ Number string }
	status, body = admin(t, ts, testAdminToken, "POST", "/admin/api/users/new.user@example.com/orders", map[string]any{
		"items": []map[string]any{
			{"sku": "RS-MUG-002", "quantity": 2},
			{"sku": "X-1", "name": "Custom thing", "unit_price_cents": 1000, "seller": "Someone Else"},
		},
		"adjustments": []map[string]any{
			{"kind": "discount", "label": "Coupon", "amount_cents": -400},
			{"kind": "tax", "amount_cents": 600},
			{"kind": "refund", "label": "Refund: Custom thing", "amount_cents": -1000},
		},
		"payments": []map[string]any{
			{"method": "gift_card", "last4": "1111", "amount_cents": 2000},
			{"method": "card", "brand": "Amex", "last4": "0005", "amount_cents": 4600},
		},
		"status": "Refunded", "placed_at": placed,
	}, &num)
	if status != http.StatusCreated {
		t.Fatalf("create order: %d %s", status, body)
	}
	u = getUser(t, ts, "new.user@example.com")
	i := slices.IndexFunc(u.Orders, func(o Order) bool { return o.Number == num.Number })
	if i < 0 {
		t.Fatalf("order %s missing", num.Number)
	}
	o := u.Orders[i]
	if o.SubtotalCents != 7400 || o.TotalCents != 6600 || o.Status != "Refunded" || !o.PlacedAt.Equal(placed) ||
		o.Items[0].Name != "Stoneware Mug, Set of 4" || o.Items[0].LineTotalCents != 6400 || o.Items[1].Seller != "Someone Else" {
		t.Fatalf("order as stored: %+v", o)
	}
	if err := checkOrder(o); err != nil {
		t.Fatal(err)
	}

	// {} makes a random order, the newest.
	status, body = admin(t, ts, testAdminToken, "POST", "/admin/api/users/ada@refshop.example/orders", map[string]any{}, &num)
	if status != http.StatusCreated {
		t.Fatalf("random order: %d %s", status, body)
	}
	ada := getUser(t, ts, "ada@refshop.example")
	if len(ada.Orders) != 26 || ada.Orders[0].Number != num.Number {
		t.Fatalf("ada has %d orders, newest %s; want 26, newest %s", len(ada.Orders), ada.Orders[0].Number, num.Number)
	}
	status, body = admin(t, ts, testAdminToken, "POST", "/admin/api/orders/"+num.Number+"/status", map[string]any{"status": "Payment failed"}, nil)
	if status != http.StatusOK {
		t.Fatalf("status change: %d %s", status, body)
	}
	if got := getUser(t, ts, "ada@refshop.example").Orders[0].Status; got != "Payment failed" {
		t.Fatalf("status after change: %q", got)
	}
}

// TestGeneratedOrdersAddUp checks every generated order of the demo users
// and of a user with many orders.
func TestGeneratedOrdersAddUp(t *testing.T) {
	t.Parallel()
	ts, _ := newTestShop(t)
	if status, body := admin(t, ts, testAdminToken, "POST", "/admin/api/users", map[string]any{
		"email": "many@refshop.example", "password": "x", "orders": 500, "created_at": testStart.AddDate(-5, 0, 0),
	}, nil); status != http.StatusCreated {
		t.Fatalf("create user: %d %s", status, body)
	}
	seen := map[string]bool{}
	for _, email := range []string{"ada@refshop.example", "otp@refshop.example", "quiz@refshop.example", "locked@refshop.example", "many@refshop.example"} {
		u := getUser(t, ts, email)
		for i, o := range u.Orders {
			if err := checkOrder(o); err != nil {
				t.Errorf("%s order %s: %v", email, o.Number, err)
			}
			if seen[o.Number] || !regexp.MustCompile(`^RS-\d{3}-\d{4}$`).MatchString(o.Number) {
				t.Errorf("%s order number %q is repeated or malformed", email, o.Number)
			}
			seen[o.Number] = true
			if !validStatus(o.Status) {
				t.Errorf("%s order %s: status %q", email, o.Number, o.Status)
			}
			if o.PlacedAt.Before(u.CreatedAt) || o.PlacedAt.After(testStart) || testStart.Sub(o.PlacedAt) > 731*24*time.Hour {
				t.Errorf("%s order %s placed %v: not within the account's last two years", email, o.Number, o.PlacedAt)
			}
			if i > 0 && o.PlacedAt.After(u.Orders[i-1].PlacedAt) {
				t.Errorf("%s orders are not newest first at %d", email, i)
			}
			hasRefund := slices.ContainsFunc(o.Adjustments, func(a Adjustment) bool { return a.Kind == AdjustRefund })
			if (o.Status == "Refunded") != hasRefund {
				t.Errorf("%s order %s: status %s with refund line %v", email, o.Number, o.Status, hasRefund)
			}
		}
	}
}

func TestDemoUsers(t *testing.T) {
	t.Parallel()
	ts, _ := newTestShop(t)
	ada := getUser(t, ts, "ada@refshop.example")
	if len(ada.Orders) != 25 {
		t.Fatalf("ada has %d orders, want 25", len(ada.Orders))
	}
	has := func(pred func(Order) bool) bool { return slices.ContainsFunc(ada.Orders, pred) }
	checks := map[string]func(Order) bool{
		"a partial refund": func(o Order) bool {
			return o.Status == "Refunded" && o.TotalCents > 0 &&
				slices.ContainsFunc(o.Adjustments, func(a Adjustment) bool { return a.Kind == AdjustRefund && a.AmountCents < 0 })
		},
		"a cancelled order": func(o Order) bool { return o.Status == "Cancelled" },
		"a gift card split": func(o Order) bool {
			return len(o.Payments) == 2 && o.Payments[0].Method == MethodGiftCard && o.Payments[1].Method == MethodCard
		},
		"a marketplace item": func(o Order) bool {
			return slices.ContainsFunc(o.Items, func(it Item) bool { return it.Seller != "" })
		},
	}
	for name, pred := range checks {
		if !has(pred) {
			t.Errorf("ada has no order with %s", name)
		}
	}
	if len(ada.Subscriptions) != 1 || ada.Subscriptions[0].Name != "Shop Plus" || ada.Subscriptions[0].Cycle != "Monthly" {
		t.Errorf("ada's subscriptions: %+v", ada.Subscriptions)
	}
	if len(ada.Cards) != 2 || ada.Cards[0].Brand != "Visa" || ada.Cards[0].Last4 != "4242" || !ada.Cards[0].Default ||
		ada.Cards[1].Brand != "Mastercard" || ada.Cards[1].Last4 != "4444" || ada.Cards[1].Default {
		t.Errorf("ada's cards: %+v", ada.Cards)
	}
	for email, want := range map[string]int{"otp@refshop.example": 12, "quiz@refshop.example": 5, "empty@refshop.example": 0} {
		u := getUser(t, ts, email)
		if len(u.Orders) != want {
			t.Errorf("%s has %d orders, want %d", email, len(u.Orders), want)
		}
	}
	empty := getUser(t, ts, "empty@refshop.example")
	if len(empty.Subscriptions)+len(empty.Cards) != 0 {
		t.Errorf("empty@ has %d subscriptions and %d cards", len(empty.Subscriptions), len(empty.Cards))
	}
}

func TestSeedIsDeterministic(t *testing.T) {
	t.Parallel()
	a, _ := newTestShop(t)
	b, _ := newTestShop(t)
	for _, email := range []string{"ada@refshop.example", "otp@refshop.example", "quiz@refshop.example", "empty@refshop.example"} {
		_, ja := admin(t, a, testAdminToken, "GET", "/admin/api/users/"+email, nil, nil)
		_, jb := admin(t, b, testAdminToken, "GET", "/admin/api/users/"+email, nil, nil)
		if ja != jb {
			t.Errorf("%s differs between two shops started at the same time:\n%s\n%s", email, ja, jb)
		}
	}
}

var orderRowRe = regexp.MustCompile(`<tr class="order" data-order-number="([^"]+)">`)

func TestOrderPages(t *testing.T) {
	t.Parallel()
	ts, _ := newTestShop(t)
	ada := getUser(t, ts, "ada@refshop.example")
	c := signIn(t, ts, "ada@refshop.example", demoPassword)

	var numbers []string
	for page, next := 1, true; next; page++ {
		r := c.get("/orders?page=" + strconv.Itoa(page))
		rows := orderRowRe.FindAllStringSubmatch(r.body, -1)
		next = strings.Contains(r.body, `rel="next"`)
		if want := min(10, 25-(page-1)*10); len(rows) != want || next != (page < 3) {
			t.Fatalf("page %d: %d rows, next link %v", page, len(rows), next)
		}
		for _, m := range rows {
			numbers = append(numbers, m[1])
		}
	}
	for i, o := range ada.Orders {
		if numbers[i] != o.Number {
			t.Fatalf("row %d is %s, want %s (newest first)", i, numbers[i], o.Number)
		}
	}

	i := slices.IndexFunc(ada.Orders, func(o Order) bool { return len(o.Payments) == 2 })
	o := ada.Orders[i]
	r := c.get("/orders/" + o.Number)
	for _, want := range []string{
		`<time id="order-date" datetime="` + o.PlacedAt.Format(time.RFC3339) + `">`,
		`data-status="` + o.Status + `"`,
		`<td id="order-subtotal">` + money(o.SubtotalCents) + `</td>`,
		`<td id="order-total">` + money(o.TotalCents) + `</td>`,
		`<span class="payment-brand">Gift card</span>`,
		`<span class="payment-amount">` + money(o.Payments[0].AmountCents) + `</span>`,
		`<span class="line1">` + o.ShippingAddress.Line1 + `</span>`,
		`<a class="item-name" href="` + o.Items[0].URL + `">`,
	} {
		wantContains(t, r, want)
	}
	if r := c.get("/orders/" + getUser(t, ts, "otp@refshop.example").Orders[0].Number); r.status != http.StatusNotFound {
		t.Fatalf("another user's order: %d, want 404", r.status)
	}
}

func TestWalletAddCard(t *testing.T) {
	t.Parallel()
	ts, _ := newTestShop(t)
	year := func(d int) string { return strconv.Itoa(testStart.Year() + d) }
	tests := []struct {
		name, number, month, year, cvv, want string
	}{
		{"declined", "4000 0000 0000 0002", "08", year(2), "123", "Your card was declined."},
		{"insufficient funds", "4000000000009995", "08", year(2), "123", "Your card has insufficient funds."},
		{"expired test card", "4000000000000069", "08", year(2), "123", "Your card has expired."},
		{"expired date", "4012888888881881", "01", year(-1), "123", "Your card has expired."},
		{"Luhn", "4242424242424241", "08", year(2), "123", "Your card number is incorrect."},
		{"short CVV", "4242424242424242", "08", year(2), "98", "Enter the security code on the back of your card."},
		{"letters", "4242abcd42424242", "08", year(2), "123", "Enter a valid card number."},
	}
	c := signIn(t, ts, "ada@refshop.example", demoPassword)
	csrf := submatch(t, csrfRe, c.get("/wallet").body)
	form := func(number, month, year, cvv string) url.Values {
		return url.Values{"csrf_token": {csrf}, "cardholder_name": {"Ada Lovelace"}, "card_number": {number},
			"exp_month": {month}, "exp_year": {year}, "cvv": {cvv}, "postal_code": {"80202"}, "make_default": {"1"}}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := c.post("/wallet/cards", form(tt.number, tt.month, tt.year, tt.cvv))
			wantContains(t, r, `<p class="error" id="card-error">`+html.EscapeString(tt.want)+`</p>`)
			digits := strings.ReplaceAll(tt.number, " ", "")
			if strings.Contains(r.body, digits) || strings.Contains(r.body, tt.number) || strings.Contains(r.body, `value="`+tt.cvv+`"`) {
				t.Fatal("the page echoes the card number or CVV")
			}
			wantContains(t, r, `value="Ada Lovelace"`) // what is safe to type back is kept
		})
	}
	if n := len(getUser(t, ts, "ada@refshop.example").Cards); n != 2 {
		t.Fatalf("refused cards were kept: %d cards", n)
	}

	if r := c.post("/wallet/cards", url.Values{"card_number": {"5555555555554444"}}); r.status != http.StatusBadRequest {
		t.Fatalf("without CSRF: %d, want 400", r.status)
	}

	r := c.post("/wallet/cards", form("5105 1051 0510 5100", "03", year(4), "321"))
	if r.status != http.StatusSeeOther || !strings.HasPrefix(r.location, "/wallet?added=") {
		t.Fatalf("good card: %d to %q:\n%s", r.status, r.location, r.body)
	}
	wantContains(t, c.get(r.location), "Your Mastercard ending in 5100 was added.")
	cards := getUser(t, ts, "ada@refshop.example").Cards
	if len(cards) != 3 || cards[2].Last4 != "5100" || !cards[2].Default || cards[0].Default || cards[2].ExpMonth != 3 {
		t.Fatalf("cards after adding a default: %+v", cards)
	}
	if r := c.post("/wallet/cards", form("5105105105105100", "03", year(4), "321")); !strings.Contains(r.body, "already in your wallet") {
		t.Fatalf("the same card again was not refused")
	}

	// Make default moves the badge back.
	if r := c.post("/wallet/cards/"+cards[0].ID+"/default", url.Values{"csrf_token": {csrf}}); r.status != http.StatusSeeOther {
		t.Fatalf("make default: %d", r.status)
	}
	page := c.get("/wallet")
	wantContains(t, page, `data-card-id="`+cards[0].ID+`" data-default="true"`)
	wantContains(t, page, `data-card-id="`+cards[2].ID+`" data-default="false"`)
	if strings.Count(page.body, `class="badge default-badge"`) != 1 {
		t.Fatal("not exactly one Default badge")
	}
}

func TestForgotPasswordSignal(t *testing.T) {
	t.Parallel()
	ts, _ := newTestShop(t)
	ada := getUser(t, ts, "ada@refshop.example")
	tests := []struct {
		identifier string
		exists     bool
	}{
		{"ada@refshop.example", true},
		{" ADA@refshop.example ", true},
		{"(415) 555-0100", true},
		{"+14155550100", true},
		{"nobody@refshop.example", false},
		{"+1 415 555 0199", false},
	}
	for _, tt := range tests {
		c := newClient(t, ts)
		page := c.get("/signin/forgot")
		r := c.post("/signin/forgot", url.Values{"csrf_token": {submatch(t, csrfRe, page.body)}, "identifier": {tt.identifier}})
		if tt.exists {
			wantContains(t, r, `data-account-exists="true" data-created-at="`+ada.CreatedAt.Format("2006-01-02")+`"`)
			wantContains(t, r, "We sent a reset link to")
		} else {
			wantContains(t, r, `data-account-exists="false"`)
			wantContains(t, r, "We could not find an account")
		}
	}
	if r := newClient(t, ts).post("/signin/forgot", url.Values{"identifier": {"ada@refshop.example"}}); r.status != http.StatusBadRequest {
		t.Fatalf("without CSRF: %d, want 400", r.status)
	}
	wantContains(t, newClient(t, ts).get("/mailbox?to=ada@refshop.example"), "Reset your Hitch Reference Shop password")
}

func TestFaults(t *testing.T) {
	t.Parallel()
	ts, _ := newTestShop(t)
	c := signIn(t, ts, "ada@refshop.example", demoPassword)
	setFaults := func(f Faults) {
		t.Helper()
		if status, body := admin(t, ts, testAdminToken, "POST", "/admin/api/faults", f, nil); status != http.StatusOK {
			t.Fatalf("set faults: %d %s", status, body)
		}
	}
	setFaults(Faults{OrdersFailRate: 1})
	for _, path := range []string{"/orders", "/orders/" + getUser(t, ts, "ada@refshop.example").Orders[0].Number} {
		r := c.get(path)
		if r.status != http.StatusServiceUnavailable {
			t.Fatalf("GET %s with fail rate 1: %d", path, r.status)
		}
		wantContains(t, r, "Something went wrong")
	}
	if r := c.get("/account"); r.status != http.StatusOK {
		t.Fatalf("account page with order faults: %d", r.status)
	}

	setFaults(Faults{LatencyMS: 150})
	start := time.Now()
	if r := c.get("/orders"); r.status != http.StatusOK {
		t.Fatalf("orders with latency only: %d", r.status)
	}
	if took := time.Since(start); took < 150*time.Millisecond {
		t.Fatalf("a page with 150 ms latency took %v", took)
	}
	setFaults(Faults{})
	if r := c.get("/orders"); r.status != http.StatusOK {
		t.Fatalf("orders with faults off: %d", r.status)
	}
}

func TestMoney(t *testing.T) {
	t.Parallel()
	for cents, want := range map[int64]string{0: "$0.00", 5: "$0.05", 1234: "$12.34", 100000: "$1,000.00", 123456789: "$1,234,567.89", -599: "-$5.99"} {
		if got := money(cents); got != want {
			t.Errorf("money(%d) = %q, want %q", cents, got, want)
		}
	}
}
