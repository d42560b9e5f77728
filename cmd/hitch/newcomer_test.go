package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"
)

// TestBrowserNewcomer drives headless Chromium through the demo page as a
// newcomer does first (newcomer.mjs): a card switch for which the demo's
// server posts a test card, as the developer's server would, and
// CARD_UPDATED follows; one with no card, for which the page says that
// CARD_FAILED follows when the card window ends, and it does; and a login
// refused for its credentials, after which the flow keeps the username.
// It runs on every store of the suite (forEachBrowserStore).
func TestBrowserNewcomer(t *testing.T) {
	requireChromium(t)
	node, scripts := browserScripts(t)
	t.Parallel()
	forEachBrowserStore(t, func(t *testing.T, storeName string, db []string) {
		artifacts := browserArtifacts(t, "newcomer-"+storeName+"-")
		const clientID = "browser_newcomer_01"
		// A short card window: the test waits for the CARD_FAILED of the
		// switch without a card.
		base, _, logs := serveForBrowser(t, db, clientID, "HITCH_CARD_WINDOW=3s")
		api := newHitchAPI(t, clientID)
		hooks := &hookRecorder{}
		receiver := httptest.NewServer(hooks)
		t.Cleanup(receiver.Close)
		api.createEndpoint(t, base, receiver.URL)

		stdout := runBrowserScript(t, node, scripts, "newcomer.mjs", 4*time.Minute, logs,
			"HITCH_URL="+base, "OUT_DIR="+artifacts, "RUN_ID="+fmt.Sprint(time.Now().UnixNano()),
			"CARD_WINDOW=3s", "CHROMIUM="+chromiumPath)
		users := map[string]string{}
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var r struct{ Scenario, ExternalUserID string }
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("browser script printed %q: %v", sc.Text(), err)
			}
			users[r.Scenario] = r.ExternalUserID
		}
		if len(users) != 3 {
			t.Fatalf("scenario results %v, want card, none and retry: %s", users, stdout)
		}
		hooks.wait(t, "CARD_UPDATED", users["card"])
		hooks.wait(t, "CARD_FAILED", users["none"])
	})
}
