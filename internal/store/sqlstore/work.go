package sqlstore

import (
	"context"
	"strings"
	"time"

	"github.com/hitchdev/hitch/internal/store"
)

// Connector work

const workColumns = `id, kind, client_id, external_user_id, merchant_id, product, request_id, status, question, reason,
	input_sealed, connector_id, lease_hash, lease_until, attempts, created_at, updated_at`

func scanWork(row Row) (*store.Work, error) {
	var w store.Work
	if err := row.Scan(&w.ID, &w.Kind, &w.ClientID, &w.ExternalUserID, &w.MerchantID, &w.Product, &w.RequestID, &w.Status,
		&w.Question, &w.Reason, &w.InputSealed, &w.ConnectorID, &w.LeaseHash, nullTimeDest{&w.LeaseUntil},
		&w.Attempts, timeDest{&w.CreatedAt}, timeDest{&w.UpdatedAt}); err != nil {
		return nil, err
	}
	return &w, nil
}

// statusList is a list of statuses for an IN-like match: ',a,b,'.
func statusList(statuses []string) string { return "," + strings.Join(statuses, ",") + "," }

func (e *executor) WorkInsert(ctx context.Context, w *store.Work) (bool, error) {
	// ON CONFLICT DO NOTHING skips a refresh of an account that has one
	// open (connector_work_refresh); ids never collide.
	n, err := e.conn.Exec(ctx, `INSERT INTO connector_work (`+workColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) ON CONFLICT DO NOTHING`,
		w.ID, w.Kind, w.ClientID, w.ExternalUserID, w.MerchantID, w.Product, w.RequestID, w.Status, w.Question, w.Reason,
		w.InputSealed, w.ConnectorID, w.LeaseHash, e.nullTs(w.LeaseUntil), w.Attempts, e.ts(w.CreatedAt), e.ts(w.UpdatedAt))
	if err != nil {
		return false, e.wrap("work: insert", err)
	}
	return n == 1, nil
}

func (e *executor) WorkGet(ctx context.Context, id string) (*store.Work, error) {
	w, err := scanWork(e.conn.QueryRow(ctx, `SELECT `+workColumns+` FROM connector_work WHERE id = $1`, id))
	if err != nil {
		return nil, e.wrap("work: get", err)
	}
	return w, nil
}

func (e *executor) WorkClaim(ctx context.Context, p *store.WorkClaimParams) ([]*store.Work, error) {
	// The outer status check makes a concurrent claimer that picked the
	// same rows skip them once the first commits: each row is claimed once.
	rows, err := e.conn.Query(ctx, `UPDATE connector_work
		SET status = 'claimed', connector_id = $1, lease_hash = $2, lease_until = $3, updated_at = $4, attempts = attempts + 1
		WHERE status = 'pending' AND id IN (
			SELECT id FROM connector_work
			WHERE status = 'pending' AND $5 LIKE '%,' || CAST(merchant_id AS TEXT) || ',%' AND $6 LIKE '%,' || kind || ',%'
			ORDER BY created_at, id LIMIT $7)
		RETURNING `+workColumns,
		p.ConnectorID, p.LeaseHash, e.ts(p.LeaseUntil), e.ts(p.Now), idsArg(p.MerchantIDs), statusList(p.Kinds), p.Limit)
	if err != nil {
		return nil, e.wrap("work: claim", err)
	}
	claimed, err := collect(rows, scanWork, e, "work: claim")
	if err != nil {
		return nil, err
	}
	for _, w := range claimed {
		if _, err := e.conn.Exec(ctx, `UPDATE connector_work SET input_sealed = NULL WHERE id = $1`, w.ID); err != nil {
			return nil, e.wrap("work: claim", err)
		}
	}
	return claimed, nil
}

func (e *executor) WorkReport(ctx context.Context, p *store.WorkReportParams) (*store.Work, error) {
	w, err := scanWork(e.conn.QueryRow(ctx, `UPDATE connector_work
		SET status = $4, question = COALESCE($5, question), reason = $6, lease_until = $7, updated_at = $8
		WHERE id = $1 AND lease_hash = $2 AND lease_until >= $8 AND $3 LIKE '%,' || status || ',%'
		RETURNING `+workColumns,
		p.ID, p.LeaseHash, statusList(p.From), p.Status, p.Question, p.Reason, e.ts(p.LeaseUntil), e.ts(p.Now)))
	if err != nil {
		return nil, e.wrap("work: report", err)
	}
	return w, nil
}

func (e *executor) WorkTakeAnswer(ctx context.Context, p *store.WorkReportParams) ([]byte, error) {
	var sealed []byte
	err := e.conn.QueryRow(ctx, `UPDATE connector_work
		SET status = 'claimed', lease_until = $3, updated_at = $4
		WHERE id = $1 AND lease_hash = $2 AND lease_until >= $4 AND status = 'answered'
		RETURNING input_sealed`, p.ID, p.LeaseHash, e.ts(p.LeaseUntil), e.ts(p.Now)).Scan(&sealed)
	if err != nil {
		return nil, e.wrap("work: take answer", err)
	}
	if _, err := e.conn.Exec(ctx, `UPDATE connector_work SET input_sealed = NULL WHERE id = $1`, p.ID); err != nil {
		return nil, e.wrap("work: take answer", err)
	}
	return sealed, nil
}

func (e *executor) WorkSet(ctx context.Context, p *store.WorkSetParams) (*store.Work, error) {
	attempts := 0
	if p.Attempts {
		attempts = 1
	}
	w, err := scanWork(e.conn.QueryRow(ctx, `UPDATE connector_work
		SET status = $3, input_sealed = $4, reason = COALESCE($5, reason), updated_at = $6, attempts = attempts + $7,
			connector_id = CASE WHEN $8 THEN NULL ELSE connector_id END,
			lease_hash = CASE WHEN $8 THEN NULL ELSE lease_hash END,
			lease_until = CASE WHEN $8 THEN NULL ELSE lease_until END
		WHERE id = $1 AND $2 LIKE '%,' || status || ',%'
		RETURNING `+workColumns,
		p.ID, statusList(p.From), p.Status, p.Input, p.Reason, e.ts(p.Now), attempts, p.ReleaseLease))
	if err != nil {
		return nil, e.wrap("work: set", err)
	}
	return w, nil
}

func (e *executor) WorkExpired(ctx context.Context, now, pendingBefore time.Time, limit int) ([]*store.Work, error) {
	rows, err := e.conn.Query(ctx, `SELECT `+workColumns+` FROM connector_work
		WHERE (lease_until < $1 AND status NOT IN ('done', 'failed', 'pending'))
			OR (status = 'pending' AND kind IN ('login', 'detect') AND created_at < $2)
		ORDER BY created_at, id LIMIT $3`, e.ts(now), e.ts(pendingBefore), limit)
	if err != nil {
		return nil, e.wrap("work: expired", err)
	}
	return collect(rows, scanWork, e, "work: expired")
}

func (e *executor) WorkPurge(ctx context.Context, before, eraseBefore time.Time) error {
	if _, err := e.conn.Exec(ctx, `DELETE FROM connector_work WHERE status IN ('done', 'failed') AND created_at < $1`,
		e.ts(before)); err != nil {
		return e.wrap("work: purge", err)
	}
	_, err := e.conn.Exec(ctx, `UPDATE connector_work SET input_sealed = NULL
		WHERE input_sealed IS NOT NULL AND created_at < $1`, e.ts(eraseBefore))
	return e.wrap("work: purge", err)
}

func (e *executor) WorkStats(ctx context.Context, since time.Time) ([]*store.WorkCount, error) {
	rows, err := e.conn.Query(ctx, `SELECT COALESCE(connector_id, ''), kind, status, COUNT(*) FROM connector_work
		WHERE updated_at >= $1 OR status NOT IN ('done', 'failed')
		GROUP BY connector_id, kind, status ORDER BY 1, 2, 3`, e.ts(since))
	if err != nil {
		return nil, e.wrap("work: stats", err)
	}
	return collect(rows, func(r Row) (*store.WorkCount, error) {
		var c store.WorkCount
		err := r.Scan(&c.ConnectorID, &c.Kind, &c.Status, &c.Count)
		return &c, err
	}, e, "work: stats")
}

const connectorStateColumns = `client_id, external_user_id, merchant_id, state_sealed, next_refresh_at, last_refresh_at, updated_at`

func scanConnectorState(row Row) (*store.ConnectorState, error) {
	var s store.ConnectorState
	if err := row.Scan(&s.ClientID, &s.ExternalUserID, &s.MerchantID, &s.StateSealed, timeDest{&s.NextRefreshAt},
		nullTimeDest{&s.LastRefreshAt}, timeDest{&s.UpdatedAt}); err != nil {
		return nil, err
	}
	return &s, nil
}

func (e *executor) ConnectorStatePut(ctx context.Context, s *store.ConnectorState) error {
	_, err := e.conn.Exec(ctx, `INSERT INTO connector_states (`+connectorStateColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (client_id, external_user_id, merchant_id) DO UPDATE SET
			state_sealed = COALESCE(excluded.state_sealed, connector_states.state_sealed),
			next_refresh_at = excluded.next_refresh_at,
			last_refresh_at = COALESCE(excluded.last_refresh_at, connector_states.last_refresh_at),
			updated_at = excluded.updated_at`,
		s.ClientID, s.ExternalUserID, s.MerchantID, s.StateSealed, e.ts(s.NextRefreshAt), e.nullTs(s.LastRefreshAt), e.ts(s.UpdatedAt))
	return e.wrap("connector state: put", err)
}

