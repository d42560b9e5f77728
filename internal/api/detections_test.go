package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hitchdev/hitch/client"
	"github.com/hitchdev/hitch/internal/connector"
	"github.com/hitchdev/hitch/internal/detection"
	"github.com/hitchdev/hitch/internal/merchant"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// detectedEnvelope is a NEW_DETECTED_ACCOUNTS_AVAILABLE payload.
type detectedEnvelope struct {
	ID             string  `json:"id"`
	Event          string  `json:"event"`
	SessionID      *string `json:"session_id"`
	ExternalUserID string  `json:"external_user_id"`
	Data           struct {
		DetectedAccounts []struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
			Logo string `json:"logo"`
		} `json:"detected_accounts"`
		UnsupportedAccounts []struct {
			Name string `json:"name"`
		} `json:"unsupported_accounts"`
		Metadata map[string]string `json:"metadata"`
	} `json:"data"`
}

// detectedEvents lists the developer's NEW_DETECTED_ACCOUNTS_AVAILABLE
// events about user, oldest first.
func (h *harness) detectedEvents(t *testing.T, clientID, user string) []detectedEnvelope {
	t.Helper()
	var out []detectedEnvelope
	for _, ev := range h.events(clientID) {
		var env detectedEnvelope
		if err := json.Unmarshal(ev.Payload, &env); err != nil {
			t.Fatal(err)
		}
		if env.Event == "NEW_DETECTED_ACCOUNTS_AVAILABLE" && env.ExternalUserID == user {
			out = append(out, env)
		}
	}
	slices.Reverse(out)
	return out
}

// waitDetection waits until the detection request is done and returns it.
func (h *harness) waitDetection(t *testing.T, clientID, requestID string) *store.DetectionRequest {
	t.Helper()
	var req *store.DetectionRequest
	eventually(t, "detection request "+requestID, func() bool {
		var err error
		req, err = h.store.DetectionRequestGet(context.Background(), clientID, requestID)
		if err != nil {
			t.Fatal(err)
		}
		return req.Status == store.DetectionDone
	})
	return req
}

// detect starts a detection for user and waits for it to be done.
func (h *harness) detect(t *testing.T, api *client.Client, clientID, user, email string) *store.DetectionRequest {
	t.Helper()
	resp, err := api.Detect(context.Background(), &client.DetectRequest{ExternalUserID: user, Email: email})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message == "" || resp.RequestID == "" {
		t.Fatalf("POST /detect = %+v", resp)
	}
	return h.waitDetection(t, clientID, resp.RequestID)
}

func TestDetectAnnouncesWhatQueriesReturn(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		h.detect(t, h.api, h.clientID, "u1", "ada.lovelace@example.com")
		evs := h.detectedEvents(t, h.clientID, "u1")
		if len(evs) != 1 {
			t.Fatalf("%d events, want 1", len(evs))
		}
		ev := evs[0]
		supported, unsupported := ev.Data.DetectedAccounts, ev.Data.UnsupportedAccounts
		if n := len(supported) + len(unsupported); n < 5 || n > 25 || len(supported) == 0 {
			t.Fatalf("event announces %d + %d accounts, want 5–25 with catalog merchants", len(supported), len(unsupported))
		}
		if ev.SessionID != nil {
			t.Errorf("a detection by POST /detect has session_id %q", *ev.SessionID)
		}

		// Every announced account is returned by every query.
		got, err := h.api.DetectedAccounts(ctx, "u1", 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(supported)+len(unsupported) {
			t.Fatalf("GET /detected_accounts/get has %d accounts, the event %d", len(got), len(supported)+len(unsupported))
		}
		byMerchant := map[int64]client.DetectedAccount{}
		byName := map[string]client.DetectedAccount{}
		for _, d := range got {
			if d.ID == "" || d.DetectedAt.IsZero() || d.Source != "email" || d.AccountCreatedAt == nil {
				t.Fatalf("detected account %+v", d)
			}
			if d.Merchant != nil {
				if d.Merchant.Name != d.Name {
					t.Errorf("merchant %q named %q", d.Merchant.Name, d.Name)
				}
				byMerchant[d.Merchant.ID] = d
			} else {
				byName[d.Name] = d
			}
		}
		var names []string
		for _, a := range supported {
			d, ok := byMerchant[a.ID]
			if !ok || d.Merchant.Logo != a.Logo || a.Logo == "" || d.Name != a.Name {
				t.Errorf("announced %+v, listed %+v", a, d)
			}
			one, err := h.api.DetectedAccounts(ctx, "u1", a.ID)
			if err != nil || len(one) != 1 || one[0].ID != d.ID {
				t.Errorf("merchant_id=%d: %+v, %v", a.ID, one, err)
			}
			names = append(names, a.Name)
		}
		for _, a := range unsupported {
			if _, ok := byName[a.Name]; !ok {
				t.Errorf("announced unsupported %q is not listed", a.Name)
			}
			names = append(names, a.Name)
		}
		for _, search := range []func(context.Context, string, []string) ([]client.SearchResult, error){
			h.api.SearchDetected, h.api.IdentifyDetected,
		} {
			results, err := search(ctx, "u1", names)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range results {
				if r.Name != names[i] || !r.Detected || r.DetectedAt == nil {
					t.Errorf("search %q = %+v", names[i], r)
				}
			}
		}
		page, err := h.api.ListDetected(ctx, &client.DetectedPageRequest{ExternalUserID: "u1", Limit: 100})
		if err != nil || len(page.DetectedAccounts) != len(got) || page.NextCursor != nil || page.Limit != len(got) {
			t.Fatalf("list = %+v, %v", page, err)
		}
		sync := h.syncDetected(t, h.api, "u1", "", 0)
		if len(sync.DetectedAccounts) != len(supported) {
			t.Fatalf("sync has %d accounts, the event %d at catalog merchants", len(sync.DetectedAccounts), len(supported))
		}

		// The same address again finds nothing new: no event.
		h.detect(t, h.api, h.clientID, "u1", "ada.lovelace@example.com")
		if n := len(h.detectedEvents(t, h.clientID, "u1")); n != 1 {
			t.Fatalf("detecting again raised %d events in all, want 1", n)
		}
		again, err := h.api.DetectedAccounts(ctx, "u1", 0)
		if err != nil || len(again) != len(got) {
			t.Fatalf("after detecting again: %d accounts, %v", len(again), err)
		}
	}, withWorkers)
}

