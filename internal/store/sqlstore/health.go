package sqlstore

import (
	"context"
	"time"

	"github.com/hitchdev/hitch/internal/store"
)

// The dashboard's health reads: each is one developer's (client_id in every
// WHERE), bounded by a time window or a limit, and served by an index of
// migration 0020.

// webhookAttemptsSinceSQL reads a window of one developer's attempts
// through webhook_attempts_client_started, newest first.
const webhookAttemptsSinceSQL = `SELECT event_id, endpoint_id, attempt, started_at, duration_us, status_code, outcome
	FROM webhook_attempts WHERE client_id = $1 AND started_at >= $2 ORDER BY started_at DESC, id DESC LIMIT $3`

func (e *executor) WebhookAttemptsSince(ctx context.Context, clientID string, since time.Time, limit int) ([]*store.WebhookAttempt, error) {
	rows, err := e.conn.Query(ctx, webhookAttemptsSinceSQL, clientID, e.ts(since), limit)
	if err != nil {
		return nil, e.wrap("webhook attempt: since", err)
	}
	return collect(rows, func(row Row) (*store.WebhookAttempt, error) {
		a := store.WebhookAttempt{ClientID: clientID}
		var us int64
		var code *int64
		if err := row.Scan(&a.EventID, &a.EndpointID, &a.Attempt, timeDest{&a.StartedAt}, &us, &code, &a.Outcome); err != nil {
			return nil, err
		}
		a.Duration = time.Duration(us) * time.Microsecond
		if code != nil {
			c := int(*code)
			a.StatusCode = &c
		}
		return &a, nil
	}, e, "webhook attempt: since")
}

func (e *executor) WebhookAttemptsFailed(ctx context.Context, clientID, endpointID string, since time.Time, limit int) ([]*store.WebhookAttempt, error) {
	rows, err := e.conn.Query(ctx, `SELECT event_id, attempt, started_at, duration_us, status_code, response_body, error
		FROM webhook_attempts WHERE client_id = $1 AND started_at >= $2 AND endpoint_id = $3 AND outcome = 'failed'
		ORDER BY started_at DESC, id DESC LIMIT $4`, clientID, e.ts(since), endpointID, limit)
	if err != nil {
		return nil, e.wrap("webhook attempt: failed", err)
	}
	return collect(rows, func(row Row) (*store.WebhookAttempt, error) {
		a := store.WebhookAttempt{ClientID: clientID, EndpointID: endpointID, Outcome: store.AttemptFailed}
		var us int64
		var code *int64
		if err := row.Scan(&a.EventID, &a.Attempt, timeDest{&a.StartedAt}, &us, &code, &a.ResponseBody, &a.Error); err != nil {
			return nil, err
		}
		a.Duration = time.Duration(us) * time.Microsecond
		if code != nil {
			c := int(*code)
			a.StatusCode = &c
		}
		return &a, nil
	}, e, "webhook attempt: failed")
}

// AccountCounts reads the developer's accounts through accounts_client_user:
// one developer's rows, however many there are; the counts are what the
// page is for, so there is no window to bound them by.
func (e *executor) AccountCounts(ctx context.Context, clientID string) ([]*store.AccountCount, error) {
	rows, err := e.conn.Query(ctx, `SELECT merchant_id,
			SUM(CASE WHEN unlinked_at IS NULL AND connection_status = 'connected' THEN 1 ELSE 0 END),
			SUM(CASE WHEN unlinked_at IS NULL AND connection_status = 'disconnected' THEN 1 ELSE 0 END),
			SUM(CASE WHEN unlinked_at IS NOT NULL THEN 1 ELSE 0 END)
		FROM accounts WHERE client_id = $1 GROUP BY merchant_id ORDER BY merchant_id`, clientID)
	if err != nil {
		return nil, e.wrap("account: counts", err)
	}
	return collect(rows, func(row Row) (*store.AccountCount, error) {
		var c store.AccountCount
		return &c, row.Scan(&c.MerchantID, &c.Connected, &c.Disconnected, &c.Unlinked)
	}, e, "account: counts")
}

func scanAccountLogin(row Row) (*store.AccountLogin, error) {
	var l store.AccountLogin
	var account *string
	if err := row.Scan(&account, &l.MerchantID, &l.Product, &l.Status, timeDest{&l.CreatedAt}); err != nil {
		return nil, err
	}
	if account != nil {
		l.AccountID = *account
	}
	return &l, nil
}

// accountLoginsSinceSQL reads a window of one developer's login steps
// through account_logins_client_created, newest first.
const accountLoginsSinceSQL = `SELECT account_id, merchant_id, product, status, created_at FROM account_logins
	WHERE client_id = $1 AND created_at >= $2 ORDER BY created_at DESC, id DESC LIMIT $3`

func (e *executor) AccountLoginsSince(ctx context.Context, clientID string, since time.Time, limit int) ([]*store.AccountLogin, error) {
	rows, err := e.conn.Query(ctx, accountLoginsSinceSQL, clientID, e.ts(since), limit)
	if err != nil {
		return nil, e.wrap("account login: since", err)
	}
	return collect(rows, scanAccountLogin, e, "account login: since")
}

