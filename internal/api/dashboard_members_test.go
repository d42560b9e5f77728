package api_test

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hitchdev/hitch/client"
	"github.com/hitchdev/hitch/internal/audit"
	"github.com/hitchdev/hitch/internal/member"
	"github.com/hitchdev/hitch/internal/store"
)

// withMembers configures the harness's member service.
func withMembers(cfg member.Config) func(*harnessOptions) {
	return func(o *harnessOptions) { o.members = cfg }
}

// heldHasher is testArgon2id, but the first check of one password waits,
// once it has begun (begun is closed), until release is closed: a test
// looks at what happens while a sign-in checks passwords.
type heldHasher struct {
	member.Argon2id
	password       string
	once           *sync.Once
	begun, release chan struct{}
}

func (h heldHasher) Check(phc, password string) (bool, error) {
	if password == h.password {
		h.once.Do(func() {
			close(h.begun)
			<-h.release
		})
	}
	return h.Argon2id.Check(phc, password)
}

// withHeldCheck gives the harness's member service a heldHasher of its own
// that holds the first check of password (after withMembers, which would
// replace it).
func withHeldCheck(password string) func(*harnessOptions) {
	return func(o *harnessOptions) {
		o.members.Hasher = heldHasher{Argon2id: testArgon2id, password: password, once: &sync.Once{},
			begun: make(chan struct{}), release: make(chan struct{})}
	}
}

// heldCheck is the harness's heldHasher (withHeldCheck).
func (h *harness) heldCheck() heldHasher { return h.memberConfig.Hasher.(heldHasher) }

// postPassword submits the password form (with the token of the password
// page, which a member who must change their password can open).
func (d *dash) postPassword(form url.Values) *response {
	d.t.Helper()
	form = maps.Clone(form)
	if _, ok := form["csrf"]; !ok {
		form.Set("csrf", d.csrf("/dashboard/password"))
	}
	return d.send("POST", "/dashboard/password", form, nil)
}

// changePassword changes the signed-in member's password from current to a
// new one on the password page, and returns the new one. A member whose
// password someone else chose then goes on to the overview; one who chose
// to change it, back to the password page.
func (d *dash) changePassword(current string) string {
	d.t.Helper()
	next := "chosen " + current
	page := d.get("/dashboard/password")
	m := csrfRE.FindSubmatch(page.body)
	if page.status != http.StatusOK || m == nil {
		d.t.Fatalf("GET /dashboard/password: %d %.300s", page.status, page.body)
	}
	want := "/dashboard/password?notice=password.changed"
	if strings.Contains(string(page.body), `id="must-change"`) {
		want = "/dashboard?notice=password.changed"
	}
	r := d.postPassword(url.Values{"csrf": {string(m[1])}, "current": {current}, "new": {next}, "confirm": {next}})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != want {
		d.t.Fatalf("change password: %d %s %s", r.status, r.header.Get("Location"), pageError(r))
	}
	return next
}

var errorTextRE = regexp.MustCompile(`id="page-error">([^<]*)<`)

// pageError is the error a page shows, if any.
func pageError(r *response) string {
	if m := errorTextRE.FindSubmatch(r.body); m != nil {
		return string(m[1])
	}
	return ""
}

