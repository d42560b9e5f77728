package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hitchdev/hitch/internal/audit"
	"github.com/hitchdev/hitch/internal/config"
	"github.com/hitchdev/hitch/internal/npmtest"
	"github.com/hitchdev/hitch/internal/store"
)

// chromiumPath is Debian's Chromium, which CI installs (.ci/run).
const chromiumPath = "/usr/bin/chromium"

// TestBrowserLinkFlow runs a real Hitch (development, workers on) and drives
// headless Chromium through it as a newcomer would: the demo page opens the
// web SDK, the user searches a merchant and logs in with user_good /
// pass_good, and the page's onSuccess fires; then the one-time code path
// (0000 refused, 1234 accepted); then an expired session, which shows an
// error and calls onError with EXPIRED_SESSION; and a session about to
// expire, for which the flow asks for an extension; and recoverable errors
// (a failed search, a wrong security answer, a rate-limited answer) shown
// on screen and tied to their fields. Each page is photographed
// at desktop and phone width into HITCH_TEST_ARTIFACTS (or a kept temporary
// folder named in the log). The test then checks what the logins did: the
// linked accounts, and AUTHENTICATED webhooks carrying the session ids.
// It runs on every store of the suite (forEachBrowserStore).
func TestBrowserLinkFlow(t *testing.T) {
	requireChromium(t)
	node, scripts := browserScripts(t)
	t.Parallel()
	forEachBrowserStore(t, func(t *testing.T, storeName string, db []string) {
		testBrowserLinkFlow(t, node, scripts, storeName, db)
	})
}

func testBrowserLinkFlow(t *testing.T, node, scripts, storeName string, db []string) {
	artifacts := browserArtifacts(t, "flow-"+storeName+"-")
	const clientID = "browser_client_01"
	base, env, logs := serveForBrowser(t, db, clientID, "HITCH_WEBHOOK_RETRY_SCHEDULE=0s,200ms,500ms")
	api := newHitchAPI(t, clientID)

	hooks := &hookRecorder{}
	receiver := httptest.NewServer(hooks)
	t.Cleanup(receiver.Close)
	api.createEndpoint(t, base, receiver.URL)

	expired := sessionExpiringIn(t, env, api, base, clientID, -time.Minute)
	expiring := sessionExpiringIn(t, env, api, base, clientID, 90*time.Second)

	stdout := runBrowserScript(t, node, scripts, "flow.mjs", 4*time.Minute, logs,
		"HITCH_URL="+base, "OUT_DIR="+artifacts, "RUN_ID="+fmt.Sprint(time.Now().UnixNano()),
		"CLIENT_ID="+clientID, "EXPIRED_SESSION="+expired, "EXPIRING_SESSION="+expiring, "CHROMIUM="+chromiumPath)

	type result struct {
		Viewport       string   `json:"viewport"`
		Scenario       string   `json:"scenario"`
		ExternalUserID string   `json:"externalUserId"`
		SessionID      string   `json:"sessionId"`
		Callbacks      []string `json:"callbacks"`
		Errors         []struct {
			Code string `json:"code"`
		} `json:"errors"`
	}
	var results []result
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		var r result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("browser script printed %q: %v", sc.Text(), err)
		}
		results = append(results, r)
	}
	if len(results) != 8 {
		t.Fatalf("%d scenario results, want 8 (3 scenarios at 2 widths, the refresh and the recoverable errors): %s", len(results), stdout.String())
	}
	for _, r := range results {
		switch r.Scenario {
		case "success", "otp":
			merchantID := map[string]int64{"success": 4, "otp": 1}[r.Scenario] // Netflix, Amazon
			q := url.Values{"external_user_id": {r.ExternalUserID}, "merchant_id": {fmt.Sprint(merchantID)}}
			if status, err := api.call(base, "GET", "/accounts/get?"+q.Encode(), nil, nil); err != nil || status != http.StatusOK {
				t.Errorf("%s/%s: GET /accounts/get: %d %v", r.Viewport, r.Scenario, status, err)
			}
			if r.SessionID == "" {
				t.Errorf("%s/%s: the demo shows no session id", r.Viewport, r.Scenario)
				continue
			}
			ev := hooks.wait(t, "AUTHENTICATED", r.ExternalUserID)
			if ev == nil {
				continue
			}
			if ev.SessionID != r.SessionID || ev.Merchant.ID != merchantID || ev.Data.EntryPoint != "demo" || ev.Data.Metadata["source"] != "demo" {
				t.Errorf("%s/%s: AUTHENTICATED %+v, want session_id %s, merchant %d, entrypoint demo, metadata.source demo",
					r.Viewport, r.Scenario, ev, r.SessionID, merchantID)
			}
			if r.Scenario == "success" {
				want := []string{"open", "onEvent MERCHANT_CLICKED", "onEvent LOGIN_STARTED", "onEvent AUTHENTICATED", "onSuccess"}
				if len(r.Callbacks) != len(want) {
					t.Errorf("%s: callbacks %q, want %q", r.Viewport, r.Callbacks, want)
					continue
				}
				for i, w := range want {
					if !strings.HasPrefix(r.Callbacks[i], w) {
						t.Errorf("%s: callback %d is %q, want %s…", r.Viewport, i, r.Callbacks[i], w)
					}
				}
			}
		case "expired":
			if len(r.Errors) != 1 || r.Errors[0].Code != "EXPIRED_SESSION" {
				t.Errorf("%s: onError got %+v, want one EXPIRED_SESSION", r.Viewport, r.Errors)
			}
		}
	}
	// Neither a session value nor a test password is ever logged.
	for _, canary := range []string{"sess_", "pass_good", "pass_otp", expired, expiring} {
		if strings.Contains(logs.String(), canary) {
			t.Errorf("the logs contain %q", canary)
		}
	}
	shots, _ := filepath.Glob(filepath.Join(artifacts, "*.png"))
	if len(shots) != 16 {
		t.Errorf("%d screenshots in %s, want 16", len(shots), artifacts)
	}
}

