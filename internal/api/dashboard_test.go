package api_test

import (
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hitchdev/hitch/client"
	"github.com/hitchdev/hitch/internal/audit"
	"github.com/hitchdev/hitch/internal/developer"
	"github.com/hitchdev/hitch/internal/member"
	"github.com/hitchdev/hitch/internal/store"
)

// dash is a browser on the dashboard: a cookie jar, no redirects followed.
type dash struct {
	t testing.TB
	h *harness
	c *http.Client
}

const dashUA = "dashboard-test/1.0"

func (h *harness) dash() *dash {
	jar, _ := cookiejar.New(nil)
	return &dash{t: h.t, h: h, c: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// addMember adds a member of the harness developer as the operator would,
// ready to use the dashboard: as if they had chosen the password they
// were given as their own. Tests of a first sign-in use addNewMember.
func (h *harness) addMember(email, role string) string {
	h.t.Helper()
	return h.addMemberTo(h.clientID, email, role, true)
}

// addNewMember adds a member of a developer as the operator would: they
// must change their password before anything else.
func (h *harness) addNewMember(clientID, email, role string) string {
	h.t.Helper()
	return h.addMemberTo(clientID, email, role, false)
}

func (h *harness) addMemberTo(clientID, email, role string, ready bool) string {
	h.t.Helper()
	ctx := context.Background()
	m, password, err := h.members.Add(ctx, nil, member.AddParams{ClientID: clientID, Email: email, Role: role},
		audit.Origin{UserAgent: "test"})
	if err != nil {
		h.t.Fatal(err)
	}
	if ready {
		if err := h.store.MemberSetPassword(ctx, m.ClientID, m.ID, m.PasswordHash, false, h.clock.Now()); err != nil {
			h.t.Fatal(err)
		}
	}
	return password
}

// memberOf is the developer's member with the e-mail, as stored.
func (h *harness) memberOf(clientID, email string) *store.Member {
	h.t.Helper()
	ms, err := h.store.MemberListByEmail(context.Background(), &store.MemberListByEmailParams{Email: email, ClientID: clientID})
	if err != nil || len(ms) != 1 {
		h.t.Fatalf("member %s of %s: %d %v", email, clientID, len(ms), err)
	}
	return ms[0]
}

func (d *dash) send(method, path string, form url.Values, header http.Header) *response {
	d.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, d.h.url+path, body)
	if err != nil {
		d.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("User-Agent", dashUA)
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := d.c.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return &response{status: resp.StatusCode, header: resp.Header, body: b}
}

func (d *dash) get(path string) *response { d.t.Helper(); return d.send("GET", path, nil, nil) }

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf reads the form token of a page.
func (d *dash) csrf(page string) string {
	d.t.Helper()
	r := d.get(page)
	m := csrfRE.FindSubmatch(r.body)
	if r.status != http.StatusOK || m == nil {
		d.t.Fatalf("GET %s: %d, no csrf token: %.300s", page, r.status, r.body)
	}
	return string(m[1])
}

// post submits a form of page (whose token it reads first) to path.
func (d *dash) post(path string, form url.Values) *response {
	d.t.Helper()
	form = maps.Clone(form)
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["csrf"]; !ok {
		form.Set("csrf", d.csrf("/dashboard"))
	}
	return d.send("POST", path, form, nil)
}

func (d *dash) signIn(email, password string) *response {
	d.t.Helper()
	token := d.csrf("/dashboard/signin")
	return d.send("POST", "/dashboard/signin", url.Values{"csrf": {token}, "email": {email}, "password": {password}}, nil)
}

func (d *dash) mustSignIn(email, password string) {
	d.t.Helper()
	if r := d.signIn(email, password); r.status != http.StatusSeeOther || r.header.Get("Location") != "/dashboard" {
		d.t.Fatalf("sign in %s: %d %s %.300s", email, r.status, r.header.Get("Location"), r.body)
	}
}

var shownRE = regexp.MustCompile(`id="shown-value">([^<]+)<`)

// shown is the value a page shows once.
func shown(t *testing.T, r *response) string {
	t.Helper()
	m := shownRE.FindSubmatch(r.body)
	if m == nil {
		t.Fatalf("no value shown: %d %.500s", r.status, r.body)
	}
	return string(m[1])
}

// auditLog pages through a developer's whole audit log, newest first.
func auditLog(t *testing.T, c *client.Client) []client.AuditRecord {
	t.Helper()
	var all []client.AuditRecord
	req := &client.AuditLogsRequest{}
	for {
		page, err := c.AuditLogs(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page.Data...)
		if page.NextCursor == nil {
			return all
		}
		req.NextCursor = *page.NextCursor
	}
}

// actions lists the actions of records, oldest first, as "action:outcome".
func actions(recs []client.AuditRecord) []string {
	var out []string
	for i := len(recs) - 1; i >= 0; i-- {
		out = append(out, recs[i].Event.Action+":"+recs[i].Event.Outcome.Status)
	}
	return out
}

func TestDashboardSignIn(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		password := h.addMember("ada@example.com", store.RoleAdmin)
		d := h.dash()
		if r := d.get("/dashboard"); r.status != http.StatusSeeOther || r.header.Get("Location") != "/dashboard/signin" {
			t.Fatalf("signed out: %d %s", r.status, r.header.Get("Location"))
		}
		page := d.get("/dashboard/signin")
		if csp := page.header.Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self'") ||
			!strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "script-src 'none'") {
			t.Fatalf("CSP %q", csp)
		}
		token := string(csrfRE.FindSubmatch(page.body)[1])

		// The sign-in form needs its token, and a same-origin post.
		creds := url.Values{"email": {"ada@example.com"}, "password": {password}}
		if r := d.send("POST", "/dashboard/signin", creds, nil); r.status != http.StatusForbidden {
			t.Fatalf("without a token: %d", r.status)
		}
		creds.Set("csrf", token)
		if r := d.send("POST", "/dashboard/signin", creds, http.Header{"Origin": {"https://evil.example"}}); r.status != http.StatusForbidden {
			t.Fatalf("from another origin: %d", r.status)
		}
		if r := d.signIn("ada@example.com", "wrong password"); r.status != http.StatusUnauthorized ||
			!strings.Contains(string(r.body), "wrong") {
			t.Fatalf("wrong password: %d", r.status)
		}
		if r := d.signIn("nobody@example.com", password); r.status != http.StatusUnauthorized {
			t.Fatalf("unknown e-mail: %d", r.status)
		}
		r := d.signIn(" ADA@example.com ", password) // e-mails are trimmed and case-folded
		if r.status != http.StatusSeeOther {
			t.Fatalf("sign in: %d %.300s", r.status, r.body)
		}
		var cookie *http.Cookie
		for _, c := range (&http.Response{Header: r.header}).Cookies() {
			if c.Name == "hitch_dashboard" && c.Value != "" {
				cookie = c
			}
		}
		if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Secure || cookie.Path != "/" || cookie.MaxAge != 12*3600 {
			t.Fatalf("session cookie %+v", cookie)
		}
		if r := d.get("/dashboard"); r.status != http.StatusOK || !strings.Contains(string(r.body), h.clientID) {
			t.Fatalf("overview: %d", r.status)
		}

		// Every state-changing form needs the sign-in's token and the same
		// origin; refused ones leave no record.
		if r := d.send("POST", "/dashboard/credentials/reveal", url.Values{}, nil); r.status != http.StatusForbidden {
			t.Fatalf("reveal without a token: %d", r.status)
		}
		if r := d.send("POST", "/dashboard/credentials/reveal", url.Values{"csrf": {"forged"}}, nil); r.status != http.StatusForbidden {
			t.Fatalf("reveal with a wrong token: %d", r.status)
		}
		good := d.csrf("/dashboard/credentials")
		if r := d.send("POST", "/dashboard/credentials/reveal", url.Values{"csrf": {good}},
			http.Header{"Origin": {"https://evil.example"}, "Sec-Fetch-Site": {"cross-site"}}); r.status != http.StatusForbidden {
			t.Fatalf("reveal from another origin: %d", r.status)
		}
		// Another sign-in's token does not do either.
		other := h.dash()
		other.mustSignIn("ada@example.com", password)
		if r := d.send("POST", "/dashboard/credentials/reveal", url.Values{"csrf": {other.csrf("/dashboard")}}, nil); r.status != http.StatusForbidden {
			t.Fatalf("another sign-in's token: %d", r.status)
		}
		if r := d.send("POST", "/dashboard/credentials/reveal", url.Values{"csrf": {good}}, nil); r.status != http.StatusOK || shown(t, r) != h.secret {
			t.Fatalf("reveal: %d", r.status)
		}
		if r := d.post("/dashboard/signout", nil); r.status != http.StatusSeeOther {
			t.Fatalf("sign out: %d", r.status)
		}
		if r := d.get("/dashboard"); r.status != http.StatusSeeOther {
			t.Fatalf("after sign-out: %d", r.status)
		}
		got := actions(auditLog(t, h.api))
		want := []string{"member.add:success", "signin:failure", "signin:success", "signin:success", "secret.view:success", "signout:success"}
		if !slices.Equal(got, want) {
			t.Fatalf("audit log %v, want %v", got, want)
		}
		recs := auditLog(t, h.api)
		if recs[0].Actor.Email != "ada@example.com" || recs[0].Context.IP != "127.0.0.1" || recs[0].Context.UserAgent != dashUA ||
			recs[0].Target.Type != "session" || recs[0].Target.Environment != "development" {
			t.Fatalf("sign-out record %+v", recs[0])
		}
	})
}