func TestDetectTestAddresses(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		if req := h.detect(t, h.api, h.clientID, "nobody", "jane+none@example.com"); *req.Found != 0 {
			t.Fatalf("+none found %d", *req.Found)
		}
		if evs := h.detectedEvents(t, h.clientID, "nobody"); len(evs) != 0 {
			t.Fatalf("+none raised %d events", len(evs))
		}
		if got, err := h.api.DetectedAccounts(ctx, "nobody", 0); err != nil || len(got) != 0 {
			t.Fatalf("+none: %+v, %v", got, err)
		}

		h.detect(t, h.api, h.clientID, "shopper", "jane+amazon@example.com")
		evs := h.detectedEvents(t, h.clientID, "shopper")
		if len(evs) != 1 || len(evs[0].Data.DetectedAccounts) != 1 || evs[0].Data.DetectedAccounts[0].ID != 1 ||
			evs[0].Data.DetectedAccounts[0].Name != "Amazon" || len(evs[0].Data.UnsupportedAccounts) != 0 {
			t.Fatalf("+amazon events: %+v", evs)
		}
		names := []string{"amazon", "Amazon.com", "AMAZON.COM, INC.", "AMZN Mktp US", "Amazn", "Uber Eats", "Walmart", "Amazon"}
		want := []bool{true, true, true, true, true, false, false, true}
		results, err := h.api.SearchDetected(ctx, "shopper", names)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range results {
			if r.Name != names[i] || r.Detected != want[i] || (r.DetectedAt != nil) != want[i] {
				t.Errorf("search %q = %+v, want detected %v", names[i], r, want[i])
			}
		}
		// detected_at is null, not absent, for a name not detected.
		resp := h.do("POST", "/detected-accounts/search", map[string]any{"external_user_id": "shopper", "names": []string{"Walmart"}}, nil)
		if resp.status != 200 || !bytes.Contains(resp.body, []byte(`"detected_at":null`)) {
			t.Fatalf("search Walmart: %d %s", resp.status, resp.body)
		}
	}, withWorkers)
}

func TestDetectFromSession(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		// A session without e-mail, phone or token detects nothing.
		if _, err := h.api.CreateSession(context.Background(), &client.CreateSessionRequest{Type: "link", ExternalUserID: "u2"}); err != nil {
			t.Fatal(err)
		}
		sess, err := h.api.CreateSession(context.Background(), &client.CreateSessionRequest{Type: "link", ExternalUserID: "u1",
			Email: ptr("grace+netflix@example.com"), PhoneNumber: ptr("+14155550000"), Metadata: map[string]string{"campaign": "spring"}})
		if err != nil {
			t.Fatal(err)
		}
		var ev detectedEnvelope
		eventually(t, "NEW_DETECTED_ACCOUNTS_AVAILABLE", func() bool {
			evs := h.detectedEvents(t, h.clientID, "u1")
			if len(evs) > 0 {
				ev = evs[0]
			}
			return len(evs) > 0
		})
		if ev.SessionID == nil || *ev.SessionID != sess.SessionID {
			t.Errorf("session_id = %v, want %s", ev.SessionID, sess.SessionID)
		}
		if len(ev.Data.DetectedAccounts) != 1 || ev.Data.DetectedAccounts[0].Name != "Netflix" {
			t.Errorf("detected %+v, want Netflix only (the phone number ends in 0000)", ev.Data.DetectedAccounts)
		}
		if ev.Data.Metadata["campaign"] != "spring" {
			t.Errorf("data.metadata = %v, want the session's", ev.Data.Metadata)
		}
		if n := countRows(t, h.store, "detection_requests"); n != 1 {
			t.Fatalf("%d detection requests, want 1 (the session without e-mail started one)", n)
		}
	}, withWorkers)
}

// countRows counts the rows of a table, in either dialect.
func countRows(t *testing.T, st store.Store, table string) int {
	t.Helper()
	var n int
	query := `SELECT COUNT(*) FROM ` + table
	rawSQL(t, st, query, query, &n)
	return n
}

