package api

import (
	"bytes"
	"context"
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
	page, err := s.Transactions.Sync(r.Context(), k, cursor, int(limit))
	if err != nil {
		return err
	}
	writePage(w, page)
	return nil
}

// pageEnds renders what surrounds a sync page's documents.
func pageEnds(page *transaction.Page) (head, tail []byte) {
	head = append([]byte(`{"merchant":{"id":`), strconv.FormatInt(page.Merchant.ID, 10)...)
	head = append(head, `,"name":`...)
	head = appendJSONString(head, page.Merchant.Name)
	head = append(head, `},"transactions":[`...)
	tail = []byte(`],"next_cursor":`)
	if page.NextCursor == nil {
		tail = append(tail, "null"...)
	} else {
		tail = appendJSONString(tail, *page.NextCursor)
	}
	tail = append(tail, `,"has_more":`...)
	tail = strconv.AppendBool(tail, page.HasMore)
	tail = append(tail, `,"limit":`...)
	tail = strconv.AppendInt(tail, int64(len(page.Transactions)), 10)
	tail = append(tail, "}\n"...)
	return head, tail
}

// writePage writes a sync page around its stored documents, straight to
// the connection: a full page is over 100 KB, and building it in a buffer
// first cost a growing series of copies and allocations per request.
func writePage(w http.ResponseWriter, page *transaction.Page) {
	head, tail := pageEnds(page)
	n := len(head) + len(tail) + max(len(page.Transactions)-1, 0)
	for _, t := range page.Transactions {
		n += len(t)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(n))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(head)
	for i, t := range page.Transactions {
		if i > 0 {
			_, _ = w.Write(comma)
		}
		_, _ = w.Write(t)
	}
	_, _ = w.Write(tail)
}

var comma = []byte{','}

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
