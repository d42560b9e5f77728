package sqlstore

import (
	"context"
	"fmt"

	"github.com/hitchdev/hitch/internal/store"
)

// copyMin is the batch size from which PostgreSQL bulk-loads transactions
// with COPY. Smaller batches, and every batch on SQLite (where a statement
// is a call, not a round trip), insert one row per statement: SQLite finds
// each $N parameter by walking the statement's list of them, so a
// multi-row INSERT's hundreds of parameters cost more than the statements
// they save.
const copyMin = 50

// ownedAccount is the account $2 if it belongs to the developer $1. The
// tenant check is a scalar subquery rather than a client_id filter on the
// rows: a filter outside the (account_id, position) index made PostgreSQL
// fetch and sort every row of a large account for one page, and SQLite
// pick another index for the digest lookup.
const ownedAccount = `(SELECT id FROM accounts WHERE client_id = $1 AND id = $2)`

func (e *executor) AccountTransactionPositions(ctx context.Context, clientID, accountID string, n int64) (int64, error) {
	var last int64
	err := e.conn.QueryRow(ctx, `UPDATE accounts SET transaction_position = transaction_position + $3
		WHERE client_id = $1 AND id = $2 RETURNING transaction_position`, clientID, accountID, n).Scan(&last)
	if err != nil {
		return 0, e.wrap("transaction: reserve positions", err)
	}
	return last, nil
}

func (e *executor) TransactionDigests(ctx context.Context, clientID, accountID string, externalIDs []string) (map[string]store.StoredDigest, error) {
	return e.digests(ctx, "transactions", clientID, accountID, externalIDs)
}

func (e *executor) SubscriptionDigests(ctx context.Context, clientID, accountID string, externalIDs []string) (map[string]store.StoredDigest, error) {
	return e.digests(ctx, "subscriptions", clientID, accountID, externalIDs)
}

// digests looks the external ids up in one statement whatever their
// number. An "IN ($3, …, $102)" list let PostgreSQL's generic plan for the
// prepared statement (chosen after five runs) read all the account's rows:
// ingestion fell from 12k to under 1k rows/s; "= ANY(array)" is an index
// condition on (account_id, external_id).
func (e *executor) digests(ctx context.Context, table, clientID, accountID string, externalIDs []string) (map[string]store.StoredDigest, error) {
	out := make(map[string]store.StoredDigest, len(externalIDs))
	rows, err := e.conn.Query(ctx, `SELECT id, external_id, digest FROM `+table+` WHERE account_id = `+ownedAccount+
		` AND external_id`+e.drv.TextSet("$3"), clientID, accountID, e.drv.TextSetArg(externalIDs))
	if err != nil {
		return nil, e.wrap(table+": digests", err)
	}
	defer rows.Close()
	for rows.Next() {
		var externalID string
		var d store.StoredDigest
		if err := rows.Scan(&d.ID, &externalID, &d.Digest); err != nil {
			return nil, e.wrap(table+": digests", err)
		}
		out[externalID] = d
	}
	if err := rows.Err(); err != nil {
		return nil, e.wrap(table+": digests", err)
	}
	return out, nil
}

const transactionInsert = `INSERT INTO transactions (id, client_id, account_id, external_id, position, digest, sync_json,
	full_json, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`

func (e *executor) TransactionInsertMany(ctx context.Context, rows []*store.TransactionRow) error {
	if c, ok := e.conn.(Copier); ok && len(rows) >= copyMin {
		values := make([][]any, len(rows))
		for i, r := range rows {
			values[i] = []any{r.ID, r.ClientID, r.AccountID, r.ExternalID, r.Position, r.Digest, r.SyncJSON, r.FullJSON,
				e.ts(r.CreatedAt), e.ts(r.UpdatedAt)}
		}
		_, err := c.CopyFrom(ctx, "transactions", []string{"id", "client_id", "account_id", "external_id", "position", "digest", "sync_json", "full_json", "created_at", "updated_at"}, values)
		return e.wrap("transaction: insert", err)
	}
	for _, r := range rows {
		if _, err := e.conn.Exec(ctx, transactionInsert, r.ID, r.ClientID, r.AccountID, r.ExternalID, r.Position, r.Digest,
			r.SyncJSON, r.FullJSON, e.ts(r.CreatedAt), e.ts(r.UpdatedAt)); err != nil {
			return e.wrap("transaction: insert", err)
		}
	}
	return nil
}

