package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hitchdev/hitch/client"
)

// healthReceiver answers 500 to ACCOUNT_LOGIN_REQUIRED deliveries and
// 200 to the rest, and keeps every body.
type healthReceiver struct {
	mu     sync.Mutex
	bodies []map[string]any
}

func (h *healthReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var ev map[string]any
	_ = json.Unmarshal(body, &ev)
	h.mu.Lock()
	h.bodies = append(h.bodies, ev)
	h.mu.Unlock()
	if ev["event"] == "ACCOUNT_LOGIN_REQUIRED" {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, "receiver refused ACCOUNT_LOGIN_REQUIRED")
	}
}

// first waits up to a minute for the first delivery of typ about user
// (at merchant, when not 0).
func (h *healthReceiver) first(t *testing.T, typ, user string, merchant float64) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		h.mu.Lock()
		for _, ev := range h.bodies {
			m, _ := ev["merchant"].(map[string]any)
			if ev["event"] == typ && ev["external_user_id"] == user && (merchant == 0 || m != nil && m["id"] == merchant) {
				h.mu.Unlock()
				return ev
			}
		}
		h.mu.Unlock()
	}
	t.Fatalf("no %s delivery about %s", typ, user)
	return nil
}

// healthSeen is what health.mjs read on the pages, per viewport.
type healthSeen struct {
	Viewport string `json:"viewport"`
	Overview struct {
		Relogin string `json:"relogin"`
		Rate    string `json:"rate"`
	} `json:"overview"`
	Delivery struct {
		Succeeded, Failed, Rate, Pending string
		FailedRows                       []struct{ Event, Status, Snippet string } `json:"failedRows"`
		TableSucceeded                   int                                       `json:"tableSucceeded"`
		TableFailed                      int                                       `json:"tableFailed"`
		ResendButtons                    int                                       `json:"resendButtons"`
		ReplayForms                      int                                       `json:"replayForms"`
	} `json:"delivery"`
	Refused *struct{ Replay, Resend int } `json:"refused"`
	Done    string                        `json:"done"`
	Account map[string]string             `json:"accounts"`
	Merch   []struct {
		Merchant     int64    `json:"merchant"`
		Connected    string   `json:"connected"`
		Disconnected string   `json:"disconnected"`
		Reasons      []string `json:"reasons"`
	} `json:"merchants"`
	Timeline []struct{ Kind, When, What string } `json:"timeline"`
	Scripts  int                                 `json:"scripts"`
}

// deliveryFigures are the API's answers: attempts to the endpoint that
// succeeded and failed, per event, from GET /webhooks/events/{id}/attempts.
func deliveryFigures(t *testing.T, api *hitchAPI, base, endpointID string) (succeeded, failed int, perEvent map[string]int, refused string) {
	t.Helper()
	perEvent = map[string]int{}
	for id := range api.listEvents(t, base) {
		var page struct {
			Data []struct {
				EndpointID string `json:"endpoint_id"`
				Outcome    string `json:"outcome"`
			} `json:"data"`
		}
		if _, err := api.call(base, "GET", "/webhooks/events/"+id+"/attempts", nil, &page); err != nil {
			t.Fatal(err)
		}
		for _, a := range page.Data {
			if a.EndpointID != endpointID {
				continue
			}
			perEvent[id]++
			if a.Outcome == "succeeded" {
				succeeded++
			} else {
				failed++
				refused = id
			}
		}
	}
	return succeeded, failed, perEvent, refused
}

// auditActions lists the actions of the developer's audit log, oldest first.
func auditActions(t *testing.T, api *hitchAPI, base string) []string {
	t.Helper()
	var page struct {
		Data []struct {
			Event struct {
				Action string `json:"action"`
			} `json:"event"`
			Actor struct {
				Email string `json:"email"`
			} `json:"actor"`
		} `json:"data"`
	}
	if _, err := api.call(base, "GET", "/audit_logs?limit=100", nil, &page); err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := len(page.Data) - 1; i >= 0; i-- {
		out = append(out, page.Data[i].Event.Action+":"+page.Data[i].Actor.Email)
	}
	return out
}

