package api

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/hitchdev/hitch/internal/card"
	"github.com/hitchdev/hitch/internal/connector"
	"github.com/hitchdev/hitch/internal/store"
)

// The internal task API: in production, connectors work the card switches
// and vaultings that logins start (docs/connectors.md).

type taskJSON struct {
	TaskID         int64         `json:"task_id"`
	ClientID       string        `json:"client_id"`
	ExternalUserID string        `json:"external_user_id"`
	MerchantID     int64         `json:"merchant_id"`
	Product        string        `json:"product"`
	CardID         *string       `json:"card_id"`
	Status         string        `json:"status"`
	Card           *cardSummary  `json:"card"`
	CreatedAt      time.Time     `json:"created_at"`
	Metadata       jsonRawOrNull `json:"metadata"`
}

type cardSummary struct {
	Brand      string `json:"brand"`
	LastFour   string `json:"last_four"`
	Expiration string `json:"expiration"`
}

// jsonRawOrNull writes stored JSON as is, or null.
type jsonRawOrNull []byte

func (j jsonRawOrNull) MarshalJSON() ([]byte, error) {
	if len(j) == 0 {
		return []byte("null"), nil
	}
	return j, nil
}

func toTaskJSON(t *store.Task) taskJSON {
	out := taskJSON{TaskID: t.ID, ClientID: t.ClientID, ExternalUserID: t.ExternalUserID, MerchantID: t.MerchantID,
		Product: t.Product, CardID: t.CardID, Status: t.Status, CreatedAt: t.CreatedAt, Metadata: jsonRawOrNull(t.Metadata)}
	if t.CardBrand != nil && t.CardLastFour != nil && t.CardExpMonth != nil && t.CardExpYear != nil {
		out.Card = &cardSummary{Brand: *t.CardBrand, LastFour: *t.CardLastFour,
			Expiration: strconv.Itoa(100 + *t.CardExpMonth)[1:] + "/" + strconv.Itoa(*t.CardExpYear)}
	}
	return out
}

// listPendingTasks serves GET /internal/tasks: pending, unclaimed tasks,
// oldest first, optionally of one merchant_id, at most limit (default 100).
func (s *Server) listPendingTasks(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var merchantID int64
	if v := q.Get("merchant_id"); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id <= 0 {
			return errInvalidField("The merchant_id parameter must be a positive integer.")
		}
		merchantID = id
	}
	limit := 100
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return errInvalidField("The limit parameter must be an integer from 1 to 100.")
		}
		limit = n
	}
	// A connector sees the tasks of the merchants it declared.
	served, err := s.Work.Declared(r.Context(), connectorFrom(r.Context()).ID)
	if err != nil {
		return err
	}
	if merchantID != 0 {
		if !slices.Contains(served, merchantID) {
			return connector.ErrNotServed
		}
		served = []int64{merchantID}
	}
	tasks := []*store.Task{}
	for _, m := range served {
		some, err := s.Cards.PendingTasks(r.Context(), m, limit)
		if err != nil {
			return err
		}
		tasks = append(tasks, some...)
	}
	slices.SortFunc(tasks, func(a, b *store.Task) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	tasks = tasks[:min(len(tasks), limit)]
	if err := s.seen(r); err != nil {
		return err
	}
	out := make([]taskJSON, 0, len(tasks))
	for _, t := range tasks {
		out = append(out, toTaskJSON(t))
	}
	writeJSON(w, http.StatusOK, map[string]any{"tasks": out})
	return nil
}

type taskClientRequest struct {
	ClientID *string `json:"client_id"`
}

type claimedCardJSON struct {
	User       card.PayloadUser `json:"user"`
	Number     string           `json:"number"`
	Expiration string           `json:"expiration"`
	// CVV is null when the node that took the card is not the one that
	// answers: it is only ever held in memory.
	CVV *string `json:"cvv"`
}