func TestDetectedAccountsLeaveOutLinked(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		h.detect(t, h.api, h.clientID, "u1", "jane+amazon@example.com")
		linkCard(t, h.api, "u1", 1)
		if got, err := h.api.DetectedAccounts(ctx, "u1", 0); err != nil || len(got) != 0 {
			t.Fatalf("after linking Amazon, get = %+v, %v", got, err)
		}
		if page, err := h.api.ListDetected(ctx, &client.DetectedPageRequest{ExternalUserID: "u1"}); err != nil || len(page.DetectedAccounts) != 0 {
			t.Fatalf("after linking Amazon, list = %+v, %v", page, err)
		}
		// The user still has the account: search says so.
		if r, err := h.api.SearchDetected(ctx, "u1", []string{"Amazon"}); err != nil || !r[0].Detected {
			t.Fatalf("search after linking = %+v, %v", r, err)
		}
		if err := h.api.UnlinkAccount(ctx, "u1", 1); err != nil {
			t.Fatal(err)
		}
		if got, err := h.api.DetectedAccounts(ctx, "u1", 1); err != nil || len(got) != 1 {
			t.Fatalf("after unlinking, get = %+v, %v", got, err)
		}
	}, withWorkers)
}

// detectedSyncPage is a page of the deprecated sync, shape A.
type detectedSyncPage struct {
	DetectedAccounts []struct {
		Merchant         client.Merchant `json:"merchant"`
		LoginMethod      *string         `json:"login_method"`
		AccountCreatedAt *string         `json:"account_created_at"`
		DetectedAt       time.Time       `json:"detected_at"`
	} `json:"detected_accounts"`
	NextCursor *string `json:"next_cursor"`
	Limit      int     `json:"limit"`
}

func (h *harness) syncDetected(t *testing.T, api *client.Client, user, cursor string, limit int) detectedSyncPage {
	t.Helper()
	body := map[string]any{"external_user_id": user}
	if cursor != "" {
		body["cursor"] = cursor
	}
	if limit != 0 {
		body["limit"] = limit
	}
	resp := h.do("POST", "/detected-accounts/sync", body, nil)
	if resp.status != 200 {
		t.Fatalf("sync: %d %s", resp.status, resp.body)
	}
	if resp.header.Get("Deprecation") == "" || resp.header.Get("Sunset") == "" ||
		!strings.Contains(resp.header.Get("Link"), `</detected-accounts/list>; rel="successor-version"`) {
		t.Fatalf("sync headers: %v", resp.header)
	}
	if _, err := http.ParseTime(resp.header.Get("Sunset")); err != nil {
		t.Fatalf("Sunset %q: %v", resp.header.Get("Sunset"), err)
	}
	var page detectedSyncPage
	if err := json.Unmarshal(resp.body, &page); err != nil {
		t.Fatal(err)
	}
	if page.Limit != len(page.DetectedAccounts) {
		t.Fatalf("limit %d for %d accounts", page.Limit, len(page.DetectedAccounts))
	}
	for _, d := range page.DetectedAccounts {
		if d.Merchant.ID == 0 || d.LoginMethod == nil || d.AccountCreatedAt == nil || d.DetectedAt.IsZero() {
			t.Fatalf("shape A account %+v", d)
		}
	}
	return page
}

func TestDetectedSyncCursor(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		h.detect(t, h.api, h.clientID, "u1", "jane+netflix@example.com")
		first := h.syncDetected(t, h.api, "u1", "", 0)
		if len(first.DetectedAccounts) != 1 || first.DetectedAccounts[0].Merchant.Name != "Netflix" || first.NextCursor == nil {
			t.Fatalf("first sync: %+v", first)
		}
		if *first.DetectedAccounts[0].LoginMethod != "PASSWORD" || *first.DetectedAccounts[0].AccountCreatedAt != "2019-01-01T00:00:00Z" {
			t.Errorf("test address account: %+v", first.DetectedAccounts[0])
		}
		empty := h.syncDetected(t, h.api, "u1", *first.NextCursor, 0)
		if len(empty.DetectedAccounts) != 0 || empty.NextCursor != nil {
			t.Fatalf("nothing new: %+v", empty)
		}
		// A second address adds accounts: the old cursor returns only them,
		// a page at a time.
		h.detect(t, h.api, h.clientID, "u1", "jane.doe@example.org")
		seen := map[int64]bool{}
		cursor := *first.NextCursor
		for {
			page := h.syncDetected(t, h.api, "u1", cursor, 2)
			if page.NextCursor == nil {
				break
			}
			if len(page.DetectedAccounts) > 2 {
				t.Fatalf("limit 2 returned %d", len(page.DetectedAccounts))
			}
			for _, d := range page.DetectedAccounts {
				if d.Merchant.Name == "Netflix" || seen[d.Merchant.ID] {
					t.Fatalf("account %q returned again", d.Merchant.Name)
				}
				seen[d.Merchant.ID] = true
			}
			cursor = *page.NextCursor
		}
		all := h.syncDetected(t, h.api, "u1", "", 100)
		if len(all.DetectedAccounts) != len(seen)+1 {
			t.Fatalf("from the start: %d accounts, pages after the cursor %d + 1", len(all.DetectedAccounts), len(seen))
		}

		// Another user's (or developer's) cursor is refused.
		h.detect(t, h.api, h.clientID, "u2", "jane+netflix@example.com")
		resp := h.do("POST", "/detected-accounts/sync", map[string]any{"external_user_id": "u2", "cursor": *first.NextCursor}, nil)
		if resp.status != 400 || resp.errorBody(t).Code != "INVALID_CURSOR_FORMAT" || resp.header.Get("Deprecation") == "" {
			t.Fatalf("another user's cursor: %d %s", resp.status, resp.body)
		}
	}, withWorkers)
}

