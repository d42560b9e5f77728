package transaction

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/hitchdev/hitch/internal/account"
	"github.com/hitchdev/hitch/internal/event"
	"github.com/hitchdev/hitch/internal/store"
)

var (
	// ErrNotFound: no such transaction or subscription for this developer.
	ErrNotFound = errors.New("transaction: not found")
	// ErrInvalidCursor: the cursor is malformed or belongs to another
	// account.
	ErrInvalidCursor = errors.New("transaction: invalid cursor")
)

// MaxBatch bounds one ingestion call.
const MaxBatch = 1000

// Service ingests and serves transactions and subscriptions.
type Service struct {
	store    store.Store
	events   *event.Log
	merchant func(id int64) *event.Merchant
	now      func() time.Time
}

// NewService wires the service; merchant gives the event reference of a
// merchant id.
func NewService(st store.Store, events *event.Log, merchant func(int64) *event.Merchant, now func() time.Time) *Service {
	return &Service{store: st, events: events, merchant: merchant, now: now}
}

// AccountKey names a user's account at a merchant.
type AccountKey struct {
	ClientID       string
	ExternalUserID string
	MerchantID     int64
}

// SyncVersion returns the id of a linked account and the version of its
// transactions, which every ingested change bumps: a sync page rendered at
// that version is still the page (internal/respcache).
func (s *Service) SyncVersion(ctx context.Context, k AccountKey) (accountID string, version int64, err error) {
	accountID, version, err = s.store.AccountTransactionsVersion(ctx, k.ClientID, k.ExternalUserID, k.MerchantID)
	if errors.Is(err, store.ErrNotFound) {
		if _, _, err = s.account(ctx, s.store, k); err == nil { // linked meanwhile
			accountID, version, err = s.store.AccountTransactionsVersion(ctx, k.ClientID, k.ExternalUserID, k.MerchantID)
		}
		if errors.Is(err, store.ErrNotFound) {
			err = account.ErrNotFound
		}
	}
	return accountID, version, err
}

// account resolves a linked account and its user: account.ErrUserNotFound
// or account.ErrNotFound when either does not exist.
func (s *Service) account(ctx context.Context, ex store.Executor, k AccountKey) (*store.User, *store.Account, error) {
	u, err := ex.UserGet(ctx, k.ClientID, k.ExternalUserID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, account.ErrUserNotFound
	}
	if err != nil {
		return nil, nil, err
	}
	a, err := ex.AccountGet(ctx, &store.AccountGetParams{ClientID: k.ClientID, UserID: u.ID, MerchantID: k.MerchantID})
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, account.ErrNotFound
	}
	if err != nil {
		return nil, nil, err
	}
	return u, a, nil
}

// Ingested is what one ingestion call changed.
type Ingested struct {
	// New and Updated are the service ids of the new and changed items, in
	// batch order; Unchanged counts the rest.
	New       []string `json:"new"`
	Updated   []string `json:"updated"`
	Unchanged int      `json:"unchanged"`
}

