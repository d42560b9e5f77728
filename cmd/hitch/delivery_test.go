package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	mrand "math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hitchdev/hitch/client"
)

// TestCrashLosesNoEvent kills `hitch serve` with SIGKILL while deliveries
// are backlogged and checks, after a restart on the same database, that
// every event whose request was answered is delivered at least once, that
// the event list holds nothing else than those and the ones whose request
// the kill cut off, and that a change that fails delivers nothing.
func TestCrashLosesNoEvent(t *testing.T) {
	const (
		total  = 2000 // committed events the test makes
		killAt = 1000 // committed events before the kill
	)
	forEachStore(t, func(t *testing.T, name string, env []string) {
		// In parallel: most of a run can be waiting for River to rescue
		// the jobs the kill left running (docs/operations.md).
		t.Parallel()
		start := time.Now()
		env = append(deliveryEnv(t, "crash_test_client"), env...)
		rcv := newWebhookReceiver(func() time.Duration { return time.Duration(20+mrand.IntN(31)) * time.Millisecond })
		srv := httptest.NewServer(rcv)
		t.Cleanup(srv.Close)

		node := startHitch(t, env)
		api := newHitchAPI(t, "crash_test_client")
		rcv.setSecret(api.createEndpoint(t, node.base, srv.URL))
		// The kill must find deliveries queued and in flight however fast
		// this machine delivers: past a fifth of them, they wait.
		rcv.holdAfter(killAt / 5)

		// Until killAt: create events, then kill the node from the goroutine
		// that saw the killAt-th answer, while the others have requests in
		// flight.
		led := &eventLedger{committed: map[string]string{}, cutOff: map[string]bool{}}
		var kill sync.Once
		var backlogAtKill, inFlightAtKill int
		createTestEvents(t, api, []string{node.base}, led, total, killAt, func() {
			kill.Do(func() {
				inFlightAtKill = rcv.waitingDeliveries()
				led.kill(node.kill)
				backlogAtKill = led.count() - rcv.distinct()
			})
		})
		rcv.release()
		t.Logf("killed after %d committed events (%d requests cut off), %d not yet delivered, %d deliveries in flight, at %s",
			led.count(), len(led.cutOff), backlogAtKill, inFlightAtKill, time.Since(start).Round(time.Millisecond))
		if backlogAtKill <= 0 {
			t.Errorf("no delivery backlog at the kill: the test did not crash mid-delivery")
		}

		node = startHitch(t, env)
		led.resume()
		createTestEvents(t, api, []string{node.base}, led, total, 0, nil)
		if led.count() != total {
			t.Fatalf("%d committed events, want %d", led.count(), total)
		}

		committed := led.ids()
		if missing := rcv.waitFor(committed, 90*time.Second); len(missing) > 0 {
			t.Fatalf("%d of %d committed events not delivered after 90 s; e.g. %s attempts: %s",
				len(missing), len(committed), missing[0], api.attempts(t, node.base, missing[0]))
		}
		t.Logf("every committed event delivered at %s", time.Since(start).Round(time.Millisecond))

		// The event list is the committed events and at most the ones whose
		// request the kill cut off (they may have committed unanswered).
		listed := api.listEvents(t, node.base)
		var extra int
		for id, ev := range listed {
			if _, ok := led.committed[id]; ok {
				continue
			}
			if ev.Type != "TEST" || !led.cutOff[ev.Payload.Data.Message] {
				t.Errorf("listed event %s (%s %q) was never answered and was not cut off by the kill", id, ev.Type, ev.Payload.Data.Message)
			}
			extra++
		}
		for id := range led.committed {
			if _, ok := listed[id]; !ok {
				t.Errorf("committed event %s is not listed", id)
			}
		}
		if missing := rcv.waitFor(slices.Collect(maps.Keys(listed)), 10*time.Second); len(missing) > 0 {
			t.Errorf("%d listed events not delivered, e.g. %s", len(missing), missing[0])
		}

		// A change that fails records no event and delivers nothing; an
		// account that is disconnected already records nothing either. The
		// disconnect that succeeds is the control: its delivery shows that
		// the others would have arrived by then.
		ctx := context.Background()
		c := client.New(node.base, api.clientID, api.secret, client.WithHTTPClient(api.http))
		// A link that starts no background work (a card switch would
		// record CARD_FAILED when its card window ends).
		if err := c.DevLinkAccount(ctx, &client.DevLinkRequest{ExternalUserID: "u1", MerchantID: 1,
			Transactions: &client.DevTransactions{New: false}}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			user     string
			merchant int64
			code     string
		}{
			{"u1", 2, "MERCHANT_ACCOUNT_NOT_FOUND"},
			{"nobody", 1, "USER_NOT_FOUND"},
		} {
			var apiErr *client.Error
			if err := c.DevDisconnectAccount(ctx, tc.user, tc.merchant); !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Code != tc.code {
				t.Errorf("disconnect %s at merchant %d: %v, want 404 %s", tc.user, tc.merchant, err, tc.code)
			}
		}
		for range 2 {
			if err := c.DevDisconnectAccount(ctx, "u1", 1); err != nil {
				t.Fatal(err)
			}
		}
		after := api.listEvents(t, node.base)
		var added []string
		for id, ev := range after {
			if _, ok := listed[id]; !ok {
				added = append(added, ev.Type)
			}
		}
		if len(added) != 2 || !slices.Contains(added, "AUTHENTICATED") || !slices.Contains(added, "ACCOUNT_LOGIN_REQUIRED") {
			t.Errorf("the account changes recorded %v, want one AUTHENTICATED and one ACCOUNT_LOGIN_REQUIRED", added)
		}
		if missing := rcv.waitFor(slices.Collect(maps.Keys(after)), 10*time.Second); len(missing) > 0 {
			t.Errorf("%d events not delivered, e.g. %s", len(missing), missing[0])
		}
		// Every delivery job finished, those the kill left running too
		// (River rescues them, and they deliver again): nothing more
		// can arrive.
		waitMetric(t, node.base, "hitch_webhook_queue_depth", 0, 2*time.Minute)
		if n := rcv.ofType("ACCOUNT_LOGIN_REQUIRED"); n != 1 {
			t.Errorf("%d ACCOUNT_LOGIN_REQUIRED events delivered, want 1", n)
		}
		for id := range rcv.received() {
			if _, ok := after[id]; !ok {
				t.Errorf("delivered %s, which is not a listed event", id)
			}
		}
		if n := rcv.badSignatures.Load(); n > 0 {
			t.Errorf("%d deliveries failed signature verification", n)
		}
		extraNote := ""
		if extra > 0 {
			extraNote = fmt.Sprintf(" (%d of them committed although the kill cut off their answer)", extra)
		}
		t.Logf("%d events listed%s, %d deliveries, %d duplicates, total %s",
			len(after), extraNote, rcv.deliveries(), rcv.duplicates(), time.Since(start).Round(time.Millisecond))
	})
}

