package simulate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hitchdev/hitch/internal/merchant"
	"github.com/hitchdev/hitch/internal/transaction"
)

// UpdatedPerCall is how many orders a call with updated changes, as the
// public sandbox does.
const UpdatedPerCall = 3

// maxBatch is the most transactions one ingestion takes.
const maxBatch = 1000

// ErrUnknownMerchant: the merchant id is not in the catalog.
var ErrUnknownMerchant = errors.New("simulate: unknown merchant")

// Connector is the development simulator as a built-in connector: it feeds
// the transaction service that connectors feed in production.
type Connector struct {
	Transactions *transaction.Service
	Catalog      *merchant.Catalog
	Now          func() time.Time
}

// Run ingests the next page of a linked account's history, as a connector
// that replays the merchant's order history would: the orders of the last
// two years on the first call; on later calls the orders placed since, or
// when there are none the two years before the oldest ingested, until the
// history is all in. Stored orders that were still on their way and have
// moved on since are ingested again, as updates. It ingests the account's
// subscriptions too, for
// merchants that have them. With updated, 3 orders change: the newest of
// the page, or of the account when the page is empty. The events echo the
// metadata of the account's link, as a connector's batches do.
func (c *Connector) Run(ctx context.Context, k transaction.AccountKey, updated bool) error {
	m, ok := c.Catalog.Get(k.MerchantID)
	if !ok {
		return ErrUnknownMerchant
	}
	seed := Seed{ClientID: k.ClientID, ExternalUserID: k.ExternalUserID, MerchantID: k.MerchantID, Call: 1}
	now := c.Now()
	h := newHistory(seed, *m, now)
	orders := make([]transaction.Transaction, len(h.entries))
	ids := make([]string, len(h.entries))
	// External ids come with the built orders; building all is cheap next
	// to storing them (docs/simulator.md has the figures).
	for i, e := range h.entries {
		orders[i] = h.build(e)
		ids[i] = orders[i].ExternalID
	}
	stored, err := c.Transactions.StoredExternalIDs(ctx, k, ids)
	if err != nil {
		return err
	}
	page := nextPage(h.entries, orders, stored, h.now)
	// In batches of at most maxBatch, the most a connector may send at once.
	for rest := page; len(rest) > 0; rest = rest[min(maxBatch, len(rest)):] {
		if _, err := c.Transactions.IngestTransactions(ctx, k, rest[:min(maxBatch, len(rest))], nil); err != nil {
			return err
		}
	}
	if len(stored) > 0 {
		moved, err := c.movedOn(ctx, k, orders)
		if err != nil {
			return err
		}
		for rest := moved; len(rest) > 0; rest = rest[min(maxBatch, len(rest)):] {
			if _, err := c.Transactions.IngestTransactions(ctx, k, rest[:min(maxBatch, len(rest))], nil); err != nil {
				return err
			}
		}
	}
	if subs := Subscriptions(seed, *m, now); len(subs) > 0 {
		if _, err := c.Transactions.IngestSubscriptions(ctx, k, subs, nil); err != nil {
			return err
		}
	}
	if !updated {
		return nil
	}
	newest := page
	if len(newest) == 0 {
		newest = orders
	}
	newest = slices.Clone(newest)
	slices.SortStableFunc(newest, func(a, b transaction.Transaction) int { return b.Datetime.Compare(a.Datetime) })
	changed := make([]transaction.Transaction, 0, UpdatedPerCall)
	for _, o := range newest[:min(UpdatedPerCall, len(newest))] {
		changed = append(changed, Update(seed, o, now))
	}
	if len(changed) == 0 {
		return nil
	}
	_, err = c.Transactions.IngestTransactions(ctx, k, changed, nil)
	return err
}

// movedOn returns the orders of the history (built at now) whose stored
// copy was still on its way (ORDERED, SHIPPED, BILLED) and has moved on
// since. Like a connector that keeps no state of its own, it reads back
// what the account holds, through its sync feed.
func (c *Connector) movedOn(ctx context.Context, k transaction.AccountKey, orders []transaction.Transaction) ([]transaction.Transaction, error) {
	onTheWay := map[string]string{}
	cursor := ""
	for {
		p, err := c.Transactions.Sync(ctx, k, cursor, maxBatch)
		if err != nil {
			return nil, err
		}
		for _, doc := range p.Transactions {
			var t struct {
				ExternalID  string `json:"external_id"`
				OrderStatus string `json:"order_status"`
			}
			if err := json.Unmarshal(doc, &t); err != nil {
				return nil, fmt.Errorf("simulate: read back stored orders: %w", err)
			}
			if inFlightRank(t.OrderStatus) > 0 {
				onTheWay[t.ExternalID] = t.OrderStatus
			}
		}
		if !p.HasMore || p.NextCursor == nil {
			break
		}
		cursor = *p.NextCursor
	}
	var moved []transaction.Transaction
	for _, o := range orders {
		// Only forward: a copy moved on by an update stays ahead.
		if st, ok := onTheWay[o.ExternalID]; ok && inFlightRank(o.OrderStatus) < inFlightRank(st) {
			moved = append(moved, o)
		}
	}
	return moved, nil
}

// nextPage returns the orders not stored yet in the newest two-year span
// of the history that has any: (now-2y, now], then (now-4y, now-2y], ...
func nextPage(entries []entry, orders []transaction.Transaction, stored map[string]bool, now time.Time) []transaction.Transaction {
	var oldest time.Time
	for i, o := range orders {
		if !stored[o.ExternalID] {
			oldest = entries[i].when
			break
		}
	}
	if oldest.IsZero() {
		return nil
	}
	// The newest unstored order decides the span.
	var newest time.Time
	for i := len(orders) - 1; i >= 0; i-- {
		if !stored[orders[i].ExternalID] {
			newest = entries[i].when
			break
		}
	}
	spans := int64(now.Sub(newest) / Window)
	to := now.Add(-time.Duration(spans) * Window)
	from := to.Add(-Window)
	page := []transaction.Transaction{}
	for i, o := range orders {
		if w := entries[i].when; w.After(from) && !w.After(to) && !stored[o.ExternalID] {
			page = append(page, o)
		}
	}
	return page
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