func TestDashboardLockout(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		password := h.addMember("ada@example.com", store.RoleAdmin)
		d := h.dash()
		for range member.DefaultMaxFailures {
			if r := d.signIn("ada@example.com", "guess"); r.status != http.StatusUnauthorized {
				t.Fatalf("wrong password: %d", r.status)
			}
		}
		// Locked: the right password is refused too, with the same answer.
		locked := d.signIn("ada@example.com", password)
		if locked.status != http.StatusUnauthorized {
			t.Fatalf("locked: %d", locked.status)
		}
		h.clock.Advance(member.DefaultLockout - time.Minute)
		if r := d.signIn("ada@example.com", password); r.status != http.StatusUnauthorized {
			t.Fatalf("still locked: %d", r.status)
		}
		h.clock.Advance(time.Minute)
		d.mustSignIn("ada@example.com", password)
		// A success starts the count again.
		for range member.DefaultMaxFailures - 1 {
			d.signIn("ada@example.com", "guess")
		}
		d.mustSignIn("ada@example.com", password)
		failures := 0
		for _, a := range actions(auditLog(t, h.api)) {
			if a == "signin:failure" {
				failures++
			}
		}
		if failures != member.DefaultMaxFailures+2+member.DefaultMaxFailures-1 {
			t.Fatalf("%d sign-in failures recorded", failures)
		}
	})
}

