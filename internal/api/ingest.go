package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/hitchdev/hitch/internal/connector"
	"github.com/hitchdev/hitch/internal/developer"
	"github.com/hitchdev/hitch/internal/transaction"
)

// maxIngestBodyBytes caps an ingestion batch: a thousand transactions with
// a few products each run to two or three megabytes.
const maxIngestBodyBytes = 8 << 20

// connectorAuthed adapts a handler that needs a connector's Basic
// credentials (connector id and secret). Developer credentials are refused
// here, as connector credentials are on every developer route: the two
// never share an id space. Failures are throttled per IP as developers'
// are, and the rate limit applies per connector.
func (s *Server) connectorAuthed(h handlerFunc) http.Handler {
	return s.public(func(w http.ResponseWriter, r *http.Request) error {
		id, secret, ok := r.BasicAuth()
		if !ok {
			return errInvalidConnectorCredentials()
		}
		c, ok := s.Connectors.Cached(id, secret)
		if !ok {
			ip := s.limitKey(r)
			if ok, retry := s.authFailures.Peek(ip); !ok {
				return errRateLimited(retry)
			}
			var err error
			if c, err = s.Connectors.Authenticate(r.Context(), id, secret); err != nil {
				if errors.Is(err, connector.ErrInvalidCredentials) {
					s.authFailures.Allow(ip)
					return errInvalidConnectorCredentials()
				}
				return err
			}
		}
		if s.limiter != nil {
			if ok, retry := s.limiter.Allow("connector:" + c.ID); !ok {
				return errRateLimited(retry)
			}
		}
		return h(w, r.WithContext(context.WithValue(r.Context(), connectorKey{}, c)))
	})
}

type connectorKey struct{}

// connectorFrom returns the authenticated connector of the request.
func connectorFrom(ctx context.Context) *connector.Connector {
	c, _ := ctx.Value(connectorKey{}).(*connector.Connector)
	return c
}

func errInvalidConnectorCredentials() *Error {
	return &Error{Status: http.StatusUnauthorized, Type: TypeInvalidInput, Code: CodeInvalidAPIKeys,
		Message: "Invalid connector id or secret provided.",
		Header:  http.Header{"Www-Authenticate": {`Basic realm="hitch-connectors", charset="UTF-8"`}}}
}

// The batch items are decoded one by one (from raw JSON) so that an error
// names the item, such as transactions[3].price.total.

type ingestTransactionsRequest struct {
	ClientID       *string           `json:"client_id"`
	ExternalUserID *string           `json:"external_user_id"`
	MerchantID     *int64            `json:"merchant_id"`
	Transactions   []json.RawMessage `json:"transactions"`
	Metadata       map[string]string `json:"metadata"`
}

type ingestSubscriptionsRequest struct {
	ClientID       *string           `json:"client_id"`
	ExternalUserID *string           `json:"external_user_id"`
	MerchantID     *int64            `json:"merchant_id"`
	Subscriptions  []json.RawMessage `json:"subscriptions"`
	Metadata       map[string]string `json:"metadata"`
}

// ingestTransaction is a transaction as a connector sends it: the lookup
// shape without the id, which Hitch assigns. The datetime is read here so
// that a malformed one is named.
type ingestTransaction struct {
	ExternalID        string                         `json:"external_id"`
	Datetime          string                         `json:"datetime"`
	URL               string                         `json:"url"`
	OrderStatus       string                         `json:"order_status"`
	Shipping          *transaction.Shipping          `json:"shipping"`
	PaymentMethods    []transaction.PaymentMethod    `json:"payment_methods"`
	Price             transaction.Price              `json:"price"`
	Products          []transaction.Product          `json:"products"`
	LoyaltyMembership *transaction.LoyaltyMembership `json:"loyalty_membership"`
}

