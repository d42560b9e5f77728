package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hitchdev/hitch/internal/store"
)

// Events

func (e *executor) EventGet(ctx context.Context, clientID, id string) (*store.Event, error) {
	ev, err := scanEvent(e.conn.QueryRow(ctx, `SELECT `+eventColumns+` FROM events WHERE client_id = $1 AND id = $2`, clientID, id))
	if err != nil {
		return nil, e.wrap("event: get", err)
	}
	return ev, nil
}

func (e *executor) EventList(ctx context.Context, p *store.EventListParams) ([]*store.Event, error) {
	q := newTenantQuery(e, `SELECT `+eventColumns+` FROM events WHERE client_id = $1`, p.ClientID, p.Since, p.Until)
	if p.Type != "" {
		q.WriteString(` AND type = ` + q.arg(p.Type))
	}
	if p.ExternalUserID != "" {
		q.WriteString(` AND external_user_id = ` + q.arg(p.ExternalUserID))
	}
	if p.Before != "" {
		// The order is total: (created_at, sequence, id) is unique.
		n := q.arg(p.Before)
		q.WriteString(` AND (created_at, sequence, id) < (SELECT created_at, sequence, id FROM events WHERE client_id = $1 AND id = ` + n + `)`)
	}
	q.WriteString(` ORDER BY created_at DESC, sequence DESC, id DESC LIMIT ` + q.arg(pageLimit(p.Limit)))
	rows, err := e.conn.Query(ctx, q.String(), q.args...)
	if err != nil {
		return nil, e.wrap("event: list", err)
	}
	return collect(rows, scanEvent, e, "event: list")
}

// tenantQuery builds a listing's SQL with its conditions' placeholders
// numbered as they are added; $1 is the tenant.
type tenantQuery struct {
	strings.Builder
	args []any
}

func newTenantQuery(e *executor, sql, clientID string, since, until *time.Time) *tenantQuery {
	q := &tenantQuery{args: []any{clientID}}
	q.WriteString(sql)
	if since != nil {
		q.WriteString(` AND created_at >= ` + q.arg(e.ts(*since)))
	}
	if until != nil {
		q.WriteString(` AND created_at <= ` + q.arg(e.ts(*until)))
	}
	return q
}

// arg binds v and returns its placeholder.
func (q *tenantQuery) arg(v any) string {
	q.args = append(q.args, v)
	return fmt.Sprintf("$%d", len(q.args))
}

// pageLimit is a listing's limit, 100 when none is given.
func pageLimit(limit int) int {
	if limit <= 0 {
		return 100
	}
	return limit
}

// Webhook endpoints

const endpointColumns = `id, client_id, url, event_types, secret_sealed, previous_sealed, previous_expires_at,
	status, disabled_reason, failing_since, created_at, updated_at`

func scanEndpoint(row Row) (*store.WebhookEndpoint, error) {
	var ep store.WebhookEndpoint
	var types string
	if err := row.Scan(&ep.ID, &ep.ClientID, &ep.URL, &types, &ep.SecretSealed, &ep.PreviousSealed,
		nullTimeDest{&ep.PreviousExpiresAt}, &ep.Status, nullStringDest{&ep.DisabledReason},
		nullTimeDest{&ep.FailingSince}, timeDest{&ep.CreatedAt}, timeDest{&ep.UpdatedAt}); err != nil {
		return nil, err
	}
	ep.EventTypes = splitList(types)
	return &ep, nil
}

func (e *executor) WebhookEndpointInsert(ctx context.Context, ep *store.WebhookEndpoint) error {
	types, err := listArg(ep.EventTypes)
	if err != nil {
		return fmt.Errorf("webhook endpoint: insert: %w", err)
	}
	_, err = e.conn.Exec(ctx, `INSERT INTO webhook_endpoints (`+endpointColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		ep.ID, ep.ClientID, ep.URL, types, ep.SecretSealed, ep.PreviousSealed, e.nullTs(ep.PreviousExpiresAt),
		ep.Status, ep.DisabledReason, e.nullTs(ep.FailingSince), e.ts(ep.CreatedAt), e.ts(ep.UpdatedAt))
	return e.wrap("webhook endpoint: insert", err)
}

