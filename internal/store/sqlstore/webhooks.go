package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
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
	if err := row.Scan(endpointDest(&ep, &types)...); err != nil {
		return nil, err
	}
	ep.EventTypes = splitList(types)
	return &ep, nil
}

// endpointDest are the scan destinations of endpointColumns; the event
// types go to types, for the caller to split into ep.EventTypes.
func endpointDest(ep *store.WebhookEndpoint, types *string) []any {
	return []any{&ep.ID, &ep.ClientID, &ep.URL, types, &ep.SecretSealed, &ep.PreviousSealed,
		nullTimeDest{&ep.PreviousExpiresAt}, &ep.Status, nullStringDest{&ep.DisabledReason},
		nullTimeDest{&ep.FailingSince}, timeDest{&ep.CreatedAt}, timeDest{&ep.UpdatedAt}}
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

func (e *executor) WebhookDeliveriesGet(ctx context.Context, keys []store.WebhookDeliveryKey) ([]*store.WebhookDelivery, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	if e.drv.InProcess() {
		return e.deliveriesApart(ctx, keys)
	}
	return e.deliveriesJoined(ctx, keys)
}

// deliveriesJoined reads deliveries in one statement, each event joined
// to its endpoint: one round trip.
func (e *executor) deliveriesJoined(ctx context.Context, keys []store.WebhookDeliveryKey) ([]*store.WebhookDelivery, error) {
	type key struct {
		ClientID   string `json:"client_id"`
		EndpointID string `json:"endpoint_id"`
		EventID    string `json:"event_id"`
	}
	ks := make([]key, len(keys))
	for i, k := range keys {
		ks[i] = key(k)
	}
	rows, err := e.deliveriesQuery(ctx, deliveriesJoinedQuery, ks)
	if err != nil {
		return nil, err
	}
	return collect(rows, func(row Row) (*store.WebhookDelivery, error) {
		var ep store.WebhookEndpoint
		var ev store.Event
		var types string
		var payload []byte
		if err := row.Scan(append(endpointDest(&ep, &types), eventDest(&ev, &payload)...)...); err != nil {
			return nil, err
		}
		ep.EventTypes, ev.Payload = splitList(types), json.RawMessage(payload)
		return &store.WebhookDelivery{Endpoint: &ep, Event: &ev}, nil
	}, e, "webhook deliveries: get")
}

// deliveriesApart reads the distinct endpoints of keys in one statement,
// then their events in another. A group's deliveries mostly go to one
// endpoint or a few, and joining it to every event row cost SQLite, where a
// statement more is only a call, a third of the read
// (BenchmarkWebhookDeliveriesGet). Each delivery gets its own copies, as
// from the joined read.
func (e *executor) deliveriesApart(ctx context.Context, keys []store.WebhookDeliveryKey) ([]*store.WebhookDelivery, error) {
	type endpointKey struct {
		ClientID   string `json:"client_id"`
		EndpointID string `json:"endpoint_id"`
	}
	type eventKey struct {
		ClientID string `json:"client_id"`
		EventID  string `json:"event_id"`
	}
	var endpointKeys []endpointKey
	var eventKeys []eventKey
	seenEndpoints := make(map[endpointKey]bool, 1)
	seenEvents := make(map[eventKey]bool, len(keys))
	for _, k := range keys {
		if epk := (endpointKey{k.ClientID, k.EndpointID}); !seenEndpoints[epk] {
			seenEndpoints[epk] = true
			endpointKeys = append(endpointKeys, epk)
		}
		if evk := (eventKey{k.ClientID, k.EventID}); !seenEvents[evk] {
			seenEvents[evk] = true
			eventKeys = append(eventKeys, evk)
		}
	}
	rows, err := e.deliveriesQuery(ctx, deliveriesEndpointsQuery, endpointKeys)
	if err != nil {
		return nil, err
	}
	eps, err := collect(rows, scanEndpoint, e, "webhook deliveries: get")
	if err != nil || len(eps) == 0 {
		return nil, err
	}
	endpoints := make(map[endpointKey]*store.WebhookEndpoint, len(eps))
	for _, ep := range eps {
		endpoints[endpointKey{ep.ClientID, ep.ID}] = ep
	}
	rows, err = e.deliveriesQuery(ctx, deliveriesEventsQuery, eventKeys)
	if err != nil {
		return nil, err
	}
	evs, err := collect(rows, scanEvent, e, "webhook deliveries: get")
	if err != nil {
		return nil, err
	}
	events := make(map[eventKey]*store.Event, len(evs))
	for _, ev := range evs {
		events[eventKey{ev.ClientID, ev.ID}] = ev
	}
	var out []*store.WebhookDelivery
	for _, k := range keys {
		ep, ev := endpoints[endpointKey{k.ClientID, k.EndpointID}], events[eventKey{k.ClientID, k.EventID}]
		if ep != nil && ev != nil {
			epc, evc := *ep, *ev
			out = append(out, &store.WebhookDelivery{Endpoint: &epc, Event: &evc})
		}
	}
	return out, nil
}

// deliveriesQuery runs one of the delivery reads' statements, built for
// the dialect by build, with keys as its one JSON parameter.
func (e *executor) deliveriesQuery(ctx context.Context, build func(Driver) string, keys any) (Rows, error) {
	arg, err := json.Marshal(keys)
	if err != nil {
		return nil, fmt.Errorf("webhook deliveries: get: %w", err)
	}
	rows, err := e.conn.Query(ctx, build(e.drv), string(arg))
	return rows, e.wrap("webhook deliveries: get", err)
}

// The delivery reads' statements, built once per dialect rather than on
// every read. Each looks its rows up by keys given as one JSON parameter,
// whatever their number, so that the statement stays the same.
var (
	deliveriesJoinedQuery = perDialect(func(drv Driver) string {
		return `SELECT ` + prefixed("ep.", endpointColumns) + `, ` + prefixed("ev.", eventColumns) + `
		FROM ` + drv.JSONRows("$1", "k", "client_id text, endpoint_id text, event_id uuid") + `
		` + joinEndpoint(drv) + `
		` + joinEvent(drv)
	})
	deliveriesEndpointsQuery = perDialect(func(drv Driver) string {
		return `SELECT ` + prefixed("ep.", endpointColumns) + `
		FROM ` + drv.JSONRows("$1", "k", "client_id text, endpoint_id text") + `
		` + joinEndpoint(drv)
	})
	deliveriesEventsQuery = perDialect(func(drv Driver) string {
		return `SELECT ` + prefixed("ev.", eventColumns) + `
		FROM ` + drv.JSONRows("$1", "k", "client_id text, event_id uuid") + `
		` + joinEvent(drv)
	})
)

// joinEndpoint and joinEvent join a key's endpoint and event, each only
// the key's developer's.
func joinEndpoint(drv Driver) string {
	return drv.JoinOne("webhook_endpoints", "ep", "ep.client_id = k.client_id AND ep.id = k.endpoint_id")
}

func joinEvent(drv Driver) string {
	return drv.JoinOne("events", "ev", "ev.client_id = k.client_id AND ev.id = k.event_id")
}

// perDialect caches build's statement per driver name.
func perDialect(build func(Driver) string) func(Driver) string {
	var cache sync.Map // driver name → string
	return func(drv Driver) string {
		if q, ok := cache.Load(drv.Name()); ok {
			return q.(string)
		}
		q := build(drv)
		cache.Store(drv.Name(), q)
		return q
	}
}

// prefixed qualifies each of a comma-separated list of columns.
func prefixed(prefix, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = prefix + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
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
	rows, err := e.conn.Query(ctx, `SELECT client_id, event_id, endpoint_id, attempt, started_at, duration_us,
			status_code, response_body, error, outcome
		FROM webhook_attempts WHERE client_id = $1 AND event_id = $2 ORDER BY started_at, id`, clientID, eventID)
	if err != nil {
		return nil, e.wrap("webhook attempt: list", err)
	}
	return collect(rows, func(row Row) (*store.WebhookAttempt, error) {
		var a store.WebhookAttempt
		var us int64
		var code *int64
		if err := row.Scan(&a.ClientID, &a.EventID, &a.EndpointID, &a.Attempt, timeDest{&a.StartedAt}, &us,
			&code, &a.ResponseBody, &a.Error, &a.Outcome); err != nil {
			return nil, err
		}
		a.Duration = time.Duration(us) * time.Microsecond
		if code != nil {
			c := int(*code)
			a.StatusCode = &c
		}
		return &a, nil
	}, e, "webhook attempt: list")
}

// completedJobs selects the ids of the oldest completed jobs of kind $1
// finalized at or after $2, at most $3, by River's index on (state,
// finalized_at): the bound keeps a pass from walking the day of other
// kinds' completed jobs River keeps.
const completedJobs = `SELECT id FROM river_job
	WHERE state = 'completed' AND finalized_at >= $2 AND kind = $1
	ORDER BY finalized_at, id LIMIT $3`

// archivePostgres moves completed delivery jobs into webhook_attempts in
// one statement. SKIP LOCKED lets the nodes of a cluster archive at once
// without waiting on each other's rows. Arguments and outputs are read
// as text and cast only when they have the right shape, so that no job
// can fail the batch (one that cannot become an attempt is deleted).
const archivePostgres = `WITH moved AS (
	DELETE FROM river_job WHERE id IN (` + completedJobs + ` FOR UPDATE SKIP LOCKED)
	RETURNING id, args, metadata -> 'output' AS output
), attempts AS (
	SELECT m.id, m.args ->> 'client_id' AS client_id, m.args ->> 'endpoint_id' AS endpoint_id,
		CASE WHEN m.args ->> 'event_id' ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'
			THEN (m.args ->> 'event_id')::uuid END AS event_id,
		m.output ->> 'attempt' AS attempt, m.output ->> 'started_us' AS started_us,
		m.output ->> 'duration_us' AS duration_us, m.output ->> 'status' AS status,
		coalesce(m.output ->> 'body', '') AS body
	FROM moved m
	WHERE jsonb_typeof(m.output) = 'object'
), archived AS (
	INSERT INTO webhook_attempts (client_id, event_id, endpoint_id, attempt, job_id, started_at, duration_us,
		status_code, response_body, error, outcome)
	SELECT w.client_id, e.id, w.id, a.attempt::int, a.id,
		to_timestamp(0) + a.started_us::bigint * interval '1 microsecond',
		a.duration_us::bigint, a.status::int, a.body, '', 'succeeded'
	FROM attempts a
	JOIN webhook_endpoints w ON w.id = a.endpoint_id AND w.client_id = a.client_id
	JOIN events e ON e.id = a.event_id AND e.client_id = w.client_id
	WHERE a.attempt ~ '^[0-9]{1,9}$' AND a.started_us ~ '^[0-9]{1,18}$' AND a.duration_us ~ '^[0-9]{1,18}$'
		AND a.status ~ '^[0-9]{1,9}$'
)
SELECT count(*) FROM moved`

// archiveSQLite is archivePostgres in two statements, which select the same
// jobs: the transaction holds SQLite's only writer. Each output field is
// read once, and checked on what json_extract returns: json_type calls a
// number beyond int64 an integer, which json_extract returns as REAL.
const (
	archiveSQLite = `INSERT INTO webhook_attempts (client_id, event_id, endpoint_id, attempt, job_id, started_at,
		duration_us, status_code, response_body, error, outcome)
	SELECT w.client_id, e.id, w.id, j.attempt, j.id, j.started_us, j.duration_us, j.status, j.body, '', 'succeeded'
	FROM (
		SELECT id, args, json_type(metadata, '$.output') AS output,
			json_extract(metadata, '$.output.attempt') AS attempt,
			json_extract(metadata, '$.output.started_us') AS started_us,
			json_extract(metadata, '$.output.duration_us') AS duration_us,
			json_extract(metadata, '$.output.status') AS status,
			coalesce(json_extract(metadata, '$.output.body'), '') AS body
		FROM river_job WHERE id IN (` + completedJobs + `)
	) j
	JOIN webhook_endpoints w ON w.id = json_extract(j.args, '$.endpoint_id')
		AND w.client_id = json_extract(j.args, '$.client_id')
	JOIN events e ON e.id = json_extract(j.args, '$.event_id') AND e.client_id = w.client_id
	WHERE j.output = 'object'
		AND typeof(j.attempt) = 'integer' AND j.attempt >= 0
		AND typeof(j.started_us) = 'integer' AND j.started_us >= 0
		AND typeof(j.duration_us) = 'integer' AND j.duration_us >= 0
		AND typeof(j.status) = 'integer' AND j.status >= 0`
	archiveDeleteSQLite = `DELETE FROM river_job WHERE id IN (` + completedJobs + `)`
)

func (e *executor) WebhookAttemptsArchive(ctx context.Context, jobKind string, since time.Time, limit int) (int, error) {
	if e.drv.Name() == "postgres" {
		var n int
		err := e.conn.QueryRow(ctx, archivePostgres, jobKind, since.UTC(), limit).Scan(&n)
		return n, e.wrap("webhook attempt: archive", err)
	}
	// riversqlite keeps timestamps as UTC text in this layout, and
	// compares them as text.
	bound := since.UTC().Round(time.Millisecond).Format("2006-01-02 15:04:05.000")
	if _, err := e.conn.Exec(ctx, archiveSQLite, jobKind, bound, limit); err != nil {
		return 0, e.wrap("webhook attempt: archive", err)
	}
	n, err := e.conn.Exec(ctx, archiveDeleteSQLite, jobKind, bound, limit)
	return int(n), e.wrap("webhook attempt: archive", err)
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
