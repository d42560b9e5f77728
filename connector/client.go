// Package connector is the Go SDK for writing Hitch connectors: processes
// that log in to a merchant's website with a user's credentials, read the
// account's orders and subscriptions, and switch or read its card on file.
//
// A connector talks to Hitch only through the connector HTTP API of
// openapi.yaml (the Connectors tag), with the credentials that `hitch
// connectors create` prints. Client is that API; Run is the work loop that
// claims logins, refreshes, card tasks and detection requests for the
// merchants a Site serves and reports each step; package
// connector/browser drives Chromium. docs/connectors.md walks through
// examples/refconnector, a complete connector for the reference shop.
package connector

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client calls Hitch's connector API.
type Client struct {
	base   string
	id     string
	secret string
	http   *http.Client
}

// NewClient returns a client of the Hitch deployment at baseURL, with the
// connector's id (conn_…) and secret (csec_…).
func NewClient(baseURL, id, secret string, hc *http.Client) *Client {
	if hc == nil {
		// Above the longest long poll (25 s) with room for a slow answer.
		hc = &http.Client{Timeout: 45 * time.Second}
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), id: id, secret: secret, http: hc}
}

// APIError is an error answer of Hitch: its status and error body.
type APIError struct {
	Status    int    `json:"-"`
	Type      string `json:"error_type"`
	Code      string `json:"error_code"`
	Message   string `json:"error_message"`
	RequestID string `json:"request_id"`
}

func (e *APIError) Error() string {
	return fmt.Sprintf("hitch: %d %s: %s (request %s)", e.Status, e.Code, e.Message, e.RequestID)
}

