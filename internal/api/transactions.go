package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/google/uuid"

	"github.com/hitchdev/hitch/internal/transaction"
)

type syncRequest struct {
	MerchantID     *int64  `json:"merchant_id"`
	ExternalUserID *string `json:"external_user_id"`
	Cursor         *string `json:"cursor"`
	Limit          *int64  `json:"limit"`
}

// syncPage is the body of POST /transactions/sync; limit is the number of
// transactions on the page.
type syncPage struct {
	Merchant     transaction.SubscriptionRef `json:"merchant"`
	Transactions []json.RawMessage           `json:"transactions"`
	NextCursor   *string                     `json:"next_cursor"`
	HasMore      bool                        `json:"has_more"`
	Limit        int                         `json:"limit"`
}

// syncTransactions serves POST /transactions/sync: a page of the account's
// transactions after the cursor, in sync order.
func (s *Server) syncTransactions(w http.ResponseWriter, r *http.Request) error {
	var req syncRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	merchantID, err := requireMerchantID(req.MerchantID)
	if err != nil {
		return err
	}
	externalUserID, err := validateExternalUserID("external_user_id", req.ExternalUserID)
	if err != nil {
		return err
	}
	limit := int64(transaction.DefaultSyncLimit)
	if req.Limit != nil {
		limit = *req.Limit
		if limit < 1 || limit > transaction.MaxSyncLimit {
			return errInvalidField("The limit field must be between 1 and %d.", transaction.MaxSyncLimit)
		}
	}
	var cursor string
	if req.Cursor != nil {
		cursor = *req.Cursor
	}
	k := transaction.AccountKey{ClientID: clientFrom(r.Context()).ID, ExternalUserID: externalUserID, MerchantID: merchantID}
	if s.cache == nil {
		page, err := s.Transactions.Sync(r.Context(), k, cursor, int(limit))
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, newSyncPage(page))
		return nil
	}
	// A page rendered at the account's current transactions version is
	// served again as it is (internal/respcache). Only pages that were
	// served are kept, so a cursor of another account never is.
	accountID, version, err := s.Transactions.SyncVersion(r.Context(), k)
	if err != nil {
		return err
	}
	key := "sync\x00" + accountID + "\x00" + strconv.FormatInt(limit, 10) + "\x00" + cursor
	if body, ok := s.cache.Get(key, version); ok {
		writeRaw(w, body)
		return nil
	}
	page, err := s.Transactions.SyncAccount(r.Context(), k, accountID, cursor, int(limit))
	if err != nil {
		return err
	}
	body, err := marshalJSON(newSyncPage(page))
	if err != nil {
		return err
	}
	s.cache.Put(key, version, body)
	writeRaw(w, body)
	return nil
}

func newSyncPage(page *transaction.Page) syncPage {
	return syncPage{Merchant: page.Merchant, Transactions: page.Transactions, NextCursor: page.NextCursor,
		HasMore: page.HasMore, Limit: len(page.Transactions)}
}

// getTransaction serves GET /transactions/{id} in the full shape.
func (s *Server) getTransaction(w http.ResponseWriter, r *http.Request) error {
	return writeDocument(w, r, "transaction", s.Transactions.Get)
}

// getSubscription serves GET /subscriptions/{id}.
func (s *Server) getSubscription(w http.ResponseWriter, r *http.Request) error {
	return writeDocument(w, r, "subscription", s.Transactions.GetSubscription)
}

// writeDocument writes the stored document with the path's id.
func writeDocument(w http.ResponseWriter, r *http.Request, noun string,
	get func(ctx context.Context, clientID, id string) ([]byte, error)) error {
	id := r.PathValue("id")
	if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
		return errInvalidField("The %s id must be a UUID.", noun)
	}
	doc, err := get(r.Context(), clientFrom(r.Context()).ID, id)
	if err != nil {
		return err
	}
	writeBody(w, http.StatusOK, func(buf *bytes.Buffer) error {
		buf.Write(doc)
		buf.WriteByte('\n')
		return nil
	})
	return nil
}
