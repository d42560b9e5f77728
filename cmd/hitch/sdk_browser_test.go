package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestBrowserKnotapiJS holds Hitch to the public web SDK, knotapi-js 1.1.1
// from npm, unchanged: a developer page written for it opens the flow with
// it and with Hitch's /sdk/hitch.js, through the same scenarios (a login
// with a wrong then a right one-time code; an expired session, an unknown
// session, an unknown client, no linkable merchant; and, for knotapi-js,
// a browser that sends no Sec-Fetch-Dest), and the two SDKs must
// call the page's callbacks with the same arguments, which must be what
// knotapi-js documents. knotapi-js hard-codes its hosts: Chromium resolves
// them to a TLS reverse proxy in front of Hitch, as an operator's DNS and
// proxy would (docs/link.md), so knotapi-js loads Hitch's flow at the root
// of its flow host and posts its analytics to Hitch's /events. The
// metadata each page gives open reaches the webhooks of its login, merged
// under the session's. SQLite only: the store's part of the metadata is
// TestLinkFlowSDKMetadata's (internal/api), on both stores.
func TestBrowserKnotapiJS(t *testing.T) {
	requireChromium(t)
	node, scripts := browserScripts(t)
	t.Parallel()
	artifacts := browserArtifacts(t, "knotapi-")

	const clientID = "browser_knot_01"
	base, env, logs := serveForBrowser(t, sqliteOnly(t), clientID)
	api := newHitchAPI(t, clientID)
	hooks := &hookRecorder{}
	receiver := httptest.NewServer(hooks)
	t.Cleanup(receiver.Close)
	api.createEndpoint(t, base, receiver.URL)

	// The operator's reverse proxy: TLS for knotapi-js's host names (with
	// the test's certificate, which the browser is told to accept), every
	// path passed to Hitch as it is.
	target, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewUnstartedServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.SetXForwarded()
	}})
	// The test's certificate names neither knotapi-js host: Chromium's
	// handshakes log errors even where the script accepts it
	// (ignoreHTTPSErrors), and say nothing the results do not.
	proxy.Config.ErrorLog = log.New(io.Discard, "", 0)
	proxy.StartTLS()
	t.Cleanup(proxy.Close)

	sessionMetadata := map[string]string{"source": "backend", "plan": "gold"}
	session := func(userID string) string {
		var s struct {
			Session string `json:"session"`
		}
		if status, err := api.call(base, "POST", "/session/create", map[string]any{"type": "transaction_link",
			"external_user_id": userID, "metadata": sessionMetadata}, &s); err != nil || status != http.StatusOK {
			t.Fatalf("create session: %d %v", status, err)
		}
		return s.Session
	}
	run := time.Now().UnixNano()
	users := map[string]string{"knotapi": fmt.Sprintf("knot-%d", run), "hitch": fmt.Sprintf("hitch-%d", run)}
	expired := sessionExpiringIn(t, env, api, base, clientID, -time.Minute)

	sdkFile, err := os.ReadFile(filepath.Join(scripts, "node_modules", "knotapi-js", "build", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	dev := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			src := "/knotapi-js.js"
			if r.URL.Query().Get("sdk") == "hitch" {
				src = base + "/sdk/hitch.js"
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, strings.Replace(knotapiPage, "SDK_SRC", html.EscapeString(src), 1))
		case "/knotapi-js.js":
			w.Header().Set("Content-Type", "text/javascript")
			_, _ = w.Write(sdkFile)
		case "/favicon.ico":
			w.WriteHeader(http.StatusNoContent)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(dev.Close)
	pageURL := strings.Replace(dev.URL, "http://127.0.0.1:", "http://localhost:", 1) + "/"

	stdout := runBrowserScript(t, node, scripts, "knotapi.mjs", 5*time.Minute, logs,
		"PAGE_URL="+pageURL, "PROXY_ADDR="+strings.TrimPrefix(proxy.URL, "https://"), "CLIENT_ID="+clientID,
		"SESSION_KNOTAPI="+session(users["knotapi"]), "SESSION_HITCH="+session(users["hitch"]),
		"EXPIRED_SESSION="+expired, "SPARE_SESSION="+session(fmt.Sprintf("spare-%d", run)),
		"HITCH_URL="+base, "OUT_DIR="+artifacts, "CHROMIUM="+chromiumPath)
	type call struct {
		Callback string `json:"cb"`
		Args     []any  `json:"args"`
	}
	var r struct {
		Calls         map[string]map[string][]call `json:"calls"`
		FlowDocuments []struct {
			Scenario string `json:"scenario"`
			URL      string `json:"url"`
		} `json:"flowDocuments"`
		Events []struct {
			Scenario string `json:"scenario"`
			Path     string `json:"path"`
			Status   int    `json:"status"`
			Type     string `json:"type"`
			Event    string `json:"event"`
			CORS     string `json:"cors"`
		} `json:"events"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &r); err != nil {
		t.Fatalf("browser script printed %q: %v", stdout.String(), err)
	}

	// knotapi-js loaded Hitch's flow at the root of its host, without a
	// query; the flow moved on to the client's /link. Without
	// Sec-Fetch-Dest, the landing page sent the frame on to the flow.
	const flowHost = "https://development-knotapi.vercel.app"
	wantDocs := map[string][]string{
		"link":          {flowHost + "/", flowHost + "/link?client_id=" + clientID},
		"no-fetch-dest": {flowHost + "/", flowHost + "/link", flowHost + "/link?client_id=" + clientID},
	}
	for scenario, want := range wantDocs {
		var docs []string
		for _, d := range r.FlowDocuments {
			if d.Scenario == scenario {
				docs = append(docs, d.URL)
			}
		}
		if !slices.Equal(docs, want) {
			t.Errorf("%s: knotapi-js's frame loaded %q, want %q", scenario, docs, want)
		}
	}

	// Its analytics reached Hitch's /events and were accepted, CORS and all.
	var identified, opened bool
	for _, e := range r.Events {
		if e.Path != "/events" || e.Status != http.StatusAccepted || e.CORS != "*" {
			t.Errorf("knotapi-js analytics: %+v, want 202 from /events with Access-Control-Allow-Origin *", e)
		}
		identified = identified || e.Type == "identify"
		opened = opened || (e.Type == "track" && e.Event == "SDK Opened")
	}
	if !identified || !opened {
		t.Errorf("knotapi-js analytics: %+v, want an identify and an SDK Opened track", r.Events)
	}

	// Both SDKs made the same calls with the same arguments.
	for _, scenario := range []string{"link", "expired", "unknown-session", "unknown-client", "no-merchant"} {
		knot, hitch := r.Calls["knotapi"][scenario], r.Calls["hitch"][scenario]
		if len(knot) == 0 || !reflect.DeepEqual(knot, hitch) {
			t.Errorf("%s: the SDKs' callbacks differ\nknotapi-js: %s\nhitch.js:   %s", scenario, mustJSON(knot), mustJSON(hitch))
		}
	}

	// And they are what knotapi-js documents: one object each.
	metaData := map[string]any{"source": "page", "campaign": "spring"}
	event := func(name string) call {
		return call{"onEvent", []any{map[string]any{"metaData": metaData, "event": name, "merchant": "Netflix",
			"merchantId": float64(4), "product": "transaction_link", "environment": "development"}}}
	}
	errorCall := func(code, description string) call {
		return call{"onError", []any{map[string]any{"errorCode": code, "errorDescription": description}}}
	}
	exit := func(product string) call {
		if product == "" {
			return call{"onExit", []any{map[string]any{}}}
		}
		return call{"onExit", []any{map[string]any{"product": product}}}
	}
	want := map[string][]call{
		"link": {event("MERCHANT_CLICKED"), event("LOGIN_STARTED"), event("OTP_REQUIRED"), event("AUTHENTICATED"),
			{"onSuccess", []any{map[string]any{"merchant": "Netflix", "merchantId": float64(4), "product": "transaction_link", "taskId": nil}}},
			exit("transaction_link")},
		"expired":         {errorCall("EXPIRED_SESSION", "The session has expired."), exit("")},
		"unknown-session": {errorCall("INVALID_SESSION", "The session ID is invalid."), exit("")},
		"unknown-client":  {errorCall("INVALID_CLIENT_ID", "The client ID is invalid."), exit("")},
		"no-merchant":     {errorCall("MERCHANT_ID_NOT_FOUND", "Merchant ID is required in all SDKs."), exit("transaction_link")},
		"no-fetch-dest":   {errorCall("MERCHANT_ID_NOT_FOUND", "Merchant ID is required in all SDKs."), exit("transaction_link")},
	}
	for scenario, w := range want {
		if got := r.Calls["knotapi"][scenario]; !reflect.DeepEqual(got, w) {
			t.Errorf("%s: knotapi-js called\n%s\nwant\n%s", scenario, mustJSON(got), mustJSON(w))
		}
	}

	// The page's metadata reached the webhooks of each login beside the
	// session's, whose value won the key both gave.
	merged := map[string]string{"source": "backend", "plan": "gold", "campaign": "spring"}
	for sdk, user := range users {
		for _, typ := range []string{"AUTHENTICATED", "NEW_TRANSACTIONS_AVAILABLE"} {
			if ev := hooks.wait(t, typ, user); ev != nil && !maps.Equal(ev.Data.Metadata, merged) {
				t.Errorf("%s: %s metadata %v, want %v", sdk, typ, ev.Data.Metadata, merged)
			}
		}
	}

	// Hitch counted the analytics it was sent, by knotapi-js's names.
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(metrics), `hitch_sdk_events_total{event="SDK_OPENED",type="track"}`) {
		t.Error("/metrics counts no SDK_OPENED track")
	}
	if strings.Contains(logs.String(), "sess_") || strings.Contains(logs.String(), "pass_otp") {
		t.Error("the logs contain a session value or a password")
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// knotapiPage is a developer's page written for knotapi-js (its script
// build: window.KnotapiJS.default is the class). The test serves it with
// SDK_SRC naming knotapi-js or Hitch's /sdk/hitch.js; the page's code is
// the same. It records each callback's arguments as JSON (undefined as
// "(undefined)").
const knotapiPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>A page written for knotapi-js</title>
<script src="SDK_SRC"></script></head>
<body><h1>A developer's app</h1>
<script>
window.calls = [];
function record(cb) {
  return function () {
    var args = Array.prototype.map.call(arguments, function (a) { return a === undefined ? '(undefined)' : a; });
    window.calls.push({ cb: cb, args: JSON.parse(JSON.stringify(args)) });
  };
}
window.openFlow = function (config) {
  var knotapi = new KnotapiJS.default();
  config.onSuccess = record('onSuccess');
  config.onError = record('onError');
  config.onEvent = record('onEvent');
  config.onExit = record('onExit');
  knotapi.open(config);
};
</script>
</body></html>
`