// signInService signs in through the member service, again while it is
// busy (ErrBusy is load shedding, not an answer about the password).
func signInService(h *harness, email, password string) error {
	for {
		_, err := h.members.SignIn(context.Background(), email, password, audit.Origin{UserAgent: "race"})
		if !errors.Is(err, member.ErrBusy) {
			return err
		}
	}
}

// Concurrent wrong passwords count up to the lock and no further, and the
// right password is refused once locked.
func TestDashboardLockoutConcurrent(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		password := h.addMember("ada@example.com", store.RoleAdmin)
		var wg sync.WaitGroup
		for range 39 {
			wg.Go(func() {
				if err := signInService(h, "ada@example.com", "guess"); !errors.Is(err, member.ErrInvalidCredentials) {
					t.Errorf("wrong password: %v", err)
				}
			})
		}
		wg.Wait()
		if err := signInService(h, "ada@example.com", password); !errors.Is(err, member.ErrInvalidCredentials) {
			t.Fatalf("right password while locked: %v", err)
		}
		m := h.memberOf(h.clientID, "ada@example.com")
		if m.FailedAttempts != 0 || m.LockedUntil == nil || !m.LockedUntil.After(h.clock.Now()) {
			t.Fatalf("after 39 concurrent failures: %d failed attempts, locked until %v", m.FailedAttempts, m.LockedUntil)
		}
		// Past the lock, the count starts from zero: nothing counted
		// beyond the lock is left over.
		h.clock.Advance(member.DefaultLockout)
		for range member.DefaultMaxFailures - 1 {
			if err := signInService(h, "ada@example.com", "guess"); !errors.Is(err, member.ErrInvalidCredentials) {
				t.Fatalf("wrong password: %v", err)
			}
		}
		if err := signInService(h, "ada@example.com", password); err != nil {
			t.Fatalf("right password after the lock: %v", err)
		}
	})
}

