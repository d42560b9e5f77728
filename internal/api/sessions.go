package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/hitchdev/hitch/internal/session"
)

type createSessionRequest struct {
	Type           *string           `json:"type"`
	ExternalUserID *string           `json:"external_user_id"`
	CardID         *string           `json:"card_id"`
	MerchantID     *int64            `json:"merchant_id"`
	Email          *string           `json:"email"`
	PhoneNumber    *string           `json:"phone_number"`
	ProcessorToken *string           `json:"processor_token"`
	Metadata       map[string]string `json:"metadata"`
}

// sessionResponse adds session_id (the id webhooks carry) and expires_at to
// the wire's {session}: the answer to a create.
type sessionResponse struct {
	Session   string    `json:"session"`
	SessionID string    `json:"session_id"`
	ExpiresAt time.Time `json:"expires_at"`
}

const (
	maxCardIDLength         = 255
	maxProcessorTokenLength = 2048
)

func (s *Server) createSession(w http.ResponseWriter, r *http.Request) error {
	var req createSessionRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	typ, err := requireProduct(req.Type, session.Types)
	if err != nil {
		return err
	}
	externalUserID, err := validateExternalUserID("external_user_id", req.ExternalUserID)
	if err != nil {
		return err
	}
	switch {
	case typ == session.TypeCardSwitcher && (req.CardID == nil || strings.TrimSpace(*req.CardID) == ""):
		return errInvalidField("The card_id field is required when type = card_switcher.")
	case req.CardID != nil && typ != session.TypeCardSwitcher && typ != session.TypeVault:
		return errInvalidField("The card_id field is only allowed when type is card_switcher or vault.")
	}
	if err := validateCardID(req.CardID); err != nil {
		return err
	}
	if req.MerchantID != nil && *req.MerchantID <= 0 {
		return errInvalidField("The selected merchant_id is invalid.")
	}
	if err := validateEmail("email", req.Email); err != nil {
		return err
	}
	if err := validatePhone("phone_number", req.PhoneNumber); err != nil {
		return err
	}
	if req.ProcessorToken != nil && (*req.ProcessorToken == "" || len(*req.ProcessorToken) > maxProcessorTokenLength || !validText(*req.ProcessorToken)) {
		return errInvalidField("The processor_token field must be 1 to %d characters.", maxProcessorTokenLength)
	}
	if err := validateMetadata(req.Metadata); err != nil {
		return err
	}
	issued, err := s.Sessions.Create(r.Context(), session.CreateParams{
		ClientID:       clientFrom(r.Context()).ID,
		Type:           typ,
		ExternalUserID: externalUserID,
		CardID:         req.CardID,
		MerchantID:     req.MerchantID,
		Email:          req.Email,
		PhoneNumber:    req.PhoneNumber,
		ProcessorToken: req.ProcessorToken,
		Metadata:       req.Metadata,
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sessionResponse{Session: issued.Value, SessionID: issued.ID, ExpiresAt: issued.ExpiresAt})
	return nil
}

type extendSessionRequest struct {
	SessionID *string `json:"session_id"`
}

// extendedSession is the answer to an extend: session is null when the
// session was named by its session_id, since Hitch keeps only a hash of
// the value.
type extendedSession struct {
	Session   *string   `json:"session"`
	SessionID string    `json:"session_id"`
	ExpiresAt time.Time `json:"expires_at"`
}

// extendSession takes in session_id either the session value, as the
// public service does, or the session_id that Hitch returns beside it.
func (s *Server) extendSession(w http.ResponseWriter, r *http.Request) error {
	var req extendSessionRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.SessionID == nil || *req.SessionID == "" {
		return errRequired("session_id")
	}
	issued, err := s.Sessions.Extend(r.Context(), clientFrom(r.Context()).ID, *req.SessionID)
	if err != nil {
		return err
	}
	out := extendedSession{SessionID: issued.ID, ExpiresAt: issued.ExpiresAt}
	if issued.Value != "" {
		out.Session = &issued.Value
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