// TestScaleOutDeliversOnce runs two `hitch serve` nodes on one PostgreSQL
// database and checks that their workers share the deliveries without
// running any twice.
func TestScaleOutDeliversOnce(t *testing.T) {
	const total = 2000
	forEachStore(t, func(t *testing.T, name string, env []string) {
		if name != "postgres" {
			t.Skip("scale-out needs a shared PostgreSQL")
		}
		start := time.Now()
		env = append(deliveryEnv(t, "scale_out_client"), env...)
		rcv := newWebhookReceiver(nil)
		srv := httptest.NewServer(rcv)
		t.Cleanup(srv.Close)

		// One node first, so that the second finds the schema migrated and
		// the development client made.
		a := startHitch(t, env)
		b := startHitch(t, env)
		api := newHitchAPI(t, "scale_out_client")
		rcv.setSecret(api.createEndpoint(t, b.base, srv.URL))

		led := &eventLedger{committed: map[string]string{}, cutOff: map[string]bool{}}
		createTestEvents(t, api, []string{a.base, b.base}, led, total, 0, nil)
		if missing := rcv.waitFor(led.ids(), 60*time.Second); len(missing) > 0 {
			t.Fatalf("%d of %d events not delivered after 60 s, e.g. %s", len(missing), total, missing[0])
		}
		// Every job finished, each with its one success recorded by
		// one node or the other: no job can run a second time.
		waitMetric(t, a.base, "hitch_webhook_queue_depth", 0, 30*time.Second)
		const succeeded = `hitch_webhook_deliveries_total{outcome="succeeded"}`
		eventually(t, "each delivery's success counted once", 10*time.Second, func() bool {
			return metric(t, a.base, succeeded)+metric(t, b.base, succeeded) == total
		})
		if d := rcv.duplicates(); d > 0 {
			t.Errorf("%d deliveries arrived twice", d)
		}
		if n := rcv.deliveries(); n != total {
			t.Errorf("%d deliveries for %d events", n, total)
		}
		if n := rcv.badSignatures.Load(); n > 0 {
			t.Errorf("%d deliveries failed signature verification", n)
		}
		na, nb := metric(t, a.base, succeeded), metric(t, b.base, succeeded)
		if na == 0 || nb == 0 {
			t.Errorf("deliveries by node: %v and %v, want both to work", na, nb)
		}
		t.Logf("%d events delivered by two nodes (%v + %v), %d duplicates, total %s",
			total, na, nb, rcv.duplicates(), time.Since(start).Round(time.Millisecond))
	})
}