// 39 wrong passwords and the right one at once: the right one succeeds
// only if it commits before the lock, that is after fewer than
// MaxFailures failures in the audit chain (which is commit order).
func TestDashboardLockoutRace(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		password := h.addMember("ada@example.com", store.RoleAdmin)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range 40 {
			wg.Go(func() {
				<-start
				if i == 20 {
					if err := signInService(h, "ada@example.com", password); err != nil && !errors.Is(err, member.ErrInvalidCredentials) {
						t.Errorf("right password: %v", err)
					}
					return
				}
				if err := signInService(h, "ada@example.com", "guess"); !errors.Is(err, member.ErrInvalidCredentials) {
					t.Errorf("wrong password: %v", err)
				}
			})
		}
		close(start)
		wg.Wait()
		failures, successes := 0, 0
		for _, a := range actions(auditLog(t, h.api)) {
			switch a {
			case "signin:failure":
				failures++
			case "signin:success":
				successes++
				if failures >= member.DefaultMaxFailures {
					t.Fatalf("signed in after %d failures, while locked", failures)
				}
			}
		}
		if failures+successes != 40 || successes > 1 {
			t.Fatalf("%d failures, %d successes recorded", failures, successes)
		}
		m := h.memberOf(h.clientID, "ada@example.com")
		if m.FailedAttempts != 0 || m.LockedUntil == nil {
			t.Fatalf("after the race: %d failed attempts, locked until %v", m.FailedAttempts, m.LockedUntil)
		}
	})
}

func TestDashboardSessionExpiry(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		password := h.addMember("ada@example.com", store.RoleAdmin)
		// Idle: 30 minutes without a request end a sign-in.
		d := h.dash()
		d.mustSignIn("ada@example.com", password)
		h.clock.Advance(member.DefaultIdleTimeout - time.Second)
		if r := d.get("/dashboard"); r.status != http.StatusOK {
			t.Fatalf("before the idle timeout: %d", r.status)
		}
		h.clock.Advance(member.DefaultIdleTimeout)
		if r := d.get("/dashboard/webhooks"); r.status != http.StatusSeeOther ||
			r.header.Get("Location") != "/dashboard/signin?next=%2Fdashboard%2Fwebhooks" {
			t.Fatalf("idle: %d %s", r.status, r.header.Get("Location"))
		}
		// Absolute: 12 hours, however busy.
		d.mustSignIn("ada@example.com", password)
		for elapsed := time.Duration(0); elapsed < member.DefaultSessionLifetime-20*time.Minute; elapsed += 20 * time.Minute {
			h.clock.Advance(20 * time.Minute)
			if r := d.get("/dashboard"); r.status != http.StatusOK {
				t.Fatalf("after %v of use: %d", elapsed, r.status)
			}
		}
		h.clock.Advance(20 * time.Minute)
		if r := d.get("/dashboard"); r.status != http.StatusSeeOther {
			t.Fatalf("past the lifetime: %d", r.status)
		}
	})
}

// currentSecret is the id of the developer's current API secret.
func currentSecret(t *testing.T, h *harness) string {
	t.Helper()
	secrets, err := h.store.ClientSecretListLive(context.Background(), h.clientID, h.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if s.ExpiresAt == nil {
			return s.ID
		}
	}
	t.Fatal("no current secret")
	return ""
}

// signInPosts sends n refused sign-in posts at once and returns each
// answer's status and Retry-After. One form token serves every post, sent
// as the cookie and the field, so that concurrent answers cannot replace
// it.
func (h *harness) signInPosts(t *testing.T, n int) (statuses []int, retry []string) {
	t.Helper()
	const token = "limit-test-token"
	statuses, retry = make([]int, n), make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			form := url.Values{"csrf": {token}, "email": {"nobody@example.com"}, "password": {"guess"}}
			req, _ := http.NewRequest("POST", h.url+"/dashboard/signin", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.AddCookie(&http.Cookie{Name: "hitch_signin", Value: token})
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses[i], retry[i] = resp.StatusCode, resp.Header.Get("Retry-After")
		})
	}
	wg.Wait()
	return statuses, retry
}

