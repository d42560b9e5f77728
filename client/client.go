// Package client is a Go client of Hitch's HTTP API. Hitch's own tests drive
// the API through it, so it stays complete and correct.
//
//	c := client.New("http://127.0.0.1:8080", clientID, secret)
//	s, err := c.CreateSession(ctx, &client.CreateSessionRequest{Type: "link", ExternalUserID: "user-1"})
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client calls one Hitch deployment with one developer's credentials.
type Client struct {
	baseURL  string
	clientID string
	secret   string
	http     *http.Client
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient uses hc for requests (default: a client with a 30 s timeout).
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.http = hc } }

// New returns a Client for the deployment at baseURL.
func New(baseURL, clientID, secret string, opts ...Option) *Client {
	c := &Client{
		baseURL:  strings.TrimRight(baseURL, "/"),
		clientID: clientID,
		secret:   secret,
		http:     &http.Client{Timeout: 30 * time.Second},
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Error is an error answered by the API.
type Error struct {
	StatusCode int    `json:"-"`
	Type       string `json:"error_type"`
	Code       string `json:"error_code"`
	Message    string `json:"error_message"`
	RequestID  string `json:"request_id"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("hitch: %d %s/%s: %s (request %s)", e.StatusCode, e.Type, e.Code, e.Message, e.RequestID)
}

// do sends a request with a JSON body (nil for none) and decodes a 2xx JSON
// answer into out (nil to discard it).
func (c *Client) do(ctx context.Context, method, path string, query url.Values, body, out any) error {
	u := c.baseURL + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var reader io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("hitch: encode request: %w", err)
		}
		reader = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, reader)
	if err != nil {
		return fmt.Errorf("hitch: %w", err)
	}
	req.SetBasicAuth(c.clientID, c.secret)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("hitch: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return fmt.Errorf("hitch: %s %s: read: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		apiErr := &Error{StatusCode: resp.StatusCode}
		if err := json.Unmarshal(data, apiErr); err != nil || apiErr.Code == "" {
			apiErr.Message = strings.TrimSpace(string(data))
		}
		return apiErr
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("hitch: %s %s: decode: %w", method, path, err)
	}
	return nil
}

// Sessions

// CreateSessionRequest is the body of POST /session/create.
type CreateSessionRequest struct {
	Type           string            `json:"type"`
	ExternalUserID string            `json:"external_user_id"`
	CardID         *string           `json:"card_id,omitempty"`
	MerchantID     *int64            `json:"merchant_id,omitempty"`
	Email          *string           `json:"email,omitempty"`
	PhoneNumber    *string           `json:"phone_number,omitempty"`
	ProcessorToken *string           `json:"processor_token,omitempty"`
	Metadata       map[string]string `json:"metadata,omitempty"`
}

// Session is a session value for the SDK, with its id and expiry.
type Session struct {
	// Session is the value; empty after an extend by SessionID.
	Session   string    `json:"session"`
	SessionID string    `json:"session_id"`
	ExpiresAt time.Time `json:"expires_at"`
}

// CreateSession creates a session to hand to the SDK.
func (c *Client) CreateSession(ctx context.Context, req *CreateSessionRequest) (*Session, error) {
	var s Session
	return &s, c.do(ctx, http.MethodPost, "/session/create", nil, req, &s)
}

// ExtendSession gives a live session another 30 minutes from now. session
// is its value or its SessionID; given the id, the answer's Session is
// empty (Hitch cannot show the value again).
func (c *Client) ExtendSession(ctx context.Context, session string) (*Session, error) {
	var s Session
	return &s, c.do(ctx, http.MethodPost, "/session/extend", nil, map[string]string{"session_id": session}, &s)
}

// Merchants and accounts

// MerchantRef is a merchant as referenced by an account.
type MerchantRef struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	Logo string `json:"logo,omitempty"`
}

// Scope is a permission of a connected account.
type Scope struct {
	Type string `json:"type"`
}

// Account is a user's linked merchant account.
type Account struct {
	Merchant   MerchantRef `json:"merchant"`
	Connection struct {
		Status string  `json:"status"`
		Scopes []Scope `json:"scopes"`
	} `json:"connection"`
	Lifecycle struct {
		Status *string `json:"status"`
	} `json:"lifecycle"`
	LastUserAction struct {
		AttemptedAt *time.Time `json:"attempted_at"`
		Status      *string    `json:"status"`
	} `json:"last_user_action"`
}

// ListAccounts lists a user's linked accounts. product ("" or card_switcher,
// transaction_link, vault) selects whose lifecycle is reported.
func (c *Client) ListAccounts(ctx context.Context, externalUserID, product string) ([]Account, error) {
	q := url.Values{"external_user_id": {externalUserID}}
	if product != "" {
		q.Set("type", product)
	}
	var accounts []Account
	return accounts, c.do(ctx, http.MethodGet, "/accounts/get", q, nil, &accounts)
}

// GetAccount returns the user's linked account at one merchant.
func (c *Client) GetAccount(ctx context.Context, externalUserID string, merchantID int64, product string) (*Account, error) {
	q := url.Values{"external_user_id": {externalUserID}, "merchant_id": {strconv.FormatInt(merchantID, 10)}}
	if product != "" {
		q.Set("type", product)
	}
	var a Account
	return &a, c.do(ctx, http.MethodGet, "/accounts/get", q, nil, &a)
}

type accountRequest struct {
	ExternalUserID string `json:"external_user_id"`
	MerchantID     int64  `json:"merchant_id"`
}

// UnlinkAccount unlinks a user's merchant account.
func (c *Client) UnlinkAccount(ctx context.Context, externalUserID string, merchantID int64) error {
	return c.do(ctx, http.MethodPost, "/accounts/unlink", nil, accountRequest{externalUserID, merchantID}, nil)
}

// Merchant is a catalog entry of POST /merchant/list.
type Merchant struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	Category string `json:"category"`
	Logo     string `json:"logo"`
}

// ListMerchantsRequest is the body of POST /merchant/list.
type ListMerchantsRequest struct {
	Type     string  `json:"type"`
	Platform *string `json:"platform,omitempty"`
	Search   *string `json:"search,omitempty"`
}

// ListMerchants lists the merchants that support a product.
func (c *Client) ListMerchants(ctx context.Context, req *ListMerchantsRequest) ([]Merchant, error) {
	var ms []Merchant
	return ms, c.do(ctx, http.MethodPost, "/merchant/list", nil, req, &ms)
}

// JWK is the public key used to encrypt card data.
type JWK struct {
	Alg    string   `json:"alg"`
	E      string   `json:"e"`
	KeyOps []string `json:"key_ops"`
	Kid    string   `json:"kid"`
	Kty    string   `json:"kty"`
	N      string   `json:"n"`
	Use    string   `json:"use"`
}

// JWEKey returns the current public encryption key.
func (c *Client) JWEKey(ctx context.Context) (*JWK, error) {
	var k JWK
	return &k, c.do(ctx, http.MethodGet, "/jwe/key", nil, nil, &k)
}

// Development simulations

// DevTransactions asks a development link to generate transactions.
type DevTransactions struct {
	New     bool `json:"new"`
	Updated bool `json:"updated,omitempty"`
}

// DevLinkRequest is the body of POST /development/accounts/link.
type DevLinkRequest struct {
	ExternalUserID string            `json:"external_user_id"`
	MerchantID     int64             `json:"merchant_id"`
	CardSwitcher   bool              `json:"card_switcher,omitempty"`
	CardID         *string           `json:"card_id,omitempty"`
	Transactions   *DevTransactions  `json:"transactions,omitempty"`
	Vault          *DevVault         `json:"vault,omitempty"`
	Metadata       map[string]string `json:"metadata,omitempty"`
}

// DevVault asks a development link to simulate a vault login; the vaulting
// succeeds unless Outcome is "failed".
type DevVault struct {
	Outcome string `json:"outcome,omitempty"`
}

// DevLinkAccount simulates linking a merchant account (development only).
func (c *Client) DevLinkAccount(ctx context.Context, req *DevLinkRequest) error {
	return c.do(ctx, http.MethodPost, "/development/accounts/link", nil, req, nil)
}

// DevDisconnectAccount simulates a merchant account losing its connection
// (development only).
func (c *Client) DevDisconnectAccount(ctx context.Context, externalUserID string, merchantID int64) error {
	return c.do(ctx, http.MethodPost, "/development/accounts/disconnect", nil, accountRequest{externalUserID, merchantID}, nil)
}
