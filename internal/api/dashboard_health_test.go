package api_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hitchdev/hitch/client"
	"github.com/hitchdev/hitch/internal/store"
)

// failingReceiver answers 500 with a body naming the event to deliveries
// of one event type and 200 to the rest.
type failingReceiver struct {
	mu    sync.Mutex
	got   int
	fails string
	url   string
}

func newFailingReceiver(t *testing.T, fails string) *failingReceiver {
	r := &failingReceiver{fails: fails}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got++
		r.mu.Unlock()
		if strings.Contains(string(body), `"event":"`+r.fails+`"`) {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, "receiver refused "+r.fails)
		}
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/hooks"
	return r
}

func (r *failingReceiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got
}

// shownNumber reads the text of the element with id on a page.
func shownNumber(t *testing.T, page, id string) string {
	t.Helper()
	m := regexp.MustCompile(`id="` + regexp.QuoteMeta(id) + `">([^<]*)<`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no #%s on the page: %.3000s", id, page)
	}
	return m[1]
}

// section is the part of a page from an element with id to its </section>.
func section(t *testing.T, page, id string) string {
	t.Helper()
	i := strings.Index(page, `id="`+id+`"`)
	if i < 0 {
		t.Fatalf("no #%s on the page", id)
	}
	return page[i : i+strings.Index(page[i:], "</section>")]
}