// deliveryEnv is the configuration the delivery tests run nodes with: a
// fixed development client, a master key of their own (nodes sharing a
// database must share it), fast retries and no rate limit.
func deliveryEnv(t *testing.T, clientID string) []string {
	t.Helper()
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	return []string{
		"HITCH_ADDR=127.0.0.1:0",
		"HITCH_LOG_FORMAT=json",
		"HITCH_MASTER_KEY=" + hex.EncodeToString(key),
		"HITCH_DEV_CLIENT_ID=" + clientID,
		"HITCH_DEV_SECRET=" + deliveryDevSecret,
		"HITCH_WEBHOOK_RETRY_SCHEDULE=0s,200ms,500ms,1s,1s,1s,1s,1s",
		"HITCH_WEBHOOK_TIMEOUT=2s",
		"HITCH_WEBHOOK_WORKERS=10",
		"HITCH_RATE_LIMIT=0",
	}
}

var deliveryDevSecret = strings.Repeat("k", 40)

// hitchBuild is the hitch binary, built once per test run, next to the test
// binary: `go test` removes its work directory, and so the build, when it
// finishes.
var hitchBuild struct {
	once sync.Once
	path string
	err  error
}

func hitchBinary(t *testing.T) string {
	t.Helper()
	hitchBuild.once.Do(func() {
		exe, err := os.Executable()
		if err != nil {
			hitchBuild.err = err
			return
		}
		dir, err := os.MkdirTemp(filepath.Dir(exe), "hitch-bin-")
		if err != nil {
			hitchBuild.err = err
			return
		}
		path := filepath.Join(dir, "hitch")
		if out, err := exec.Command("go", "build", "-o", path, ".").CombinedOutput(); err != nil {
			hitchBuild.err = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		hitchBuild.path = path
	})
	if hitchBuild.err != nil {
		t.Fatal(hitchBuild.err)
	}
	return hitchBuild.path
}

// hitchProcess is `hitch serve` in a process of its own, which the test can
// kill without giving it a chance to clean up.
type hitchProcess struct {
	cmd    *exec.Cmd
	logs   *lockedBuffer
	base   string
	exited chan struct{}
}

// listeningRE finds the address in hitch's start line, in JSON or text logs.
var listeningRE = regexp.MustCompile(`hitch listening.*?addr"?[:=]"?([^"\s]+)`)

// startHitch starts `hitch serve` with env added to this process's
// environment (less its HITCH_* variables), and waits until it listens.
func startHitch(t *testing.T, env []string) *hitchProcess {
	t.Helper()
	p := startProcess(t, env, listeningRE, "serve")
	p.base = "http://" + p.base
	return p
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}

// kill sends SIGKILL and waits for the process to end.
func (p *hitchProcess) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// webhookReceiver is a webhook endpoint that verifies and records deliveries.
type webhookReceiver struct {
	delay         func() time.Duration // nil answers at once
	badSignatures atomic.Int64

	mu      sync.Mutex
	secret  string
	counts  map[string]int    // webhook-id → deliveries
	types   map[string]string // webhook-id → event type
	holdAt  int               // with held open, deliveries of new events past this many wait
	held    chan struct{}     // closed by release
	waiting int               // deliveries waiting on held
}

func newWebhookReceiver(delay func() time.Duration) *webhookReceiver {
	return &webhookReceiver{delay: delay, counts: map[string]int{}, types: map[string]string{}}
}

// holdAfter makes deliveries of new events wait, unanswered, once n
// distinct events have arrived, until release or until the sender goes
// away; a waiting delivery is not recorded.
func (rc *webhookReceiver) holdAfter(n int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.holdAt, rc.held = n, make(chan struct{})
}

func (rc *webhookReceiver) release() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.held != nil {
		close(rc.held)
		rc.held = nil
	}
}

