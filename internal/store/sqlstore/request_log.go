package sqlstore

import (
	"context"
	"strings"
	"time"

	"github.com/hitchdev/hitch/internal/store"
)

// Request log

const requestLogColumns = `id, client_id, request_id, created_at, method, path, query, status, error_code, latency_us,
	ip, external_user_id, request_body, response_body`

func scanRequestLog(row Row) (*store.RequestLog, error) {
	var l store.RequestLog
	var latency int64
	if err := row.Scan(&l.ID, &l.ClientID, &l.RequestID, timeDest{&l.CreatedAt}, &l.Method, &l.Path, &l.Query, &l.Status,
		&l.ErrorCode, &latency, &l.IP, &l.ExternalUserID, &l.RequestBody, &l.ResponseBody); err != nil {
		return nil, err
	}
	l.Latency = time.Duration(latency) * time.Microsecond
	return &l, nil
}

func (e *executor) RequestLogInsert(ctx context.Context, entries []*store.RequestLog) error {
	if len(entries) == 0 {
		return nil
	}
	var q tenantQuery
	q.WriteString(`INSERT INTO request_logs (client_id, request_id, created_at, method, path, query, status, error_code,
		latency_us, ip, external_user_id, request_body, response_body) VALUES `)
	for i, l := range entries {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(" + strings.Join([]string{q.arg(l.ClientID), q.arg(l.RequestID), q.arg(e.ts(l.CreatedAt)),
			q.arg(l.Method), q.arg(l.Path), q.arg(l.Query), q.arg(l.Status), q.arg(l.ErrorCode),
			q.arg(l.Latency.Microseconds()), q.arg(l.IP), q.arg(l.ExternalUserID), q.arg(l.RequestBody),
			q.arg(l.ResponseBody)}, ", ") + ")")
	}
	_, err := e.conn.Exec(ctx, q.String(), q.args...)
	return e.wrap("request log: insert", err)
}

func (e *executor) RequestLogGet(ctx context.Context, clientID, requestID string) (*store.RequestLog, error) {
	l, err := scanRequestLog(e.conn.QueryRow(ctx, `SELECT `+requestLogColumns+` FROM request_logs
		WHERE client_id = $1 AND request_id = $2 ORDER BY id DESC LIMIT 1`, clientID, requestID))
	if err != nil {
		return nil, e.wrap("request log: get", err)
	}
	return l, nil
}

func (e *executor) RequestLogList(ctx context.Context, p *store.RequestLogListParams) ([]*store.RequestLog, error) {
	q := newTenantQuery(e, `SELECT `+requestLogColumns+` FROM request_logs WHERE client_id = $1`, p.ClientID, nil, nil)
	if p.RequestID != "" {
		q.WriteString(` AND request_id = ` + q.arg(p.RequestID))
	}
	if p.StatusClass > 0 {
		q.WriteString(` AND status >= ` + q.arg(p.StatusClass*100) + ` AND status < ` + q.arg(p.StatusClass*100+100))
	}
	if p.PathPrefix != "" {
		// substr counts characters in both dialects.
		q.WriteString(` AND substr(path, 1, ` + q.arg(len([]rune(p.PathPrefix))) + `) = ` + q.arg(p.PathPrefix))
	}
	if p.ErrorCode != "" {
		q.WriteString(` AND error_code = ` + q.arg(p.ErrorCode))
	}
	if p.ExternalUserID != "" {
		q.WriteString(` AND external_user_id = ` + q.arg(p.ExternalUserID))
	}
	if p.Before > 0 {
		q.WriteString(` AND id < ` + q.arg(p.Before))
	}
	q.WriteString(` ORDER BY id DESC LIMIT ` + q.arg(pageLimit(p.Limit)))
	rows, err := e.conn.Query(ctx, q.String(), q.args...)
	if err != nil {
		return nil, e.wrap("request log: list", err)
	}
	return collect(rows, scanRequestLog, e, "request log: list")
}

func (e *executor) RequestLogDeleteBefore(ctx context.Context, before time.Time, limit int) (int64, error) {
	n, err := e.conn.Exec(ctx, `DELETE FROM request_logs WHERE id IN (
		SELECT id FROM request_logs WHERE created_at < $1 ORDER BY created_at LIMIT $2)`, e.ts(before), limit)
	if err != nil {
		return 0, e.wrap("request log: delete before", err)
	}
	return n, nil
}

// RequestLogCounts sums every span in one pass over the developer's rows
// of the window (request_logs_client_created), exactly, however many there
// are: the spans' bounds are parameters, so the SQL is the same in both
// dialects, which keep time differently.
func (e *executor) RequestLogCounts(ctx context.Context, clientID string, bounds []time.Time) ([]store.RequestCount, error) {
	if len(bounds) < 2 {
		return nil, nil
	}
	q := tenantQuery{args: []any{clientID}}
	params := make([]string, len(bounds))
	for i, b := range bounds {
		params[i] = q.arg(e.ts(b))
	}
	q.WriteString("SELECT ")
	for i := range len(bounds) - 1 {
		if i > 0 {
			q.WriteString(", ")
		}
		in := "created_at >= " + params[i] + " AND created_at < " + params[i+1]
		q.WriteString("COALESCE(SUM(CASE WHEN " + in + " THEN 1 ELSE 0 END), 0), " +
			"COALESCE(SUM(CASE WHEN " + in + " AND status >= 400 THEN 1 ELSE 0 END), 0)")
	}
	q.WriteString(" FROM request_logs WHERE client_id = $1 AND created_at >= " + params[0] +
		" AND created_at < " + params[len(params)-1])
	counts := make([]store.RequestCount, len(bounds)-1)
	dest := make([]any, 0, 2*len(counts))
	for i := range counts {
		dest = append(dest, &counts[i].Requests, &counts[i].Errors)
	}
	if err := e.conn.QueryRow(ctx, q.String(), q.args...).Scan(dest...); err != nil {
		return nil, e.wrap("request log: counts", err)
	}
	return counts, nil
}