// One e-mail, a member of two developers with a password each: each
// password signs in to its own developer's dashboard, which shows that
// developer's data only; a password right for both asks which.
func TestDashboardMemberOfTwoDevelopers(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		a, b := h.api, h.newDeveloper(h.env)
		apiB := h.clientFor(b)
		pwA := h.addMember("ada@example.com", store.RoleAdmin)
		pwB := h.addMemberTo(b.ClientID, "ada@example.com", store.RoleAdmin, true)
		for c, user := range map[*client.Client]string{a: "user-of-a", apiB: "user-of-b"} {
			if err := c.DevLinkAccount(ctx, &client.DevLinkRequest{ExternalUserID: user, MerchantID: 4,
				Transactions: &client.DevTransactions{New: true}}); err != nil {
				t.Fatal(err)
			}
		}

		dA, dB := h.dash(), h.dash()
		dA.mustSignIn("ada@example.com", pwA)
		dB.mustSignIn("ada@example.com", pwB)
		for _, c := range []struct {
			d           *dash
			mine, other string
		}{{dA, h.clientID, b.ClientID}, {dB, b.ClientID, h.clientID}} {
			creds := c.d.get("/dashboard/credentials")
			if creds.status != http.StatusOK || !strings.Contains(string(creds.body), `id="client-id">`+c.mine+`<`) ||
				strings.Contains(string(creds.body), c.other) {
				t.Fatalf("credentials of %s: %d", c.mine, creds.status)
			}
			users := string(c.d.get("/dashboard/users").body)
			mine, other := "user-of-a", "user-of-b"
			if c.mine == b.ClientID {
				mine, other = other, mine
			}
			if !strings.Contains(users, mine) || strings.Contains(users, other) {
				t.Fatalf("users of %s: %.2000s", c.mine, users)
			}
			if r := c.d.get("/dashboard/user?id=" + other); r.status != http.StatusNotFound {
				t.Fatalf("%s opens another developer's user: %d", c.mine, r.status)
			}
		}

		// A wrong password is a failure for both members. A sign-in is a
		// success for the member the password is right for and a failure
		// for the others: otherwise A's admin, who can set A's member's
		// password to a guess, could guess at B's member uncounted,
		// landing in A whenever the guess was wrong (newest first).
		if r := h.dash().signIn("ada@example.com", "guess"); r.status != http.StatusUnauthorized {
			t.Fatalf("wrong password: %d", r.status)
		}
		if got, want := actions(auditLog(t, a)), []string{"member.add:success", "signin:success", "signin:failure", "signin:failure"}; !slices.Equal(got, want) {
			t.Fatalf("audit log of A %v, want %v", got, want)
		}
		if got, want := actions(auditLog(t, apiB)), []string{"member.add:success", "signin:failure", "signin:success", "signin:failure"}; !slices.Equal(got, want) {
			t.Fatalf("audit log of B %v, want %v", got, want)
		}
		if m := h.memberOf(b.ClientID, "ada@example.com"); m.FailedAttempts != 1 {
			t.Fatalf("B's member counted %d failures, want 1", m.FailedAttempts)
		}
		h.dash().mustSignIn("ada@example.com", pwA)
		if m := h.memberOf(b.ClientID, "ada@example.com"); m.FailedAttempts != 2 {
			t.Fatalf("a sign-in to A with a password wrong for B: B's member counted %d failures, want 2", m.FailedAttempts)
		}

		// Ada makes B's password A's: the password is right for both, so
		// the form asks which developer, and nothing is signed in or
		// recorded until she picks one.
		dB.changePassword(pwB) // B's password is now "chosen "+pwB
		r := dB.postPassword(url.Values{"current": {"chosen " + pwB}, "new": {pwA}, "confirm": {pwA}})
		// A change the member chose to make goes back to the password page.
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/dashboard/password?notice=password.changed" {
			t.Fatalf("B's password made A's: %d %s %s", r.status, r.header.Get("Location"), pageError(r))
		}
		before := [2]int{len(auditLog(t, a)), len(auditLog(t, apiB))}
		d := h.dash()
		choose := d.signIn("ada@example.com", pwA)
		body := string(choose.body)
		if choose.status != http.StatusOK || !strings.Contains(body, `id="choose-team"`) ||
			!strings.Contains(body, `value="`+h.clientID+`"`) || !strings.Contains(body, `value="`+b.ClientID+`"`) {
			t.Fatalf("a password of both: %d %.2000s", choose.status, body)
		}
		if r := d.get("/dashboard"); r.status != http.StatusSeeOther {
			t.Fatalf("signed in before choosing: %d", r.status)
		}
		if after := [2]int{len(auditLog(t, a)), len(auditLog(t, apiB))}; after != before {
			t.Fatalf("the choice wrote records: %v, then %v", before, after)
		}
		token := string(csrfRE.FindSubmatch(choose.body)[1])
		r = d.send("POST", "/dashboard/signin", url.Values{"csrf": {token}, "email": {"ada@example.com"}, "password": {pwA},
			"client_id": {b.ClientID}}, nil)
		if r.status != http.StatusSeeOther {
			t.Fatalf("sign in to B: %d %s", r.status, pageError(r))
		}
		if creds := d.get("/dashboard/credentials"); !strings.Contains(string(creds.body), `id="client-id">`+b.ClientID+`<`) {
			t.Fatal("signed in to another developer than the one chosen")
		}
		if got := actions(auditLog(t, apiB)); got[len(got)-1] != "signin:success" || len(got) != before[1]+1 {
			t.Fatalf("audit log of B after the choice: %v", got)
		}
		// A client_id with no member of that e-mail is refused like any
		// wrong e-mail.
		other := h.newDeveloper(h.env)
		token = d.csrf("/dashboard/signin")
		r = d.send("POST", "/dashboard/signin", url.Values{"csrf": {token}, "email": {"ada@example.com"}, "password": {pwA},
			"client_id": {other.ClientID}}, nil)
		if r.status != http.StatusUnauthorized || !strings.Contains(string(r.body), "The e-mail or password is wrong") {
			t.Fatalf("a developer without the member: %d", r.status)
		}
	})
}