func TestDetectedListPages(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		h.detect(t, h.api, h.clientID, "u1", "pages@example.com")
		all, err := h.api.DetectedAccounts(ctx, "u1", 0)
		if err != nil {
			t.Fatal(err)
		}
		var paged []string
		req := &client.DetectedPageRequest{ExternalUserID: "u1", Limit: 3}
		for range 20 {
			page, err := h.api.ListDetected(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range page.DetectedAccounts {
				paged = append(paged, d.ID)
			}
			if page.NextCursor == nil {
				break
			}
			if len(page.DetectedAccounts) != 3 {
				t.Fatalf("a page before the last has %d accounts", len(page.DetectedAccounts))
			}
			req.Cursor = *page.NextCursor
		}
		var ids []string
		for _, d := range all {
			ids = append(ids, d.ID)
		}
		if !slices.Equal(paged, ids) {
			t.Fatalf("pages %v, get %v", paged, ids)
		}
	}, withWorkers)
}

func TestDetectionValidation(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		h.detect(t, h.api, h.clientID, "u1", "jane+amazon@example.com")
		long := strings.Repeat("a", 256)
		many := make([]string, 101)
		for i := range many {
			many[i] = "Amazon"
		}
		for _, tc := range []struct {
			name, method, path string
			body               any
			status             int
			code               string
		}{
			{"detect without email", "POST", "/detect", map[string]any{"external_user_id": "u1"}, 400, "INVALID_FIELD"},
			{"detect with bad email", "POST", "/detect", map[string]any{"external_user_id": "u1", "email": "not-an-address"}, 400, "INVALID_FIELD"},
			{"detect with bad phone", "POST", "/detect", map[string]any{"external_user_id": "u1", "email": "a@example.com", "phone_number": "555-0100"}, 400, "INVALID_FIELD"},
			{"detect without user", "POST", "/detect", map[string]any{"email": "a@example.com"}, 400, "INVALID_FIELD"},
			{"detect with unknown field", "POST", "/detect", map[string]any{"external_user_id": "u1", "email": "a@example.com", "emails": "x"}, 400, "INVALID_FIELD"},
			{"search without names", "POST", "/detected-accounts/search", map[string]any{"external_user_id": "u1"}, 400, "INVALID_FIELD"},
			{"search with no names", "POST", "/detected-accounts/search", map[string]any{"external_user_id": "u1", "names": []string{}}, 400, "INVALID_FIELD"},
			{"search with 101 names", "POST", "/detected-accounts/search", map[string]any{"external_user_id": "u1", "names": many}, 400, "INVALID_FIELD"},
			{"search with an empty name", "POST", "/detected-accounts/search", map[string]any{"external_user_id": "u1", "names": []string{"Amazon", " "}}, 400, "INVALID_FIELD"},
			{"search with a long name", "POST", "/detected-accounts/search", map[string]any{"external_user_id": "u1", "names": []string{long}}, 400, "INVALID_FIELD"},
			{"search with names not strings", "POST", "/detected-accounts/search", map[string]any{"external_user_id": "u1", "names": []int{1}}, 400, "INVALID_FIELD"},
			{"search for an unknown user", "POST", "/detected-accounts/search", map[string]any{"external_user_id": "nobody", "names": []string{"Amazon"}}, 404, "USER_NOT_FOUND"},
			{"identify with names", "POST", "/detected_accounts/identify", map[string]any{"external_user_id": "u1", "names": []string{"Amazon"}}, 400, "INVALID_FIELD"},
			{"identify without name", "POST", "/detected_accounts/identify", map[string]any{"external_user_id": "u1"}, 400, "INVALID_FIELD"},
			{"get without user", "GET", "/detected_accounts/get", nil, 400, "INVALID_FIELD"},
			{"get with bad merchant_id", "GET", "/detected_accounts/get?external_user_id=u1&merchant_id=x", nil, 400, "INVALID_FIELD"},
			{"get with unknown merchant_id", "GET", "/detected_accounts/get?external_user_id=u1&merchant_id=999999", nil, 400, "INVALID_FIELD"},
			{"get for an unknown user", "GET", "/detected_accounts/get?external_user_id=nobody", nil, 404, "USER_NOT_FOUND"},
			{"list with limit 0", "POST", "/detected-accounts/list", map[string]any{"external_user_id": "u1", "limit": 0}, 400, "INVALID_FIELD"},
			{"list with limit 101", "POST", "/detected-accounts/list", map[string]any{"external_user_id": "u1", "limit": 101}, 400, "INVALID_FIELD"},
			{"list with a bad cursor", "POST", "/detected-accounts/list", map[string]any{"external_user_id": "u1", "cursor": "%%%"}, 400, "INVALID_CURSOR_FORMAT"},
			{"sync with limit 101", "POST", "/detected-accounts/sync", map[string]any{"external_user_id": "u1", "limit": 101}, 400, "INVALID_FIELD"},
			{"sync without user", "POST", "/detected-accounts/sync", map[string]any{}, 400, "INVALID_FIELD"},
		} {
			resp := h.do(tc.method, tc.path, tc.body, nil)
			if resp.status != tc.status || resp.errorBody(t).Code != tc.code {
				t.Errorf("%s: %d %s, want %d %s", tc.name, resp.status, resp.body, tc.status, tc.code)
			}
		}
	}, withWorkers)
}

