package simulate

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/hitchdev/hitch/internal/merchant"
	"github.com/hitchdev/hitch/internal/transaction"
)

// Per call of the simulator, as the public sandbox does.
const (
	NewPerCall     = 205
	UpdatedPerCall = 3
)

// ErrUnknownMerchant: the merchant id is not in the catalog.
var ErrUnknownMerchant = errors.New("simulate: unknown merchant")

// Connector is the development simulator as a built-in connector: it feeds
// the transaction service that connectors feed in production.
type Connector struct {
	Transactions *transaction.Service
	Catalog      *merchant.Catalog
	Now          func() time.Time
}

// Run ingests one call's worth of data for a linked account: 205 new
// transactions (and the account's subscriptions, for merchants that have
// them), then, when updated is true, changes 3 of the new transactions. The
// call number, which seeds the data with the account, is how many calls
// came before plus one, so running again adds new transactions. The events
// echo the metadata of the account's link, as a connector's batches do.
func (c *Connector) Run(ctx context.Context, k transaction.AccountKey, updated bool) error {
	m, ok := c.Catalog.Get(k.MerchantID)
	if !ok {
		return ErrUnknownMerchant
	}
	last, err := c.Transactions.LastPosition(ctx, k)
	if err != nil {
		return err
	}
	seed := Seed{ClientID: k.ClientID, ExternalUserID: k.ExternalUserID, MerchantID: k.MerchantID, Call: last/NewPerCall + 1}
	now := c.Now()
	orders := Transactions(seed, *m, NewPerCall, now)
	if _, err := c.Transactions.IngestTransactions(ctx, k, orders, nil); err != nil {
		return err
	}
	if subs := Subscriptions(seed, *m, now); len(subs) > 0 {
		if _, err := c.Transactions.IngestSubscriptions(ctx, k, subs, nil); err != nil {
			return err
		}
	}
	if !updated {
		return nil
	}
	// The newest orders are the ones a merchant would still change.
	newest := slices.Clone(orders)
	slices.SortFunc(newest, func(a, b transaction.Transaction) int { return b.Datetime.Compare(a.Datetime) })
	changed := make([]transaction.Transaction, 0, UpdatedPerCall)
	for _, o := range newest[:min(UpdatedPerCall, len(newest))] {
		changed = append(changed, Update(seed, o, now))
	}
	_, err = c.Transactions.IngestTransactions(ctx, k, changed, nil)
	return err
}

// Subscriptions ingests the account's simulated subscriptions, the same
// ones every time, and returns the ids of all the account's subscriptions:
// what a card switch at a subscription merchant reports as moved to the
// new card.
func (c *Connector) Subscriptions(ctx context.Context, k transaction.AccountKey) ([]string, error) {
	m, ok := c.Catalog.Get(k.MerchantID)
	if !ok {
		return nil, ErrUnknownMerchant
	}
	seed := Seed{ClientID: k.ClientID, ExternalUserID: k.ExternalUserID, MerchantID: k.MerchantID, Call: 1}
	if subs := Subscriptions(seed, *m, c.Now()); len(subs) > 0 {
		if _, err := c.Transactions.IngestSubscriptions(ctx, k, subs, nil); err != nil {
			return nil, err
		}
	}
	return c.Transactions.SubscriptionIDs(ctx, k)
}