// Adding a member whose e-mail is another developer's member works, and
// says nothing of the other developer; a second member with one e-mail in
// one developer is refused, by the operator's command as in the
// dashboard.
func TestDashboardAddMemberEmailPerDeveloper(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		other := h.newDeveloper(h.env)
		h.addNewMember(other.ClientID, "eve@example.com", store.RoleAdmin)
		admin := h.dash()
		admin.mustSignIn("ada@example.com", h.addMember("ada@example.com", store.RoleAdmin))

		r := admin.post("/dashboard/members", url.Values{"email": {"eve@example.com"}, "role": {"viewer"}})
		if r.status != http.StatusOK || !strings.Contains(string(r.body), "eve@example.com was added as viewer") {
			t.Fatalf("add a member of another developer: %d %s", r.status, pageError(r))
		}
		eveHere := shown(t, r)
		r = admin.post("/dashboard/members", url.Values{"email": {"Eve@Example.com"}, "role": {"admin"}})
		if r.status != http.StatusConflict || pageError(r) != "That e-mail address belongs to a member of your team already." {
			t.Fatalf("a second eve: %d %q", r.status, pageError(r))
		}
		_, _, err := h.members.Add(ctx, nil, member.AddParams{ClientID: h.clientID, Email: "eve@example.com", Role: store.RoleAdmin},
			audit.Origin{UserAgent: "test"})
		if !errors.Is(err, member.ErrExists) {
			t.Fatalf("the operator adds a second eve: %v", err)
		}
		members := string(admin.get("/dashboard/members").body)
		if strings.Count(members, `data-email="eve@example.com"`) != 1 || !strings.Contains(members, "has not chosen a password yet") {
			t.Fatalf("members page: %.3000s", members)
		}
		// Each eve has her own password, lock and sign-in.
		eve := h.dash()
		eve.mustSignIn("eve@example.com", eveHere)
		if r := eve.get("/dashboard"); r.header.Get("Location") != "/dashboard/password" {
			t.Fatalf("eve's first sign-in: %d %s", r.status, r.header.Get("Location"))
		}
		if page := eve.get("/dashboard/password"); !strings.Contains(string(page.body), h.clientID) {
			t.Fatal("eve signed in to another developer")
		}
	})
}

