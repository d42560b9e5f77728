package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hitchdev/hitch/internal/store"
)

// loggedCall is one API request the request log test makes, with what the
// API answered.
type loggedCall struct {
	RequestID string          `json:"request_id"`
	Method    string          `json:"method"`
	Path      string          `json:"path"`
	Status    int             `json:"status"`
	ErrorCode string          `json:"error_code"`
	User      string          `json:"user"`
	Body      json.RawMessage `json:"body"`
}

// rawCall sends body as is with the developer's credentials and returns
// the answer.
func (c *hitchAPI) rawCall(t *testing.T, base, method, path, body, user string) (loggedCall, []byte) {
	t.Helper()
	var reader io.Reader
	if body != "" {
		reader = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, reader)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(c.clientID, c.secret)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	call := loggedCall{RequestID: resp.Header.Get("X-Request-Id"), Method: method, Path: strings.SplitN(path, "?", 2)[0],
		Status: resp.StatusCode, User: user}
	if resp.StatusCode >= 400 {
		var e struct {
			Code      string `json:"error_code"`
			RequestID string `json:"request_id"`
		}
		if err := json.Unmarshal(b, &e); err != nil || e.RequestID != call.RequestID {
			t.Fatalf("%s %s: error body %s: %v", method, path, b, err)
		}
		call.ErrorCode, call.Body = e.Code, b
	}
	return call, b
}

// TestBrowserRequestLog makes API requests of a developer on a real Hitch
// (a session, a webhook endpoint, card data in the plain form, a request
// for a user without accounts, a refused session), then drives headless
// Chromium as a viewer of the developer's team through the request log
// (requests.mjs): every request is listed with the status, error code and
// user the API answered; searching the request_id of an error body opens
// its request, whose response body is the error body the API sent; the
// 4xx filter lists the refused requests only; no page shows the API
// secret, the session value, the webhook secret, the card number or the
// CVV, and the viewer is offered no form but signing out. The stored rows
// hold none of them either. It runs on every store of the suite.
func TestBrowserRequestLog(t *testing.T) {
	requireChromium(t)
	node, scripts := browserScripts(t)
	t.Parallel()
	forEachBrowserStore(t, func(t *testing.T, storeName string, db []string) {
		testBrowserRequestLog(t, node, scripts, storeName, db)
	})
}

func testBrowserRequestLog(t *testing.T, node, scripts, storeName string, db []string) {
	artifacts := browserArtifacts(t, "requests-"+storeName+"-")
	const clientID = "browser_reqlog_01"
	base, env, logs := serveForBrowser(t, db, clientID)
	api := newHitchAPI(t, clientID)
	receiver := httptest.NewServer(&hookRecorder{})
	t.Cleanup(receiver.Close)

	user := fmt.Sprintf("reqlog-user-%d", time.Now().UnixNano())
	var calls []loggedCall
	call := func(method, path, body, user string) []byte {
		c, b := api.rawCall(t, base, method, path, body, user)
		calls = append(calls, c)
		return b
	}
	var session struct{ Session string }
	if err := json.Unmarshal(call("POST", "/session/create", `{"type": "link", "external_user_id": "`+user+`"}`, user),
		&session); err != nil || !strings.HasPrefix(session.Session, "sess_") {
		t.Fatalf("session: %v", err)
	}
	var endpoint struct{ Secret string }
	if err := json.Unmarshal(call("POST", "/webhooks/endpoints", `{"url": "`+receiver.URL+`"}`, ""), &endpoint); err != nil ||
		!strings.HasPrefix(endpoint.Secret, "whsec_") {
		t.Fatalf("endpoint: %v", err)
	}
	const number, cvv = "4929613714536570", "8317"
	call("POST", "/card", `{"task_id": 987654, "card": {"number": "`+number+`", "expiration": "12/2031", "cvv": "`+cvv+
		`"}, "user": {"name": {"first_name": "Ada", "last_name": "Canarylastname"}}}`, "")
	call("GET", "/accounts/get?external_user_id="+user+"-none&merchant_id=1", "", user+"-none")
	call("POST", "/session/create", `{"type": "nope", "external_user_id": "`+user+`"}`, user)
	var errorCall *loggedCall
	for i := range calls {
		if calls[i].Status >= 400 && calls[i].Path == "/accounts/get" {
			errorCall = &calls[i]
		}
	}
	if errorCall == nil || calls[0].Status != 200 || calls[1].Status != 200 {
		t.Fatalf("calls: %+v", calls)
	}
	canaries := []string{deliveryDevSecret, session.Session, endpoint.Secret, number, cvv, "Canarylastname"}

	// The request log is written off the request path: wait until it holds
	// every request, then check the rows.
	st := openTestStore(t, env)
	defer st.Close()
	dev, err := st.ClientGetByID(context.Background(), clientID)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		row := waitRequestLogged(t, st, dev.ID, c.RequestID)
		text := fmt.Sprintf("%+v", *row)
		for _, canary := range canaries {
			if holdsCanary(text, canary) {
				t.Errorf("the stored request %s %s holds %q", c.Method, c.Path, canary)
			}
		}
	}

	code, out, stderr := cli(t, env, "members", "add", "--client-id", clientID, "--email", "viewer@example.com",
		"--role", "viewer", "--name", "Vera Viewer", "--json")
	var member struct {
		Password string `json:"password"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &member) != nil {
		t.Fatalf("members add: %d %s %s", code, out, stderr)
	}
	expect, err := json.Marshal(calls)
	if err != nil {
		t.Fatal(err)
	}
	canaryJSON, _ := json.Marshal(canaries)
	stdout := runBrowserScript(t, node, scripts, "requests.mjs", 4*time.Minute, logs,
		"HITCH_URL="+base, "OUT_DIR="+artifacts, "EMAIL=viewer@example.com", "PASSWORD="+member.Password,
		"NEW_PASSWORD=a viewer's own password", "CALLS="+string(expect), "ERROR_ID="+errorCall.RequestID,
		"CANARIES="+string(canaryJSON), "CHROMIUM="+chromiumPath)
	var result struct {
		Listed int `json:"listed"`
		Pages  int `json:"pages"`
	}
	sc := bufio.NewScanner(bytes.NewReader(stdout.Bytes()))
	if !sc.Scan() || json.Unmarshal(sc.Bytes(), &result) != nil {
		t.Fatalf("browser script printed %q", stdout.String())
	}
	if result.Listed != len(calls) || result.Pages != len(calls) {
		t.Errorf("the script saw %d listed requests and %d pages, want %d", result.Listed, result.Pages, len(calls))
	}
}

// waitRequestLogged returns the logged request, waiting for the request
// log's writer up to a minute (only a failing run waits that long).
func waitRequestLogged(t *testing.T, st store.Store, clientID, requestID string) *store.RequestLog {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		row, err := st.RequestLogGet(context.Background(), clientID, requestID)
		if err == nil {
			return row
		}
		if time.Now().After(deadline) {
			t.Fatalf("request %s was not logged: %v", requestID, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