// ingestSubscription is a subscription as a connector sends it: without
// the id, which Hitch assigns, and the merchant, which is the account's.
type ingestSubscription struct {
	ExternalID         string                        `json:"external_id"`
	Name               string                        `json:"name"`
	Description        string                        `json:"description"`
	Status             string                        `json:"status"`
	BillingCycle       string                        `json:"billing_cycle"`
	NextBillingDate    string                        `json:"next_billing_date"`
	LastBillingDate    string                        `json:"last_billing_date"`
	StartDate          string                        `json:"start_date"`
	NextRenewalDate    string                        `json:"next_renewal_date"`
	ExpirationDate     *string                       `json:"expiration_date"`
	CancelInstructions string                        `json:"cancel_instructions"`
	IsPaid             bool                          `json:"is_paid"`
	IsFamilyPlan       bool                          `json:"is_family_plan"`
	IsCancellable      bool                          `json:"is_cancellable"`
	Price              transaction.SubscriptionPrice `json:"price"`
}

// ingestTransactions serves POST /internal/ingest/transactions: a
// connector's batch of an account's observed transactions.
func (s *Server) ingestTransactions(w http.ResponseWriter, r *http.Request) error {
	var req ingestTransactionsRequest
	if err := decodeLimit(r, &req, maxIngestBodyBytes); err != nil {
		return err
	}
	key, err := s.ingestAccount(r.Context(), req.ClientID, req.ExternalUserID, req.MerchantID, req.Metadata)
	if err != nil {
		return err
	}
	items, err := decodeItems[ingestTransaction]("transactions", req.Transactions)
	if err != nil {
		return err
	}
	batch := make([]transaction.Transaction, len(items))
	for i, it := range items {
		at := fmt.Sprintf("transactions[%d]", i)
		if !validText(it.ExternalID) {
			return errInvalidText(at + ".external_id")
		}
		datetime, err := optionalTime(at+".datetime", it.Datetime)
		if err != nil {
			return err
		}
		batch[i] = transaction.Transaction{ExternalID: it.ExternalID, Datetime: datetime, URL: it.URL, OrderStatus: it.OrderStatus,
			Shipping: it.Shipping, PaymentMethods: it.PaymentMethods, Price: it.Price, Products: it.Products,
			LoyaltyMembership: it.LoyaltyMembership}
	}
	got, err := s.Transactions.IngestTransactions(r.Context(), key, batch, req.Metadata)
	if err != nil {
		return err
	}
	s.logIngested(r, "transactions", key, got)
	writeJSON(w, http.StatusOK, got)
	return nil
}

// ingestSubscriptions serves POST /internal/ingest/subscriptions.
func (s *Server) ingestSubscriptions(w http.ResponseWriter, r *http.Request) error {
	var req ingestSubscriptionsRequest
	if err := decodeLimit(r, &req, maxIngestBodyBytes); err != nil {
		return err
	}
	key, err := s.ingestAccount(r.Context(), req.ClientID, req.ExternalUserID, req.MerchantID, req.Metadata)
	if err != nil {
		return err
	}
	items, err := decodeItems[ingestSubscription]("subscriptions", req.Subscriptions)
	if err != nil {
		return err
	}
	batch := make([]transaction.Subscription, len(items))
	for i, it := range items {
		at := fmt.Sprintf("subscriptions[%d]", i)
		if !validText(it.ExternalID) {
			return errInvalidText(at + ".external_id")
		}
		sub := transaction.Subscription{ExternalID: it.ExternalID, Name: it.Name, Description: it.Description,
			Status: it.Status, BillingCycle: it.BillingCycle, CancelInstructions: it.CancelInstructions,
			IsPaid: it.IsPaid, IsFamilyPlan: it.IsFamilyPlan, IsCancellable: it.IsCancellable, Price: it.Price}
		for _, d := range []struct {
			name string
			raw  string
			dst  *time.Time
		}{
			{"next_billing_date", it.NextBillingDate, &sub.NextBillingDate},
			{"last_billing_date", it.LastBillingDate, &sub.LastBillingDate},
			{"start_date", it.StartDate, &sub.StartDate},
			{"next_renewal_date", it.NextRenewalDate, &sub.NextRenewalDate},
		} {
			if *d.dst, err = optionalTime(at+"."+d.name, d.raw); err != nil {
				return err
			}
		}
		if it.ExpirationDate != nil {
			e, err := optionalTime(at+".expiration_date", *it.ExpirationDate)
			if err != nil {
				return err
			}
			if !e.IsZero() {
				sub.ExpirationDate = &e
			}
		}
		batch[i] = sub
	}
	got, err := s.Transactions.IngestSubscriptions(r.Context(), key, batch, req.Metadata)
	if err != nil {
		return err
	}
	s.logIngested(r, "subscriptions", key, got)
	writeJSON(w, http.StatusOK, got)
	return nil
}

