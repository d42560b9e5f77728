package api

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/hitchdev/hitch/internal/connector"
	"github.com/hitchdev/hitch/internal/detection"
	"github.com/hitchdev/hitch/internal/store"
)

// The connector work API: a connector declares the merchants it serves,
// claims logins and refreshes of those merchants under a lease, and reports
// each step (docs/connectors.md).

const (
	maxDeclaredMerchants = 1_000
	maxClaim             = 50
	// maxAnswerWait bounds one long poll for a user's answer.
	maxAnswerWait = 25 * time.Second
	// maxStateBytes bounds a saved merchant session (cookies).
	maxStateBytes = 256 << 10
	maxQuestion   = 1_000
	maxReason     = 200
)

type declareRequest struct {
	MerchantIDs []int64 `json:"merchant_ids"`
}

type connectorJSON struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	MerchantIDs []int64 `json:"merchant_ids"`
}

// requireServed refuses a connector's request about a merchant it has not
// declared.
func (s *Server) requireServed(ctx context.Context, merchantID int64) error {
	c := connectorFrom(ctx)
	ok, err := s.Work.Serves(ctx, c.ID, merchantID)
	if err != nil {
		return err
	}
	if !ok {
		return connector.ErrNotServed
	}
	return nil
}

// seen records the connector's call, for routing and `hitch connectors
// list`.
func (s *Server) seen(r *http.Request) error {
	return s.Work.Seen(r.Context(), connectorFrom(r.Context()).ID)
}

// declareConnector serves PUT /internal/connector.
func (s *Server) declareConnector(w http.ResponseWriter, r *http.Request) error {
	var req declareRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.MerchantIDs == nil || len(req.MerchantIDs) > maxDeclaredMerchants {
		return errInvalidField("The merchant_ids field must be a list of at most %d catalog merchant ids.", maxDeclaredMerchants)
	}
	for i, id := range req.MerchantIDs {
		if _, ok := s.Catalog.Get(id); !ok {
			return errInvalidField("The merchant_ids[%d] field is not a catalog merchant id.", i)
		}
	}
	c := connectorFrom(r.Context())
	if err := s.Work.Declare(r.Context(), c, req.MerchantIDs); err != nil {
		return err
	}
	return s.getConnector(w, r)
}

// getConnector serves GET /internal/connector: what the connector declared.
func (s *Server) getConnector(w http.ResponseWriter, r *http.Request) error {
	if err := s.seen(r); err != nil {
		return err
	}
	c := connectorFrom(r.Context())
	ids, err := s.Work.Declared(r.Context(), c.ID)
	if err != nil {
		return err
	}
	if ids == nil {
		ids = []int64{}
	}
	writeJSON(w, http.StatusOK, connectorJSON{ID: c.ID, Name: c.Name, MerchantIDs: ids})
	return nil
}

type claimRequest struct {
	Kinds []string `json:"kinds"`
	Limit *int     `json:"limit"`
}

type workJSON struct {
	ID             string  `json:"id"`
	Kind           string  `json:"kind"`
	Status         string  `json:"status"`
	ClientID       string  `json:"client_id"`
	ExternalUserID string  `json:"external_user_id"`
	MerchantID     int64   `json:"merchant_id"`
	Product        string  `json:"product"`
	RequestID      *string `json:"request_id"`
	Question       *string `json:"question"`
	Reason         *string `json:"reason"`
	LeaseExpiresAt *string `json:"lease_expires_at"`
	CreatedAt      string  `json:"created_at"`
}

type claimedJSON struct {
	workJSON
	Lease       string                     `json:"lease"`
	Credentials *connector.UserCredentials `json:"credentials"`
	State       *string                    `json:"state"`
	Detection   *detectionJSON             `json:"detection"`
}

