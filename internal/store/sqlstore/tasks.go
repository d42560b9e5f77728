package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hitchdev/hitch/internal/store"
)

// Tasks

const taskColumns = `id, client_id, external_user_id, user_id, account_id, merchant_id, product, card_id, session_id,
	status, reason, card_sealed, card_brand, card_last_four, card_exp_month, card_exp_year, metadata,
	card_deadline, claimed_at, created_at, updated_at, finished_at, simulation`

func scanTask(row Row) (*store.Task, error) {
	var t store.Task
	var metadata []byte
	if err := row.Scan(&t.ID, &t.ClientID, &t.ExternalUserID, &t.UserID, &t.AccountID, &t.MerchantID, &t.Product,
		&t.CardID, &t.SessionID, &t.Status, &t.Reason, &t.CardSealed, &t.CardBrand, &t.CardLastFour,
		&t.CardExpMonth, &t.CardExpYear, &metadata, nullTimeDest{&t.CardDeadline}, nullTimeDest{&t.ClaimedAt},
		timeDest{&t.CreatedAt}, timeDest{&t.UpdatedAt}, nullTimeDest{&t.FinishedAt}, &t.Simulation); err != nil {
		return nil, err
	}
	if metadata != nil {
		t.Metadata = json.RawMessage(metadata)
	}
	return &t, nil
}

