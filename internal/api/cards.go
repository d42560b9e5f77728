package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/hitchdev/hitch/internal/card"
)

// cardRequest is either form of POST /card (both the public API's), told
// apart by its fields: {jwe} or the plain {user, card}, each with task_id or,
// for an account already linked, external_user_id and merchant_id.
type cardRequest struct {
	JWE            *string           `json:"jwe"`
	TaskID         json.RawMessage   `json:"task_id"`
	ExternalUserID *string           `json:"external_user_id"`
	MerchantID     *int64            `json:"merchant_id"`
	User           *card.PayloadUser `json:"user"`
	Card           *card.PayloadCard `json:"card"`
}

// cardResponse is the answer to card data that passed validation: the
// outcome comes later as CARD_UPDATED or CARD_FAILED for task_id.
type cardResponse struct {
	Message string `json:"message"`
	TaskID  int64  `json:"task_id"`
}

// submitCard serves POST /card. A 200 means the card data passed
// decryption and validation; nothing of it is logged or echoed.
func (s *Server) submitCard(w http.ResponseWriter, r *http.Request) error {
	var req cardRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	clientID := clientFrom(r.Context()).ID
	params := card.SubmitParams{ClientID: clientID}
	taskID, err := parseTaskID(req.TaskID)
	if err != nil {
		return err
	}
	params.TaskID = taskID
	switch {
	case req.JWE != nil && (req.User != nil || req.Card != nil):
		return errInvalidField("Send card data either encrypted in the jwe field or in the user and card fields, not both.")
	case req.JWE != nil:
		if *req.JWE == "" {
			return errRequired("jwe")
		}
		if err := s.cardTarget(&params, &req); err != nil {
			return err
		}
		plain, err := s.Keys.Decrypt(r.Context(), *req.JWE)
		if err != nil {
			return err
		}
		payload, err := card.DecodePayload(plain)
		clear(plain)
		if err != nil {
			return err
		}
		if ferr := payload.Validate(s.Now().UTC()); ferr != nil {
			payload.Wipe()
			return ferr
		}
		params.Payload = payload
	default:
		if req.User == nil {
			return errRequired("user")
		}
		if req.Card == nil {
			return errRequired("card")
		}
		if err := s.cardTarget(&params, &req); err != nil {
			return err
		}
		payload := &card.Payload{User: *req.User, Card: *req.Card}
		req.Card = nil
		if ferr := payload.Validate(s.Now().UTC()); ferr != nil {
			payload.Wipe()
			return errInvalidField("%s", ferr.Message)
		}
		params.Payload = payload
	}
	task, err := s.Cards.Submit(r.Context(), params)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, cardResponse{Message: "Success", TaskID: task.ID})
	return nil
}

// cardTarget checks that either form names a task or an account, not both.
func (s *Server) cardTarget(p *card.SubmitParams, req *cardRequest) error {
	if p.TaskID != nil {
		if req.ExternalUserID != nil || req.MerchantID != nil {
			return errInvalidField("Send either task_id, or external_user_id and merchant_id, not both.")
		}
		return nil
	}
	if req.ExternalUserID == nil && req.MerchantID == nil {
		return errInvalidField("The task_id field is required, or external_user_id and merchant_id for an account already linked.")
	}
	externalUserID, err := validateExternalUserID("external_user_id", req.ExternalUserID)
	if err != nil {
		return err
	}
	merchantID, err := requireMerchantID(req.MerchantID)
	if err != nil {
		return err
	}
	p.ExternalUserID, p.MerchantID = externalUserID, merchantID
	return nil
}

// parseTaskID reads task_id, an integer in webhooks that the public
// service's /card takes as a string: both are accepted.
func parseTaskID(raw json.RawMessage) (*int64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	text := string(raw)
	if strings.HasPrefix(text, `"`) {
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, errInvalidField("The task_id field must be an integer or a string of digits.")
		}
	}
	id, err := strconv.ParseInt(text, 10, 64)
	if err != nil || id <= 0 {
		return nil, errInvalidField("The task_id field must be an integer or a string of digits.")
	}
	return &id, nil
}

// jweKeys serves GET /jwe/keys: every key that still decrypts, as a JWKS.
func (s *Server) jweKeys(w http.ResponseWriter, r *http.Request) error {
	keys, err := s.Keys.Usable(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"keys": keys})
	return nil
}

// cardErrors maps the card package's errors; JWE and payload errors carry
// their own reason.
func cardError(err error) (*Error, bool) {
	var jweErr *card.JWEError
	if errors.As(err, &jweErr) {
		return &Error{Status: http.StatusBadRequest, Type: TypeInvalidRequest, Code: CodeInvalidJWE,
			Message: "The jwe field is not a valid JWE: " + jweErr.Reason + "."}, true
	}
	var fieldErr *card.FieldError
	if errors.As(err, &fieldErr) {
		// Decrypted card data that fails validation: INVALID_JWE, naming
		// the field inside it.
		return &Error{Status: http.StatusBadRequest, Type: TypeInvalidRequest, Code: CodeInvalidJWE,
			Message: "The card data in the jwe field is invalid: " + fieldErr.Message}, true
	}
	return nil, false
}