func (e *executor) WebhookEndpointGet(ctx context.Context, clientID, id string) (*store.WebhookEndpoint, error) {
	ep, err := scanEndpoint(e.conn.QueryRow(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints
		WHERE client_id = $1 AND id = $2`, clientID, id))
	if err != nil {
		return nil, e.wrap("webhook endpoint: get", err)
	}
	return ep, nil
}

func (e *executor) WebhookEndpointList(ctx context.Context, clientID string) ([]*store.WebhookEndpoint, error) {
	rows, err := e.conn.Query(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints
		WHERE client_id = $1 ORDER BY created_at, id`, clientID)
	if err != nil {
		return nil, e.wrap("webhook endpoint: list", err)
	}
	return collect(rows, scanEndpoint, e, "webhook endpoint: list")
}

func (e *executor) WebhookEndpointDelete(ctx context.Context, clientID, id string) error {
	n, err := e.conn.Exec(ctx, `DELETE FROM webhook_endpoints WHERE client_id = $1 AND id = $2`, clientID, id)
	if err != nil {
		return e.wrap("webhook endpoint: delete", err)
	}
	if n == 0 {
		return fmt.Errorf("webhook endpoint: delete: %w", store.ErrNotFound)
	}
	return nil
}

func (e *executor) WebhookEndpointRotateSecret(ctx context.Context, p *store.WebhookEndpointRotateSecretParams) (*store.WebhookEndpoint, error) {
	ep, err := scanEndpoint(e.conn.QueryRow(ctx, `UPDATE webhook_endpoints
		SET previous_sealed = secret_sealed, previous_expires_at = $3, secret_sealed = $4, updated_at = $5
		WHERE client_id = $1 AND id = $2 RETURNING `+endpointColumns,
		p.ClientID, p.ID, e.ts(p.PreviousExpiresAt), p.SecretSealed, e.ts(p.Now)))
	if err != nil {
		return nil, e.wrap("webhook endpoint: rotate secret", err)
	}
	return ep, nil
}

func (e *executor) WebhookEndpointUpdate(ctx context.Context, p *store.WebhookEndpointUpdateParams) (*store.WebhookEndpoint, error) {
	var types *string
	if p.EventTypes != nil {
		list, err := listArg(*p.EventTypes)
		if err != nil {
			return nil, fmt.Errorf("webhook endpoint: update: %w", err)
		}
		types = &list
	}
	// The right-hand sides read the row as it was, so the CASE compares the
	// old URL with the new one.
	ep, err := scanEndpoint(e.conn.QueryRow(ctx, `UPDATE webhook_endpoints
		SET url = COALESCE($3, url), event_types = COALESCE($4, event_types),
			failing_since = CASE WHEN url = COALESCE($3, url) THEN failing_since END, updated_at = $5
		WHERE client_id = $1 AND id = $2 RETURNING `+endpointColumns,
		p.ClientID, p.ID, p.URL, types, e.ts(p.Now)))
	if err != nil {
		return nil, e.wrap("webhook endpoint: update", err)
	}
	return ep, nil
}

func (e *executor) WebhookEndpointDisable(ctx context.Context, clientID, id, reason string, now time.Time) (bool, error) {
	n, err := e.conn.Exec(ctx, `UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = $3, updated_at = $4
		WHERE client_id = $1 AND id = $2 AND status = 'enabled'`, clientID, id, reason, e.ts(now))
	if err != nil {
		return false, e.wrap("webhook endpoint: disable", err)
	}
	return n > 0, nil
}

func (e *executor) WebhookEndpointSetFailing(ctx context.Context, clientID, id string, failingSince *time.Time) (*time.Time, error) {
	if failingSince == nil {
		// Only a failing endpoint is written (and, on PostgreSQL, locked):
		// concurrent successes all clear the streak.
		_, err := e.conn.Exec(ctx, `UPDATE webhook_endpoints SET failing_since = NULL
			WHERE client_id = $1 AND id = $2 AND failing_since IS NOT NULL`, clientID, id)
		return nil, e.wrap("webhook endpoint: set failing", err)
	}
	var since *time.Time
	err := e.conn.QueryRow(ctx, `UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, $3)
		WHERE client_id = $1 AND id = $2 RETURNING failing_since`,
		clientID, id, e.ts(*failingSince)).Scan(nullTimeDest{&since})
	if err != nil {
		return nil, e.wrap("webhook endpoint: set failing", err)
	}
	return since, nil
}

// Webhook attempts

func (e *executor) WebhookAttemptInsert(ctx context.Context, a *store.WebhookAttempt) error {
	_, err := e.conn.Exec(ctx, `INSERT INTO webhook_attempts (client_id, event_id, endpoint_id, attempt, job_id,
			started_at, duration_us, status_code, response_body, error, outcome)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		a.ClientID, a.EventID, a.EndpointID, a.Attempt, attemptJobID(a), e.ts(a.StartedAt),
		a.Duration.Microseconds(), a.StatusCode, a.ResponseBody, a.Error, a.Outcome)
	return e.wrap("webhook attempt: insert", err)
}

// attemptJobID is the attempt's job id, NULL for none (0).
func attemptJobID(a *store.WebhookAttempt) *int64 {
	if a.JobID == 0 {
		return nil
	}
	return &a.JobID
}

func (e *executor) WebhookAttemptList(ctx context.Context, clientID, eventID string) ([]*store.WebhookAttempt, error) {
	rows, err := e.conn.Query(ctx, `SELECT client_id, event_id, endpoint_id, attempt, job_id, started_at, duration_us,
			status_code, response_body, error, outcome
		FROM webhook_attempts WHERE client_id = $1 AND event_id = $2 ORDER BY started_at, id`, clientID, eventID)
	if err != nil {
		return nil, e.wrap("webhook attempt: list", err)
	}
	return collect(rows, func(row Row) (*store.WebhookAttempt, error) {
		var a store.WebhookAttempt
		var us int64
		var code, jobID *int64
		if err := row.Scan(&a.ClientID, &a.EventID, &a.EndpointID, &a.Attempt, &jobID, timeDest{&a.StartedAt}, &us,
			&code, &a.ResponseBody, &a.Error, &a.Outcome); err != nil {
			return nil, err
		}
		if jobID != nil {
			a.JobID = *jobID
		}
		a.Duration = time.Duration(us) * time.Microsecond
		if code != nil {
			c := int(*code)
			a.StatusCode = &c
		}
		return &a, nil
	}, e, "webhook attempt: list")
}

// nullTs is ts for an optional time.
func (e *executor) nullTs(t *time.Time) any {
	if t == nil {
		return nil
	}
	return e.ts(*t)
}

// listArg stores a list of identifiers comma-separated.
func listArg(items []string) (string, error) {
	for _, it := range items {
		if it == "" || strings.ContainsRune(it, ',') {
			return "", fmt.Errorf("invalid list item %q", it)
		}
	}
	return strings.Join(items, ","), nil
}

// splitList reads listArg's column; "" is the empty list.
func splitList(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, ",")
}