// The health pages show what the API says happened, made through the API:
// deliveries to a receiver that refuses one event type, links, a
// disconnect, card switches (one refused), a detection. A viewer sees the
// pages but no resend or replay, and its posts are refused with nothing
// queued or recorded; a developer's replay and resend are queued and
// audited.
func TestDashboardHealth(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		rcv := newFailingReceiver(t, "ACCOUNT_LOGIN_REQUIRED")
		ep := h.addEndpoint(t, rcv.url)

		for _, m := range []int64{1, 2} {
			if err := h.api.DevLinkAccount(ctx, &client.DevLinkRequest{ExternalUserID: "u2", MerchantID: m,
				Transactions: &client.DevTransactions{New: true}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := h.api.DevDisconnectAccount(ctx, "u2", 1); err != nil {
			t.Fatal(err)
		}
		ok := h.authenticated(t, "u1", 1, "card-1", nil)
		if _, err := h.api.SubmitCard(ctx, &client.SubmitCardRequest{JWE: h.encrypt(t, goodCard("4242424242424242")), TaskID: ok.TaskID}); err != nil {
			t.Fatal(err)
		}
		bad := h.authenticated(t, "u3", 1, "card-3", nil)
		if _, err := h.api.SubmitCard(ctx, &client.SubmitCardRequest{JWE: h.encrypt(t, goodCard("4000000000009953")), TaskID: bad.TaskID}); err != nil {
			t.Fatal(err)
		}
		h.waitEvent(t, h.clientID, "CARD_UPDATED", *ok.TaskID)
		h.waitEvent(t, h.clientID, "CARD_FAILED", *bad.TaskID)
		h.detect(t, h.api, h.clientID, "u1", "ada.lovelace@example.com")
		// A first login refused: no account, but a failed login all the same.
		s := h.flowSession(&client.CreateSessionRequest{Type: "transaction_link", ExternalUserID: "u4"})
		if st := h.login(s.Session, 2, "user_good", "wrong-password"); st.Status != "failed" {
			t.Fatalf("wrong password: %+v", st)
		}
		h.settle(t)

		// What the API says: every attempt of every event, and the accounts.
		var succeeded, failed int
		var refused string // the event the receiver refuses
		for _, ev := range h.events(h.clientID) {
			for _, a := range h.attempts(t, ev.ID) {
				if a.EndpointID != ep.ID {
					continue
				}
				if a.Outcome == "succeeded" {
					succeeded++
				} else {
					failed++
					refused = ev.ID
				}
			}
		}
		if failed != 3 || succeeded == 0 {
			t.Fatalf("the API lists %d succeeded and %d failed attempts, want 3 failed (one event, three tries)", succeeded, failed)
		}
		var connected, disconnected int
		for _, u := range []string{"u1", "u2", "u3"} {
			accts, err := h.api.ListAccounts(ctx, u, "")
			if err != nil {
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
		det := h.detectedEvents(t, h.clientID, "u1")
		if len(det) != 1 {
			t.Fatalf("%d detection events", len(det))
		}
		hits := len(det[0].Data.DetectedAccounts) + len(det[0].Data.UnsupportedAccounts)

		dev, viewer := h.dash(), h.dash()
		dev.mustSignIn("dev@example.com", h.addMember("dev@example.com", store.RoleDeveloper))
		viewer.mustSignIn("vic@example.com", h.addMember("vic@example.com", store.RoleViewer))

		// Delivery health, as each role sees it.
		for _, d := range []*dash{dev, viewer} {
			r := d.get("/dashboard/health/webhooks?window=hour")
			if r.status != http.StatusOK {
				t.Fatalf("delivery health: %d", r.status)
			}
			page := section(t, string(r.body), "health-"+ep.ID)
			rate := strconv.FormatFloat(float64(int(1000*float64(succeeded)/float64(succeeded+failed)+0.5))/10, 'f', -1, 64) + "%"
			for class, want := range map[string]string{"succeeded": strconv.Itoa(succeeded), "failed": "3", "rate": rate} {
				if !strings.Contains(page, `class="`+class+`">`+want+`<`) {
					t.Errorf("the endpoint's %s is not %s: %.2000s", class, want, page)
				}
			}
			if n := strings.Count(page, `class="failed-attempt" data-event="`+refused+`"`); n != 3 {
				t.Errorf("%d failed attempts listed, want 3", n)
			}
			if !strings.Contains(page, "receiver refused ACCOUNT_LOGIN_REQUIRED") || !strings.Contains(page, "<td data-label=\"Status\" class=\"status\">500</td>") {
				t.Errorf("no response snippet or status: %.3000s", page)
			}
			if !strings.Contains(page, `role="img" aria-labelledby="`+ep.ID+`-attempts-caption"`) || !strings.Contains(page, "<details") {
				t.Errorf("no accessible chart")
			}
			canAct := strings.Contains(page, `class="small secondary resend"`) || strings.Contains(page, "replay-form")
			if canAct != (d == dev) {
				t.Errorf("resend or replay shown: %v, to the developer: %v", canAct, d == dev)
			}
		}

		// A viewer's posts are refused, and nothing is queued or recorded.
		jobs, seq, got := len(h.deliveryJobs(t)), h.auditSeq(h.clientID), rcv.count()
		now := time.Now().UTC()
		replay := url.Values{"endpoint_id": {ep.ID}, "since": {now.Add(-time.Hour).Format("2006-01-02T15:04")},
			"until": {now.Format("2006-01-02T15:04")}}
		if r := viewer.post("/dashboard/health/webhooks/replay", replay); r.status != http.StatusForbidden {
			t.Fatalf("a viewer's replay: %d", r.status)
		}
		if r := viewer.post("/dashboard/webhooks/events/"+refused+"/resend", url.Values{"endpoint_id": {ep.ID}}); r.status != http.StatusForbidden {
			t.Fatalf("a viewer's resend: %d", r.status)
		}
		if n, s := len(h.deliveryJobs(t)), h.auditSeq(h.clientID); n != jobs || s != seq {
			t.Fatalf("after a viewer's refused posts: %d jobs (was %d), audit seq %d (was %d)", n, jobs, s, seq)
		}

		// A developer's replay queues every event of the range again, and is
		// recorded as event.replay naming the endpoint.
		events := len(h.events(h.clientID))
		r := dev.post("/dashboard/health/webhooks/replay", replay)
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/dashboard/health/webhooks?notice=events.replayed" {
			t.Fatalf("replay: %d %s %s", r.status, r.header.Get("Location"), pageError(r))
		}
		if n := len(h.deliveryJobs(t)); n != jobs+events {
			t.Fatalf("the replay queued %d deliveries, want %d (every event)", n-jobs, events)
		}
		rec := lastRecord(t, h)
		if rec.Event.Action != "event.replay" || rec.Target.Type != "webhook_endpoint" || *rec.Target.Name != rcv.url ||
			rec.Actor.Email != "dev@example.com" {
			t.Fatalf("replay record %+v", rec)
		}
		h.settle(t)
		if rcv.count() < got+events {
			t.Fatalf("the receiver got %d deliveries after the replay, want at least %d", rcv.count()-got, events)
		}
		// Resending the refused event from its failed attempt's button.
		before := len(h.attempts(t, refused))
		if r := dev.post("/dashboard/webhooks/events/"+refused+"/resend", url.Values{"endpoint_id": {ep.ID}}); r.status != http.StatusSeeOther {
			t.Fatalf("resend: %d", r.status)
		}
		h.settle(t)
		if n := len(h.attempts(t, refused)); n != before+3 {
			t.Fatalf("the resent event has %d attempts, want %d", n, before+3)
		}

		// Account health, against the API's accounts and events.
		page := string(viewer.get("/dashboard/health/accounts?window=hour").body)
		for id, want := range map[string]int{"accounts-connected": connected, "accounts-disconnected": disconnected,
			"accounts-unlinked": 0, "logins-authenticated": 4, "logins-failed": 1, "cards-succeeded": 1, "cards-failed": 1,
			"detections": 1, "detection-hits": hits} {
			if got := shownNumber(t, page, id); got != strconv.Itoa(want) {
				t.Errorf("#%s = %s, want %d", id, got, want)
			}
		}
		if connected != 3 || disconnected != 1 {
			t.Fatalf("the API lists %d connected and %d disconnected accounts", connected, disconnected)
		}
		if !strings.Contains(page, "insufficient funds: 1") {
			t.Errorf("the card switch failure's reason is not shown")
		}

		// u2's timeline: the logins, then the events, in order.
		seq = h.auditSeq(h.clientID)
		tl := string(viewer.get("/dashboard/health/user?id=u2").body)
		entries := regexp.MustCompile(`class="entry" data-kind="([^"]+)"><td class="nowrap" data-label="When">([^<]+)<`).FindAllStringSubmatch(tl, -1)
		count := map[string]int{}
		for i, e := range entries {
			count[e[1]]++
			if i > 0 && e[2] < entries[i-1][2] {
				t.Errorf("u2's timeline is out of order: %s after %s", e[2], entries[i-1][2])
			}
		}
		u2Events := 0
		for _, ev := range h.events(h.clientID) {
			if ev.ExternalUserID != nil && *ev.ExternalUserID == "u2" {
				u2Events++
			}
		}
		if count["login"] != 2 || count["event"] != u2Events || count["transaction"] == 0 || entries[0][1] != "login" {
			t.Errorf("u2's timeline: %v (the API has %d events of u2)", count, u2Events)
		}
		if !strings.Contains(tl, "ACCOUNT_LOGIN_REQUIRED") || h.auditSeq(h.clientID) != seq+1 || lastRecord(t, h).Event.Action != "user.view" {
			t.Errorf("the timeline is not the user's or not audited")
		}
		if accts, err := h.api.ListAccounts(ctx, "u4", ""); err != nil || len(accts) != 0 {
			t.Fatalf("u4's refused first login made accounts: %+v, %v", accts, err)
		}
		tl = string(viewer.get("/dashboard/health/user?id=u4").body)
		if n := strings.Count(tl, `data-kind="login"`); n != 2 || !strings.Contains(tl, "login_failed") {
			t.Errorf("u4's timeline shows %d login steps, want login_started and login_failed", n)
		}

		// The overview's figures.
		page = string(viewer.get("/dashboard").body)
		if got := shownNumber(t, page, "overview-relogin-count"); got != "1" {
			t.Errorf("accounts needing a new login: %s", got)
		}
		if got := shownNumber(t, page, "overview-delivery-rate"); !strings.HasSuffix(got, "%") {
			t.Errorf("delivery rate: %s", got)
		}
	}, withWorkers)
}