// TestBrowserLinkCrossOrigin embeds the web SDK as a developer does: in a
// page of their own on another origin than Hitch (localhost rather than
// 127.0.0.1), which loads <hitch>/sdk/hitch.js and opens the flow for a
// session its server created. The same-origin demo cannot tell a flow that
// answers its own origin (or '*') from one that answers the parent's, nor
// an SDK that trusts any message from the page's origin from one that
// trusts only its frame. crossorigin.mjs logs in through the flow, checks
// onSuccess and where each message was addressed, and that forged messages
// (a success the page posts itself, one from another Hitch frame, one from
// the SDK's frame navigated to another origin, a second init into the
// flow) are ignored; the test checks the account.
func TestBrowserLinkCrossOrigin(t *testing.T) {
	requireChromium(t)
	node, scripts := browserScripts(t)
	t.Parallel()
	artifacts := browserArtifacts(t, "crossorigin-")

	// SQLite only: what this checks is where the browser's messages go; the
	// store's part (a session and a login) is TestBrowserLinkFlow's, which
	// runs on both stores.
	const clientID = "browser_cross_01"
	base, _, logs := serveForBrowser(t, sqliteOnly(t), clientID)
	if !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("hitch listens on %s, want 127.0.0.1 (the page is served as localhost)", base)
	}
	api := newHitchAPI(t, clientID)

	// The developer's server creates the session and puts it in its page.
	userID := fmt.Sprintf("cross-%d", time.Now().UnixNano())
	var s struct {
		Session string `json:"session"`
	}
	if status, err := api.call(base, "POST", "/session/create", map[string]string{"type": "transaction_link", "external_user_id": userID}, &s); err != nil || status != http.StatusOK {
		t.Fatalf("create session: %d %v", status, err)
	}
	page := fmt.Sprintf(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>A developer's app</title>
<script src="%s/sdk/hitch.js"></script></head>
<body data-session="%s" data-client-id="%s">
<h1>A developer's app</h1>
<button id="open" type="button">Link an account</button>
<script>
window.calls = [];
window.messages = [];
window.addEventListener('message', function (e) {
  window.messages.push({ origin: e.origin, name: e.data && e.data.name });
});
document.getElementById('open').addEventListener('click', function () {
  window.link = new HitchLink();
  window.link.open({
    sessionId: document.body.dataset.session,
    clientId: document.body.dataset.clientId,
    environment: 'development',
    onSuccess: function (s) { window.calls.push({ cb: 'onSuccess', product: s.product, details: s }); },
    onError: function (e) { window.calls.push({ cb: 'onError', code: e.errorCode, message: e.errorDescription }); },
    onEvent: function (e) { window.calls.push({ cb: 'onEvent', product: e.product, event: e.event }); },
    onExit: function (x) { window.calls.push({ cb: 'onExit', product: x.product }); }
  });
});
</script>
</body></html>
`, html.EscapeString(base), html.EscapeString(s.Session), html.EscapeString(clientID))
	dev := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
		case "/elsewhere": // where the test navigates the SDK's frame
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, "<!doctype html><title>Elsewhere</title><p>Not Hitch.")
			return
		case "/favicon.ico": // asked for by Chromium; none here
			w.WriteHeader(http.StatusNoContent)
			return
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, page)
	}))
	t.Cleanup(dev.Close)
	pageURL := strings.Replace(dev.URL, "http://127.0.0.1:", "http://localhost:", 1) + "/"

	stdout := runBrowserScript(t, node, scripts, "crossorigin.mjs", 3*time.Minute, logs,
		"HITCH_URL="+base, "PAGE_URL="+pageURL, "OUT_DIR="+artifacts, "CHROMIUM="+chromiumPath)
	var r struct {
		FrameOrigin   string   `json:"frameOrigin"`
		PageOrigin    string   `json:"pageOrigin"`
		TargetOrigins []string `json:"targetOrigins"`
		Calls         []string `json:"calls"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &r); err != nil {
		t.Fatalf("browser script printed %q: %v", stdout.String(), err)
	}
	t.Logf("flow %s in page %s; messages addressed to %q", r.FrameOrigin, r.PageOrigin, r.TargetOrigins)
	want := []string{"onEvent MERCHANT_CLICKED", "onEvent LOGIN_STARTED", "onEvent AUTHENTICATED", "onSuccess", "onExit"}
	if strings.Join(r.Calls, ",") != strings.Join(want, ",") {
		t.Errorf("callbacks %q, want %q", r.Calls, want)
	}
	q := url.Values{"external_user_id": {userID}, "merchant_id": {"4"}} // Netflix
	if status, err := api.call(base, "GET", "/accounts/get?"+q.Encode(), nil, nil); err != nil || status != http.StatusOK {
		t.Errorf("GET /accounts/get: %d %v", status, err)
	}
	if strings.Contains(logs.String(), s.Session) || strings.Contains(logs.String(), "pass_good") {
		t.Error("the logs contain the session value or the password")
	}
}