func (e *executor) AccountLoginsOfUser(ctx context.Context, clientID, userID string, limit int) ([]*store.AccountLogin, error) {
	rows, err := e.conn.Query(ctx, `SELECT account_id, merchant_id, product, status, created_at FROM account_logins
		WHERE client_id = $1 AND user_id = $2 ORDER BY created_at DESC, id DESC LIMIT $3`, clientID, userID, limit)
	if err != nil {
		return nil, e.wrap("account login: of user", err)
	}
	return collect(rows, scanAccountLogin, e, "account login: of user")
}

// accountLoginInsert appends the login step AccountLifecycleSet has just
// set, in its transaction.
func (e *executor) accountLoginInsert(ctx context.Context, p *store.AccountLifecycleSetParams) error {
	_, err := e.conn.Exec(ctx, `INSERT INTO account_logins (client_id, user_id, account_id, merchant_id, product, status, created_at)
		SELECT client_id, user_id, id, merchant_id, $3, $4, $5 FROM accounts WHERE client_id = $1 AND id = $2`,
		p.ClientID, p.AccountID, p.Product, p.Status, e.ts(p.At))
	return e.wrap("account login: insert", err)
}

func (e *executor) AccountLoginAdd(ctx context.Context, p *store.AccountLoginAddParams) error {
	_, err := e.conn.Exec(ctx, `INSERT INTO account_logins (client_id, user_id, merchant_id, product, status, created_at)
		SELECT client_id, id, $3, $4, $5, $6 FROM users WHERE client_id = $1 AND id = $2`,
		p.ClientID, p.UserID, p.MerchantID, p.Product, p.Status, e.ts(p.At))
	return e.wrap("account login: add", err)
}

func (e *executor) TaskCounts(ctx context.Context, clientID string, since time.Time) ([]*store.TaskCount, error) {
	rows, err := e.conn.Query(ctx, `SELECT merchant_id, product, status, COALESCE(reason, ''), COUNT(*)
		FROM tasks WHERE client_id = $1 AND finished_at >= $2
		GROUP BY merchant_id, product, status, COALESCE(reason, '') ORDER BY merchant_id, product, status, COALESCE(reason, '')`,
		clientID, e.ts(since))
	if err != nil {
		return nil, e.wrap("task: counts", err)
	}
	return collect(rows, func(row Row) (*store.TaskCount, error) {
		var c store.TaskCount
		return &c, row.Scan(&c.MerchantID, &c.Product, &c.Status, &c.Reason, &c.Count)
	}, e, "task: counts")
}

func (e *executor) TaskListByUser(ctx context.Context, clientID, userID string, limit int) ([]*store.Task, error) {
	rows, err := e.conn.Query(ctx, `SELECT `+taskColumns+` FROM tasks WHERE client_id = $1 AND user_id = $2
		ORDER BY created_at DESC, id DESC LIMIT $3`, clientID, userID, limit)
	if err != nil {
		return nil, e.wrap("task: list by user", err)
	}
	return collect(rows, scanTask, e, "task: list by user")
}

func (e *executor) DetectionCounts(ctx context.Context, clientID string, since time.Time) (*store.DetectionCounts, error) {
	c := &store.DetectionCounts{Hits: map[int64]int{}}
	if err := e.conn.QueryRow(ctx, `SELECT COUNT(*), COALESCE(SUM(CASE WHEN status = 'done' THEN 1 ELSE 0 END), 0)
		FROM detection_requests WHERE client_id = $1 AND created_at >= $2`, clientID, e.ts(since)).Scan(&c.Requests, &c.Done); err != nil {
		return nil, e.wrap("detection: counts", err)
	}
	rows, err := e.conn.Query(ctx, `SELECT COALESCE(merchant_id, 0), COUNT(*) FROM detected_accounts
		WHERE client_id = $1 AND detected_at >= $2 GROUP BY COALESCE(merchant_id, 0)`, clientID, e.ts(since))
	if err != nil {
		return nil, e.wrap("detection: hits", err)
	}
	defer rows.Close()
	for rows.Next() {
		var m int64
		var n int
		if err := rows.Scan(&m, &n); err != nil {
			return nil, e.wrap("detection: hits", err)
		}
		c.Hits[m] = n
	}
	if err := rows.Err(); err != nil {
		return nil, e.wrap("detection: hits", err)
	}
	return c, nil
}

func (e *executor) TransactionsOfUser(ctx context.Context, clientID, userID string, limit int) ([]*store.UserTransaction, error) {
	rows, err := e.conn.Query(ctx, `SELECT t.account_id, a.merchant_id, t.sync_json, t.created_at
		FROM accounts a JOIN transactions t ON t.account_id = a.id AND t.client_id = $1
		WHERE a.client_id = $1 AND a.user_id = $2 ORDER BY t.created_at DESC, t.position DESC LIMIT $3`, clientID, userID, limit)
	if err != nil {
		return nil, e.wrap("transaction: of user", err)
	}
	return collect(rows, func(row Row) (*store.UserTransaction, error) {
		var t store.UserTransaction
		return &t, row.Scan(&t.AccountID, &t.MerchantID, &t.SyncJSON, timeDest{&t.CreatedAt})
	}, e, "transaction: of user")
}