// ingestAccount checks the account fields and metadata of a batch and that
// the developer exists in this deployment's environment.
func (s *Server) ingestAccount(ctx context.Context, clientID, externalUserID *string, merchantID *int64,
	metadata map[string]string) (transaction.AccountKey, error) {
	var key transaction.AccountKey
	if err := validateConnectorClientID(clientID); err != nil {
		return key, err
	}
	user, err := validateExternalUserID("external_user_id", externalUserID)
	if err != nil {
		return key, err
	}
	merchant, err := requireMerchantID(merchantID)
	if err != nil {
		return key, err
	}
	if err := validateMetadata(metadata); err != nil {
		return key, err
	}
	if err := s.requireServed(ctx, merchant); err != nil {
		return key, err
	}
	client, err := s.connectorClient(ctx, *clientID)
	if err != nil {
		return key, err
	}
	return transaction.AccountKey{ClientID: client, ExternalUserID: user, MerchantID: merchant}, nil
}

func validateConnectorClientID(clientID *string) error {
	if clientID == nil || *clientID == "" {
		return errRequired("client_id")
	}
	if len(*clientID) > 255 || !validText(*clientID) {
		return errInvalidField("The client_id field must be at most 255 bytes of text.")
	}
	return nil
}

// connectorClient resolves the developer a connector names. A developer of
// the other environment cannot read what a connector would write here, so
// it is as unknown as one that does not exist.
func (s *Server) connectorClient(ctx context.Context, clientID string) (string, error) {
	client, err := s.Developers.Get(ctx, clientID)
	if errors.Is(err, developer.ErrNotFound) || (err == nil && client.Environment != s.Env) {
		return "", errNotFound("No developer account of this environment has this client_id.")
	}
	if err != nil {
		return "", err
	}
	return client.ID, nil
}

// decodeItems decodes a batch of 1 to transaction.MaxBatch items strictly,
// as decode does a body, naming a faulty item by its index.
func decodeItems[T any](field string, raw []json.RawMessage) ([]T, error) {
	if raw == nil {
		return nil, errRequired(field)
	}
	if len(raw) > transaction.MaxBatch || len(raw) == 0 {
		return nil, errInvalidField("The %s field must hold 1 to %d items.", field, transaction.MaxBatch)
	}
	items := make([]T, len(raw))
	for i, item := range raw {
		if err := unmarshalObject(item, &items[i], fmt.Sprintf("%s[%d]", field, i)); err != nil {
			return nil, err
		}
	}
	return items, nil
}

// optionalTime reads an RFC 3339 time; "" is the zero time, which the
// domain's rules refuse where a time is required.
func optionalTime(field, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := parseTime(field, v)
	return t.UTC(), err
}

// logIngested records what a connector changed, without the user's id.
func (s *Server) logIngested(r *http.Request, kind string, key transaction.AccountKey, got *transaction.Ingested) {
	s.Logger.InfoContext(r.Context(), "ingested",
		"request_id", requestIDFrom(r.Context()),
		"connector_id", connectorFrom(r.Context()).ID,
		"client_id", key.ClientID,
		"merchant_id", key.MerchantID,
		"kind", kind,
		"new", len(got.New),
		"updated", len(got.Updated),
		"unchanged", got.Unchanged)
}
