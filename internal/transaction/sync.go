package transaction

import (
	"context"
	"encoding/json"
	"time"

	"github.com/hitchdev/hitch/internal/cursor"
)

// Sync limits, the public API's.
const (
	DefaultSyncLimit = 5
	MaxSyncLimit     = 100
)

// Page is one page of POST /transactions/sync.
type Page struct {
	Merchant SubscriptionRef
	// Transactions are sync-shape documents in sync order.
	Transactions []json.RawMessage
	// NextCursor is the position after the page's last transaction; nil
	// when the page is empty (nothing new: keep the cursor you sent).
	NextCursor *string
	// HasMore tells whether transactions follow the page now.
	HasMore bool
}

// Sync returns the account's transactions after cursor ("" for the
// start), at most limit. Positions are given in commit order per account
// (see IngestTransactions), so the cursor of a page yields exactly the
// transactions added after it, however they interleave with ingestion.
func (s *Service) Sync(ctx context.Context, k AccountKey, cursor string, limit int) (*Page, error) {
	_, a, err := s.account(ctx, s.store, k)
	if err != nil {
		return nil, err
	}
	return s.SyncAccount(ctx, k, a.ID, cursor, limit)
}

// SyncAccount is Sync of an account whose id the caller has looked up
// (SyncVersion).
func (s *Service) SyncAccount(ctx context.Context, k AccountKey, accountID, cursor string, limit int) (*Page, error) {
	var after int64
	if cursor != "" {
		var err error
		if after, err = decodeCursor(cursor, accountID); err != nil {
			return nil, err
		}
	}
	rows, err := s.store.TransactionPage(ctx, k.ClientID, accountID, after, limit+1)
	if err != nil {
		return nil, err
	}
	ref := s.merchant(k.MerchantID)
	p := &Page{Merchant: SubscriptionRef{ID: ref.ID, Name: ref.Name}, HasMore: len(rows) > limit}
	rows = rows[:min(len(rows), limit)]
	p.Transactions = make([]json.RawMessage, len(rows))
	for i, r := range rows {
		p.Transactions[i] = r.SyncJSON
	}
	if len(rows) > 0 {
		c := encodeCursor(accountID, rows[len(rows)-1].Position)
		p.NextCursor = &c
	}
	return p, nil
}

func encodeCursor(accountID string, position int64) string { return cursor.Encode(accountID, position) }

// decodeCursor reads a cursor of the account accountID. A cursor of another
// account (another user, merchant or developer) is as invalid as a
// malformed one.
func decodeCursor(s, accountID string) (int64, error) {
	p, ok := cursor.Decode(s, accountID)
	if !ok {
		return 0, ErrInvalidCursor
	}
	return p, nil
}

// syncTransaction is the sync shape: no shipping, loyalty membership,
// description, image_url or seller.
type syncTransaction struct {
	ID             string          `json:"id"`
	ExternalID     string          `json:"external_id"`
	Datetime       time.Time       `json:"datetime"`
	URL            string          `json:"url"`
	OrderStatus    string          `json:"order_status"`
	PaymentMethods []PaymentMethod `json:"payment_methods"`
	Price          Price           `json:"price"`
	Products       []syncProduct   `json:"products"`
}

type syncProduct struct {
	ExternalID  string       `json:"external_id"`
	Name        string       `json:"name"`
	URL         string       `json:"url"`
	Quantity    int          `json:"quantity"`
	Price       ProductPrice `json:"price"`
	Eligibility []string     `json:"eligibility"`
}

func syncShape(t *Transaction) *syncTransaction {
	st := &syncTransaction{ID: t.ID, ExternalID: t.ExternalID, Datetime: t.Datetime, URL: t.URL,
		OrderStatus: t.OrderStatus, PaymentMethods: t.PaymentMethods, Price: t.Price,
		Products: make([]syncProduct, len(t.Products))}
	for i, p := range t.Products {
		st.Products[i] = syncProduct{ExternalID: p.ExternalID, Name: p.Name, URL: p.URL, Quantity: p.Quantity,
			Price: p.Price, Eligibility: p.Eligibility}
	}
	return st
}
