package api_test

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hitchdev/hitch/internal/member"
	"github.com/hitchdev/hitch/internal/store"
)

// The dashboard sign-in after the second security review: the time of a
// refusal, the per-IP limit, the developer picker and password changes.

// signInClock is the member service's clock in the tests of the padding:
// it moves only when a sleep is asked of it, which returns at once, and
// by a timedHasher's work. One test signs in at a time on it.
type signInClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *signInClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *signInClock) Sleep(_ context.Context, d time.Duration) { c.advance(d) }

func (c *signInClock) advance(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

// checkCost is what a timedHasher's hash or check takes on its clock.
const checkCost = 25 * time.Millisecond

// timedHasher is testArgon2id, but each hash and check takes checkCost on
// the clock, as the production cost takes about that on the wall clock.
type timedHasher struct {
	member.Argon2id
	clock *signInClock
}

func (h timedHasher) Hash(password string) string {
	h.clock.advance(checkCost)
	return h.Argon2id.Hash(password)
}

func (h timedHasher) Check(phc, password string) (bool, error) {
	h.clock.advance(checkCost)
	return h.Argon2id.Check(phc, password)
}

// withTimedSignIns gives the harness's member service a signInClock of its
// own and a timedHasher on it.
func withTimedSignIns(o *harnessOptions) {
	clock := &signInClock{}
	o.members.Clock, o.members.Hasher = clock, timedHasher{testArgon2id, clock}
}

// timedSignIn posts the sign-in form and returns the answer and how long
// the post took on the member service's signInClock (not the form page
// before it).
func (d *dash) timedSignIn(email, password string) (*response, time.Duration) {
	d.t.Helper()
	clock := d.h.memberConfig.Clock.(*signInClock)
	token := d.csrf("/dashboard/signin")
	begin := clock.Now()
	r := d.send("POST", "/dashboard/signin", url.Values{"csrf": {token}, "email": {email}, "password": {password}}, nil)
	return r, clock.Now().Sub(begin)
}

// Every refused sign-in takes the time of the slowest there can be, an
// e-mail of MaxSignInMembers developers' members (their passwords all
// checked, one after another) and half as much again, plus RefusalFloor
// for its reads and writes: as long for an unknown e-mail, an e-mail too
// long to be anyone's, or one member's, as for two or ten developers'.
// So the time tells neither whether an e-mail is a member's nor of how
// many developers. Each check here takes checkCost on the service's
// clock: unpadded, the refusal of ten members would take nine checks
// longer than one member's. A success is not padded.
func TestDashboardRefusalTimeIgnoresMemberships(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		password := h.addMember("one@example.com", store.RoleViewer)
		h.addMember("two@example.com", store.RoleViewer)
		h.addNewMember(h.newDeveloper(h.env).ClientID, "two@example.com", store.RoleViewer)
		for range member.MaxSignInMembers {
			h.addNewMember(h.newDeveloper(h.env).ClientID, "many@example.com", store.RoleViewer)
		}
		d := h.dash()
		// The first sign-in makes the dummy hash unknown e-mails are
		// checked against, before its deadline: it is not timed.
		if r := d.signIn("nobody@example.com", "guess"); r.status != http.StatusUnauthorized {
			t.Fatalf("the first sign-in: %d", r.status)
		}
		floor := member.DefaultRefusalFloor + member.MaxSignInMembers*checkCost*3/2
		for _, email := range []string{"nobody@example.com", strings.Repeat("x", 300) + "@example.com", "one@example.com",
			"two@example.com", "many@example.com"} {
			if r, took := d.timedSignIn(email, "guess"); r.status != http.StatusUnauthorized || took != floor {
				t.Errorf("%.20s: %d after %v, want a refusal after %v", email, r.status, took, floor)
			}
		}
		if r, took := d.timedSignIn("one@example.com", password); r.status != http.StatusSeeOther || took != checkCost {
			t.Errorf("the right password: %d after %v, want a sign-in after its one check, %v", r.status, took, checkCost)
		}
		if m := h.memberOf(h.clientID, "one@example.com"); m.FailedAttempts != 0 || m.LockedUntil != nil {
			t.Fatalf("one@ after a refusal and a sign-in: %d failures, locked until %v", m.FailedAttempts, m.LockedUntil)
		}
	}, withTimedSignIns)
}

// Every sign-in post costs one IP what the most costly post may cost,
// MaxSignInMembers password checks, within two checks a second: past the
// burst the next post waits five seconds. (Charging the checks a post
// made instead would tell the sender, by when its 429s begin, how many
// members the e-mail has.)
func TestDashboardSignInLimitCountsChecks(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		statuses, retry := h.signInPosts(t, 30)
		limited := 0
		for i, r := range retry {
			if statuses[i] != http.StatusTooManyRequests {
				continue
			}
			limited++
			// Five seconds from an empty bucket; the posts themselves may
			// take a moment, in which a little comes back.
			if s, err := strconv.Atoi(r); err != nil || s < 4 {
				t.Errorf("Retry-After %q, want at least 4 s: a post may cost %d checks, an IP gets 2 a second",
					r, member.MaxSignInMembers)
			}
		}
		if limited < 10 {
			t.Fatalf("%d of 30 posts limited, want at least 10 past the burst of 20", limited)
		}
	})
}

