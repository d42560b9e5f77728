package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Detection

// DetectRequest is the body of POST /detect.
type DetectRequest struct {
	ExternalUserID string  `json:"external_user_id"`
	Email          string  `json:"email"`
	PhoneNumber    *string `json:"phone_number,omitempty"`
}

// DetectResponse acknowledges a detection: its result arrives as the
// NEW_DETECTED_ACCOUNTS_AVAILABLE event.
type DetectResponse struct {
	Message   string `json:"message"`
	RequestID string `json:"request_id"`
}

// Detect starts detecting the user's merchant accounts.
func (c *Client) Detect(ctx context.Context, req *DetectRequest) (*DetectResponse, error) {
	var out DetectResponse
	return &out, c.do(ctx, http.MethodPost, "/detect", nil, req, &out)
}

// SearchResult tells whether the user has an account at a named merchant.
type SearchResult struct {
	Name       string     `json:"name"`
	Detected   bool       `json:"detected"`
	DetectedAt *time.Time `json:"detected_at"`
}

// SearchDetected asks, for each name, whether the user has a detected
// account there; results come in the order of names.
func (c *Client) SearchDetected(ctx context.Context, externalUserID string, names []string) ([]SearchResult, error) {
	var out []SearchResult
	body := map[string]any{"external_user_id": externalUserID, "names": names}
	return out, c.do(ctx, http.MethodPost, "/detected-accounts/search", nil, body, &out)
}

// IdentifyDetected is SearchDetected by POST /detected_accounts/identify.
func (c *Client) IdentifyDetected(ctx context.Context, externalUserID string, names []string) ([]SearchResult, error) {
	var out []SearchResult
	body := map[string]any{"external_user_id": externalUserID, "name": names}
	return out, c.do(ctx, http.MethodPost, "/detected_accounts/identify", nil, body, &out)
}

// DetectedAccount is a merchant account detected for a user. Merchant is
// nil for a merchant not in Hitch's catalog.
type DetectedAccount struct {
	ID               string     `json:"id"`
	Merchant         *Merchant  `json:"merchant"`
	Name             string     `json:"name"`
	LoginMethod      string     `json:"login_method"`
	Source           string     `json:"source"`
	AccountCreatedAt *time.Time `json:"account_created_at"`
	DetectedAt       time.Time  `json:"detected_at"`
}

// DetectedAccounts lists the user's detected accounts that are not linked
// (GET /detected_accounts/get); merchantID limits it to one merchant when
// not zero.
func (c *Client) DetectedAccounts(ctx context.Context, externalUserID string, merchantID int64) ([]DetectedAccount, error) {
	q := url.Values{"external_user_id": {externalUserID}}
	if merchantID != 0 {
		q.Set("merchant_id", strconv.FormatInt(merchantID, 10))
	}
	var out []DetectedAccount
	return out, c.do(ctx, http.MethodGet, "/detected_accounts/get", q, nil, &out)
}

// DetectedPageRequest is the body of POST /detected-accounts/list and
// /detected-accounts/sync.
type DetectedPageRequest struct {
	ExternalUserID string `json:"external_user_id"`
	Cursor         string `json:"cursor,omitempty"`
	Limit          int    `json:"limit,omitempty"`
}

// DetectedPage is a page of POST /detected-accounts/list.
type DetectedPage struct {
	DetectedAccounts []DetectedAccount `json:"detected_accounts"`
	NextCursor       *string           `json:"next_cursor"`
	Limit            int               `json:"limit"`
}

// ListDetected returns a page of the user's detected accounts that are not
// linked; NextCursor is nil on the last page.
func (c *Client) ListDetected(ctx context.Context, req *DetectedPageRequest) (*DetectedPage, error) {
	var out DetectedPage
	return &out, c.do(ctx, http.MethodPost, "/detected-accounts/list", nil, req, &out)
}