func TestDetectionTenantIsolation(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		h.detect(t, h.api, h.clientID, "same-user", "jane+amazon@example.com")
		other := h.newDeveloper("development")
		otherAPI := h.clientFor(other)
		_, err := otherAPI.SearchDetected(ctx, "same-user", []string{"Amazon"})
		expectError(t, err, 404, "USER_ERROR", "USER_NOT_FOUND")
		// With the same external_user_id, the other developer sees only its own.
		h.detect(t, otherAPI, other.ClientID, "same-user", "jane+netflix@example.com")
		got, err := otherAPI.DetectedAccounts(ctx, "same-user", 0)
		if err != nil || len(got) != 1 || got[0].Name != "Netflix" {
			t.Fatalf("other developer's detections: %+v, %v", got, err)
		}
		r, err := otherAPI.SearchDetected(ctx, "same-user", []string{"Amazon", "Netflix"})
		if err != nil || r[0].Detected || !r[1].Detected {
			t.Fatalf("other developer's search: %+v, %v", r, err)
		}
		if _, err := otherAPI.DetectedAccounts(ctx, "same-user", 1); err != nil {
			t.Fatal(err)
		}
		if n := len(h.detectedEvents(t, other.ClientID, "same-user")); n != 1 {
			t.Fatalf("other developer has %d events", n)
		}
		if n := len(h.detectedEvents(t, h.clientID, "same-user")); n != 1 {
			t.Fatalf("first developer has %d events", n)
		}
	}, withWorkers)
}

