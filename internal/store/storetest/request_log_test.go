package storetest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// The request log keeps every field, filters by each of its filters
// (together), pages by id, never shows one developer's requests to
// another, and deletes by age across developers.
func TestRequestLog(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		newClient(t, st, "a")
		newClient(t, st, "b")
		row := func(clientID, requestID, path string, status int, code, user string, at time.Time) *store.RequestLog {
			return &store.RequestLog{ClientID: clientID, RequestID: requestID, CreatedAt: at, Method: "POST", Path: path,
				Query: "x=1", Status: status, ErrorCode: code, Latency: 1234 * time.Microsecond, IP: "2001:db8::1",
				ExternalUserID: user, RequestBody: "{\n  \"é\": 1\n}", ResponseBody: "{}"}
		}
		if err := st.RequestLogInsert(ctx, []*store.RequestLog{
			row("a", "r1", "/session/create", 200, "", "u1", t0),
			row("a", "r2", "/sessión/é", 404, "USER_NOT_FOUND", "u2", t0.Add(time.Hour)),
			row("a", "r3", "/transactions/1", 500, "INTERNAL_SERVER_ERROR", "", t0.Add(2*time.Hour)),
			row("b", "r4", "/session/create", 200, "", "u1", t0),
			row("a", "r1", "/session/extend", 400, "INVALID_FIELD", "u1", t0.Add(3*time.Hour)),
		}); err != nil {
			t.Fatal(err)
		}
		got, err := st.RequestLogGet(ctx, "a", "r1")
		if err != nil {
			t.Fatal(err)
		}
		if !got.CreatedAt.Equal(t0.Add(3*time.Hour)) || *got != (store.RequestLog{ID: got.ID, ClientID: "a", RequestID: "r1",
			CreatedAt: got.CreatedAt, Method: "POST", Path: "/session/extend", Query: "x=1", Status: 400,
			ErrorCode: "INVALID_FIELD", Latency: 1234 * time.Microsecond, IP: "2001:db8::1", ExternalUserID: "u1",
			RequestBody: "{\n  \"é\": 1\n}", ResponseBody: "{}"}) {
			t.Errorf("newest r1: %+v", got)
		}
		if _, err := st.RequestLogGet(ctx, "b", "r1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("b reads a's request: %v", err)
		}
		ids := func(p store.RequestLogListParams) string {
			t.Helper()
			list, err := st.RequestLogList(ctx, &p)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, l := range list {
				out = append(out, l.RequestID+l.Path)
			}
			return strings.Join(out, " ")
		}
		for _, tc := range []struct {
			p    store.RequestLogListParams
			want string
		}{
			{store.RequestLogListParams{ClientID: "a"}, "r1/session/extend r3/transactions/1 r2/sessión/é r1/session/create"},
			{store.RequestLogListParams{ClientID: "b"}, "r4/session/create"},
			{store.RequestLogListParams{ClientID: "a", RequestID: "r1"}, "r1/session/extend r1/session/create"},
			{store.RequestLogListParams{ClientID: "a", StatusClass: 4}, "r1/session/extend r2/sessión/é"},
			{store.RequestLogListParams{ClientID: "a", StatusClass: 5}, "r3/transactions/1"},
			{store.RequestLogListParams{ClientID: "a", PathPrefix: "/sessión"}, "r2/sessión/é"},
			{store.RequestLogListParams{ClientID: "a", PathPrefix: "/session/"}, "r1/session/extend r1/session/create"},
			{store.RequestLogListParams{ClientID: "a", ErrorCode: "USER_NOT_FOUND"}, "r2/sessión/é"},
			{store.RequestLogListParams{ClientID: "a", ExternalUserID: "u1", StatusClass: 2}, "r1/session/create"},
			{store.RequestLogListParams{ClientID: "a", RequestID: "r4"}, ""},
			{store.RequestLogListParams{ClientID: "a", Limit: 2}, "r1/session/extend r3/transactions/1"},
		} {
			if got := ids(tc.p); got != tc.want {
				t.Errorf("%+v: %q, want %q", tc.p, got, tc.want)
			}
		}
		first, err := st.RequestLogList(ctx, &store.RequestLogListParams{ClientID: "a", Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(store.RequestLogListParams{ClientID: "a", Before: first[1].ID}); got != "r2/sessión/é r1/session/create" {
			t.Errorf("second page: %q", got)
		}

		// Older than an hour after t0: a's r1 (first) and b's r4 go.
		n, err := st.RequestLogDeleteBefore(ctx, t0.Add(time.Hour), 1)
		if err != nil || n != 1 {
			t.Fatalf("first batch: %d, %v", n, err)
		}
		n, err = st.RequestLogDeleteBefore(ctx, t0.Add(time.Hour), 10)
		if err != nil || n != 1 {
			t.Fatalf("second batch: %d, %v", n, err)
		}
		if got := ids(store.RequestLogListParams{ClientID: "a"}) + "|" + ids(store.RequestLogListParams{ClientID: "b"}); got != "r1/session/extend r3/transactions/1 r2/sessión/é|" {
			t.Errorf("after deleting: %q", got)
		}
	})
}