// TestBrowserHealth makes data through the API of a real Hitch (links, a
// disconnect, two card switches, a detection; webhook deliveries to a
// receiver that refuses ACCOUNT_LOGIN_REQUIRED, whose retry is an hour
// away) and has health.mjs read the health pages in Chromium, first as a
// viewer, then as a developer; it compares what was shown with the API's
// answers, checks that the viewer's refused posts changed nothing, and
// that the developer's resend and replay were queued and audited. On
// every store of the suite.
func TestBrowserHealth(t *testing.T) {
	requireChromium(t)
	node, scripts := browserScripts(t)
	t.Parallel()
	forEachBrowserStore(t, func(t *testing.T, storeName string, db []string) {
		testBrowserHealth(t, node, scripts, storeName, db)
	})
}

func testBrowserHealth(t *testing.T, node, scripts, storeName string, db []string) {
	artifacts := browserArtifacts(t, "health-"+storeName+"-")
	const clientID = "browser_health_01"
	base, env, logs := serveForBrowser(t, db, clientID, "HITCH_WEBHOOK_RETRY_SCHEDULE=0s,1h")
	api := newHitchAPI(t, clientID)
	rcv := &healthReceiver{}
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)
	var ep struct {
		ID string `json:"id"`
	}
	if _, err := api.call(base, "POST", "/webhooks/endpoints", map[string]string{"url": srv.URL + "/hooks"}, &ep); err != nil {
		t.Fatal(err)
	}

	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	userA, userB := "health-a-"+suffix, "health-b-"+suffix
	call := func(path string, body any) {
		t.Helper()
		if status, err := api.call(base, "POST", path, body, nil); err != nil || status != http.StatusOK && status != http.StatusAccepted {
			t.Fatalf("POST %s: %d %v", path, status, err)
		}
	}
	call("/development/accounts/link", map[string]any{"external_user_id": userA, "merchant_id": 4, "transactions": map[string]bool{"new": true}})
	call("/development/accounts/disconnect", map[string]any{"external_user_id": userA, "merchant_id": 4})
	user := client.CardUser{Name: client.CardName{FirstName: "Ada", LastName: "Lovelace"}, PhoneNumber: "+12125550123",
		Address: client.CardAddress{Street: "12 Analytical Way", City: "New York", Region: "US-NY", PostalCode: "10001", Country: "US"}}
	for _, c := range []struct{ user, number, outcome string }{{userA, "4242424242424242", "CARD_UPDATED"}, {userB, "4000000000009953", "CARD_FAILED"}} {
		call("/development/accounts/link", map[string]any{"external_user_id": c.user, "merchant_id": 1, "card_switcher": true, "card_id": "card-1"})
		auth := rcv.first(t, "AUTHENTICATED", c.user, 1)
		call("/card", map[string]any{"task_id": auth["task_id"], "user": user,
			"card": map[string]string{"number": c.number, "expiration": "12/2031", "cvv": "123"}})
		rcv.first(t, c.outcome, c.user, 0)
	}
	call("/detect", map[string]any{"external_user_id": userA, "email": "ada.lovelace@example.com"})
	detected := rcv.first(t, "NEW_DETECTED_ACCOUNTS_AVAILABLE", userA, 0)
	data := detected["data"].(map[string]any)
	hits := len(asList(data["detected_accounts"])) + len(asList(data["unsupported_accounts"]))

	// Every event has had its first attempt: the refused one's retry is an
	// hour away, so the figures hold still while the browser reads them.
	var succeeded, failed int
	var perEvent map[string]int
	var refused string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		succeeded, failed, perEvent, refused = deliveryFigures(t, api, base, ep.ID)
		if len(perEvent) == len(api.listEvents(t, base)) && failed == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries did not settle: %d succeeded, %d failed, %d of the events tried", succeeded, failed, len(perEvent))
		}
	}
	connected, disconnected := 0, 0
	for _, u := range []string{userA, userB} {
		var accts []struct {
			Connection struct {
				Status string `json:"status"`
			} `json:"connection"`
		}
		if _, err := api.call(base, "GET", "/accounts/get?"+url.Values{"external_user_id": {u}}.Encode(), nil, &accts); err != nil {
			t.Fatal(err)
		}
		for _, a := range accts {
			if a.Connection.Status == "connected" {
				connected++
			} else {
				disconnected++
			}
		}
	}
	var userEvents struct {
		Data []json.RawMessage `json:"data"`
	}
	if _, err := api.call(base, "GET", "/webhooks/events?limit=100&"+url.Values{"external_user_id": {userA}}.Encode(), nil, &userEvents); err != nil {
		t.Fatal(err)
	}

	members := map[string]string{}
	for _, m := range []struct{ email, role string }{{"vic@example.com", "viewer"}, {"dev@example.com", "developer"}} {
		code, out, stderr := cli(t, env, "members", "add", "--client-id", clientID, "--email", m.email, "--role", m.role,
			"--name", m.role, "--json")
		var added struct {
			Password string `json:"password"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &added) != nil {
			t.Fatalf("members add: %d %s %s", code, out, stderr)
		}
		members[m.role] = added.Password
	}
	run := func(mode, email string) []healthSeen {
		stdout := runBrowserScript(t, node, scripts, "health.mjs", 4*time.Minute, logs,
			"HITCH_URL="+base, "OUT_DIR="+artifacts, "MODE="+mode, "EMAIL="+email, "PASSWORD="+members[mode],
			"NEW_PASSWORD=the "+mode+"'s own password, long enough", "ENDPOINT_ID="+ep.ID, "USER_ID="+userA,
			"CHROMIUM="+chromiumPath)
		var seen []healthSeen
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var s healthSeen
			if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
				t.Fatalf("health.mjs printed %q: %v", sc.Text(), err)
			}
			seen = append(seen, s)
		}
		if len(seen) != 2 {
			t.Fatalf("%d results, want 2: %s", len(seen), stdout)
		}
		return seen
	}

	before := auditActions(t, api, base)
	for _, s := range run("viewer", "vic@example.com") {
		d := s.Delivery
		rate := strconv.FormatFloat(float64(int(1000*float64(succeeded)/float64(succeeded+failed)+0.5))/10, 'f', -1, 64) + "%"
		if d.Succeeded != strconv.Itoa(succeeded) || d.Failed != strconv.Itoa(failed) || d.Rate != rate ||
			d.TableSucceeded != succeeded || d.TableFailed != failed {
			t.Errorf("%s: delivery shown %+v, the API says %d succeeded and %d failed (%s)", s.Viewport, d, succeeded, failed, rate)
		}
		if len(d.FailedRows) != 1 || d.FailedRows[0].Event != refused || d.FailedRows[0].Status != "500" ||
			d.FailedRows[0].Snippet != "receiver refused ACCOUNT_LOGIN_REQUIRED" || d.Pending != refused {
			t.Errorf("%s: failed attempts %+v, oldest pending %q; want the refused event %s", s.Viewport, d.FailedRows, d.Pending, refused)
		}
		if d.ResendButtons != 0 || d.ReplayForms != 0 {
			t.Errorf("%s: a viewer is shown %d resend buttons and %d replay forms", s.Viewport, d.ResendButtons, d.ReplayForms)
		}
		if s.Viewport == "desktop" && (s.Refused == nil || s.Refused.Replay != http.StatusForbidden || s.Refused.Resend != http.StatusForbidden) {
			t.Errorf("a viewer's posts: %+v, want 403s", s.Refused)
		}
		want := map[string]int{"accounts-connected": connected, "accounts-disconnected": disconnected, "accounts-unlinked": 0,
			"logins-authenticated": 3, "logins-failed": 0, "cards-succeeded": 1, "cards-failed": 1, "detections": 1, "detection-hits": hits}
		for id, n := range want {
			if s.Account[id] != strconv.Itoa(n) {
				t.Errorf("%s: #%s shows %q, want %d", s.Viewport, id, s.Account[id], n)
			}
		}
		if s.Overview.Relogin != strconv.Itoa(disconnected) || s.Overview.Rate != rate {
			t.Errorf("%s: overview %+v, want %d to log in again and %s", s.Viewport, s.Overview, disconnected, rate)
		}
		reasons := ""
		for _, m := range s.Merch {
			reasons += strings.Join(m.Reasons, ",")
		}
		if reasons != "insufficient funds: 1" {
			t.Errorf("%s: card switch failure reasons %q", s.Viewport, reasons)
		}
		count := map[string]int{}
		for i, e := range s.Timeline {
			count[e.Kind]++
			if i > 0 && e.When < s.Timeline[i-1].When {
				t.Errorf("%s: the timeline is out of order at %d: %s after %s", s.Viewport, i, e.When, s.Timeline[i-1].When)
			}
		}
		if count["login"] != 2 || count["event"] != len(userEvents.Data) || count["card task"] != 2 || count["transaction"] == 0 {
			t.Errorf("%s: timeline %v; the API lists %d events of the user", s.Viewport, count, len(userEvents.Data))
		}
		if s.Scripts != 0 {
			t.Errorf("%s: %d scripts on the timeline page", s.Viewport, s.Scripts)
		}
	}
	// The viewer's refused posts queued nothing and recorded nothing but
	// its sign-ins, password change and timeline views.
	if s2, f2, per2, _ := deliveryFigures(t, api, base, ep.ID); s2 != succeeded || f2 != failed || per2[refused] != 1 {
		t.Fatalf("after the viewer: %d succeeded, %d failed, the refused event tried %d times", s2, f2, per2[refused])
	}
	for _, a := range auditActions(t, api, base)[len(before):] {
		if strings.HasPrefix(a, "event.") {
			t.Errorf("the viewer's run recorded %s", a)
		}
	}

	events := len(perEvent)
	for _, s := range run("developer", "dev@example.com") {
		if s.Viewport == "desktop" && (s.Done != "The range's events were queued to the endpoint again.") {
			t.Errorf("replay notice %q", s.Done)
		}
		if s.Delivery.ResendButtons == 0 || s.Delivery.ReplayForms != 1 {
			t.Errorf("%s: a developer is shown %d resend buttons and %d replay forms", s.Viewport, s.Delivery.ResendButtons, s.Delivery.ReplayForms)
		}
	}
	// The resend and the replay were delivered: every event once more, the
	// refused one twice more (each refused again), and both are audited.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		s2, f2, per2, _ := deliveryFigures(t, api, base, ep.ID)
		if s2+f2 == succeeded+failed+events+1 && per2[refused] == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the developer: %d attempts, want %d; the refused event tried %d times, want 3", s2+f2,
				succeeded+failed+events+1, per2[refused])
		}
	}
	var resent, replayed bool
	for _, a := range auditActions(t, api, base) {
		resent = resent || a == "event.resend:dev@example.com"
		replayed = replayed || a == "event.replay:dev@example.com"
	}
	if !resent || !replayed {
		t.Errorf("audit log %v lacks the developer's event.resend and event.replay", auditActions(t, api, base))
	}
	if strings.Contains(logs.String(), members["viewer"]) || strings.Contains(logs.String(), members["developer"]) {
		t.Error("the logs contain a password")
	}
	t.Logf("%s: %d events, %d attempts before the replay", storeName, events, succeeded+failed)
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
