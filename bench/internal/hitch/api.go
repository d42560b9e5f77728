package hitch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// The accounts fixture both benchmarks load: one user with ten accounts
// linked through the development endpoint.
const (
	ExternalUserID = "bench-user"
	LinkedAccounts = 10
	// AccountsPath is the request under load: the user's accounts.
	AccountsPath = "/accounts/get?external_user_id=" + ExternalUserID
	// AccountPath is the request of one of them.
	AccountPath = AccountsPath + "&merchant_id=1"
)

// APIClient calls one server's API with Basic auth, for set-up requests;
// measured requests go through loadgen.
type APIClient struct {
	base       string
	user, pass string
	http       *http.Client
}

// API is a client of the Hitch at base, as the development client.
func (l *Launcher) API(base string) *APIClient {
	return &APIClient{base: base, user: DevClientID, pass: l.Secret, http: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}}
}

// Do sends one request, with body as JSON unless it is nil, and returns the
// status and at most 1 MiB of the body.
func (a *APIClient) Do(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.SetBasicAuth(a.user, a.pass)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, got, err
}

// PostJSON posts v and wants a 200, whose body it returns.
func (a *APIClient) PostJSON(ctx context.Context, path string, v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	status, got, err := a.Do(ctx, http.MethodPost, path, body)
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", path, err)
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("POST %s: status %d: %s", path, status, got)
	}
	return got, nil
}

// LinkAccounts links merchants 1..LinkedAccounts to ExternalUserID for
// transactions, with none to deliver: the listing then stays as it is for
// the whole run. (A link for the card switcher opens a task that fails when
// its card window ends, 15 s later, and changes the listing under load.)
func LinkAccounts(ctx context.Context, api *APIClient) error {
	for merchantID := 1; merchantID <= LinkedAccounts; merchantID++ {
		_, err := api.PostJSON(ctx, "/development/accounts/link", map[string]any{
			"external_user_id": ExternalUserID,
			"merchant_id":      merchantID,
			"transactions":     map[string]any{"new": false},
		})
		if err != nil {
			return fmt.Errorf("link merchant %d: %w", merchantID, err)
		}
	}
	return nil
}

// FetchAccounts gets AccountsPath once and checks it lists LinkedAccounts
// accounts. Every answer under load must have the same bytes.
func FetchAccounts(ctx context.Context, api *APIClient) ([]byte, error) {
	status, body, err := api.Do(ctx, http.MethodGet, AccountsPath, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", AccountsPath, err)
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("GET %s: status %d: %s", AccountsPath, status, body)
	}
	var accounts []json.RawMessage
	if err := json.Unmarshal(body, &accounts); err != nil {
		return nil, fmt.Errorf("GET %s: not a JSON array: %w", AccountsPath, err)
	}
	if len(accounts) != LinkedAccounts {
		return nil, fmt.Errorf("GET %s: %d accounts, want %d", AccountsPath, len(accounts), LinkedAccounts)
	}
	return body, nil
}

// FetchAccount gets AccountPath once and checks it is merchant 1's
// account. Every answer under load must have the same bytes.
func FetchAccount(ctx context.Context, api *APIClient) ([]byte, error) {
	status, body, err := api.Do(ctx, http.MethodGet, AccountPath, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", AccountPath, err)
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("GET %s: status %d: %s", AccountPath, status, body)
	}
	var account struct {
		Merchant struct{ ID int64 } `json:"merchant"`
	}
	if err := json.Unmarshal(body, &account); err != nil || account.Merchant.ID != 1 {
		return nil, fmt.Errorf("GET %s: not merchant 1's account: %s", AccountPath, body)
	}
	return body, nil
}

// The sync fixture: SyncUser's account at SyncMerchantID, linked with
// transactions, whose first page of SyncLimit is the request under load.
const (
	// SyncUser is the simulator's test user with 10,000 orders at every
	// merchant (docs/simulator.md): an ordinary user's history may hold
	// fewer than a page.
	SyncUser       = "user_10000_orders"
	SyncMerchantID = 1
	// SyncLimit is the page size asked for: the API's maximum.
	SyncLimit = 100
	// SyncPath is the request under load, POSTed with SyncBody.
	SyncPath = "/transactions/sync"
)

// SyncBody is the JSON body of the sync request: the first page (no
// cursor) of SyncLimit transactions, the same every time.
func SyncBody() []byte {
	b, _ := json.Marshal(struct {
		ExternalUserID string `json:"external_user_id"`
		MerchantID     int    `json:"merchant_id"`
		Limit          int    `json:"limit"`
	}{SyncUser, SyncMerchantID, SyncLimit}) // cannot fail
	return b
}

// LinkTransactions links SyncMerchantID to SyncUser for transactions;
// Hitch's simulator stores the last two years of them (10,000) before
// answering.
func LinkTransactions(ctx context.Context, api *APIClient) error {
	_, err := api.PostJSON(ctx, "/development/accounts/link", map[string]any{
		"external_user_id": SyncUser,
		"merchant_id":      SyncMerchantID,
		"transactions":     map[string]any{"new": true},
	})
	if err != nil {
		return fmt.Errorf("link merchant %d with transactions: %w", SyncMerchantID, err)
	}
	return nil
}

// FetchSyncPage posts SyncBody to SyncPath once and checks the page is full
// (SyncLimit transactions) and that more follow. Every answer under load
// must have the same bytes.
func FetchSyncPage(ctx context.Context, api *APIClient) ([]byte, error) {
	status, body, err := api.Do(ctx, http.MethodPost, SyncPath, SyncBody())
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", SyncPath, err)
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("POST %s: status %d: %.500s", SyncPath, status, body)
	}
	var page struct {
		Transactions []json.RawMessage `json:"transactions"`
		HasMore      bool              `json:"has_more"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		return nil, fmt.Errorf("POST %s: not a transaction page: %w", SyncPath, err)
	}
	if len(page.Transactions) != SyncLimit || !page.HasMore {
		return nil, fmt.Errorf("POST %s: %d transactions, has_more %v; want a full page of %d and more to follow",
			SyncPath, len(page.Transactions), page.HasMore, SyncLimit)
	}
	return body, nil
}