// IsCode reports whether err is an APIError with the error code.
func IsCode(err error, code string) bool {
	e, ok := err.(*APIError)
	return ok && e.Code == code
}

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var reader io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		reader = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, reader)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.SetBasicAuth(c.id, c.secret)
	resp, err := c.http.Do(req)
	if err != nil {
		// The URL never holds secrets; the error of a transport may hold
		// the URL only.
		return fmt.Errorf("hitch: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("hitch: %s %s: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		e := &APIError{Status: resp.StatusCode}
		if json.Unmarshal(data, e) != nil || e.Code == "" {
			e.Code, e.Message = "HTTP_"+strconv.Itoa(resp.StatusCode), http.StatusText(resp.StatusCode)
		}
		return e
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

// Declare tells Hitch which catalog merchants this connector serves.
func (c *Client) Declare(ctx context.Context, merchantIDs []int64) error {
	return c.do(ctx, http.MethodPut, "/internal/connector", map[string]any{"merchant_ids": merchantIDs}, nil)
}

// Work kinds.
const (
	KindLogin   = "login"
	KindRefresh = "refresh"
	KindDetect  = "detect"
)

// Work is a unit of work claimed from Hitch: a login or a refresh of one
// user's account at one merchant, or a check of whether a user has an
// account at one merchant (detect).
type Work struct {
	ID             string           `json:"id"`
	Kind           string           `json:"kind"`
	Status         string           `json:"status"`
	ClientID       string           `json:"client_id"`
	ExternalUserID string           `json:"external_user_id"`
	MerchantID     int64            `json:"merchant_id"`
	Product        string           `json:"product"`
	Question       *string          `json:"question"`
	Reason         *string          `json:"reason"`
	Lease          string           `json:"lease"`
	LeaseExpiresAt *time.Time       `json:"lease_expires_at"`
	Credentials    *UserCredentials `json:"credentials"`
	// State is the saved merchant session, base64 (refreshes).
	State *string `json:"state"`
	// RequestID is a detect unit's detection request, and Detection what
	// to check with.
	RequestID *string         `json:"request_id"`
	Detection *DetectionInput `json:"detection"`
}

// DetectionInput is what a detect unit checks its merchant with. Keep it in
// memory only.
type DetectionInput struct {
	Email          *string `json:"email"`
	PhoneNumber    *string `json:"phone_number"`
	ProcessorToken *string `json:"processor_token"`
}

// DetectionRequest is the detection request of a detect unit.
func (w *Work) DetectionRequest() *DetectionRequest {
	d := &DetectionRequest{ClientID: w.ClientID, ExternalUserID: w.ExternalUserID}
	if w.RequestID != nil {
		d.ID = *w.RequestID
	}
	if w.Detection != nil {
		d.Email, d.PhoneNumber, d.ProcessorToken = w.Detection.Email, w.Detection.PhoneNumber, w.Detection.ProcessorToken
	}
	return d
}

// UserCredentials are what the user typed in the hosted flow. Keep them in
// memory only.
type UserCredentials struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// Account names one user's account at a merchant.
func (w *Work) Account() Account {
	return Account{ClientID: w.ClientID, ExternalUserID: w.ExternalUserID, MerchantID: w.MerchantID}
}

// Claim claims up to limit pending units of work of the kinds (nil: all).
func (c *Client) Claim(ctx context.Context, kinds []string, limit int) ([]*Work, error) {
	var out struct {
		Work []*Work `json:"work"`
	}
	err := c.do(ctx, http.MethodPost, "/internal/work/claim", map[string]any{"kinds": kinds, "limit": limit}, &out)
	return out.Work, err
}

// Login step statuses.
const (
	StepOTPRequired       = "otp_required"
	StepQuestionsRequired = "questions_required"
	StepWrongAnswer       = "wrong_answer"
	StepAuthenticated     = "authenticated"
	StepFailed            = "failed"
)

// Step reports a login's step. state is the merchant session to keep
// (authenticated only).
func (c *Client) Step(ctx context.Context, w *Work, status, question, reason string, state []byte) error {
	body := map[string]any{"lease": w.Lease, "status": status}
	if question != "" {
		body["question"] = question
	}
	if reason != "" {
		body["reason"] = reason
	}
	if state != nil {
		body["state"] = base64.StdEncoding.EncodeToString(state)
	}
	return c.do(ctx, http.MethodPost, "/internal/work/"+url.PathEscape(w.ID)+"/step", body, nil)
}

// Answer waits up to wait (at most 25 s) for the user's answer to the
// login's challenge; ok is false when none came yet.
func (c *Client) Answer(ctx context.Context, w *Work, wait time.Duration) (answer string, ok bool, err error) {
	var out struct {
		Answer *string `json:"answer"`
	}
	err = c.do(ctx, http.MethodPost, "/internal/work/"+url.PathEscape(w.ID)+"/answer",
		map[string]any{"lease": w.Lease, "wait_seconds": int(wait / time.Second)}, &out)
	if err != nil || out.Answer == nil {
		return "", false, err
	}
	return *out.Answer, true, nil
}

// Heartbeat renews the work's lease; it returns the work's status (a login
// whose user left is "failed").
func (c *Client) Heartbeat(ctx context.Context, w *Work) (string, error) {
	var out struct {
		Work Work `json:"work"`
	}
	err := c.do(ctx, http.MethodPost, "/internal/work/"+url.PathEscape(w.ID)+"/heartbeat", map[string]any{"lease": w.Lease}, &out)
	return out.Work.Status, err
}

// Refresh outcomes.
const (
	RefreshSucceeded    = "succeeded"
	RefreshDisconnected = "disconnected"
	RefreshFailed       = "failed"
)

// CompleteDetect ends a detect unit: the account found at its merchant (nil
// when there is none), or, with a reason, a failure to check.
func (c *Client) CompleteDetect(ctx context.Context, w *Work, found *DetectedAccount, reason string) error {
	body := map[string]any{"lease": w.Lease, "outcome": "succeeded"}
	if reason != "" {
		body["outcome"], body["reason"] = "failed", reason
	} else if found != nil {
		acct := map[string]any{"source": found.Source}
		if found.LoginMethod != "" {
			acct["login_method"] = found.LoginMethod
		}
		if found.AccountCreatedAt != "" {
			acct["account_created_at"] = found.AccountCreatedAt
		}
		body["account"] = acct
	}
	return c.do(ctx, http.MethodPost, "/internal/work/"+url.PathEscape(w.ID)+"/complete", body, nil)
}

// Complete ends a refresh.
func (c *Client) Complete(ctx context.Context, w *Work, outcome, reason string, state []byte) error {
	body := map[string]any{"lease": w.Lease, "outcome": outcome}
	if reason != "" {
		body["reason"] = reason
	}
	if state != nil {
		body["state"] = base64.StdEncoding.EncodeToString(state)
	}
	return c.do(ctx, http.MethodPost, "/internal/work/"+url.PathEscape(w.ID)+"/complete", body, nil)
}

// Account names one user's account at a merchant, as ingestion does.
type Account struct {
	ClientID       string `json:"client_id"`
	ExternalUserID string `json:"external_user_id"`
	MerchantID     int64  `json:"merchant_id"`
}

// IngestResult is what an ingestion did.
type IngestResult struct {
	New       []string `json:"new"`
	Updated   []string `json:"updated"`
	Unchanged int      `json:"unchanged"`
}

// MaxBatch is the most items one ingestion takes.
const MaxBatch = 1_000

// IngestTransactions sends an account's orders, in batches of MaxBatch.
func (c *Client) IngestTransactions(ctx context.Context, a Account, txs []Transaction) (*IngestResult, error) {
	return ingest(ctx, c, "/internal/ingest/transactions", "transactions", a, txs)
}

// IngestSubscriptions sends an account's subscriptions.
func (c *Client) IngestSubscriptions(ctx context.Context, a Account, subs []Subscription) (*IngestResult, error) {
	return ingest(ctx, c, "/internal/ingest/subscriptions", "subscriptions", a, subs)
}

func ingest[T any](ctx context.Context, c *Client, path, field string, a Account, items []T) (*IngestResult, error) {
	total := &IngestResult{New: []string{}, Updated: []string{}}
	for start := 0; start < len(items); start += MaxBatch {
		batch := items[start:min(start+MaxBatch, len(items))]
		var out IngestResult
		body := map[string]any{"client_id": a.ClientID, "external_user_id": a.ExternalUserID, "merchant_id": a.MerchantID, field: batch}
		if err := c.do(ctx, http.MethodPost, path, body, &out); err != nil {
			return nil, err
		}
		total.New = append(total.New, out.New...)
		total.Updated = append(total.Updated, out.Updated...)
		total.Unchanged += out.Unchanged
	}
	return total, nil
}

// Task is a card switch or vaulting waiting for a connector.
type Task struct {
	TaskID         int64             `json:"task_id"`
	ClientID       string            `json:"client_id"`
	ExternalUserID string            `json:"external_user_id"`
	MerchantID     int64             `json:"merchant_id"`
	Product        string            `json:"product"`
	Status         string            `json:"status"`
	Metadata       map[string]string `json:"metadata"`
}

// Card is a card switch's card: in memory only, never logged.
type Card struct {
	User       json.RawMessage `json:"user"`
	Number     string          `json:"number"`
	Expiration string          `json:"expiration"` // MM/YYYY
	CVV        *string         `json:"cvv"`
}

// PendingTasks lists tasks of the merchants this connector serves.
func (c *Client) PendingTasks(ctx context.Context, limit int) ([]*Task, error) {
	var out struct {
		Tasks []*Task `json:"tasks"`
	}
	err := c.do(ctx, http.MethodGet, "/internal/tasks?limit="+strconv.Itoa(limit), nil, &out)
	return out.Tasks, err
}

// ClaimTask claims a task: its card (nil for a vaulting) and the saved
// merchant session (nil when none).
func (c *Client) ClaimTask(ctx context.Context, t *Task) (*Card, []byte, error) {
	var out struct {
		Card  *Card   `json:"card"`
		State *string `json:"state"`
	}
	err := c.do(ctx, http.MethodPost, "/internal/tasks/"+strconv.FormatInt(t.TaskID, 10)+"/claim",
		map[string]any{"client_id": t.ClientID}, &out)
	if err != nil {
		return nil, nil, err
	}
	var state []byte
	if out.State != nil {
		if state, err = base64.StdEncoding.DecodeString(*out.State); err != nil {
			return nil, nil, fmt.Errorf("hitch: task state: %w", err)
		}
	}
	return out.Card, state, nil
}

// CardSummary is a card as a vaulting reports it: never a full number.
type CardSummary struct {
	Brand      string `json:"brand"`
	LastFour   string `json:"last_four"`
	Expiration string `json:"expiration"` // MM/YYYY
}

// TaskResult reports how a task ended: reason "" is success; found is the
// card on file of a vaulting.
func (c *Client) TaskResult(ctx context.Context, t *Task, reason string, found *CardSummary) error {
	body := map[string]any{"client_id": t.ClientID, "status": "succeeded"}
	if reason != "" {
		body["status"], body["reason"] = "failed", reason
	}
	if found != nil {
		body["payment_method"] = found
	}
	return c.do(ctx, http.MethodPost, "/internal/tasks/"+strconv.FormatInt(t.TaskID, 10)+"/result", body, nil)
}

// DetectionRequest asks which merchants a user has accounts at. A connector
// gets one with each detect unit (Work.DetectionRequest).
type DetectionRequest struct {
	ID             string  `json:"id"`
	ClientID       string  `json:"client_id"`
	ExternalUserID string  `json:"external_user_id"`
	Email          *string `json:"email"`
	PhoneNumber    *string `json:"phone_number"`
	ProcessorToken *string `json:"processor_token"`
}

// DetectedAccount is an account found for a detection request.
type DetectedAccount struct {
	MerchantID       int64  `json:"merchant_id"`
	Source           string `json:"source"` // email, phone or processor_token
	LoginMethod      string `json:"login_method,omitempty"`
	AccountCreatedAt string `json:"account_created_at,omitempty"`
}

// ReportDetections reports accounts found for a user: for the request r
// names (its user), or, when r.ID is "", for r.ExternalUserID on the
// connector's own signal. A detect unit reports with CompleteDetect.
func (c *Client) ReportDetections(ctx context.Context, r *DetectionRequest, found []DetectedAccount) error {
	if found == nil {
		found = []DetectedAccount{}
	}
	body := map[string]any{"client_id": r.ClientID, "accounts": found}
	if r.ID != "" {
		body["request_id"] = r.ID
	} else {
		body["external_user_id"] = r.ExternalUserID
	}
	return c.do(ctx, http.MethodPost, "/internal/ingest/detections", body, nil)
}