// claimTask serves POST /internal/tasks/{id}/claim: the task and, for a
// card switch, its card, released once.
func (s *Server) claimTask(w http.ResponseWriter, r *http.Request) error {
	id, err := pathTaskID(r)
	if err != nil {
		return err
	}
	var req taskClientRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	clientID, err := s.taskClient(r, req.ClientID)
	if err != nil {
		return err
	}
	if err := s.requireTaskServed(r.Context(), clientID, id); err != nil {
		return err
	}
	task, claimed, err := s.Cards.Claim(r.Context(), clientID, id)
	if err != nil {
		return err
	}
	state, err := s.Work.AccountState(r.Context(), clientID, task.ExternalUserID, task.MerchantID)
	if err != nil {
		return err
	}
	out := struct {
		Task taskJSON         `json:"task"`
		Card *claimedCardJSON `json:"card"`
		// State is the merchant session the connector saved at login.
		State *string `json:"state"`
	}{Task: toTaskJSON(task)}
	if state != nil {
		st := base64.StdEncoding.EncodeToString(state)
		out.State = &st
	}
	if claimed != nil {
		out.Card = &claimedCardJSON{User: claimed.User, Number: claimed.Number, Expiration: claimed.Expiration}
		if claimed.CVV != "" {
			out.Card.CVV = &claimed.CVV
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, out)
	return nil
}

type taskResultRequest struct {
	ClientID      *string `json:"client_id"`
	Status        *string `json:"status"`
	Reason        *string `json:"reason"`
	PaymentMethod *struct {
		Brand      *string `json:"brand"`
		LastFour   *string `json:"last_four"`
		Expiration *string `json:"expiration"`
	} `json:"payment_method"`
}

// taskResult serves POST /internal/tasks/{id}/result: a connector reports
// how a pending task ended, which raises its event.
func (s *Server) taskResult(w http.ResponseWriter, r *http.Request) error {
	id, err := pathTaskID(r)
	if err != nil {
		return err
	}
	var req taskResultRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	clientID, err := s.taskClient(r, req.ClientID)
	if err != nil {
		return err
	}
	if err := s.requireTaskServed(r.Context(), clientID, id); err != nil {
		return err
	}
	var res card.Result
	switch {
	case req.Status == nil:
		return errRequired("status")
	case *req.Status == "succeeded":
		res.Succeeded = true
		if req.Reason != nil {
			return errInvalidField("The reason field is only for a failed task.")
		}
	case *req.Status == "failed":
		if req.Reason == nil {
			return errRequired("reason")
		}
		res.Reason = *req.Reason
		if !slices.Contains(card.Reasons, res.Reason) {
			return errInvalidField("The reason field must be one of the failure reasons of docs/cards.md.")
		}
	default:
		return errInvalidField("The status field must be succeeded or failed.")
	}
	if pm := req.PaymentMethod; pm != nil {
		if !res.Succeeded {
			return errInvalidField("The payment_method field is only for a vaulting that succeeded.")
		}
		if pm.Brand == nil || pm.LastFour == nil || pm.Expiration == nil {
			return errInvalidField("The payment_method field needs brand, last_four and expiration.")
		}
		summary, ok := card.ParseSummary(*pm.Brand, *pm.LastFour, *pm.Expiration)
		if !ok {
			return errInvalidField("The payment_method field must have a brand, four digits in last_four and an expiration of MM/YYYY.")
		}
		res.Card = summary
	}
	finished, err := s.Cards.Finish(r.Context(), clientID, id, store.TaskPending, res)
	if err != nil {
		return err
	}
	if !finished {
		return &Error{Status: http.StatusConflict, Type: TypeInvalidRequest, Code: CodeTaskClaimed,
			Message: "The task is not pending: it has ended already."}
	}
	writeJSON(w, http.StatusOK, success)
	return nil
}

func pathTaskID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, &Error{Status: http.StatusNotFound, Type: TypeInvalidRequest, Code: CodeTaskNotFound, Message: "No task has this task_id."}
	}
	return id, nil
}

// taskClient checks the developer a connector names, as ingestion does.
func (s *Server) taskClient(r *http.Request, clientID *string) (string, error) {
	if err := validateConnectorClientID(clientID); err != nil {
		return "", err
	}
	return s.connectorClient(r.Context(), *clientID)
}

// requireTaskServed refuses a connector a task of a merchant it has not
// declared.
func (s *Server) requireTaskServed(ctx context.Context, clientID string, id int64) error {
	t, err := s.Store.TaskGet(ctx, clientID, id)
	if errors.Is(err, store.ErrNotFound) {
		return card.ErrTaskNotFound
	}
	if err != nil {
		return err
	}
	return s.requireServed(ctx, t.MerchantID)
}