// Sign-in posts are limited per IP: past the burst they are answered 429
// with Retry-After, before any password is checked.
func TestDashboardSignInLimit(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		statuses, retry := h.signInPosts(t, 40)
		limited := 0
		for i, st := range statuses {
			switch {
			case st == http.StatusTooManyRequests && retry[i] != "":
				limited++
			case st != http.StatusUnauthorized && st != http.StatusServiceUnavailable: // 503: password checks all busy
				t.Errorf("post %d: %d", i, st)
			}
		}
		// 20 at once, then one a second: the 40 posts take well under 10 s.
		if limited < 10 {
			t.Fatalf("%d of 40 posts limited: %v", limited, statuses)
		}
		// The form page itself is not limited.
		if r := h.dash().get("/dashboard/signin"); r.status != http.StatusOK {
			t.Fatalf("sign-in page: %d", r.status)
		}
	})
}

func TestDashboardRoles(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		admin := h.dash()
		admin.mustSignIn("ada@example.com", h.addMember("ada@example.com", store.RoleAdmin))
		add := func(email, role string) string {
			t.Helper()
			r := admin.post("/dashboard/members", url.Values{"email": {email}, "name": {"N " + role}, "role": {role}})
			if r.status != http.StatusOK {
				t.Fatalf("add %s: %d %.300s", email, r.status, r.body)
			}
			return shown(t, r)
		}
		viewer, developer := h.dash(), h.dash()
		// Members an admin adds choose their own password first.
		vic, dev := add("vic@example.com", store.RoleViewer), add("dev@example.com", store.RoleDeveloper)
		viewer.mustSignIn("vic@example.com", vic)
		viewer.changePassword(vic)
		developer.mustSignIn("dev@example.com", dev)
		developer.changePassword(dev)

		for _, page := range []string{"/dashboard", "/dashboard/credentials", "/dashboard/webhooks", "/dashboard/users",
			"/dashboard/merchants", "/dashboard/members"} {
			if r := viewer.get(page); r.status != http.StatusOK {
				t.Errorf("viewer GET %s: %d", page, r.status)
			}
		}
		before := len(auditLog(t, h.api))
		secretBefore := currentSecret(t, h)
		hook := url.Values{"url": {"http://127.0.0.1:9/hook"}}
		for _, c := range []struct {
			who    *dash
			path   string
			form   url.Values
			status int
		}{
			{viewer, "/dashboard/credentials/rotate", nil, http.StatusForbidden},
			{viewer, "/dashboard/credentials/reveal", nil, http.StatusForbidden},
			{viewer, "/dashboard/webhooks", hook, http.StatusForbidden},
			{viewer, "/dashboard/webhooks/test", nil, http.StatusForbidden},
			{viewer, "/dashboard/merchants/4/hide", nil, http.StatusForbidden},
			{viewer, "/dashboard/members", url.Values{"email": {"x@example.com"}, "role": {"admin"}}, http.StatusForbidden},
			{developer, "/dashboard/credentials/rotate", nil, http.StatusForbidden},
			{developer, "/dashboard/credentials/reveal", nil, http.StatusForbidden},
			{developer, "/dashboard/merchants/4/hide", nil, http.StatusForbidden},
			{developer, "/dashboard/members", url.Values{"email": {"x@example.com"}, "role": {"admin"}}, http.StatusForbidden},
		} {
			if r := c.who.post(c.path, c.form); r.status != c.status {
				t.Errorf("POST %s: %d, want %d", c.path, r.status, c.status)
			}
		}
		if after := len(auditLog(t, h.api)); after != before {
			t.Fatalf("refused actions wrote %d records", after-before)
		}
		if r := developer.post("/dashboard/webhooks", hook); r.status != http.StatusOK {
			t.Fatalf("developer adds an endpoint: %d %s", r.status, regexp.MustCompile(`id="page-error">[^<]*`).Find(r.body))
		}
		// Nothing rotated the secret: the current one is the same. (Using
		// it would prove nothing: a rotated-out secret works for a while.)
		if after := currentSecret(t, h); after != secretBefore {
			t.Fatalf("the current secret changed: %s, then %s", secretBefore, after)
		}
	})
}

