package sqlstore

import (
	"context"
	"encoding/json"
	"math"
	"time"

	"github.com/hitchdev/hitch/internal/store"
)

// Detection

const detectionRequestColumns = `r.id, r.client_id, r.user_id, u.external_user_id, r.session_id, r.email_sealed,
	r.phone_sealed, r.processor_token_sealed, r.metadata, r.status, r.found, r.created_at, r.finished_at`

func scanDetectionRequest(row Row) (*store.DetectionRequest, error) {
	var r store.DetectionRequest
	var metadata []byte
	if err := row.Scan(&r.ID, &r.ClientID, &r.UserID, &r.ExternalUserID, &r.SessionID, &r.EmailSealed, &r.PhoneSealed,
		&r.ProcessorTokenSealed, &metadata, &r.Status, &r.Found, timeDest{&r.CreatedAt}, nullTimeDest{&r.FinishedAt}); err != nil {
		return nil, err
	}
	if metadata != nil {
		r.Metadata = json.RawMessage(metadata)
	}
	return &r, nil
}

func (e *executor) DetectionRequestInsert(ctx context.Context, r *store.DetectionRequest) error {
	_, err := e.conn.Exec(ctx, `INSERT INTO detection_requests (id, client_id, user_id, session_id, email_sealed,
			phone_sealed, processor_token_sealed, metadata, status, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', $9)`,
		r.ID, r.ClientID, r.UserID, r.SessionID, r.EmailSealed, r.PhoneSealed, r.ProcessorTokenSealed, jsonArg(r.Metadata),
		e.ts(r.CreatedAt))
	return e.wrap("detection request: insert", err)
}

func (e *executor) DetectionRequestGet(ctx context.Context, clientID, id string) (*store.DetectionRequest, error) {
	r, err := scanDetectionRequest(e.conn.QueryRow(ctx, `SELECT `+detectionRequestColumns+`
		FROM detection_requests r JOIN users u ON u.id = r.user_id
		WHERE r.client_id = $1 AND r.id = $2`, clientID, id))
	if err != nil {
		return nil, e.wrap("detection request: get", err)
	}
	return r, nil
}

func (e *executor) DetectionRequestFound(ctx context.Context, clientID, id string, n int) error {
	_, err := e.conn.Exec(ctx, `UPDATE detection_requests SET found = COALESCE(found, 0) + $3
		WHERE client_id = $1 AND id = $2`, clientID, id, n)
	return e.wrap("detection request: found", err)
}

func (e *executor) DetectionRequestSettle(ctx context.Context, clientID, id string, now time.Time) (bool, error) {
	n, err := e.conn.Exec(ctx, `UPDATE detection_requests SET status = 'done', found = COALESCE(found, 0), finished_at = $3,
			email_sealed = NULL, phone_sealed = NULL
		WHERE client_id = $1 AND id = $2 AND status = 'pending' AND NOT EXISTS (
			SELECT 1 FROM connector_work w
			WHERE w.request_id = CAST(detection_requests.id AS TEXT) AND w.status IN ('pending', 'claimed'))`, clientID, id, e.ts(now))
	if err != nil {
		return false, e.wrap("detection request: settle", err)
	}
	return n == 1, nil
}

func (e *executor) UserDetectionPositions(ctx context.Context, clientID, userID string, n int64) (int64, error) {
	var last int64
	err := e.conn.QueryRow(ctx, `UPDATE users SET detection_position = detection_position + $3
		WHERE client_id = $1 AND id = $2 RETURNING detection_position`, clientID, userID, n).Scan(&last)
	if err != nil {
		return 0, e.wrap("user: reserve detection positions", err)
	}
	return last, nil
}

func (e *executor) DetectedAccountKeys(ctx context.Context, clientID, userID string) (map[string]bool, error) {
	rows, err := e.conn.Query(ctx, `SELECT name_key FROM detected_accounts WHERE client_id = $1 AND user_id = $2`,
		clientID, userID)
	if err != nil {
		return nil, e.wrap("detected account: keys", err)
	}
	defer rows.Close()
	keys := map[string]bool{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, e.wrap("detected account: keys", err)
		}
		keys[k] = true
	}
	return keys, e.wrap("detected account: keys", rows.Err())
}

func (e *executor) DetectedAccountInsert(ctx context.Context, d *store.DetectedAccount) (bool, error) {
	n, err := e.conn.Exec(ctx, `INSERT INTO detected_accounts (id, client_id, user_id, merchant_id, name, name_key,
			login_method, account_created_at, source, position, detected_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (user_id, name_key) DO NOTHING`,
		d.ID, d.ClientID, d.UserID, d.MerchantID, d.Name, d.NameKey, d.LoginMethod, e.nullTs(d.AccountCreatedAt),
		d.Source, d.Position, e.ts(d.DetectedAt))
	if err != nil {
		return false, e.wrap("detected account: insert", err)
	}
	return n > 0, nil
}

func (e *executor) DetectedAccountList(ctx context.Context, p *store.DetectedAccountListParams) ([]*store.DetectedAccount, error) {
	limit := int64(p.Limit)
	if limit <= 0 {
		limit = math.MaxInt32
	}
	// The user's row is the tenant check; "linked" is an account of the
	// user at the merchant that is not unlinked.
	rows, err := e.conn.Query(ctx, `SELECT d.id, d.merchant_id, d.name, d.name_key, d.login_method,
			d.account_created_at, d.source, d.position, d.detected_at
		FROM detected_accounts d
		WHERE d.client_id = $1 AND d.user_id = $2 AND d.position > $3
			AND (CAST($4 AS BIGINT) = 0 OR d.merchant_id = $4)
			AND (NOT $5 OR d.merchant_id IS NOT NULL)
			AND (NOT $6 OR NOT EXISTS (SELECT 1 FROM accounts a
				WHERE a.user_id = d.user_id AND a.merchant_id = d.merchant_id AND a.unlinked_at IS NULL))
		ORDER BY d.position
		LIMIT $7`, p.ClientID, p.UserID, p.After, p.MerchantID, p.CatalogOnly, p.Unlinked, limit)
	if err != nil {
		return nil, e.wrap("detected account: list", err)
	}
	return collect(rows, func(row Row) (*store.DetectedAccount, error) {
		d := store.DetectedAccount{ClientID: p.ClientID, UserID: p.UserID}
		if err := row.Scan(&d.ID, &d.MerchantID, &d.Name, &d.NameKey, &d.LoginMethod, nullTimeDest{&d.AccountCreatedAt},
			&d.Source, &d.Position, timeDest{&d.DetectedAt}); err != nil {
			return nil, err
		}
		return &d, nil
	}, e, "detected account: list")
}
