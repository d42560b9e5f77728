package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/hitchdev/hitch/internal/detection"
	"github.com/hitchdev/hitch/internal/event"
)

type detectRequest struct {
	ExternalUserID *string `json:"external_user_id"`
	Email          *string `json:"email"`
	PhoneNumber    *string `json:"phone_number"`
}

type detectResponse struct {
	Message string `json:"message"`
	// RequestID names the detection request (Hitch's addition).
	RequestID string `json:"request_id"`
}

// detect serves POST /detect: detection starts, and its result arrives as
// NEW_DETECTED_ACCOUNTS_AVAILABLE.
func (s *Server) detect(w http.ResponseWriter, r *http.Request) error {
	var req detectRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	externalUserID, err := validateExternalUserID("external_user_id", req.ExternalUserID)
	if err != nil {
		return err
	}
	if req.Email == nil || *req.Email == "" {
		return errRequired("email")
	}
	if err := validateEmail("email", req.Email); err != nil {
		return err
	}
	if err := validatePhone("phone_number", req.PhoneNumber); err != nil {
		return err
	}
	in := detection.Input{Email: *req.Email}
	if req.PhoneNumber != nil {
		in.Phone = *req.PhoneNumber
	}
	id, err := s.Detections.Start(r.Context(), clientFrom(r.Context()).ID, externalUserID, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, detectResponse{Message: "Success", RequestID: id})
	return nil
}

// Names of one search.
const (
	maxSearchNames      = 100
	maxSearchNameLength = 255
)

type searchRequest struct {
	ExternalUserID *string   `json:"external_user_id"`
	Names          *[]string `json:"names"`
}

type identifyRequest struct {
	ExternalUserID *string   `json:"external_user_id"`
	Name           *[]string `json:"name"`
}

// searchResultJSON is shape C.
type searchResultJSON struct {
	Name       string     `json:"name"`
	Detected   bool       `json:"detected"`
	DetectedAt *time.Time `json:"detected_at"`
}

// searchDetected serves POST /detected-accounts/search.
func (s *Server) searchDetected(w http.ResponseWriter, r *http.Request) error {
	var req searchRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	return s.writeSearch(w, r, req.ExternalUserID, "names", req.Names)
}

// identifyDetected serves POST /detected_accounts/identify: search with
// the names in "name".
func (s *Server) identifyDetected(w http.ResponseWriter, r *http.Request) error {
	var req identifyRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	return s.writeSearch(w, r, req.ExternalUserID, "name", req.Name)
}