// browserScripts installs playwright-core (pinned in testdata/browser) and
// returns node and the folder holding the script.
func browserScripts(t *testing.T) (node, dir string) {
	t.Helper()
	files := map[string][]byte{}
	for _, name := range []string{"package.json", "package-lock.json", "flow.mjs", "dashboard.mjs", "crossorigin.mjs", "timers.mjs", "production.mjs",
		"knotapi.mjs", "newcomer.mjs", "health.mjs", "requests.mjs"} {
		b, err := os.ReadFile(filepath.Join("testdata", "browser", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(files["package.json"], &pkg); err != nil || pkg.Dependencies["playwright-core"] == "" {
		t.Fatalf("testdata/browser/package.json must pin playwright-core (%v)", err)
	}
	return npmtest.Install(t, "playwright-core-"+pkg.Dependencies["playwright-core"], files)
}

// sessionExpiringIn creates a session and moves its expiry to d from now
// through the store (into the past, as 30 minutes of waiting would).
func sessionExpiringIn(t *testing.T, env []string, api *hitchAPI, base, clientID string, d time.Duration) string {
	t.Helper()
	st := openTestStore(t, env)
	defer st.Close()
	session, err := createSessionExpiringIn(st, api, base, clientID, d)
	if err != nil {
		t.Fatal(err)
	}
	return session
}

// createSessionExpiringIn is sessionExpiringIn with the store open, for
// callers other than the test's goroutine (an HTTP handler).
func createSessionExpiringIn(st store.Store, api *hitchAPI, base, clientID string, d time.Duration) (string, error) {
	var s struct {
		Session   string `json:"session"`
		SessionID string `json:"session_id"`
	}
	if status, err := api.call(base, "POST", "/session/create", map[string]string{"type": "link", "external_user_id": "browser-expired"}, &s); err != nil || status != http.StatusOK {
		return "", fmt.Errorf("create session: %d %v", status, err)
	}
	if _, err := st.SessionUpdateExpiry(context.Background(), &store.SessionUpdateExpiryParams{ClientID: clientID, ID: s.SessionID,
		ExpiresAt: time.Now().UTC().Add(d)}); err != nil {
		return "", fmt.Errorf("move the session's expiry: %w", err)
	}
	return s.Session, nil
}

// openTestStore opens the store a hitch run with env uses, beside it, as an
// operator with database access could.
func openTestStore(t *testing.T, env []string) store.Store {
	t.Helper()
	cfg, err := config.NewFlagSet("test", lookupIn(env)).Parse(nil, env)
	if err != nil {
		t.Fatal(err)
	}
	st, err := openStore(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// hookRecorder keeps the webhook bodies it receives.
type hookRecorder struct {
	mu     sync.Mutex
	events []hookEvent
}

type hookEvent struct {
	Event          string `json:"event"`
	SessionID      string `json:"session_id"`
	ExternalUserID string `json:"external_user_id"`
	Merchant       struct {
		ID int64 `json:"id"`
	} `json:"merchant"`
	Data struct {
		EntryPoint string            `json:"entrypoint"`
		Metadata   map[string]string `json:"metadata"`
	} `json:"data"`
}

func (h *hookRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var ev hookEvent
	if json.Unmarshal(body, &ev) == nil {
		h.mu.Lock()
		h.events = append(h.events, ev)
		h.mu.Unlock()
	}
	w.WriteHeader(http.StatusOK)
}

// wait returns the first event of type typ for the user, waiting for it
// up to a minute, as long as a browser step may take: only a failing run
// waits that long.
func (h *hookRecorder) wait(t *testing.T, typ, externalUserID string) *hookEvent {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		h.mu.Lock()
		for _, ev := range h.events {
			if ev.Event == typ && ev.ExternalUserID == externalUserID {
				h.mu.Unlock()
				return &ev
			}
		}
		h.mu.Unlock()
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("no %s webhook for %s", typ, externalUserID)
	return nil
}

// TestBrowserDashboard runs a real Hitch and drives headless Chromium
// through the team dashboard at desktop and phone width (dashboard.mjs):
// sign-in (a wrong password first), choosing a password of the member's
// own (the desktop run: a wrong current password and a too short new one
// are refused first; the phone run signs in with the new one), revealing
// and rotating the API secret, every page, editing the webhook endpoint's
// URL and event filter (a refused edit first), hiding and showing a
// merchant, the audit log's pages and date filter, sign-out. It then
// checks the endpoint through the API and, with the rotated secret, that
// GET /audit_logs returns the records of exactly what was done, and that
// the audit chain verifies. It runs on every store of the suite
// (forEachBrowserStore).
func TestBrowserDashboard(t *testing.T) {
	requireChromium(t)
	node, scripts := browserScripts(t)
	t.Parallel()
	forEachBrowserStore(t, func(t *testing.T, storeName string, db []string) {
		testBrowserDashboard(t, node, scripts, storeName, db)
	})
}

// dashboardAuditFixtures is how many records of an earlier day the
// dashboard test puts in the audit log: more than a page of the audit page
// (50), so that both its paging and its date filter have pages to turn.
const dashboardAuditFixtures = 55

func testBrowserDashboard(t *testing.T, node, scripts, storeName string, db []string) {
	artifacts := browserArtifacts(t, "dashboard-"+storeName+"-")
	const clientID = "browser_dash_01"
	base, env, logs := serveForBrowser(t, db, clientID)
	api := newHitchAPI(t, clientID)

	// Something to look at: an earlier day's audit records (the first ones
	// of the log), an endpoint, a test event, a user with a linked account
	// and its transactions.
	auditDay := time.Now().UTC().AddDate(0, 0, -3).Truncate(24 * time.Hour)
	writeEarlierAuditRecords(t, env, clientID, auditDay.Add(12*time.Hour), dashboardAuditFixtures)
	receiver := httptest.NewServer(&hookRecorder{})
	t.Cleanup(receiver.Close)
	api.createEndpoint(t, base, receiver.URL)
	if status, err := api.call(base, "POST", "/development/webhooks/test", nil, nil); err != nil || status != http.StatusOK {
		t.Fatalf("test event: %d %v", status, err)
	}
	userID := fmt.Sprintf("dash-user-%d", time.Now().UnixNano())
	if status, err := api.call(base, "POST", "/development/accounts/link", map[string]any{"external_user_id": userID,
		"merchant_id": 4, "transactions": map[string]bool{"new": true}}, nil); err != nil || status != http.StatusOK {
		t.Fatalf("link: %d %v", status, err)
	}
	code, out, stderr := cli(t, env, "members", "add", "--client-id", clientID, "--email", "ada@example.com", "--role", "admin",
		"--name", "Ada Lovelace", "--json")
	var member struct {
		Password string `json:"password"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &member) != nil {
		t.Fatalf("members add: %d %s %s", code, out, stderr)
	}

	const chosen = "a password of Ada's own choosing"
	editedURL := receiver.URL + "/edited"
	stdout := runBrowserScript(t, node, scripts, "dashboard.mjs", 4*time.Minute, logs,
		"HITCH_URL="+base, "OUT_DIR="+artifacts, "EMAIL=ada@example.com", "PASSWORD="+member.Password,
		"NEW_PASSWORD="+chosen, "USER_ID="+userID, "ENDPOINT_URL="+receiver.URL, "EDITED_URL="+editedURL,
		"AUDIT_DAY="+auditDay.Format(time.DateOnly), "AUDIT_FIXTURES="+fmt.Sprint(dashboardAuditFixtures),
		"CHROMIUM="+chromiumPath)
	type result struct {
		Viewport string `json:"viewport"`
		Revealed string `json:"revealed"`
		Rotated  string `json:"rotated"`
	}
	var results []result
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		var r result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("browser script printed %q: %v", sc.Text(), err)
		}
		results = append(results, r)
	}
	if len(results) != 2 {
		t.Fatalf("%d results, want 2: %s", len(results), stdout.String())
	}
	// The desktop run reveals the secret Hitch started with and rotates it;
	// the phone run reveals that rotated secret.
	if results[0].Revealed != deliveryDevSecret || results[1].Revealed != results[0].Rotated || results[1].Rotated == results[0].Rotated {
		t.Fatalf("secrets: %+v", results)
	}
	api.secret = results[1].Rotated

	// The edit reached the endpoint deliveries use.
	var eps struct {
		Data []struct {
			URL    string   `json:"url"`
			Events []string `json:"events"`
		} `json:"data"`
	}
	if status, err := api.call(base, "GET", "/webhooks/endpoints", nil, &eps); err != nil || status != http.StatusOK {
		t.Fatalf("GET /webhooks/endpoints: %d %v", status, err)
	}
	if len(eps.Data) != 1 || eps.Data[0].URL != editedURL || strings.Join(eps.Data[0].Events, ",") != "AUTHENTICATED,TEST" {
		t.Errorf("endpoints after the edit: %+v, want one at %s for AUTHENTICATED and TEST", eps.Data, editedURL)
	}

	// The audit log of today (the earlier day's records are the script's),
	// read with the newest secret.
	var recs []struct {
		Event struct {
			Action  string `json:"action"`
			Outcome struct {
				Status string `json:"status"`
			} `json:"outcome"`
		} `json:"event"`
		Actor struct {
			Name  string `json:"name"`
			Email string `json:"email"`
		} `json:"actor"`
		Context struct {
			UserAgent string `json:"user_agent"`
		} `json:"context"`
	}
	var page struct {
		Data       json.RawMessage `json:"data"`
		NextCursor *string         `json:"next_cursor"`
	}
	since := url.Values{"start": {auditDay.AddDate(0, 0, 1).Format("2006-01-02T15:04:05Z")}}
	if status, err := api.call(base, "GET", "/audit_logs?"+since.Encode(), nil, &page); err != nil || status != http.StatusOK || page.NextCursor != nil {
		t.Fatalf("GET /audit_logs: %d %v", status, err)
	}
	if err := json.Unmarshal(page.Data, &recs); err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		action := r.Event.Action
		if action == "webhook.update" { // the edit's action before it had its own name
			action = "webhook.edit"
		}
		got = append(got, action+":"+r.Event.Outcome.Status)
		switch {
		case r.Event.Action == "webhook.add": // through the API
			if r.Actor.Name != audit.APIActorName || r.Actor.Email != "" {
				t.Errorf("%s by %q <%s>", r.Event.Action, r.Actor.Name, r.Actor.Email)
			}
		case r.Event.Action != "member.add" && (r.Actor.Email != "ada@example.com" || !strings.HasPrefix(r.Context.UserAgent, "hitch-browser-test")):
			t.Errorf("%s by %q with %q", r.Event.Action, r.Actor.Email, r.Context.UserAgent)
		}
	}
	// Reading the audit log, refused edits and a too short new password
	// write nothing; a wrong current password is a failed password change.
	perViewport := []string{"secret.view:success", "secret.rotate:success",
		"user.view:success", "merchant.hide:success", "merchant.show:success", "signout:success"}
	want := []string{"webhook.add:success", "member.add:success", "signin:failure", "signin:success",
		"member.password_change:failure", "member.password_change:success",
		"secret.view:success", "secret.rotate:success", "webhook.edit:success"}
	want = append(want, perViewport[2:]...)
	want = append(append(want, "signin:failure", "signin:success"), perViewport...)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("audit log\n%v, want\n%v", got, want)
	}
	wantRecords := fmt.Sprintf("%d records", dashboardAuditFixtures+len(want))
	if code, out, stderr := cli(t, env, "audit", "verify", "--client-id", clientID); code != 0 || !strings.Contains(out, wantRecords) {
		t.Fatalf("audit verify: %d %q %q, want %s", code, out, stderr, wantRecords)
	}
	if strings.Contains(logs.String(), member.Password) || strings.Contains(logs.String(), chosen) ||
		strings.Contains(logs.String(), results[0].Rotated) {
		t.Error("the logs contain a password or a secret")
	}
	shots, _ := filepath.Glob(filepath.Join(artifacts, "dashboard-*.png"))
	if len(shots) != 32 {
		t.Errorf("%d screenshots in %s, want 32", len(shots), artifacts)
	}
}

// writeEarlierAuditRecords writes n records of a teammate's at (a second
// apart) into the audit log of clientID, through the audit log's own
// writer, so that the chain stays whole.
func writeEarlierAuditRecords(t *testing.T, env []string, clientID string, at time.Time, n int) {
	t.Helper()
	st := openTestStore(t, env)
	defer st.Close()
	ctx := context.Background()
	for i := range n {
		log := audit.NewLog(func() time.Time { return at.Add(time.Duration(i) * time.Second) })
		user := fmt.Sprintf("earlier-user-%02d", i+1)
		err := st.InTx(ctx, func(ex store.Executor) error {
			_, err := log.Write(ctx, ex, audit.Entry{ClientID: clientID, Environment: "development", Action: audit.ActionUserView,
				Actor: audit.Actor{Name: "Grace Hopper", Email: "grace@example.com"}, TargetType: audit.TargetUser,
				TargetName: &user, Origin: audit.Origin{IP: "192.0.2.10", UserAgent: "an earlier browser"}})
			return err
		})
		if err != nil {
			t.Fatalf("audit record %d: %v", i+1, err)
		}
	}
}

// browserArtifacts is the folder a browser test saves screenshots to:
// under HITCH_TEST_ARTIFACTS, or a kept temporary folder named in the log.
func browserArtifacts(t *testing.T, prefix string) string {
	t.Helper()
	root := os.Getenv("HITCH_TEST_ARTIFACTS")
	if root == "" {
		var err error
		if root, err = os.MkdirTemp("", "hitch-browser-"); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(root, prefix+"browser-"+time.Now().UTC().Format("20060102T150405"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots: %s", dir)
	return dir
}

// serveForBrowser runs hitch serve in development on a free port, on the
// store db configures (one of databases), with the fixed development
// credentials of clientID, until the test ends; it returns the base URL,
// the environment it runs with and its logs.
func serveForBrowser(t *testing.T, db []string, clientID string, extraEnv ...string) (string, []string, *lockedBuffer) {
	t.Helper()
	env := append(append([]string{
		"HITCH_LOG_FORMAT=json",
		"HITCH_DEV_CLIENT_ID=" + clientID,
		"HITCH_DEV_SECRET=" + deliveryDevSecret,
	}, db...), extraEnv...)
	srv := startServe(t, env)
	t.Cleanup(func() { srv.stop(t) })
	logs := srv.logs
	return "http://" + waitFor(t, logs, regexp.MustCompile(`"msg":"hitch listening".*?"addr":"([^"]+)"`)), env, logs
}

// forEachBrowserStore runs fn as a parallel subtest, named after the
// store, on each store of storetest.Backends: SQLite, and PostgreSQL in a
// schema of the subtest's own (skipped, saying why, without
// HITCH_TEST_DATABASE_URL; failed when CI=true).
func forEachBrowserStore(t *testing.T, fn func(t *testing.T, storeName string, db []string)) {
	t.Helper()
	forEachStore(t, func(t *testing.T, name string, env []string) {
		t.Parallel()
		fn(t, name, env)
	})
}

// sqliteOnly is the SQLite store of databaseEnv, for a browser test whose
// subject does not depend on the store.
func sqliteOnly(t *testing.T) []string {
	t.Helper()
	return databaseEnv(t, "sqlite")
}

// requireChromium skips the test without Debian's chromium, or fails it
// when CI=true, where .ci/run installs it.
func requireChromium(t *testing.T) {
	t.Helper()
	npmtest.RequireTool(t, chromiumPath, "Debian's chromium (apt-get install chromium)")
}

// runBrowserScript runs a Node script of testdata/browser with env added,
// killing it after limit, and returns what it printed; it fails the test,
// with the script's output and hitch's last log lines, if the script fails.
func runBrowserScript(t *testing.T, node, scripts, script string, limit time.Duration, logs *lockedBuffer, env ...string) *bytes.Buffer {
	t.Helper()
	cmd := exec.Command(node, script)
	cmd.Dir = scripts
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	timer := time.AfterFunc(limit, func() { _ = cmd.Process.Kill() })
	err := cmd.Run()
	timer.Stop()
	if err != nil {
		t.Fatalf("browser script %s: %v\nstdout:\n%s\nstderr:\n%s\nhitch logs:\n%s", script, err, &stdout, &stderr,
			lastLines(logs.String(), 30))
	}
	return &stdout
}