// Every audited action writes its record with the action, and an action
// that fails writes none.
func TestDashboardAuditedActions(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		d := h.dash()
		d.mustSignIn("ada@example.com", h.addMember("ada@example.com", store.RoleAdmin))
		if r := d.post("/dashboard/credentials/reveal", nil); shown(t, r) != h.secret {
			t.Fatal("the revealed secret is not the developer's")
		}
		r := d.post("/dashboard/credentials/rotate", nil)
		newSecret := shown(t, r)
		if !strings.HasPrefix(newSecret, "hsk_") || newSecret == h.secret {
			t.Fatalf("rotated secret %q", newSecret)
		}
		// The old secret works through the grace period; the new one at once.
		fresh := client.New(h.url, h.clientID, newSecret, client.WithHTTPClient(h.http))
		if _, err := fresh.AuditLogs(ctx, &client.AuditLogsRequest{}); err != nil {
			t.Fatalf("the new secret: %v", err)
		}
		r = d.post("/dashboard/members", url.Values{"email": {"bob@example.com"}, "role": {"viewer"}})
		if r.status != http.StatusOK {
			t.Fatalf("add member: %d", r.status)
		}
		members, _ := h.members.List(ctx, h.clientID)
		var ada, bob *store.Member
		for _, m := range members {
			switch m.Email {
			case "ada@example.com":
				ada = m
			case "bob@example.com":
				bob = m
			}
		}
		if r := d.post("/dashboard/members/"+bob.ID+"/role", url.Values{"role": {"developer"}}); r.status != http.StatusSeeOther {
			t.Fatalf("change role: %d", r.status)
		}
		if r := d.post("/dashboard/members/"+bob.ID+"/remove", nil); r.status != http.StatusSeeOther {
			t.Fatalf("remove: %d", r.status)
		}
		if r := d.post("/dashboard/webhooks", url.Values{"url": {"http://127.0.0.1:9/hook"}, "events": {"TEST", "AUTHENTICATED"}}); r.status != http.StatusOK {
			t.Fatalf("add endpoint: %d %.300s", r.status, r.body)
		}
		eps, _ := h.webhooks.List(ctx, h.clientID)
		if len(eps) != 1 || len(eps[0].EventTypes) != 2 {
			t.Fatalf("endpoints %+v", eps)
		}
		if r := d.post("/dashboard/webhooks/"+eps[0].ID+"/rotate", nil); r.status != http.StatusOK || !strings.HasPrefix(shown(t, r), "whsec_") {
			t.Fatalf("rotate endpoint: %d", r.status)
		}
		if r := d.post("/dashboard/webhooks/test", nil); r.status != http.StatusSeeOther {
			t.Fatalf("test: %d", r.status)
		}
		evs := h.events(h.clientID)
		if r := d.get("/dashboard/webhooks/events/" + evs[0].ID); r.status != http.StatusOK || !strings.Contains(string(r.body), "TEST") {
			t.Fatalf("event page: %d", r.status)
		}
		if r := d.post("/dashboard/webhooks/events/"+evs[0].ID+"/resend", nil); r.status != http.StatusSeeOther {
			t.Fatalf("resend: %d", r.status)
		}
		if r := d.post("/dashboard/webhooks/"+eps[0].ID+"/remove", nil); r.status != http.StatusSeeOther {
			t.Fatalf("remove endpoint: %d", r.status)
		}
		if r := d.post("/dashboard/merchants/4/hide", nil); r.status != http.StatusSeeOther {
			t.Fatalf("hide: %d", r.status)
		}
		if r := d.post("/dashboard/merchants/4/show", nil); r.status != http.StatusSeeOther {
			t.Fatalf("show: %d", r.status)
		}
		if err := h.api.DevLinkAccount(ctx, &client.DevLinkRequest{ExternalUserID: "user-7", MerchantID: 4,
			Transactions: &client.DevTransactions{New: true}}); err != nil {
			t.Fatal(err)
		}
		if r := d.get("/dashboard/user?id=user-7"); r.status != http.StatusOK || !strings.Contains(string(r.body), "Netflix") {
			t.Fatalf("user page: %d", r.status)
		}
		if r := d.get("/dashboard/users?q=user-"); r.status != http.StatusOK || !strings.Contains(string(r.body), "user-7") {
			t.Fatalf("users search: %d", r.status)
		}
		// A link on another site (or a sibling subdomain) records nothing:
		// the want list below has exactly two user.view.
		for _, site := range []string{"cross-site", "same-site"} {
			if r := d.send("GET", "/dashboard/user?id=user-7", nil, http.Header{"Sec-Fetch-Site": {site}}); r.status != http.StatusForbidden ||
				strings.Contains(string(r.body), "Netflix") {
				t.Fatalf("user page from %s: %d", site, r.status)
			}
		}
		if r := d.send("GET", "/dashboard/user?id=user-7", nil, http.Header{"Sec-Fetch-Site": {"same-origin"}}); r.status != http.StatusOK {
			t.Fatalf("user page from the dashboard: %d", r.status)
		}

		// Failed actions: no record.
		for _, c := range []struct {
			path   string
			form   url.Values
			status int
		}{
			{"/dashboard/members/" + ada.ID + "/remove", nil, http.StatusConflict},                          // the last admin
			{"/dashboard/members/" + ada.ID + "/role", url.Values{"role": {"viewer"}}, http.StatusConflict}, // demoting them
			{"/dashboard/webhooks", url.Values{"url": {"ftp://nope"}}, http.StatusBadRequest},
			{"/dashboard/webhooks/we_nope/remove", nil, http.StatusNotFound},
			{"/dashboard/merchants/999999/hide", nil, http.StatusNotFound},
			{"/dashboard/members", url.Values{"email": {"ada@example.com"}, "role": {"admin"}}, http.StatusConflict},
		} {
			if r := d.post(c.path, c.form); r.status != c.status {
				t.Errorf("POST %s: %d, want %d: %.300s", c.path, r.status, c.status, r.body)
			}
		}
		if r := d.get("/dashboard/user?id=nobody"); r.status != http.StatusNotFound {
			t.Errorf("unknown user: %d", r.status)
		}
		if r := d.post("/dashboard/signout", nil); r.status != http.StatusSeeOther {
			t.Fatalf("sign out: %d", r.status)
		}

		recs := auditLog(t, fresh)
		want := []string{"member.add", "signin", "secret.view", "secret.rotate", "member.add", "member.role_change", "member.remove",
			"webhook.add", "webhook.update", "webhook.test", "event.resend", "webhook.remove", "merchant.hide", "merchant.show",
			"user.view", "user.view", "user.view", "signout"}
		var got []string
		for _, a := range actions(recs) {
			action, outcome, _ := strings.Cut(a, ":")
			if outcome != "success" {
				t.Errorf("record %s", a)
			}
			got = append(got, action)
		}
		// The users search is not a user view: user-7's page was viewed
		// once, and so was nobody's (which does not exist: no record)...
		want = slices.Delete(want, 15, 16)
		if !slices.Equal(got, want) {
			t.Fatalf("audit log\n%v, want\n%v", got, want)
		}
		names := map[string]string{}
		for _, rec := range recs {
			if rec.Target.Name != nil {
				names[rec.Event.Action] = *rec.Target.Name
			}
			if rec.Event.Action != "member.add" && rec.Actor.Email != "ada@example.com" {
				t.Errorf("%s by %+v", rec.Event.Action, rec.Actor)
			}
		}
		for action, want := range map[string]string{"member.role_change": "bob@example.com", "webhook.add": "http://127.0.0.1:9/hook",
			"webhook.remove": "http://127.0.0.1:9/hook", "merchant.hide": "Netflix", "user.view": "user-7", "event.resend": evs[0].ID} {
			if names[action] != want {
				t.Errorf("%s target %q, want %q", action, names[action], want)
			}
		}
		if recs[len(recs)-1].Actor.Name != member.OperatorActor.Name || recs[len(recs)-1].Actor.Email != "" {
			t.Errorf("the operator's record: %+v", recs[len(recs)-1].Actor)
		}
		// The whole chain holds.
		if head, err := audit.Verify(ctx, h.store, h.clientID); err != nil || head.Records != int64(len(recs)) {
			t.Fatalf("verify: %+v %v", head, err)
		}
	})
}