// wait holds a delivery of a new event while the receiver holds. It
// reports false when the sender went away first.
func (rc *webhookReceiver) wait(r *http.Request, id string) bool {
	rc.mu.Lock()
	held := rc.held
	if _, seen := rc.counts[id]; held == nil || seen || len(rc.counts) < rc.holdAt {
		rc.mu.Unlock()
		return true
	}
	rc.waiting++
	rc.mu.Unlock()
	defer func() {
		rc.mu.Lock()
		rc.waiting--
		rc.mu.Unlock()
	}()
	select {
	case <-held:
		return true
	case <-r.Context().Done():
		return false
	}
}

// waitingDeliveries counts deliveries waiting on holdAfter.
func (rc *webhookReceiver) waitingDeliveries() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.waiting
}

func (rc *webhookReceiver) setSecret(s string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.secret = s
}

func (rc *webhookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var ev struct {
		Event string `json:"event"`
	}
	_ = json.Unmarshal(body, &ev)
	id := r.Header.Get("webhook-id")
	if !rc.wait(r, id) {
		return
	}
	rc.mu.Lock()
	secret := rc.secret
	rc.counts[id]++
	rc.types[id] = ev.Event
	rc.mu.Unlock()
	if err := client.VerifyWebhook(r.Header, body, secret, 0); err != nil {
		rc.badSignatures.Add(1)
	}
	if rc.delay != nil {
		time.Sleep(rc.delay())
	}
	w.WriteHeader(http.StatusOK)
}

// received returns a copy of the delivery counts by webhook-id.
func (rc *webhookReceiver) received() map[string]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make(map[string]int, len(rc.counts))
	for id, n := range rc.counts {
		out[id] = n
	}
	return out
}

func (rc *webhookReceiver) distinct() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.counts)
}

func (rc *webhookReceiver) deliveries() int {
	n := 0
	for _, c := range rc.received() {
		n += c
	}
	return n
}

// duplicates counts deliveries beyond the first of each event.
func (rc *webhookReceiver) duplicates() int {
	n := 0
	for _, c := range rc.received() {
		n += c - 1
	}
	return n
}

// ofType counts the distinct events of type typ delivered.
func (rc *webhookReceiver) ofType(typ string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := 0
	for _, t := range rc.types {
		if t == typ {
			n++
		}
	}
	return n
}

// waitFor waits up to timeout for a delivery of every id and returns the
// ones still missing.
func (rc *webhookReceiver) waitFor(ids []string, timeout time.Duration) []string {
	deadline := time.Now().Add(timeout)
	for {
		got := rc.received()
		var missing []string
		for _, id := range ids {
			if got[id] == 0 {
				missing = append(missing, id)
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			return missing
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// hitchAPI calls the endpoints that the client package does not cover,
// with the fixed development credentials.
type hitchAPI struct {
	http     *http.Client
	clientID string
	secret   string
}

func newHitchAPI(t testing.TB, clientID string) *hitchAPI {
	return &hitchAPI{
		http:     validatedClient(t, &http.Transport{MaxIdleConnsPerHost: 32}),
		clientID: clientID,
		secret:   deliveryDevSecret,
	}
}

// call sends a JSON request and decodes a 200 answer into out. A transport
// error (the node died) is returned; any other answer is a status.
func (c *hitchAPI) call(base, method, path string, body, out any) (int, error) {
	var reader io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		reader = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, base+path, reader)
	if err != nil {
		return 0, err
	}
	req.SetBasicAuth(c.clientID, c.secret)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode == http.StatusOK && out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: %w: %s", method, path, err, data)
		}
	}
	if resp.StatusCode != http.StatusOK && out != nil {
		return resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, data)
	}
	return resp.StatusCode, nil
}

// createEndpoint registers a webhook endpoint and returns its secret.
func (c *hitchAPI) createEndpoint(t *testing.T, base, receiverURL string) string {
	t.Helper()
	var ep struct {
		Secret string `json:"secret"`
	}
	if _, err := c.call(base, "POST", "/webhooks/endpoints", map[string]string{"url": receiverURL}, &ep); err != nil {
		t.Fatal(err)
	}
	return ep.Secret
}

type listedEvent struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Payload struct {
		Data struct {
			Message string `json:"message"`
		} `json:"data"`
	} `json:"payload"`
}

