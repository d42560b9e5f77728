package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"testing"

	"github.com/hitchdev/hitch/internal/connector"

	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// requestID is an error body's request_id, which differs per request.
var requestID = regexp.MustCompile(`"request_id":"[^"]*"`)

// normal leaves out of a body what differs between two nodes: the
// request_id of errors and the node's own address in logo URLs.
func normal(h *harness, body []byte) []byte {
	return bytes.ReplaceAll(requestID.ReplaceAll(body, nil), []byte(h.url), nil)
}

// TestCachedResponsesFollowChanges runs two nodes on one database, each
// with its own store handle (its own connections, and what the store keeps
// while the database is unchanged): one keeps rendered account listings and
// sync pages (internal/respcache), the other keeps nothing and makes every
// change. After each change, the caching node must answer exactly what the
// other does: the cache is checked against versions the database keeps, so
// a change made through any node is seen at once.
func TestCachedResponsesFollowChanges(t *testing.T) {
	storetest.ForEachPair(t, func(t *testing.T, st, st2 store.Store) {
		cached := newHarness(t, st)
		plain := newHarness(t, st2, func(o *harnessOptions) { o.noCache = true })
		plain.clientID, plain.secret = cached.clientID, cached.secret

		// A second developer with a user of the same external id: its
		// answers must never be the first one's.
		other := cached.newDeveloper("development")
		otherAuth := http.Header{"Authorization": {basic(other.ClientID, other.Secret)}}
		var conn *connector.Credentials

		reads := []struct {
			method, path string
			body         any
		}{
			{"GET", "/accounts/get?external_user_id=u1", nil},
			{"GET", "/accounts/get?external_user_id=u1&type=card_switcher", nil},
			{"GET", "/accounts/get?external_user_id=u1&type=transaction_link", nil},
			{"GET", "/accounts/get?external_user_id=u1&type=vault", nil},
			{"POST", "/transactions/sync", map[string]any{"external_user_id": "u1", "merchant_id": 1, "limit": 100}},
			{"POST", "/transactions/sync", map[string]any{"external_user_id": "u1", "merchant_id": 1, "limit": 7}},
		}
		compare := func(step, method, path string, body any, header http.Header) *response {
			t.Helper()
			want := plain.do(method, path, body, header)
			// Twice: the first may fill the cache, the second is served
			// from it.
			for range 2 {
				got := cached.do(method, path, body, header)
				if got.status != want.status || !bytes.Equal(normal(cached, got.body), normal(plain, want.body)) {
					t.Fatalf("after %s, %s %s %v: the caching node answered %d %s\nthe other node %d %s",
						step, method, path, body, got.status, got.body, want.status, want.body)
				}
			}
			return want
		}
		same := func(step string) {
			t.Helper()
			for _, header := range []http.Header{nil, otherAuth} {
				for _, rd := range reads {
					compare(step, rd.method, rd.path, rd.body, header)
				}
				// Every page of each account's sync, to its end.
				for _, merchantID := range []int64{1, 2} {
					var cursor *string
					for range 10 {
						resp := compare(step, "POST", "/transactions/sync", map[string]any{
							"external_user_id": "u1", "merchant_id": merchantID, "limit": 60, "cursor": cursor}, header)
						var page struct {
							NextCursor *string `json:"next_cursor"`
							HasMore    bool    `json:"has_more"`
						}
						if resp.status != 200 || json.Unmarshal(resp.body, &page) != nil || !page.HasMore {
							break
						}
						cursor = page.NextCursor
					}
				}
			}
		}
		change := func(step, path string, body map[string]any) {
			t.Helper()
			if resp := plain.do("POST", path, body, nil); resp.status != 200 {
				t.Fatalf("%s: %d %s", step, resp.status, resp.body)
			}
			same(step)
		}
		ingest := func(step string, status string) {
			t.Helper()
			if conn == nil {
				conn = plain.newConnector(t)
			}
			resp := plain.ingest(conn, "transactions", transactionsBody(t, cached.clientID, "u1", 2, order("o-1", status)))
			if resp.status != 200 {
				t.Fatalf("%s: %d %s", step, resp.status, resp.body)
			}
			same(step)
		}

		same("nothing yet") // unknown user: the same error from both
		if resp := plain.do("POST", "/development/accounts/link", map[string]any{"external_user_id": "u1", "merchant_id": 3,
			"transactions": map[string]any{"new": true}}, otherAuth); resp.status != 200 {
			t.Fatalf("the other developer's link: %d %s", resp.status, resp.body)
		}
		devLinkTransactions(t, plain, "u1", 1, false)
		same("linking merchant 1 with transactions")
		change("linking merchant 2 for a card switch", "/development/accounts/link",
			map[string]any{"external_user_id": "u1", "merchant_id": 2, "card_switcher": true, "card_id": "card_1"})
		ingest("a connector's first transaction at merchant 2", "ORDERED")
		ingest("a batch that only changes it", "DELIVERED")
		change("vaulting at merchant 2", "/development/accounts/link",
			map[string]any{"external_user_id": "u1", "merchant_id": 2, "vault": map[string]any{}, "card_id": "card_2"})
		change("disconnecting merchant 2", "/development/accounts/disconnect", map[string]any{"external_user_id": "u1", "merchant_id": 2})
		devLinkTransactions(t, plain, "u1", 1, true) // more transactions, and 3 changed
		same("new and changed transactions")
		change("unlinking merchant 1", "/accounts/unlink", map[string]any{"external_user_id": "u1", "merchant_id": 1})
		devLinkTransactions(t, plain, "u1", 1, false)
		same("linking merchant 1 again")

		// Answers came from the cache, or this test proved nothing.
		if hits, _ := cached.server.CacheStats(); hits < 100 {
			t.Fatalf("the caching node answered %d requests from its cache", hits)
		}
	})
}
