package hitch

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWithSearchPath(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"postgres://u@h:5432/db?sslmode=disable", "postgres://u@h:5432/db?options=-c%20search_path%3Dbench_1&sslmode=disable"},
		{"postgres://u@h/db?options=-c%20statement_timeout%3D5s", "postgres://u@h/db?options=-c%20statement_timeout%3D5s%20-c%20search_path%3Dbench_1"},
	}
	for _, tt := range tests {
		got, err := withSearchPath(tt.in, "bench_1")
		if err != nil || got != tt.want {
			t.Errorf("withSearchPath(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestAtLeastWarn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line string
		want bool
	}{
		{`time=2026-01-02T03:04:05Z level=INFO msg=request status=200`, false},
		{`time=2026-01-02T03:04:05Z level=WARN msg="slow query"`, true},
		{`{"time":"2026-01-02T03:04:05Z","level":"ERROR","msg":"boom"}`, true},
		{`{"time":"2026-01-02T03:04:05Z","level":"INFO","msg":"level=WARN in a value"}`, true},
	}
	for _, tt := range tests {
		if got := atLeastWarn(tt.line); got != tt.want {
			t.Errorf("atLeastWarn(%q) = %v, want %v", tt.line, got, tt.want)
		}
	}
}

func TestFindRepo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+hitchModule+"\n\ngo 1.26\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := findRepo(dir); err != nil || got != dir {
		t.Errorf("findRepo(%q) = %q, %v", dir, got, err)
	}
	other := t.TempDir()
	if _, err := findRepo(other); err == nil || !strings.Contains(err.Error(), "no go.mod") {
		t.Errorf("findRepo(%q) error = %v, want no go.mod", other, err)
	}
}

// FetchAccounts wants exactly LinkedAccounts accounts, and sends the
// development client's credentials.
func TestFetchAccounts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		wantErr    bool
	}{
		{"ten", "[" + strings.Repeat("{},", LinkedAccounts-1) + "{}]", false},
		{"one", "[{}]", true},
		{"not an array", "{}", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if u, p, ok := r.BasicAuth(); !ok || u != DevClientID || p != "s3cret" || r.URL.String() != AccountsPath {
					http.Error(w, "unauthorized", http.StatusUnauthorized)
					return
				}
				w.Write([]byte(tt.body))
			}))
			t.Cleanup(srv.Close)
			l := &Launcher{Secret: "s3cret"}
			body, err := FetchAccounts(context.Background(), l.API(srv.URL))
			if (err != nil) != tt.wantErr || (err == nil && string(body) != tt.body) {
				t.Errorf("FetchAccounts = %q, %v; want error %v", body, err, tt.wantErr)
			}
		})
	}
}

// FetchSyncPage posts the first-page request and wants a full page with
// more to follow.
func TestFetchSyncPage(t *testing.T) {
	t.Parallel()
	page := func(n int, hasMore bool) string {
		return fmt.Sprintf(`{"merchant":{"id":1,"name":"M"},"transactions":[%s],"next_cursor":"c","has_more":%v,"limit":%d}`,
			strings.TrimSuffix(strings.Repeat(`{"id":"t"},`, n), ","), hasMore, n)
	}
	tests := []struct {
		name, body string
		wantErr    bool
	}{
		{"full page", page(SyncLimit, true), false},
		{"short page", page(SyncLimit-1, true), true},
		{"last page", page(SyncLimit, false), true},
		{"not a page", "[]", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got, _ := io.ReadAll(r.Body)
				if u, p, ok := r.BasicAuth(); !ok || u != DevClientID || p != "s3cret" ||
					r.Method != http.MethodPost || r.URL.String() != SyncPath || string(got) != string(SyncBody()) {
					http.Error(w, "unexpected request", http.StatusBadRequest)
					return
				}
				w.Write([]byte(tt.body))
			}))
			t.Cleanup(srv.Close)
			l := &Launcher{Secret: "s3cret"}
			body, err := FetchSyncPage(context.Background(), l.API(srv.URL))
			if (err != nil) != tt.wantErr || (err == nil && string(body) != tt.body) {
				t.Errorf("FetchSyncPage = %.80q, %v; want error %v", body, err, tt.wantErr)
			}
		})
	}
}

// SyncBody asks for the first page, SyncLimit transactions, of the bench
// user's account, and LinkTransactions links that account.
func TestSyncFixture(t *testing.T) {
	t.Parallel()
	var sync struct {
		ExternalUserID string  `json:"external_user_id"`
		MerchantID     int     `json:"merchant_id"`
		Limit          int     `json:"limit"`
		Cursor         *string `json:"cursor"`
	}
	if err := json.Unmarshal(SyncBody(), &sync); err != nil || sync.ExternalUserID != SyncUser ||
		sync.MerchantID != SyncMerchantID || sync.Limit != SyncLimit || sync.Cursor != nil {
		t.Errorf("SyncBody() = %s, %v", SyncBody(), err)
	}

	var link struct {
		ExternalUserID string `json:"external_user_id"`
		MerchantID     int    `json:"merchant_id"`
		Transactions   struct {
			New bool `json:"new"`
		} `json:"transactions"`
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/development/accounts/link" || json.NewDecoder(r.Body).Decode(&link) != nil {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		w.Write([]byte(`{"message":"success"}`))
	}))
	t.Cleanup(srv.Close)
	l := &Launcher{Secret: "s3cret"}
	if err := LinkTransactions(context.Background(), l.API(srv.URL)); err != nil {
		t.Fatal(err)
	}
	if link.ExternalUserID != SyncUser || link.MerchantID != SyncMerchantID || !link.Transactions.New {
		t.Errorf("linked %+v; want %s at merchant %d with new transactions", link, SyncUser, SyncMerchantID)
	}
}
