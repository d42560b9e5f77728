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

// LinkAccounts links merchants 1..LinkedAccounts to ExternalUserID for the
// card switcher.
func LinkAccounts(ctx context.Context, api *APIClient) error {
	for merchantID := 1; merchantID <= LinkedAccounts; merchantID++ {
		_, err := api.PostJSON(ctx, "/development/accounts/link", map[string]any{
			"external_user_id": ExternalUserID,
			"merchant_id":      merchantID,
			"card_switcher":    true,
			"card_id":          "card-1",
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