func (e *executor) ConnectorStateGet(ctx context.Context, clientID, externalUserID string, merchantID int64) (*store.ConnectorState, error) {
	s, err := scanConnectorState(e.conn.QueryRow(ctx, `SELECT `+connectorStateColumns+` FROM connector_states
		WHERE client_id = $1 AND external_user_id = $2 AND merchant_id = $3`, clientID, externalUserID, merchantID))
	if err != nil {
		return nil, e.wrap("connector state: get", err)
	}
	return s, nil
}

func (e *executor) ConnectorStateDelete(ctx context.Context, clientID, externalUserID string, merchantID int64) error {
	_, err := e.conn.Exec(ctx, `DELETE FROM connector_states WHERE client_id = $1 AND external_user_id = $2 AND merchant_id = $3`,
		clientID, externalUserID, merchantID)
	return e.wrap("connector state: delete", err)
}

func (e *executor) ConnectorStatesDue(ctx context.Context, now, next time.Time, limit int) ([]*store.ConnectorState, error) {
	rows, err := e.conn.Query(ctx, `UPDATE connector_states SET next_refresh_at = $2
		WHERE (client_id, external_user_id, merchant_id) IN (
			SELECT s.client_id, s.external_user_id, s.merchant_id FROM connector_states s
			JOIN users u ON u.client_id = s.client_id AND u.external_user_id = s.external_user_id
			JOIN accounts a ON a.client_id = s.client_id AND a.user_id = u.id AND a.merchant_id = s.merchant_id
			WHERE (s.next_refresh_at <= $1 OR s.next_refresh_at > $2)
				AND a.connection_status = 'connected' AND a.unlinked_at IS NULL
			ORDER BY s.next_refresh_at LIMIT $3)
		RETURNING `+connectorStateColumns, e.ts(now), e.ts(next), limit)
	if err != nil {
		return nil, e.wrap("connector state: due", err)
	}
	return collect(rows, scanConnectorState, e, "connector state: due")
}