// A password right for the members of two developers asks which, unless
// one of them is locked by the time the checks end: that one is refused
// (recorded, not offered) and the sign-in is to the other. The lock is
// taken while the first password check is held.
func TestDashboardPickerRechecksTheLock(t *testing.T) {
	t.Parallel()
	const password = "one password for both teams"
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		b := h.newDeveloper(h.env)
		apiB := h.clientFor(b)
		h.addMember("pick@example.com", store.RoleAdmin)
		h.addMemberTo(b.ClientID, "pick@example.com", store.RoleAdmin, true)
		for _, clientID := range []string{h.clientID, b.ClientID} {
			m := h.memberOf(clientID, "pick@example.com")
			if err := h.store.MemberSetPassword(ctx, clientID, m.ID, testArgon2id.Hash(password), false, h.clock.Now()); err != nil {
				t.Fatal(err)
			}
		}
		recordsB := len(auditLog(t, apiB))

		d := h.dash()
		token := d.csrf("/dashboard/signin")
		answer := make(chan *response, 1)
		go func() {
			form := url.Values{"csrf": {token}, "email": {"pick@example.com"}, "password": {password}}
			req, _ := http.NewRequest("POST", h.url+"/dashboard/signin", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			resp, err := d.c.Do(req)
			if err != nil {
				t.Error(err)
				answer <- nil
				return
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			answer <- &response{status: resp.StatusCode, header: resp.Header, body: body}
		}()
		held := h.heldCheck()
		select {
		case <-held.begun:
		case r := <-answer:
			t.Fatalf("answered before any password check: %+v", r)
		}
		mB := h.memberOf(b.ClientID, "pick@example.com")
		if _, err := h.store.MemberRecordFailure(ctx, b.ClientID, mB.ID, 1, h.clock.Now().Add(time.Hour), h.clock.Now()); err != nil {
			t.Fatal(err)
		}
		close(held.release)
		r := <-answer
		if r == nil {
			t.FailNow()
		}
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/dashboard" {
			t.Fatalf("B locked during the checks: %d %s (offered a choice: %v), want a sign-in to A", r.status,
				r.header.Get("Location"), strings.Contains(string(r.body), `id="choose-team"`))
		}
		if creds := d.get("/dashboard/credentials"); !strings.Contains(string(creds.body), `id="client-id">`+h.clientID+`<`) {
			t.Fatal("not signed in to A")
		}
		if got := actions(auditLog(t, apiB))[recordsB:]; !slices.Equal(got, []string{"signin:failure"}) {
			t.Fatalf("B's log after the sign-in: %v, want one failure", got)
		}
		if m := h.memberOf(b.ClientID, "pick@example.com"); m.LockedUntil == nil || m.FailedAttempts != 0 {
			t.Fatalf("B's member after the sign-in: locked until %v, %d failures", m.LockedUntil, m.FailedAttempts)
		}
		if got := actions(auditLog(t, h.api)); got[len(got)-1] != "signin:success" {
			t.Fatalf("A's log: %v", got)
		}
	}, withHeldCheck(password))
}

// dashCookie is the value of the sign-in cookie an answer sets, if any.
func dashCookie(r *response) *http.Cookie {
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == "hitch_dashboard" {
			return c
		}
	}
	return nil
}