// A member changes their password: the old one stops working, their other
// sign-ins end, this one stays, and the change is recorded. A member
// someone else chose the password of is sent to change it from every
// page, and can do nothing else first.
func TestDashboardPasswordChange(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		given := h.addNewMember(h.clientID, "ada@example.com", store.RoleAdmin)
		d, other := h.dash(), h.dash()
		d.mustSignIn("ada@example.com", given)
		other.mustSignIn("ada@example.com", given)
		secretBefore := currentSecret(t, h)
		recordsBefore := len(auditLog(t, h.api))

		// Forced: every page but the password page and sign-out sends the
		// member there, and form posts do nothing.
		for _, page := range []string{"/dashboard", "/dashboard/credentials", "/dashboard/members", "/dashboard/users",
			"/dashboard/user?id=x", "/dashboard/webhooks", "/dashboard/merchants"} {
			if r := d.get(page); r.status != http.StatusSeeOther || r.header.Get("Location") != "/dashboard/password" {
				t.Errorf("GET %s: %d %s", page, r.status, r.header.Get("Location"))
			}
		}
		csrf := d.csrf("/dashboard/password")
		for _, path := range []string{"/dashboard/credentials/rotate", "/dashboard/credentials/reveal", "/dashboard/members"} {
			r := d.send("POST", path, url.Values{"csrf": {csrf}, "email": {"x@example.com"}, "role": {"admin"}}, nil)
			if r.status != http.StatusSeeOther || r.header.Get("Location") != "/dashboard/password" {
				t.Errorf("POST %s: %d %s", path, r.status, r.header.Get("Location"))
			}
		}
		if currentSecret(t, h) != secretBefore || len(auditLog(t, h.api)) != recordsBefore {
			t.Fatal("a member who must change their password did something else")
		}
		page := d.get("/dashboard/password")
		// What the member must do is a warning, not a success.
		if page.status != http.StatusOK || !strings.Contains(string(page.body), `<p class="warning" role="status" id="must-change">`) ||
			!strings.Contains(string(page.body), `id="password-link"`) {
			t.Fatalf("password page: %d %.2000s", page.status, page.body)
		}

		// Refused changes: nothing changes; a wrong current password is
		// recorded and counts towards the lock.
		chosen := "correct horse battery staple"
		for _, c := range []struct {
			form   url.Values
			status int
			error  string
		}{
			{url.Values{"csrf": {"forged"}, "current": {given}, "new": {chosen}, "confirm": {chosen}}, http.StatusForbidden, "expired"},
			{url.Values{"current": {given}, "new": {chosen}, "confirm": {chosen + "!"}}, http.StatusBadRequest,
				"The new password and its confirmation differ."},
			{url.Values{"current": {given}, "new": {"short one"}, "confirm": {"short one"}}, http.StatusBadRequest,
				"The new password must be at least 15 characters long."},
			{url.Values{"current": {given}, "new": {given}, "confirm": {given}}, http.StatusBadRequest,
				"The new password must differ from the current one."},
			{url.Values{"current": {"guess"}, "new": {chosen}, "confirm": {chosen}}, http.StatusForbidden,
				"The current password is wrong"},
		} {
			if r := d.postPassword(c.form); r.status != c.status || !strings.Contains(pageError(r), c.error) {
				t.Errorf("%v: %d %q, want %d %q", c.form, r.status, pageError(r), c.status, c.error)
			}
		}
		if got := actions(auditLog(t, h.api))[recordsBefore:]; !slices.Equal(got, []string{"member.password_change:failure"}) {
			t.Fatalf("refused changes recorded %v", got)
		}
		if m := h.memberOf(h.clientID, "ada@example.com"); m.FailedAttempts != 1 || !m.MustChangePassword {
			t.Fatalf("after a wrong current password: %+v", m)
		}

		// The change.
		r := d.postPassword(url.Values{"current": {given}, "new": {chosen}, "confirm": {chosen}})
		// The forced change done, the member goes on to the overview.
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/dashboard?notice=password.changed" {
			t.Fatalf("change: %d %s %s", r.status, r.header.Get("Location"), pageError(r))
		}
		if r := d.get("/dashboard?notice=password.changed"); r.status != http.StatusOK ||
			!strings.Contains(string(r.body), `<p class="notice" role="status">Your password was changed. Your other sign-ins were ended.</p>`) ||
			!strings.Contains(string(r.body), "<h1>Overview</h1>") {
			t.Fatalf("after the change: %d %.2000s", r.status, r.body)
		}
		if r := d.get("/dashboard/password"); strings.Contains(string(r.body), `id="must-change"`) {
			t.Fatalf("the password page after the change: %.2000s", r.body)
		}
		if r := d.get("/dashboard"); r.status != http.StatusOK {
			t.Fatalf("this sign-in after the change: %d", r.status)
		}
		if r := other.get("/dashboard"); r.status != http.StatusSeeOther || r.header.Get("Location") != "/dashboard/signin" {
			t.Fatalf("the other sign-in after the change: %d %s", r.status, r.header.Get("Location"))
		}
		if r := h.dash().signIn("ada@example.com", given); r.status != http.StatusUnauthorized {
			t.Fatalf("the old password: %d", r.status)
		}
		h.dash().mustSignIn("ada@example.com", chosen)
		recs := auditLog(t, h.api)
		var change *client.AuditRecord
		for i := range recs {
			if recs[i].Event.Action == "member.password_change" && recs[i].Event.Outcome.Status == "success" {
				change = &recs[i]
			}
		}
		if change == nil || change.Actor.Email != "ada@example.com" || change.Target.Type != "member" ||
			change.Target.Name == nil || *change.Target.Name != "ada@example.com" || change.Context.UserAgent != dashUA {
			t.Fatalf("the change's record: %+v", change)
		}
		if m := h.memberOf(h.clientID, "ada@example.com"); m.FailedAttempts != 0 || m.MustChangePassword {
			t.Fatalf("after the change: %+v", m)
		}
		if head, err := audit.Verify(context.Background(), h.store, h.clientID); err != nil || head.Records != int64(len(recs)) {
			t.Fatalf("verify: %+v %v", head, err)
		}

		// Wrong current passwords lock the member like wrong sign-ins:
		// the lock ends the sign-in that guessed, and even the right
		// password is refused at sign-in.
		for range member.DefaultMaxFailures {
			if r := d.postPassword(url.Values{"current": {"guess"}, "new": {chosen + "2"}, "confirm": {chosen + "2"}}); r.status != http.StatusForbidden {
				t.Fatalf("wrong current password: %d", r.status)
			}
		}
		if r := d.get("/dashboard/password"); r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), "/dashboard/signin") {
			t.Fatalf("the sign-in that locked the member: %d %s", r.status, r.header.Get("Location"))
		}
		if r := h.dash().signIn("ada@example.com", chosen); r.status != http.StatusUnauthorized {
			t.Fatalf("sign-in while locked: %d", r.status)
		}
	})
}