// Merchants an admin hides leave the developer's link flow, and only its.
func TestDashboardHiddenMerchants(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		d := h.dash()
		d.mustSignIn("ada@example.com", h.addMember("ada@example.com", store.RoleAdmin))
		s := h.flowSession(&client.CreateSessionRequest{Type: "transaction_link", ExternalUserID: "hide-user"})
		search := func(session, clientID string) string {
			t.Helper()
			r := h.flowCall("/link/api/merchants", session, map[string]any{"search": "netfl", "client_id": clientID})
			if r.status != http.StatusOK {
				t.Fatalf("search: %d %s", r.status, r.body)
			}
			return strings.TrimSpace(string(r.body))
		}
		if got := search(s.Session, h.clientID); got != `{"merchant_ids":[4]}` {
			t.Fatalf("before hiding: %s", got)
		}
		if r := d.post("/dashboard/merchants/4/hide", url.Values{"q": {"net"}}); r.status != http.StatusSeeOther ||
			r.header.Get("Location") != "/dashboard/merchants?q=net&notice=merchant.hidden" {
			t.Fatalf("hide: %d %s", r.status, r.header.Get("Location"))
		}
		if r := d.get("/dashboard/merchants?q=net&notice=merchant.hidden"); !strings.Contains(string(r.body), "is hidden from your users") {
			t.Fatalf("notice missing: %.300s", r.body)
		}
		if got := search(s.Session, h.clientID); got != `{"merchant_ids":[]}` {
			t.Fatalf("after hiding: %s", got)
		}
		// The session's merchant list and logins leave it out too.
		r := h.flowCall("/link/api/session", s.Session, nil)
		if strings.Contains(string(r.body), `,4,`) || strings.Contains(string(r.body), `[4,`) {
			t.Fatalf("session lists the hidden merchant: %s", r.body)
		}
		step := h.flowCall("/link/api/login", s.Session, map[string]any{"merchant_id": 4, "username": "user_good", "password": "pass_good"})
		if step.status != http.StatusBadRequest || step.errorBody(t).Code != "INVALID_FIELD" {
			t.Fatalf("login at a hidden merchant: %d %s", step.status, step.body)
		}
		// Another developer still sees it.
		other := h.newDeveloper("development")
		os := client.New(h.url, other.ClientID, other.Secret, client.WithHTTPClient(h.http))
		s2, err := os.CreateSession(context.Background(), &client.CreateSessionRequest{Type: "transaction_link", ExternalUserID: "u"})
		if err != nil {
			t.Fatal(err)
		}
		if got := search(s2.Session, other.ClientID); got != `{"merchant_ids":[4]}` {
			t.Fatalf("another developer: %s", got)
		}
		d.post("/dashboard/merchants/4/show", nil)
		if got := search(s.Session, h.clientID); got != `{"merchant_ids":[4]}` {
			t.Fatalf("shown again: %s", got)
		}
	})
}