func (e *executor) TaskInsert(ctx context.Context, t *store.Task) error {
	if t.ID <= 0 || t.ID >= 1<<53 { // what JavaScript reads exactly
		return fmt.Errorf("task: insert: id %d out of range", t.ID)
	}
	// A taken id is no error to the database, so that the caller can draw
	// another in the same transaction: on PostgreSQL a failed statement
	// would abort it.
	n, err := e.conn.Exec(ctx, `INSERT INTO tasks (`+taskColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)
		ON CONFLICT (id) DO NOTHING`,
		t.ID, t.ClientID, t.ExternalUserID, t.UserID, t.AccountID, t.MerchantID, t.Product, t.CardID, t.SessionID,
		t.Status, t.Reason, t.CardSealed, t.CardBrand, t.CardLastFour, t.CardExpMonth, t.CardExpYear,
		jsonArg(t.Metadata), e.nullTs(t.CardDeadline), e.nullTs(t.ClaimedAt), e.ts(t.CreatedAt), e.ts(t.UpdatedAt),
		e.nullTs(t.FinishedAt), t.Simulation)
	if err != nil {
		return e.wrap("task: insert", err)
	}
	if n == 0 {
		return fmt.Errorf("task: insert: id %d: %w", t.ID, store.ErrConflict)
	}
	return nil
}

func (e *executor) TaskGet(ctx context.Context, clientID string, id int64) (*store.Task, error) {
	t, err := scanTask(e.conn.QueryRow(ctx, `SELECT `+taskColumns+` FROM tasks WHERE client_id = $1 AND id = $2`, clientID, id))
	if err != nil {
		return nil, e.wrap("task: get", err)
	}
	return t, nil
}

func (e *executor) TaskAttachCard(ctx context.Context, p *store.TaskAttachCardParams) (*store.Task, error) {
	t, err := scanTask(e.conn.QueryRow(ctx, `UPDATE tasks SET status = 'pending', card_sealed = $3, card_brand = $4,
			card_last_four = $5, card_exp_month = $6, card_exp_year = $7, updated_at = $8, simulation = $9
		WHERE client_id = $1 AND id = $2 AND status = 'awaiting_card' AND card_deadline > $8
		RETURNING `+taskColumns,
		p.ClientID, p.ID, p.CardSealed, p.Card.Brand, p.Card.LastFour, p.Card.ExpMonth, p.Card.ExpYear, e.ts(p.Now),
		p.Simulation))
	if err != nil {
		return nil, e.wrap("task: attach card", err)
	}
	return t, nil
}

func (e *executor) TaskFinish(ctx context.Context, p *store.TaskFinishParams) (*store.Task, error) {
	var brand, lastFour *string
	var month, year *int
	if p.Card != nil {
		brand, lastFour, month, year = &p.Card.Brand, &p.Card.LastFour, &p.Card.ExpMonth, &p.Card.ExpYear
	}
	// $3 limits the states finished from ('' for any unfinished one).
	t, err := scanTask(e.conn.QueryRow(ctx, `UPDATE tasks SET status = $4, reason = $5, card_sealed = NULL, simulation = NULL,
			card_brand = COALESCE($6, card_brand), card_last_four = COALESCE($7, card_last_four),
			card_exp_month = COALESCE($8, card_exp_month), card_exp_year = COALESCE($9, card_exp_year),
			updated_at = $10, finished_at = $10
		WHERE client_id = $1 AND id = $2 AND status IN ('awaiting_card', 'pending') AND ($3 = '' OR status = $3)
		RETURNING `+taskColumns,
		p.ClientID, p.ID, p.From, p.Status, p.Reason, brand, lastFour, month, year, e.ts(p.Now)))
	if err != nil {
		return nil, e.wrap("task: finish", err)
	}
	return t, nil
}

func (e *executor) TaskListPending(ctx context.Context, p *store.TaskListPendingParams) ([]*store.Task, error) {
	rows, err := e.conn.Query(ctx, `SELECT `+taskColumns+` FROM tasks
		WHERE status = 'pending' AND claimed_at IS NULL AND (CAST($1 AS BIGINT) = 0 OR merchant_id = $1)
		ORDER BY created_at, id LIMIT $2`, p.MerchantID, p.Limit)
	if err != nil {
		return nil, e.wrap("task: list pending", err)
	}
	return collect(rows, scanTask, e, "task: list pending")
}

func (e *executor) TaskListSimulations(ctx context.Context, p *store.TaskListSimulationsParams) ([]*store.Task, error) {
	// Without a cursor, the first task is after the time before any.
	afterAt, afterID := e.ts(time.Unix(0, 0)), int64(0)
	if p.After != nil {
		afterAt, afterID = e.ts(p.After.CreatedAt), p.After.ID
	}
	rows, err := e.conn.Query(ctx, `SELECT `+taskColumns+` FROM tasks
		WHERE simulation IS NOT NULL AND status = 'pending' AND (created_at > $1 OR (created_at = $1 AND id > $2))
		ORDER BY created_at, id LIMIT $3`, afterAt, afterID, p.Limit)
	if err != nil {
		return nil, e.wrap("task: list simulations", err)
	}
	return collect(rows, scanTask, e, "task: list simulations")
}

func (e *executor) TaskClaim(ctx context.Context, clientID string, id int64, now time.Time) (*store.Task, error) {
	// The claim and its card are returned by the first statement, which
	// only one claimer can win; the second erases the sealed card.
	t, err := scanTask(e.conn.QueryRow(ctx, `UPDATE tasks SET claimed_at = $3, updated_at = $3
		WHERE client_id = $1 AND id = $2 AND status = 'pending' AND claimed_at IS NULL
		RETURNING `+taskColumns, clientID, id, e.ts(now)))
	if err != nil {
		return nil, e.wrap("task: claim", err)
	}
	if _, err := e.conn.Exec(ctx, `UPDATE tasks SET card_sealed = NULL WHERE client_id = $1 AND id = $2`, clientID, id); err != nil {
		return nil, e.wrap("task: claim", err)
	}
	return t, nil
}

func (e *executor) TaskSeal(ctx context.Context, clientID string, id int64, sealed []byte) error {
	n, err := e.conn.Exec(ctx, `UPDATE tasks SET card_sealed = $3 WHERE client_id = $1 AND id = $2 AND status = 'pending'`,
		clientID, id, sealed)
	if err != nil {
		return e.wrap("task: seal card", err)
	}
	if n == 0 {
		return fmt.Errorf("task: seal card: %w", store.ErrNotFound)
	}
	return nil
}