func (s *Server) writeSearch(w http.ResponseWriter, r *http.Request, rawUser *string, field string, names *[]string) error {
	externalUserID, err := validateExternalUserID("external_user_id", rawUser)
	if err != nil {
		return err
	}
	if err := validateNames(field, names); err != nil {
		return err
	}
	results, err := s.Detections.Search(r.Context(), clientFrom(r.Context()).ID, externalUserID, *names)
	if err != nil {
		return err
	}
	out := make([]searchResultJSON, len(results))
	for i, res := range results {
		out[i] = searchResultJSON{Name: res.Name, Detected: res.Detected, DetectedAt: res.DetectedAt}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func validateNames(field string, names *[]string) error {
	if names == nil {
		return errRequired(field)
	}
	if len(*names) == 0 || len(*names) > maxSearchNames {
		return errInvalidField("The %s field must hold 1 to %d names.", field, maxSearchNames)
	}
	for i, n := range *names {
		switch {
		case strings.TrimSpace(n) == "":
			return errInvalidField("The %s[%d] field must not be empty.", field, i)
		case len(n) > maxSearchNameLength:
			return errInvalidField("The %s[%d] field must be at most %d bytes.", field, i, maxSearchNameLength)
		case !validText(n):
			return errInvalidText(fmt.Sprintf("%s[%d]", field, i))
		}
	}
	return nil
}

// detectedJSON is shape B, with Hitch's id, login_method and source.
type detectedJSON struct {
	ID               string          `json:"id"`
	Merchant         *event.Merchant `json:"merchant,omitempty"`
	Name             string          `json:"name"`
	LoginMethod      string          `json:"login_method"`
	Source           string          `json:"source"`
	AccountCreatedAt *time.Time      `json:"account_created_at"`
	DetectedAt       time.Time       `json:"detected_at"`
}

func renderDetected(ds []detection.Detected) []detectedJSON {
	out := make([]detectedJSON, len(ds))
	for i, d := range ds {
		out[i] = detectedJSON{ID: d.ID, Merchant: d.Merchant, Name: d.Name, LoginMethod: d.LoginMethod,
			Source: d.Source, AccountCreatedAt: d.AccountCreatedAt, DetectedAt: d.DetectedAt}
	}
	return out
}

// getDetected serves GET /detected_accounts/get: the user's detected
// accounts that are not linked.
func (s *Server) getDetected(w http.ResponseWriter, r *http.Request) error {
	externalUserID, merchantID, oneMerchant, err := userMerchantQuery(r.URL.Query())
	if err != nil {
		return err
	}
	if _, ok := s.Catalog.Get(merchantID); oneMerchant && !ok {
		return errInvalidField("The selected merchant_id is invalid.")
	}
	ds, err := s.Detections.Get(r.Context(), clientFrom(r.Context()).ID, externalUserID, merchantID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderDetected(ds))
	return nil
}

type detectedPageRequest struct {
	ExternalUserID *string `json:"external_user_id"`
	Cursor         *string `json:"cursor"`
	Limit          *int64  `json:"limit"`
}

// decodePage reads and checks the body of the detected-account listings.
func decodePage(r *http.Request) (externalUserID, cursor string, limit int, err error) {
	var req detectedPageRequest
	if err := decode(r, &req); err != nil {
		return "", "", 0, err
	}
	if externalUserID, err = validateExternalUserID("external_user_id", req.ExternalUserID); err != nil {
		return "", "", 0, err
	}
	limit = detection.DefaultPageLimit
	if req.Limit != nil {
		if *req.Limit < 1 || *req.Limit > detection.MaxPageLimit {
			return "", "", 0, errInvalidField("The limit field must be between 1 and %d.", detection.MaxPageLimit)
		}
		limit = int(*req.Limit)
	}
	if req.Cursor != nil {
		cursor = *req.Cursor
	}
	return externalUserID, cursor, limit, nil
}

type detectedListResponse struct {
	DetectedAccounts []detectedJSON `json:"detected_accounts"`
	NextCursor       *string        `json:"next_cursor"`
	Limit            int            `json:"limit"`
}

// listDetected serves POST /detected-accounts/list: the user's detected
// accounts that are not linked, a page at a time.
func (s *Server) listDetected(w http.ResponseWriter, r *http.Request) error {
	externalUserID, cursor, limit, err := decodePage(r)
	if err != nil {
		return err
	}
	page, err := s.Detections.ListPage(r.Context(), clientFrom(r.Context()).ID, externalUserID, cursor, limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, detectedListResponse{DetectedAccounts: renderDetected(page.Accounts),
		NextCursor: page.NextCursor, Limit: len(page.Accounts)})
	return nil
}

// syncDetectedJSON is shape A: account_created_at is "" when unknown.
type syncDetectedJSON struct {
	Merchant         *event.Merchant `json:"merchant"`
	LoginMethod      string          `json:"login_method"`
	AccountCreatedAt string          `json:"account_created_at"`
	DetectedAt       time.Time       `json:"detected_at"`
}

type syncDetectedResponse struct {
	DetectedAccounts []syncDetectedJSON `json:"detected_accounts"`
	NextCursor       *string            `json:"next_cursor"`
	Limit            int                `json:"limit"`
}

// Deprecation of POST /detected-accounts/sync (RFC 9745 and RFC 8594).
const (
	syncDeprecatedAt = "@1767225600"                   // 2026-01-01T00:00:00Z
	syncSunset       = "Thu, 01 Jul 2027 00:00:00 GMT" // a year and a half of notice
	syncSuccessor    = `</detected-accounts/list>; rel="successor-version"`
)

// syncDetected serves the deprecated POST /detected-accounts/sync: the
// user's detections at catalog merchants after the cursor.
func (s *Server) syncDetected(w http.ResponseWriter, r *http.Request) error {
	h := w.Header()
	h.Set("Deprecation", syncDeprecatedAt)
	h.Set("Sunset", syncSunset)
	h.Set("Link", syncSuccessor)
	externalUserID, cursor, limit, err := decodePage(r)
	if err != nil {
		return err
	}
	page, err := s.Detections.SyncPage(r.Context(), clientFrom(r.Context()).ID, externalUserID, cursor, limit)
	if err != nil {
		return err
	}
	out := syncDetectedResponse{DetectedAccounts: make([]syncDetectedJSON, len(page.Accounts)),
		NextCursor: page.NextCursor, Limit: len(page.Accounts)}
	for i, d := range page.Accounts {
		out.DetectedAccounts[i] = syncDetectedJSON{Merchant: d.Merchant, LoginMethod: d.LoginMethod,
			DetectedAt: d.DetectedAt}
		if d.AccountCreatedAt != nil {
			out.DetectedAccounts[i].AccountCreatedAt = d.AccountCreatedAt.Format(time.RFC3339)
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// Connectors: pending detection requests and their results.

type ingestDetectionsRequest struct {
	ClientID       *string           `json:"client_id"`
	ExternalUserID *string           `json:"external_user_id"`
	RequestID      *string           `json:"request_id"`
	Accounts       []json.RawMessage `json:"accounts"`
}

// ingestDetected is an account as a connector reports it: a catalog
// merchant_id, or a name (matched against the catalog), or both.
type ingestDetected struct {
	MerchantID       int64  `json:"merchant_id"`
	Name             string `json:"name"`
	LoginMethod      string `json:"login_method"`
	AccountCreatedAt string `json:"account_created_at"`
	Source           string `json:"source"`
}

type ingestDetectionsResponse struct {
	// New are the ids of the detected accounts that were new.
	New       []string `json:"new"`
	Unchanged int      `json:"unchanged"`
	EventID   *string  `json:"event_id"`
}

// ingestDetections serves POST /internal/ingest/detections: accounts a
// connector found for a user, answering a request or on its own.
func (s *Server) ingestDetections(w http.ResponseWriter, r *http.Request) error {
	var req ingestDetectionsRequest
	if err := decodeLimit(r, &req, maxIngestBodyBytes); err != nil {
		return err
	}
	if err := validateConnectorClientID(req.ClientID); err != nil {
		return err
	}
	p := detection.RecordParams{}
	var err error
	switch {
	case req.RequestID != nil:
		if _, err := uuid.Parse(*req.RequestID); err != nil || len(*req.RequestID) != 36 {
			return errInvalidField("The request_id field must be a UUID.")
		}
		p.RequestID = *req.RequestID
		if req.ExternalUserID != nil {
			if p.ExternalUserID, err = validateExternalUserID("external_user_id", req.ExternalUserID); err != nil {
				return err
			}
		}
	default:
		if p.ExternalUserID, err = validateExternalUserID("external_user_id", req.ExternalUserID); err != nil {
			return err
		}
	}
	// A report for a request may be empty: the connector found nothing
	// (the request is done unless detect units still work on it).
	var items []ingestDetected
	if req.RequestID == nil || req.Accounts == nil || len(req.Accounts) > 0 {
		if items, err = decodeItems[ingestDetected]("accounts", req.Accounts); err != nil {
			return err
		}
	}
	p.Found = make([]detection.Found, len(items))
	for i, it := range items {
		at := fmt.Sprintf("accounts[%d]", i)
		if !validText(it.Name) {
			return errInvalidText(at + ".name")
		}
		created, err := optionalTime(at+".account_created_at", it.AccountCreatedAt)
		if err != nil {
			return err
		}
		p.Found[i] = detection.Found{MerchantID: it.MerchantID, Name: it.Name, LoginMethod: it.LoginMethod, Source: it.Source}
		if !created.IsZero() {
			p.Found[i].AccountCreatedAt = &created
		}
	}
	if p.ClientID, err = s.connectorClient(r.Context(), *req.ClientID); err != nil {
		return err
	}
	got, err := s.Detections.Record(r.Context(), p)
	if err != nil {
		return err
	}
	out := ingestDetectionsResponse{New: make([]string, len(got.New)), Unchanged: got.Unchanged}
	for i, d := range got.New {
		out.New[i] = d.ID
	}
	if got.Event != nil {
		out.EventID = &got.Event.ID
	}
	s.Logger.InfoContext(r.Context(), "ingested",
		"request_id", requestIDFrom(r.Context()),
		"connector_id", connectorFrom(r.Context()).ID,
		"client_id", p.ClientID,
		"kind", "detections",
		"new", len(got.New),
		"unchanged", got.Unchanged)
	writeJSON(w, http.StatusOK, out)
	return nil
}