// IngestTransactions upserts a batch of an account's observed transactions,
// idempotent on their external_id: a new one gets an id and the next sync
// position, a changed one keeps its id, an unchanged one is left alone.
// One NEW_TRANSACTIONS_AVAILABLE event covers the batch's new ones and one
// UPDATED_TRANSACTIONS_AVAILABLE names the changed ones; everything commits
// together. The events echo the metadata of the account's most recent link,
// with metadata's keys over it. IDs in the batch are ignored.
func (s *Service) IngestTransactions(ctx context.Context, k AccountKey, batch []Transaction, metadata map[string]string) (*Ingested, error) {
	if err := validateTransactions(batch); err != nil {
		return nil, err
	}
	now := s.now()
	// Both documents are rendered here, outside the database transaction,
	// with an empty id that withID fills in once the id is known.
	type prepared struct {
		externalID string
		digest     []byte
		full, sync []byte
	}
	items := make([]prepared, len(batch))
	externalIDs := make([]string, len(batch))
	for i := range batch {
		t := batch[i] // a copy: the caller's batch is not changed
		normalize(&t)
		t.ID = ""
		full, err := json.Marshal(&t)
		if err != nil {
			return nil, fmt.Errorf("transaction: ingest: %w", err)
		}
		syncDoc, err := json.Marshal(syncShape(&t))
		if err != nil {
			return nil, fmt.Errorf("transaction: ingest: %w", err)
		}
		sum := sha256.Sum256(full)
		items[i] = prepared{externalID: t.ExternalID, digest: sum[:], full: full, sync: syncDoc}
		externalIDs[i] = t.ExternalID
	}
	out := &Ingested{New: []string{}, Updated: []string{}}
	err := s.store.InTx(ctx, func(ex store.Executor) error {
		u, a, err := s.account(ctx, ex, k)
		if err != nil {
			return err
		}
		// Taking the account's row first serializes ingestion per account:
		// two batches cannot both see an external id as new, and positions
		// commit in the order they were given.
		last, err := ex.AccountTransactionPositions(ctx, k.ClientID, a.ID, 0)
		if err != nil {
			return err
		}
		stored, err := ex.TransactionDigests(ctx, k.ClientID, a.ID, externalIDs)
		if err != nil {
			return err
		}
		var inserts []*store.TransactionRow
		var updated []event.Ref
		for _, it := range items {
			prev, exists := stored[it.externalID]
			if exists && string(prev.Digest) == string(it.digest) {
				out.Unchanged++
				continue
			}
			row := &store.TransactionRow{ClientID: k.ClientID, AccountID: a.ID, ExternalID: it.externalID,
				Digest: it.digest, CreatedAt: now, UpdatedAt: now}
			if exists {
				row.ID = prev.ID
			} else {
				row.ID = event.NewID()
				last++
				row.Position = last
			}
			if row.FullJSON, err = withID(it.full, row.ID); err != nil {
				return err
			}
			if row.SyncJSON, err = withID(it.sync, row.ID); err != nil {
				return err
			}
			if exists {
				if err := ex.TransactionUpdate(ctx, row); err != nil {
					return err
				}
				out.Updated = append(out.Updated, row.ID)
				updated = append(updated, event.Ref{ID: row.ID})
				continue
			}
			inserts = append(inserts, row)
			out.New = append(out.New, row.ID)
		}
		if len(inserts) > 0 {
			if _, err := ex.AccountTransactionPositions(ctx, k.ClientID, a.ID, int64(len(inserts))); err != nil {
				return err
			}
			if err := ex.TransactionInsertMany(ctx, inserts); err != nil {
				return err
			}
			if err := s.record(ctx, ex, u, a, k, event.NewTransactionsAvailable, nil, nil, metadata, now); err != nil {
				return err
			}
		}
		if len(updated) > 0 {
			return s.record(ctx, ex, u, a, k, event.UpdatedTransactionsAvailable, nil, updated, metadata, now)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("transaction: ingest: %w", err)
	}
	return out, nil
}

// IngestSubscriptions upserts an account's observed subscriptions as
// IngestTransactions does transactions, with NEW_SUBSCRIPTIONS_AVAILABLE
// and UPDATED_SUBSCRIPTIONS_AVAILABLE events carrying data.subscriptions.
// A subscription's merchant is the account's, whatever the batch says.
func (s *Service) IngestSubscriptions(ctx context.Context, k AccountKey, batch []Subscription, metadata map[string]string) (*Ingested, error) {
	if err := validateSubscriptions(batch); err != nil {
		return nil, err
	}
	now := s.now()
	ref := s.merchant(k.MerchantID)
	out := &Ingested{New: []string{}, Updated: []string{}}
	err := s.store.InTx(ctx, func(ex store.Executor) error {
		u, a, err := s.account(ctx, ex, k)
		if err != nil {
			return err
		}
		if _, err := ex.AccountTransactionPositions(ctx, k.ClientID, a.ID, 0); err != nil { // the account's lock
			return err
		}
		externalIDs := make([]string, len(batch))
		for i := range batch {
			externalIDs[i] = batch[i].ExternalID
		}
		stored, err := ex.SubscriptionDigests(ctx, k.ClientID, a.ID, externalIDs)
		if err != nil {
			return err
		}
		var added, changed []event.Ref
		for i := range batch {
			sub := batch[i]
			normalizeSubscription(&sub)
			sub.ID = ""
			sub.Merchant = SubscriptionRef{ID: ref.ID, Name: ref.Name}
			observed, err := json.Marshal(&sub)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(observed)
			prev, exists := stored[sub.ExternalID]
			if exists && string(prev.Digest) == string(sum[:]) {
				out.Unchanged++
				continue
			}
			row := &store.SubscriptionRow{ClientID: k.ClientID, AccountID: a.ID, ExternalID: sub.ExternalID,
				Digest: sum[:], CreatedAt: now, UpdatedAt: now}
			if exists {
				row.ID = prev.ID
			} else {
				row.ID = event.NewID()
			}
			sub.ID = row.ID
			if row.JSON, err = json.Marshal(&sub); err != nil {
				return err
			}
			if exists {
				err = ex.SubscriptionUpdate(ctx, row)
				changed = append(changed, event.Ref{ID: row.ID})
				out.Updated = append(out.Updated, row.ID)
			} else {
				err = ex.SubscriptionInsert(ctx, row)
				added = append(added, event.Ref{ID: row.ID})
				out.New = append(out.New, row.ID)
			}
			if err != nil {
				return err
			}
		}
		if len(added) > 0 {
			if err := s.record(ctx, ex, u, a, k, event.NewSubscriptionsAvailable, added, nil, metadata, now); err != nil {
				return err
			}
		}
		if len(changed) > 0 {
			return s.record(ctx, ex, u, a, k, event.UpdatedSubscriptionsAvailable, changed, nil, metadata, now)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("subscription: ingest: %w", err)
	}
	return out, nil
}

// record records an ingestion's event, echoing the account's link metadata
// with the batch's keys over it.
func (s *Service) record(ctx context.Context, ex store.Executor, u *store.User, a *store.Account, k AccountKey, typ string,
	subscriptions, updated []event.Ref, batchMetadata map[string]string, now time.Time) error {
	var data map[string]any
	if subscriptions != nil {
		data = map[string]any{"subscriptions": subscriptions}
	}
	metadata, err := event.ParseMetadata(a.Metadata)
	if err != nil {
		return err
	}
	if metadata == nil {
		metadata = batchMetadata
	} else {
		maps.Copy(metadata, batchMetadata)
	}
	_, err = s.events.Record(ctx, ex, event.Params{
		ClientID: k.ClientID,
		User:     u,
		Type:     typ,
		Merchant: s.merchant(k.MerchantID),
		Data:     data,
		Metadata: metadata,
		Updated:  updated,
		At:       now,
	})
	return err
}

// Get returns a transaction's lookup document.
func (s *Service) Get(ctx context.Context, clientID, id string) ([]byte, error) {
	doc, err := s.store.TransactionGet(ctx, clientID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrNotFound
	}
	return doc, err
}

// GetSubscription returns a subscription's document.
func (s *Service) GetSubscription(ctx context.Context, clientID, id string) ([]byte, error) {
	doc, err := s.store.SubscriptionGet(ctx, clientID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrNotFound
	}
	return doc, err
}

// normalize makes every array of a transaction a JSON array (never null)
// and its times UTC.
func normalize(t *Transaction) {
	t.Datetime = t.Datetime.UTC()
	if t.PaymentMethods == nil {
		t.PaymentMethods = []PaymentMethod{}
	}
	if t.Price.Adjustments == nil {
		t.Price.Adjustments = []Adjustment{}
	}
	if t.Products == nil {
		t.Products = []Product{}
	}
	for i := range t.Products {
		if t.Products[i].Eligibility == nil {
			t.Products[i].Eligibility = []string{}
		}
	}
}

func normalizeSubscription(s *Subscription) {
	for _, t := range []*time.Time{&s.NextBillingDate, &s.LastBillingDate, &s.StartDate, &s.NextRenewalDate} {
		*t = t.UTC()
	}
	if s.ExpirationDate != nil {
		e := s.ExpirationDate.UTC()
		s.ExpirationDate = &e
	}
}

// StoredExternalIDs reports which of externalIDs the linked account already
// has, so that a connector that replays a history ingests only what is new.
func (s *Service) StoredExternalIDs(ctx context.Context, k AccountKey, externalIDs []string) (map[string]bool, error) {
	_, a, err := s.account(ctx, s.store, k)
	if err != nil {
		return nil, err
	}
	digests, err := s.store.TransactionDigests(ctx, k.ClientID, a.ID, externalIDs)
	if err != nil {
		return nil, fmt.Errorf("transaction: stored ids: %w", err)
	}
	out := make(map[string]bool, len(digests))
	for id := range digests {
		out[id] = true
	}
	return out, nil
}

// LastPosition is the sync position of the account's newest transaction
// (0 when it has none).
func (s *Service) LastPosition(ctx context.Context, k AccountKey) (int64, error) {
	var last int64
	err := s.store.InTx(ctx, func(ex store.Executor) error {
		_, a, err := s.account(ctx, ex, k)
		if err != nil {
			return err
		}
		last, err = ex.AccountTransactionPositions(ctx, k.ClientID, a.ID, 0)
		return err
	})
	return last, err
}

// SubscriptionIDs lists the ids of a linked account's subscriptions.
func (s *Service) SubscriptionIDs(ctx context.Context, k AccountKey) ([]string, error) {
	_, a, err := s.account(ctx, s.store, k)
	if err != nil {
		return nil, err
	}
	return s.store.SubscriptionIDs(ctx, k.ClientID, a.ID)
}

// emptyID is how a document rendered with an empty id begins: id is the
// first field of Transaction and of its sync shape.
const emptyID = `{"id":""`

// withID returns doc, rendered with an empty id, with id in its place:
// the same bytes json.Marshal gives for the document with that id, for
// ids made of characters JSON does not escape (UUIDs).
func withID(doc []byte, id string) ([]byte, error) {
	if !bytes.HasPrefix(doc, []byte(emptyID)) || !plainID(id) {
		return nil, fmt.Errorf("transaction: document cannot take id %q", id)
	}
	out := make([]byte, 0, len(doc)+len(id))
	out = append(out, `{"id":"`...)
	out = append(out, id...)
	out = append(out, '"')
	return append(out, doc[len(emptyID):]...), nil
}

// plainID reports whether id needs no escaping in JSON.
func plainID(id string) bool {
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