// With the password checks all taken (here the one there is, by a held
// check), sign-in waits CheckWait and gives up: the service answers
// ErrBusy, the dashboard 503 with Retry-After and a page that says why, as
// does a password change. Once the check ends, sign-in works.
func TestDashboardSignInBusy(t *testing.T) {
	t.Parallel()
	const heldGuess = "a guess whose check is held"
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		password := h.addMember("ada@example.com", store.RoleAdmin)
		d := h.dash()
		d.mustSignIn("ada@example.com", password)

		held := h.heldCheck()
		answer := make(chan error, 1)
		go func() {
			_, err := h.members.SignIn(ctx, "nobody@example.com", heldGuess, audit.Origin{UserAgent: "held"})
			answer <- err
		}()
		select {
		case <-held.begun:
		case err := <-answer:
			t.Fatalf("the held sign-in ended (%v) before its check", err)
		}
		r := h.dash().signIn("ada@example.com", password)
		if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "1" ||
			!strings.Contains(string(r.body), "Too many people are signing in right now. Try again in a moment.") {
			t.Fatalf("busy sign-in page: %d %s %.2000s", r.status, r.header.Get("Retry-After"), r.body)
		}
		if _, err := h.members.SignIn(ctx, "nobody@example.com", "guess", audit.Origin{UserAgent: "test"}); !errors.Is(err, member.ErrBusy) {
			t.Fatalf("busy service: %v", err)
		}
		r = d.postPassword(url.Values{"current": {password}, "new": {password + "!"}, "confirm": {password + "!"}})
		if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "1" || !strings.Contains(pageError(r), "Too many people") {
			t.Fatalf("busy password change: %d %s %q", r.status, r.header.Get("Retry-After"), pageError(r))
		}
		close(held.release)
		if err := <-answer; !errors.Is(err, member.ErrInvalidCredentials) {
			t.Fatalf("the held sign-in: %v", err)
		}
		h.dash().mustSignIn("ada@example.com", password)
	}, withMembers(member.Config{MaxConcurrentChecks: 1, CheckWait: 20 * time.Millisecond}), withHeldCheck(heldGuess))
}

// A member who is removed, or locked by repeated wrong passwords, loses
// the sign-ins already made at once: the old cookie's next request gets
// the sign-in page, and it does not come back when the lock ends.
func TestDashboardLockedOrRemovedMemberSignedOut(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		adaPassword := h.addMember("ada@example.com", store.RoleAdmin)
		bobPassword := h.addMember("bob@example.com", store.RoleDeveloper)
		carolPassword := h.addMember("carol@example.com", store.RoleDeveloper)
		admin, bob, carol := h.dash(), h.dash(), h.dash()
		admin.mustSignIn("ada@example.com", adaPassword)
		bob.mustSignIn("bob@example.com", bobPassword)
		carol.mustSignIn("carol@example.com", carolPassword)
		for _, d := range []*dash{bob, carol} {
			if r := d.get("/dashboard"); r.status != http.StatusOK {
				t.Fatalf("signed in: %d", r.status)
			}
		}
		signedOut := func(d *dash, who string) {
			t.Helper()
			r := d.get("/dashboard/members")
			if r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), "/dashboard/signin") {
				t.Fatalf("%s's old sign-in: %d %s", who, r.status, r.header.Get("Location"))
			}
		}

		// Removed by an admin in the dashboard.
		bobID := h.memberOf(h.clientID, "bob@example.com").ID
		if r := admin.post("/dashboard/members/"+bobID+"/remove", nil); r.status != http.StatusSeeOther {
			t.Fatalf("remove: %d %.300s", r.status, r.body)
		}
		signedOut(bob, "bob")

		// Locked by wrong passwords sent from elsewhere.
		guesser := h.dash()
		for range member.DefaultMaxFailures {
			if r := guesser.signIn("carol@example.com", "guess"); r.status != http.StatusUnauthorized {
				t.Fatalf("wrong password: %d", r.status)
			}
		}
		signedOut(carol, "carol")
		h.clock.Advance(member.DefaultLockout)
		signedOut(carol, "carol, after the lock")
		if r := admin.get("/dashboard"); r.status != http.StatusOK {
			t.Fatalf("the admin's sign-in ended too: %d", r.status)
		}
	})
}