// detectionJSON is what a detect unit checks its merchant with.
type detectionJSON struct {
	Email          *string `json:"email"`
	PhoneNumber    *string `json:"phone_number"`
	ProcessorToken *string `json:"processor_token"`
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toWorkJSON(wk *store.Work) workJSON {
	out := workJSON{ID: wk.ID, Kind: wk.Kind, Status: wk.Status, ClientID: wk.ClientID, ExternalUserID: wk.ExternalUserID,
		MerchantID: wk.MerchantID, Product: wk.Product, RequestID: wk.RequestID, Question: wk.Question, Reason: wk.Reason,
		CreatedAt: wk.CreatedAt.UTC().Format(time.RFC3339Nano)}
	if wk.LeaseUntil != nil {
		at := wk.LeaseUntil.UTC().Format(time.RFC3339Nano)
		out.LeaseExpiresAt = &at
	}
	return out
}

// claimWork serves POST /internal/work/claim: pending logins, refreshes
// and detect units of the connector's merchants, each given to one
// connector. The answer holds users' credentials: no-store.
func (s *Server) claimWork(w http.ResponseWriter, r *http.Request) error {
	var req claimRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	kinds := req.Kinds
	if kinds == nil {
		kinds = []string{store.WorkLogin, store.WorkRefresh}
	}
	for i, k := range kinds {
		if k != store.WorkLogin && k != store.WorkRefresh && k != store.WorkDetect {
			return errInvalidField("The kinds[%d] field must be login, refresh or detect.", i)
		}
	}
	limit := 1
	if req.Limit != nil {
		if *req.Limit < 1 || *req.Limit > maxClaim {
			return errInvalidField("The limit field must be an integer from 1 to %d.", maxClaim)
		}
		limit = *req.Limit
	}
	if err := s.seen(r); err != nil {
		return err
	}
	claimed, err := s.Work.Claim(r.Context(), connectorFrom(r.Context()), kinds, limit)
	if err != nil {
		return err
	}
	out := make([]claimedJSON, 0, len(claimed))
	for _, c := range claimed {
		cj := claimedJSON{workJSON: toWorkJSON(c.Work), Lease: c.Lease, Credentials: c.Credentials}
		if d := c.Detection; d != nil {
			cj.Detection = &detectionJSON{Email: optional(d.Email), PhoneNumber: optional(d.PhoneNumber),
				ProcessorToken: optional(d.ProcessorToken)}
		}
		if c.State != nil {
			st := base64.StdEncoding.EncodeToString(c.State)
			cj.State = &st
		}
		out = append(out, cj)
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{"work": out})
	return nil
}

type workStepRequest struct {
	Lease    *string `json:"lease"`
	Status   *string `json:"status"`
	Question *string `json:"question"`
	Reason   *string `json:"reason"`
	State    *string `json:"state"`
}

func requireLease(v *string) (string, error) {
	if v == nil || *v == "" {
		return "", errRequired("lease")
	}
	if len(*v) > 128 {
		return "", connector.ErrLease
	}
	return *v, nil
}

// decodeState reads a saved merchant session: base64, at most 256 KiB.
func decodeState(v *string) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	b, err := base64.StdEncoding.DecodeString(*v)
	if err != nil || len(b) > maxStateBytes {
		return nil, errInvalidField("The state field must be base64 of at most %d bytes.", maxStateBytes)
	}
	return b, nil
}

func optionalText(field string, v *string, max int) (string, error) {
	if v == nil {
		return "", nil
	}
	if len(*v) > max || !validText(*v) {
		return "", errInvalidField("The %s field must be at most %d bytes of text.", field, max)
	}
	return *v, nil
}

var stepStatuses = []string{store.WorkOTPRequired, store.WorkQuestionsRequired, store.WorkWrongAnswer,
	store.WorkAuthenticated, store.WorkFailed}

// reportStep serves POST /internal/work/{id}/step: a login's next step.
func (s *Server) reportStep(w http.ResponseWriter, r *http.Request) error {
	var req workStepRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	lease, err := requireLease(req.Lease)
	if err != nil {
		return err
	}
	if req.Status == nil {
		return errRequired("status")
	}
	if !slices.Contains(stepStatuses, *req.Status) {
		return errInvalidField("The status field must be otp_required, questions_required, wrong_answer, authenticated or failed.")
	}
	step := connector.Step{Status: *req.Status}
	if step.Question, err = optionalText("question", req.Question, maxQuestion); err != nil {
		return err
	}
	if step.Reason, err = optionalText("reason", req.Reason, maxReason); err != nil {
		return err
	}
	switch {
	case step.Status == store.WorkQuestionsRequired && step.Question == "":
		return errRequired("question")
	case step.Status == store.WorkFailed && step.Reason == "":
		return errRequired("reason")
	case step.Status != store.WorkFailed && step.Reason != "":
		return errInvalidField("The reason field is only for a failed login.")
	}
	if step.State, err = decodeState(req.State); err != nil {
		return err
	}
	if step.State != nil && step.Status != store.WorkAuthenticated {
		return errInvalidField("The state field is only for an authenticated login.")
	}
	if err := s.seen(r); err != nil {
		return err
	}
	wk, err := s.Work.Report(r.Context(), connectorFrom(r.Context()), r.PathValue("id"), lease, step)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"work": toWorkJSON(wk)})
	return nil
}

type workAnswerRequest struct {
	Lease       *string `json:"lease"`
	WaitSeconds *int    `json:"wait_seconds"`
}

// takeAnswer serves POST /internal/work/{id}/answer: the user's answer to
// the login's code or question, waited for up to wait_seconds (a long
// poll that renews the lease). The answer holds an OTP: no-store.
func (s *Server) takeAnswer(w http.ResponseWriter, r *http.Request) error {
	var req workAnswerRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	lease, err := requireLease(req.Lease)
	if err != nil {
		return err
	}
	wait := 0
	if req.WaitSeconds != nil {
		if *req.WaitSeconds < 0 || time.Duration(*req.WaitSeconds)*time.Second > maxAnswerWait {
			return errInvalidField("The wait_seconds field must be an integer from 0 to %d.", int(maxAnswerWait/time.Second))
		}
		wait = *req.WaitSeconds
	}
	if err := s.seen(r); err != nil {
		return err
	}
	answer, err := s.Work.TakeAnswer(r.Context(), connectorFrom(r.Context()), r.PathValue("id"), lease, time.Duration(wait)*time.Second)
	if err != nil {
		return err
	}
	out := map[string]any{"answer": nil}
	if answer != "" {
		out["answer"] = answer
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, out)
	return nil
}