func (e *executor) TransactionUpdate(ctx context.Context, r *store.TransactionRow) error {
	n, err := e.conn.Exec(ctx, `UPDATE transactions SET digest = $3, sync_json = $4, full_json = $5, updated_at = $6
		WHERE client_id = $1 AND id = $2`, r.ClientID, r.ID, r.Digest, r.SyncJSON, r.FullJSON, e.ts(r.UpdatedAt))
	if err != nil {
		return e.wrap("transaction: update", err)
	}
	if n == 0 {
		return fmt.Errorf("transaction: update: %w", store.ErrNotFound)
	}
	return nil
}

func (e *executor) TransactionPage(ctx context.Context, clientID, accountID string, after int64, limit int) ([]store.TransactionPageRow, error) {
	rows, err := e.conn.Query(ctx, `SELECT position, sync_json FROM transactions
		WHERE account_id = `+ownedAccount+` AND position > $3 ORDER BY position LIMIT $4`, clientID, accountID, after, limit)
	if err != nil {
		return nil, e.wrap("transaction: page", err)
	}
	defer rows.Close()
	out := make([]store.TransactionPageRow, 0, limit)
	for rows.Next() {
		var r store.TransactionPageRow
		if err := rows.Scan(&r.Position, &r.SyncJSON); err != nil {
			return nil, e.wrap("transaction: page", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, e.wrap("transaction: page", err)
	}
	return out, nil
}

// accountTransactionsVersionSQL finds the user first, by its unique key,
// and then the account by user and merchant: as a join, PostgreSQL with
// stale statistics (autovacuum off, a bulk import) could start from the
// accounts of the client at the merchant and filter every one of them.
// The scalar subquery leaves the planner no such order to choose.
const accountTransactionsVersionSQL = `SELECT a.id, a.transactions_version FROM accounts a
	WHERE a.user_id = (SELECT u.id FROM users u WHERE u.client_id = $1 AND u.external_user_id = $2)
	AND a.client_id = $1 AND a.merchant_id = $3 AND a.unlinked_at IS NULL`

func (e *executor) AccountTransactionsVersion(ctx context.Context, clientID, externalUserID string, merchantID int64) (string, int64, error) {
	var id string
	var version int64
	err := e.conn.QueryRow(ctx, accountTransactionsVersionSQL, clientID, externalUserID, merchantID).Scan(&id, &version)
	if err != nil {
		return "", 0, e.wrap("account: transactions version", err)
	}
	return id, version, nil
}

func (e *executor) TransactionGet(ctx context.Context, clientID, id string) ([]byte, error) {
	var doc []byte
	err := e.conn.QueryRow(ctx, `SELECT full_json FROM transactions WHERE client_id = $1 AND id = $2`, clientID, id).Scan(&doc)
	if err != nil {
		return nil, e.wrap("transaction: get", err)
	}
	return doc, nil
}

func (e *executor) SubscriptionInsert(ctx context.Context, r *store.SubscriptionRow) error {
	_, err := e.conn.Exec(ctx, `INSERT INTO subscriptions (id, client_id, account_id, external_id, digest, json, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		r.ID, r.ClientID, r.AccountID, r.ExternalID, r.Digest, r.JSON, e.ts(r.CreatedAt), e.ts(r.UpdatedAt))
	return e.wrap("subscription: insert", err)
}

func (e *executor) SubscriptionUpdate(ctx context.Context, r *store.SubscriptionRow) error {
	n, err := e.conn.Exec(ctx, `UPDATE subscriptions SET digest = $3, json = $4, updated_at = $5
		WHERE client_id = $1 AND id = $2`, r.ClientID, r.ID, r.Digest, r.JSON, e.ts(r.UpdatedAt))
	if err != nil {
		return e.wrap("subscription: update", err)
	}
	if n == 0 {
		return fmt.Errorf("subscription: update: %w", store.ErrNotFound)
	}
	return nil
}

func (e *executor) SubscriptionGet(ctx context.Context, clientID, id string) ([]byte, error) {
	var doc []byte
	err := e.conn.QueryRow(ctx, `SELECT json FROM subscriptions WHERE client_id = $1 AND id = $2`, clientID, id).Scan(&doc)
	if err != nil {
		return nil, e.wrap("subscription: get", err)
	}
	return doc, nil
}

func (e *executor) SubscriptionIDs(ctx context.Context, clientID, accountID string) ([]string, error) {
	rows, err := e.conn.Query(ctx, `SELECT id FROM subscriptions WHERE client_id = $1 AND account_id = $2
		ORDER BY created_at, id`, clientID, accountID)
	if err != nil {
		return nil, e.wrap("subscription: list ids", err)
	}
	defer rows.Close()
	ids := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, e.wrap("subscription: list ids", err)
		}
		ids = append(ids, id)
	}
	return ids, e.wrap("subscription: list ids", rows.Err())
}