func TestDetectionThroughConnector(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		// With no connector, nothing can check a request: it is done at
		// once, finding nothing.
		alone, err := h.api.Detect(ctx, &client.DetectRequest{ExternalUserID: "u1", Email: "ada@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		if req, err := h.store.DetectionRequestGet(ctx, h.clientID, alone.RequestID); err != nil || req.Status != "done" || *req.Found != 0 {
			t.Fatalf("request without connectors: %+v, %v", req, err)
		}
		// a serves two merchants and b a third: each of them is checked
		// once, by a connector that serves it.
		a := h.newServingConnector(t, refshop, 1)
		b := h.newServingConnector(t, 2)
		stranger := h.newServingConnector(t)
		// reporter declares no merchant: it reports on signals of its own.
		reporter, err := h.connectors.Create(ctx, "Reporter")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.api.CreateSession(ctx, &client.CreateSessionRequest{Type: "link", ExternalUserID: "u1",
			Email: ptr("ada@example.com"), ProcessorToken: ptr("processor-sandbox-canary")}); err != nil {
			t.Fatal(err)
		}
		if r := h.do("POST", "/internal/work/claim", map[string]any{"kinds": []string{"detect"}}, nil); r.status != 401 {
			t.Fatalf("developer credentials on the connector API: %d", r.status)
		}
		units := map[float64]map[string]any{}
		for _, c := range []*conn{a, b, stranger} {
			out := c.want(t, 200, "POST", "/internal/work/claim", map[string]any{"kinds": []string{"detect"}, "limit": 10})
			for _, w := range out["work"].([]any) {
				w := w.(map[string]any)
				if units[w["merchant_id"].(float64)] != nil {
					t.Fatalf("merchant %v claimed twice", w["merchant_id"])
				}
				units[w["merchant_id"].(float64)] = w
			}
		}
		if len(units) != 3 || units[refshop] == nil || units[1] == nil || units[2] == nil {
			t.Fatalf("claimed %v", units)
		}
		requestID, _ := units[refshop]["request_id"].(string)
		for m, w := range units {
			in, _ := w["detection"].(map[string]any)
			if w["kind"] != "detect" || w["request_id"] != requestID || w["external_user_id"] != "u1" || w["client_id"] != h.clientID ||
				in["email"] != "ada@example.com" || in["processor_token"] != "processor-sandbox-canary" || in["phone_number"] != nil {
				t.Fatalf("unit for merchant %v: %v", m, w)
			}
		}
		if out := a.want(t, 200, "POST", "/internal/work/claim", map[string]any{"kinds": []string{"detect"}}); len(out["work"].([]any)) != 0 {
			t.Fatalf("claimed again: %v", out)
		}
		if n := len(h.detectedEvents(t, h.clientID, "u1")); n != 0 {
			t.Fatalf("detected before any connector reported: %d events", n)
		}
		complete := func(w map[string]any) string { return "/internal/work/" + w["id"].(string) + "/complete" }

		// Bad reports change nothing.
		shop := units[refshop]
		stranger.wantError(t, 403, "MERCHANT_NOT_SERVED", "POST", complete(shop), map[string]any{"lease": shop["lease"], "outcome": "succeeded"})
		b.wantError(t, 403, "MERCHANT_NOT_SERVED", "POST", complete(shop), map[string]any{"lease": shop["lease"], "outcome": "succeeded"})
		for name, body := range map[string]map[string]any{
			"disconnected":       {"lease": shop["lease"], "outcome": "disconnected"},
			"account on failure": {"lease": shop["lease"], "outcome": "failed", "account": map[string]any{"source": "email"}},
			"bad source":         {"lease": shop["lease"], "outcome": "succeeded", "account": map[string]any{"source": "mail"}},
			"bad login method":   {"lease": shop["lease"], "outcome": "succeeded", "account": map[string]any{"source": "email", "login_method": "FAX"}},
			"bad date":           {"lease": shop["lease"], "outcome": "succeeded", "account": map[string]any{"source": "email", "account_created_at": "2017"}},
			"unknown field":      {"lease": shop["lease"], "outcome": "succeeded", "account": map[string]any{"source": "email", "merchant_id": 1}},
			"state":              {"lease": shop["lease"], "outcome": "succeeded", "state": "YQ=="},
		} {
			if r := a.call("POST", complete(shop), body); r.status != 400 || r.errorBody(t).Code != "INVALID_FIELD" {
				t.Errorf("%s: %d %s", name, r.status, r.body)
			}
		}
		a.wantError(t, 409, "LEASE_NOT_HELD", "POST", complete(shop), map[string]any{"lease": "not-the-lease", "outcome": "succeeded"})

		// The shop has an account: it is announced at once, with the
		// session's id; the request waits for its other merchants.
		out := a.want(t, 200, "POST", complete(shop), map[string]any{"lease": shop["lease"], "outcome": "succeeded",
			"account": map[string]any{"source": "email", "login_method": "PASSWORD", "account_created_at": "2017-03-04T05:06:07Z"}})
		if out["new"] != true || out["event_id"] == nil {
			t.Fatalf("complete: %v", out)
		}
		evs := h.detectedEvents(t, h.clientID, "u1")
		if len(evs) != 1 || len(evs[0].Data.DetectedAccounts) != 1 || evs[0].Data.DetectedAccounts[0].ID != refshop ||
			len(evs[0].Data.UnsupportedAccounts) != 0 || evs[0].SessionID == nil {
			t.Fatalf("events %+v", evs)
		}
		if req, err := h.store.DetectionRequestGet(ctx, h.clientID, requestID); err != nil || req.Status != "pending" {
			t.Fatalf("request with checks open: %+v, %v", req, err)
		}
		a.wantError(t, 409, "WORK_NOT_WAITING", "POST", complete(shop), map[string]any{"lease": shop["lease"], "outcome": "succeeded"})
		// Nothing at merchant 1; merchant 2's site failed. The request is
		// done with its last check.
		a.want(t, 200, "POST", complete(units[1]), map[string]any{"lease": units[1]["lease"], "outcome": "succeeded"})
		b.want(t, 200, "POST", complete(units[2]), map[string]any{"lease": units[2]["lease"], "outcome": "failed", "reason": "merchant"})
		if req, err := h.store.DetectionRequestGet(ctx, h.clientID, requestID); err != nil || req.Status != "done" ||
			*req.Found != 1 || req.EmailSealed != nil {
			t.Fatalf("request after its checks: %+v, %v", req, err)
		}
		if n := len(h.detectedEvents(t, h.clientID, "u1")); n != 1 {
			t.Fatalf("checks that found nothing raised events: %d", n)
		}
		metrics := string(h.do("GET", "/metrics", nil, noAuth).body)
		for _, want := range []string{
			`hitch_connector_work_total{connector="` + a.creds.ID + `",kind="detect",outcome="succeeded"} 2`,
			`hitch_connector_work_total{connector="` + b.creds.ID + `",kind="detect",outcome="failed"} 1`,
		} {
			if !strings.Contains(metrics, want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}

		// A connector that dies with a check loses it when its lease ends:
		// the request is done without it.
		started, err := h.api.Detect(ctx, &client.DetectRequest{ExternalUserID: "u1", Email: "grace@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		lost := b.claim(t, "detect")
		if lost["request_id"] != started.RequestID {
			t.Fatalf("claimed %v", lost)
		}
		for _, c := range []*conn{a, a} {
			w := c.claim(t, "detect")
			c.want(t, 200, "POST", complete(w), map[string]any{"lease": w["lease"], "outcome": "succeeded"})
		}
		h.clock.Advance(connector.DefaultLease + time.Second)
		if err := h.work.Reap(ctx); err != nil {
			t.Fatal(err)
		}
		if req, err := h.store.DetectionRequestGet(ctx, h.clientID, started.RequestID); err != nil || req.Status != "done" || *req.Found != 0 {
			t.Fatalf("request after a lost check: %+v, %v", req, err)
		}
		b.wantError(t, 409, "LEASE_NOT_HELD", "POST", complete(lost), map[string]any{"lease": lost["lease"], "outcome": "succeeded"})

		// A connector may also report accounts it learns of on its own, or
		// more for a request, by name.
		req := struct{ ID string }{requestID}
		body := map[string]any{"client_id": h.clientID, "request_id": req.ID, "accounts": []map[string]any{
			{"name": "NETFLIX.COM, INC.", "source": "email", "login_method": "GOOGLE_SSO", "account_created_at": "2017-03-04T05:06:07Z"},
			{"merchant_id": 1, "source": "processor_token"},
			{"name": "Patreon, Inc.", "source": "email"},
			{"name": "netflix", "source": "email"}, // the same account twice in one report
		}}
		resp := h.ingest(reporter, "detections", body)
		if resp.status != 200 {
			t.Fatalf("ingest: %d %s", resp.status, resp.body)
		}
		var got struct {
			New       []string `json:"new"`
			Unchanged int      `json:"unchanged"`
			EventID   *string  `json:"event_id"`
		}
		if err := json.Unmarshal(resp.body, &got); err != nil {
			t.Fatal(err)
		}
		if len(got.New) != 3 || got.EventID == nil {
			t.Fatalf("ingest = %s", resp.body)
		}
		evs = h.detectedEvents(t, h.clientID, "u1")
		if len(evs) != 2 || len(evs[1].Data.DetectedAccounts) != 2 || len(evs[1].Data.UnsupportedAccounts) != 1 ||
			evs[1].Data.UnsupportedAccounts[0].Name != "Patreon, Inc." || evs[1].SessionID == nil {
			t.Fatalf("events %+v", evs)
		}
		list, err := h.api.DetectedAccounts(ctx, "u1", 0)
		if err != nil || len(list) != 4 || list[0].Merchant == nil || list[0].Merchant.ID != refshop ||
			!list[0].AccountCreatedAt.Equal(time.Date(2017, 3, 4, 5, 6, 7, 0, time.UTC)) ||
			list[1].Name != "Netflix" || list[1].LoginMethod != "GOOGLE_SSO" || list[3].Merchant != nil {
			t.Fatalf("detected = %+v, %v", list, err)
		}
		r, err := h.api.SearchDetected(ctx, "u1", []string{"Patreon", "patreon inc", "Amazon.com", "Spotify"})
		if err != nil || !r[0].Detected || !r[1].Detected || !r[2].Detected || r[3].Detected {
			t.Fatalf("search = %+v, %v", r, err)
		}
		if req, err := h.store.DetectionRequestGet(ctx, h.clientID, req.ID); err != nil || req.Status != "done" || *req.Found != 4 {
			t.Fatalf("request after the report: %+v, %v", req, err)
		}
		// Reporting the same again changes nothing and raises nothing.
		resp = h.ingest(reporter, "detections", map[string]any{"client_id": h.clientID, "external_user_id": "u1",
			"accounts": []map[string]any{{"name": "Patreon", "source": "email"}, {"merchant_id": 1, "source": "email"}}})
		if resp.status != 200 || !bytes.Contains(resp.body, []byte(`"new":[]`)) || !bytes.Contains(resp.body, []byte(`"unchanged":2`)) {
			t.Fatalf("reporting again: %d %s", resp.status, resp.body)
		}
		if n := len(h.detectedEvents(t, h.clientID, "u1")); n != 2 {
			t.Fatalf("reporting again raised events: %d", n)
		}

		for _, tc := range []struct {
			name string
			body map[string]any
			code string
		}{
			{"unknown merchant", map[string]any{"client_id": h.clientID, "external_user_id": "u1",
				"accounts": []map[string]any{{"merchant_id": 999999, "source": "email"}}}, "INVALID_FIELD"},
			{"no name", map[string]any{"client_id": h.clientID, "external_user_id": "u1",
				"accounts": []map[string]any{{"name": "!!", "source": "email"}}}, "INVALID_FIELD"},
			{"bad source", map[string]any{"client_id": h.clientID, "external_user_id": "u1",
				"accounts": []map[string]any{{"name": "Patreon", "source": "mail"}}}, "INVALID_FIELD"},
			{"bad login method", map[string]any{"client_id": h.clientID, "external_user_id": "u1",
				"accounts": []map[string]any{{"name": "Patreon", "source": "email", "login_method": "FACEBOOK"}}}, "INVALID_FIELD"},
			{"bad date", map[string]any{"client_id": h.clientID, "external_user_id": "u1",
				"accounts": []map[string]any{{"name": "Patreon", "source": "email", "account_created_at": "2017"}}}, "INVALID_FIELD"},
			{"no accounts", map[string]any{"client_id": h.clientID, "external_user_id": "u1", "accounts": []map[string]any{}}, "INVALID_FIELD"},
			{"unknown user", map[string]any{"client_id": h.clientID, "external_user_id": "nobody",
				"accounts": []map[string]any{{"name": "Patreon", "source": "email"}}}, "USER_NOT_FOUND"},
			{"unknown request", map[string]any{"client_id": h.clientID, "request_id": "6a1e1bd4-0000-4000-8000-000000000000",
				"accounts": []map[string]any{{"name": "Patreon", "source": "email"}}}, "NOT_FOUND"},
			{"request of another user", map[string]any{"client_id": h.clientID, "request_id": req.ID, "external_user_id": "u2",
				"accounts": []map[string]any{{"name": "Patreon", "source": "email"}}}, "INVALID_FIELD"},
		} {
			resp := h.ingest(reporter, "detections", tc.body)
			if resp.status/100 != 4 || resp.errorBody(t).Code != tc.code {
				t.Errorf("%s: %d %s, want %s", tc.name, resp.status, resp.body, tc.code)
			}
		}
		// A report on a request whose checks are open adds what it found
		// (nothing here) and leaves the request to its checks.
		resp = h.do("POST", "/detect", map[string]any{"external_user_id": "u1", "email": "nobody@example.com"}, nil)
		var started2 client.DetectResponse
		if err := json.Unmarshal(resp.body, &started2); err != nil || resp.status != 202 {
			t.Fatalf("detect: %d %s", resp.status, resp.body)
		}
		resp = h.ingest(reporter, "detections", map[string]any{"client_id": h.clientID, "request_id": started2.RequestID, "accounts": []any{}})
		if resp.status != 200 || !bytes.Contains(resp.body, []byte(`"new":[]`)) || !bytes.Contains(resp.body, []byte(`"event_id":null`)) {
			t.Fatalf("empty report: %d %s", resp.status, resp.body)
		}
		if open, err := h.store.DetectionRequestGet(ctx, h.clientID, started2.RequestID); err != nil || open.Status != "pending" {
			t.Fatalf("request after an empty report, checks open: %+v, %v", open, err)
		}
		for _, c := range []*conn{a, a, b} {
			w := c.claim(t, "detect")
			c.want(t, 200, "POST", complete(w), map[string]any{"lease": w["lease"], "outcome": "succeeded"})
		}
		if done, err := h.store.DetectionRequestGet(ctx, h.clientID, started2.RequestID); err != nil || done.Status != "done" ||
			*done.Found != 0 || done.EmailSealed != nil {
			t.Fatalf("request after its checks found nothing: %+v, %v", done, err)
		}
		if n := len(h.detectedEvents(t, h.clientID, "u1")); n != 2 {
			t.Fatalf("finding nothing raised an event: %d", n)
		}

		// Another developer's request is not found through this one.
		other := h.newDeveloper("production")
		resp = h.ingest(reporter, "detections", map[string]any{"client_id": other.ClientID, "request_id": req.ID,
			"accounts": []map[string]any{{"name": "Patreon", "source": "email"}}})
		if resp.status != 404 {
			t.Fatalf("another developer's request: %d %s", resp.status, resp.body)
		}
	}, production, withWorkers)
}

// TestDetectionInputsSealed checks that e-mail addresses, phone numbers and
// processor tokens given for detection are in no table in the clear, nor in
// River's job arguments.
func TestDetectionInputsSealed(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		const email, phone, token = "canary.detect@example.com", "+14155559876", "processor-token-canary-7"
		if _, err := h.api.CreateSession(context.Background(), &client.CreateSessionRequest{Type: "link", ExternalUserID: "u1",
			Email: ptr(email), PhoneNumber: ptr(phone), ProcessorToken: ptr(token)}); err != nil {
			t.Fatal(err)
		}
		resp, err := h.api.Detect(context.Background(), &client.DetectRequest{ExternalUserID: "u1", Email: email, PhoneNumber: ptr(phone)})
		if err != nil {
			t.Fatal(err)
		}
		h.waitDetection(t, h.clientID, resp.RequestID)
		dump := dumpDatabase(t, h.store)
		// The request's row and its job's arguments.
		if strings.Count(dump, resp.RequestID) < 2 {
			t.Fatal("the dump does not hold the request and its job: the test is blind")
		}
		for _, canary := range []string{email, phone, token, "canary.detect"} {
			if strings.Contains(dump, canary) {
				t.Errorf("the database holds %q in plain text", canary)
			}
		}
		if strings.Contains(h.logs.String(), email) || strings.Contains(h.logs.String(), phone) {
			t.Fatal("an e-mail or phone number was logged")
		}
	}, withWorkers)
}