// listEvents reads every page of GET /webhooks/events.
func (c *hitchAPI) listEvents(t *testing.T, base string) map[string]listedEvent {
	t.Helper()
	out := map[string]listedEvent{}
	cursor := ""
	for {
		var page struct {
			Data       []listedEvent `json:"data"`
			NextCursor *string       `json:"next_cursor"`
		}
		path := "/webhooks/events?limit=100"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		if _, err := c.call(base, "GET", path, nil, &page); err != nil {
			t.Fatal(err)
		}
		for _, ev := range page.Data {
			if _, dup := out[ev.ID]; dup {
				t.Fatalf("event %s listed twice", ev.ID)
			}
			out[ev.ID] = ev
		}
		if page.NextCursor == nil {
			return out
		}
		cursor = *page.NextCursor
	}
}

// attempts returns the delivery attempts of an event as the API lists them,
// for failure messages.
func (c *hitchAPI) attempts(t *testing.T, base, eventID string) string {
	t.Helper()
	var out json.RawMessage
	if _, err := c.call(base, "GET", "/webhooks/events/"+eventID+"/attempts", nil, &out); err != nil {
		return err.Error()
	}
	return string(out)
}

// eventLedger is what the test knows of the TEST events it asked for: each
// request carries a unique message.
type eventLedger struct {
	mu        sync.Mutex
	next      int
	inFlight  int
	killed    bool              // no claims, and failed requests are cut off, until resume
	committed map[string]string // event id → message, for answered requests
	cutOff    map[string]bool   // messages of requests that got no answer after the kill
}

// claim returns the message of a new request, or false once answered and
// outstanding requests reach target, or while the node is killed.
func (l *eventLedger) claim(target int) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.killed || len(l.committed)+l.inFlight >= target {
		return "", false
	}
	l.next++
	l.inFlight++
	return "event " + strconv.Itoa(l.next), true
}

// done records the answer to a request and returns how many events are
// committed.
func (l *eventLedger) done(msg, eventID string, err error) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inFlight--
	switch {
	case err == nil:
		l.committed[eventID] = msg
	case l.killed:
		l.cutOff[msg] = true
		err = nil
	}
	return len(l.committed), err
}

// kill stops claims and counts failed requests as cut off from now on, then
// runs killNode while the requests already claimed are in flight.
func (l *eventLedger) kill(killNode func()) {
	l.mu.Lock()
	l.killed = true
	l.mu.Unlock()
	killNode()
}

// resume allows claims again, for a restarted node.
func (l *eventLedger) resume() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.killed = false
}

func (l *eventLedger) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.committed)
}

func (l *eventLedger) ids() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Collect(maps.Keys(l.committed))
}

// createTestEvents makes TEST events with eight concurrent requests, spread
// over bases in turn, until target are committed. With atCount set, the
// goroutine whose answer makes count committed events calls it while the
// others have requests in flight; the ledger's kill stops them all.
func createTestEvents(t *testing.T, c *hitchAPI, bases []string, l *eventLedger, target, count int, atCount func()) {
	t.Helper()
	var wg sync.WaitGroup
	var turn atomic.Int64
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for {
				msg, ok := l.claim(target)
				if !ok {
					return
				}
				base := bases[int(turn.Add(1))%len(bases)]
				var resp struct {
					EventID string `json:"event_id"`
				}
				_, err := c.call(base, "POST", "/development/webhooks/test", map[string]string{"message": msg}, &resp)
				if err == nil && resp.EventID == "" {
					err = errors.New("POST /development/webhooks/test: no event_id")
				}
				n, err := l.done(msg, resp.EventID, err)
				if err != nil {
					errs <- err
					return
				}
				if atCount != nil && n >= count {
					atCount()
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
}

// waitMetric waits up to timeout for a node's sample to read want.
func waitMetric(t *testing.T, base, sample string, want float64, timeout time.Duration) {
	t.Helper()
	eventually(t, fmt.Sprintf("%s to read %v", sample, want), timeout, func() bool { return metric(t, base, sample) == want })
}

// eventually retries check every 50 ms until it passes or timeout has gone
// by.
func eventually(t *testing.T, what string, timeout time.Duration, check func() bool) {
	t.Helper()
	for deadline := time.Now().Add(timeout); !check(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v", what, timeout)
		}
	}
}

// metric reads one sample, named with its labels, from a node's /metrics;
// 0 when absent.
func metric(t *testing.T, base, sample string) float64 {
	t.Helper()
	resp, err := validatedClient(t, http.DefaultTransport).Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET /metrics: %d %.500s", resp.StatusCode, b)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), sample+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("metrics: %q: %v", sc.Text(), err)
			}
			return f
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return 0
}