type leaseRequest struct {
	Lease *string `json:"lease"`
}

// heartbeatWork serves POST /internal/work/{id}/heartbeat: renews the
// lease, and tells the connector where the work stands (a login whose user
// left has failed).
func (s *Server) heartbeatWork(w http.ResponseWriter, r *http.Request) error {
	var req leaseRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	lease, err := requireLease(req.Lease)
	if err != nil {
		return err
	}
	if err := s.seen(r); err != nil {
		return err
	}
	wk, err := s.Work.Heartbeat(r.Context(), connectorFrom(r.Context()), r.PathValue("id"), lease)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"work": toWorkJSON(wk)})
	return nil
}

type completeRequest struct {
	Lease   *string         `json:"lease"`
	Outcome *string         `json:"outcome"`
	Reason  *string         `json:"reason"`
	State   *string         `json:"state"`
	Account json.RawMessage `json:"account"`
}

// completeWork serves POST /internal/work/{id}/complete: how a refresh or
// a detect unit ended.
func (s *Server) completeWork(w http.ResponseWriter, r *http.Request) error {
	var req completeRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	lease, err := requireLease(req.Lease)
	if err != nil {
		return err
	}
	if req.Outcome == nil {
		return errRequired("outcome")
	}
	unit, err := s.Work.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	if unit.Kind == store.WorkDetect {
		return s.completeDetect(w, r, &req, lease, unit.MerchantID)
	}
	if req.Account != nil {
		return errInvalidField("The account field is only for a detect unit.")
	}
	switch *req.Outcome {
	case connector.RefreshSucceeded, connector.RefreshDisconnected, connector.RefreshFailed:
	default:
		return errInvalidField("The outcome field must be succeeded, disconnected or failed.")
	}
	reason, err := optionalText("reason", req.Reason, maxReason)
	if err != nil {
		return err
	}
	state, err := decodeState(req.State)
	if err != nil {
		return err
	}
	if state != nil && *req.Outcome != connector.RefreshSucceeded {
		return errInvalidField("The state field is only for a refresh that succeeded.")
	}
	if err := s.seen(r); err != nil {
		return err
	}
	wk, err := s.Work.Complete(r.Context(), connectorFrom(r.Context()), r.PathValue("id"), lease, *req.Outcome, reason, state)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"work": toWorkJSON(wk)})
	return nil
}

// foundJSON is what a detect unit found at its merchant.
type foundJSON struct {
	Source           string `json:"source"`
	LoginMethod      string `json:"login_method"`
	AccountCreatedAt string `json:"account_created_at"`
}

// completeDetect ends a detect unit: succeeded, with the account found at
// its merchant (or none), or failed. What is new is recorded and announced
// with the unit's end, and its request is done with its last unit.
func (s *Server) completeDetect(w http.ResponseWriter, r *http.Request, req *completeRequest, lease string, merchantID int64) error {
	switch *req.Outcome {
	case connector.DetectChecked, connector.DetectFailed:
	default:
		return errInvalidField("The outcome field must be succeeded or failed for a detect unit.")
	}
	reason, err := optionalText("reason", req.Reason, maxReason)
	if err != nil {
		return err
	}
	if req.State != nil {
		return errInvalidField("The state field is only for a refresh that succeeded.")
	}
	var found []detection.Found
	if req.Account != nil && string(req.Account) != "null" {
		if *req.Outcome != connector.DetectChecked {
			return errInvalidField("The account field is only for a detect unit that succeeded.")
		}
		var a foundJSON
		if err := unmarshalObject(req.Account, &a, "account"); err != nil {
			return err
		}
		created, err := optionalTime("account.account_created_at", a.AccountCreatedAt)
		if err != nil {
			return err
		}
		f := detection.Found{MerchantID: merchantID, Source: a.Source, LoginMethod: a.LoginMethod}
		if !created.IsZero() {
			f.AccountCreatedAt = &created
		}
		if err := detection.ValidateFound("account", &f); err != nil {
			return err
		}
		found = append(found, f)
	}
	if err := s.seen(r); err != nil {
		return err
	}
	wk, err := s.Work.HeldDetect(r.Context(), connectorFrom(r.Context()), r.PathValue("id"), lease)
	if err != nil {
		return err
	}
	var got *detection.Recorded
	err = s.Store.InTx(r.Context(), func(ex store.Executor) error {
		var err error
		if wk, err = s.Work.CompleteDetectTx(r.Context(), ex, wk.ID, lease, *req.Outcome, reason); err != nil {
			return err
		}
		got, err = s.Detections.RecordTx(r.Context(), ex, detection.RecordParams{ClientID: wk.ClientID,
			RequestID: *wk.RequestID, Found: found})
		return err
	})
	if err != nil {
		return err
	}
	s.Work.Observe(wk, *req.Outcome)
	out := map[string]any{"work": toWorkJSON(wk), "new": len(got.New) > 0}
	if got.Event != nil {
		out["event_id"] = got.Event.ID
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