// A password change replaces the sign-in that made it: its answer sets a
// new cookie, the old cookie (say, copied by someone) and the form token
// derived from it stop working, and the browser goes on with the new ones.
func TestDashboardPasswordChangeRotatesTheSignIn(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		password := h.addMember("ada@example.com", store.RoleAdmin)
		d := h.dash()
		signin := d.signIn("ada@example.com", password)
		old := dashCookie(signin)
		if signin.status != http.StatusSeeOther || old == nil || old.Value == "" {
			t.Fatalf("sign in: %d %v", signin.status, old)
		}
		oldCSRF := d.csrf("/dashboard/password")
		next := "a password of my own choosing"
		r := d.send("POST", "/dashboard/password", url.Values{"csrf": {oldCSRF}, "current": {password}, "new": {next},
			"confirm": {next}}, nil)
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/dashboard/password?notice=password.changed" {
			t.Fatalf("change: %d %s %s", r.status, r.header.Get("Location"), pageError(r))
		}
		fresh := dashCookie(r)
		if fresh == nil || fresh.Value == "" || fresh.Value == old.Value || !fresh.HttpOnly ||
			fresh.SameSite != http.SameSiteStrictMode || fresh.Path != "/" || fresh.MaxAge != 12*3600 {
			t.Fatalf("the change's cookie %+v (before: %q)", fresh, old.Value)
		}

		// The browser goes on with the new sign-in, and a new form token.
		if r := d.get("/dashboard/password?notice=password.changed"); r.status != http.StatusOK ||
			!strings.Contains(string(r.body), "Your password was changed") {
			t.Fatalf("after the change: %d", r.status)
		}
		newCSRF := d.csrf("/dashboard")
		if newCSRF == oldCSRF {
			t.Fatal("the form token did not change with the sign-in")
		}
		if r := d.send("POST", "/dashboard/credentials/reveal", url.Values{"csrf": {oldCSRF}}, nil); r.status != http.StatusForbidden {
			t.Fatalf("the old form token: %d", r.status)
		}
		if r := d.send("POST", "/dashboard/credentials/reveal", url.Values{"csrf": {newCSRF}}, nil); r.status != http.StatusOK ||
			shown(t, r) != h.secret {
			t.Fatalf("the new form token: %d", r.status)
		}

		// The old cookie is signed out.
		stale := h.dash()
		u, _ := url.Parse(h.url)
		stale.c.Jar.SetCookies(u, []*http.Cookie{{Name: "hitch_dashboard", Value: old.Value, Path: "/"}})
		if r := stale.get("/dashboard"); r.status != http.StatusSeeOther || r.header.Get("Location") != "/dashboard/signin" {
			t.Fatalf("the old cookie after the change: %d %s", r.status, r.header.Get("Location"))
		}
		// One record of the change; the new sign-in is not a sign-in of its own.
		want := []string{"member.add:success", "signin:success", "member.password_change:success", "secret.view:success"}
		if got := actions(auditLog(t, h.api)); !slices.Equal(got, want) {
			t.Fatalf("audit log %v, want %v", got, want)
		}
	})
}

var nextRE = regexp.MustCompile(`name="next" value="([^"]*)"`)

// After signing in, the member goes where the sign-in page was asked to send
// them only when that is a dashboard page of this site: a browser follows
// the Location as it resolves it, so that is what is checked.
func TestDashboardSignInNext(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		password := h.addMember("ada@example.com", store.RoleAdmin)
		base, err := url.Parse(h.url)
		if err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			query string // the sign-in page's query, as a link would carry it
			want  string // the Location after signing in
		}{
			{"next=/dashboard/../%5Cevil.example", "/dashboard"},
			{"next=/dashboard/../../evil", "/dashboard"},
			{"next=/dashboard/%2e%2e/%5Cevil.example", "/dashboard"},
			{"next=/dashboard/..%5C..%5Cevil.example", "/dashboard"},
			{"next=/dashboard%5C..%5C..%5Cevil.example", "/dashboard"},
			{"next=/dashboard/%255Cevil.example", "/dashboard"},
			{"next=/dashboard/%252F%252Fevil.example", "/dashboard"},
			{"next=https://evil.example/dashboard/", "/dashboard"},
			{"next=//evil.example/dashboard/", "/dashboard"},
			{"next=/%2Fevil.example/dashboard/", "/dashboard"},
			{"next=dashboard/webhooks", "/dashboard"},
			{"next=/dashboardx", "/dashboard"},
			{"next=" + url.QueryEscape("/dashboard/webhooks?cursor=abc"), "/dashboard/webhooks?cursor=abc"},
			{"next=/dashboard/./x/../audit", "/dashboard/audit"},
			{"next=/dashboard//webhooks", "/dashboard/webhooks"},
		}
		for _, c := range cases {
			d := h.dash()
			page := d.get("/dashboard/signin?" + c.query)
			token, next := csrfRE.FindSubmatch(page.body), nextRE.FindSubmatch(page.body)
			if page.status != http.StatusOK || token == nil || next == nil {
				t.Fatalf("%s: sign-in page %d %.300s", c.query, page.status, page.body)
			}
			r := d.send("POST", "/dashboard/signin", url.Values{"csrf": {string(token[1])}, "email": {"ada@example.com"},
				"password": {password}, "next": {html.UnescapeString(string(next[1]))}}, nil)
			loc := r.header.Get("Location")
			if r.status != http.StatusSeeOther || loc != c.want {
				t.Errorf("%s: %d Location %q, want %q", c.query, r.status, loc, c.want)
				continue
			}
			// How a browser reads it, backslashes as slashes included.
			to, err := base.Parse(strings.ReplaceAll(loc, `\`, "/"))
			if err != nil || to.Host != base.Host || (to.Path != "/dashboard" && !strings.HasPrefix(to.Path, "/dashboard/")) {
				t.Errorf("%s: Location %q leads to %v", c.query, loc, to)
			}
		}
		// A forged form, whatever the page said, is held to the same rules.
		d := h.dash()
		token := d.csrf("/dashboard/signin")
		r := d.send("POST", "/dashboard/signin", url.Values{"csrf": {token}, "email": {"ada@example.com"},
			"password": {password}, "next": {`/dashboard/../\evil.example`}}, nil)
		if loc := r.header.Get("Location"); r.status != http.StatusSeeOther || loc != "/dashboard" {
			t.Errorf("forged next: %d Location %q", r.status, loc)
		}
	})
}