// The header names the developer and its environment, and a developer
// named after its environment (the "Development" that serve creates) once:
// as the environment's badge.
func TestDashboardHeaderNamesTheEnvironmentOnce(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		header := func(clientID string) string {
			t.Helper()
			password := h.addMemberTo(clientID, "ada@example.com", store.RoleAdmin, true)
			d := h.dash()
			d.mustSignIn("ada@example.com", password)
			page := d.get("/dashboard")
			start, end := strings.Index(string(page.body), `<header class="top">`), strings.Index(string(page.body), "</header>")
			if page.status != http.StatusOK || start < 0 || end < start {
				t.Fatalf("overview: %d %.500s", page.status, page.body)
			}
			return string(page.body[start:end])
		}
		if got := header(h.clientID); !strings.Contains(got, `<span class="client" title="client_id `+h.clientID+`">Test development</span>`) ||
			!strings.Contains(got, `>development</span>`) {
			t.Errorf("the header of %q:\n%s", "Test development", got)
		}
		dev, err := h.developers.Create(context.Background(), developer.CreateParams{Name: "Development", Environment: "development"})
		if err != nil {
			t.Fatal(err)
		}
		got := header(dev.ClientID)
		shown := regexp.MustCompile(`<[^>]*>`).ReplaceAllString(got, " ")
		if strings.Contains(got, `class="client"`) || strings.Count(strings.ToLower(shown), "development") != 1 ||
			!strings.Contains(got, `title="Development, client_id `+dev.ClientID+`">development</span>`) {
			t.Errorf("the header of %q:\n%s", "Development", got)
		}
	})
}