// Two reports of near-miss names of one merchant, at once, store one
// account and raise one event: the second waits for the first and sees
// its name.
func TestDetectionConcurrentReports(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		for i := range 15 {
			user := fmt.Sprintf("racer-%d", i)
			if _, err := h.store.UserGetOrCreate(ctx, &store.UserGetOrCreateParams{ID: uuid.NewString(), ClientID: h.clientID,
				ExternalUserID: user, CreatedAt: time.Now()}); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for _, name := range []string{"Patreon, Inc.", "Pateron"} {
				wg.Go(func() {
					if _, err := h.detections.Record(ctx, detection.RecordParams{ClientID: h.clientID, ExternalUserID: user,
						Found: []detection.Found{{Name: name, Source: detection.SourceEmail}}}); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			got, err := h.api.DetectedAccounts(ctx, user, 0)
			if err != nil || len(got) != 1 {
				t.Fatalf("round %d: %d detected accounts, %v", i, len(got), err)
			}
			if n := len(h.detectedEvents(t, h.clientID, user)); n != 1 {
				t.Fatalf("round %d: %d events", i, n)
			}
		}
	})
}

// A merchant detected by name before the catalog took it in is the same
// account as the catalog merchant afterwards: reported again, it is not
// new, and searching for it finds it.
func TestDetectionAcrossCatalogChange(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		before := newHarness(t, st)
		if _, err := before.store.UserGetOrCreate(ctx, &store.UserGetOrCreateParams{ID: uuid.NewString(),
			ClientID: before.clientID, ExternalUserID: "u1", CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if _, err := before.detections.Record(ctx, detection.RecordParams{ClientID: before.clientID, ExternalUserID: "u1",
			Found: []detection.Found{{Name: "Patreon, Inc.", Source: detection.SourceEmail}}}); err != nil {
			t.Fatal(err)
		}

		seeded, err := merchant.Load()
		if err != nil {
			t.Fatal(err)
		}
		var ms []merchant.Merchant
		for _, m := range seeded.All() {
			ms = append(ms, *m)
		}
		ms = append(ms, merchant.Merchant{ID: 100000, Name: "Patreon", Category: "software", Products: []string{"transaction_link"},
			Domain: "patreon.com", Color: "#FF424D"})
		grown, err := merchant.New(ms)
		if err != nil {
			t.Fatal(err)
		}
		after := newHarness(t, st, func(o *harnessOptions) { o.catalog = grown })
		got, err := after.detections.Record(ctx, detection.RecordParams{ClientID: before.clientID, ExternalUserID: "u1",
			Found: []detection.Found{{Name: "PATREON", Source: detection.SourceEmail}}})
		if err != nil || len(got.New) != 0 || got.Unchanged != 1 || got.Event != nil {
			t.Fatalf("reported again after the catalog change: %+v, %v", got, err)
		}
		results, err := after.detections.Search(ctx, before.clientID, "u1", []string{"Patreon", "patreon.com"})
		if err != nil || !results[0].Detected || !results[1].Detected {
			t.Fatalf("search after the catalog change: %+v, %v", results, err)
		}
	})
}
