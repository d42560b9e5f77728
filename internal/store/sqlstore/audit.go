package sqlstore

import (
	"context"

	"github.com/hitchdev/hitch/internal/store"
)

// Audit records

const auditColumns = `id, client_id, seq, created_at, action, outcome, actor_name, actor_email, target_type, target_name,
	environment, ip, user_agent, prev_hash, hash`

func scanAuditRecord(row Row) (*store.AuditRecord, error) {
	var r store.AuditRecord
	if err := row.Scan(&r.ID, &r.ClientID, &r.Seq, timeDest{&r.CreatedAt}, &r.Action, &r.Outcome, &r.ActorName, &r.ActorEmail,
		&r.TargetType, nullStringDest{&r.TargetName}, &r.Environment, &r.IP, &r.UserAgent, &r.PrevHash, &r.Hash); err != nil {
		return nil, err
	}
	return &r, nil
}

func (e *executor) ClientAuditSeqNext(ctx context.Context, clientID string) (int64, error) {
	var seq int64
	err := e.conn.QueryRow(ctx, `UPDATE clients SET audit_seq = audit_seq + 1 WHERE id = $1 RETURNING audit_seq`, clientID).Scan(&seq)
	if err != nil {
		return 0, e.wrap("audit: next seq", err)
	}
	return seq, nil
}

func (e *executor) ClientAuditSeq(ctx context.Context, clientID string) (int64, error) {
	var seq int64
	if err := e.conn.QueryRow(ctx, `SELECT audit_seq FROM clients WHERE id = $1`, clientID).Scan(&seq); err != nil {
		return 0, e.wrap("audit: seq", err)
	}
	return seq, nil
}

func (e *executor) AuditRecordInsert(ctx context.Context, r *store.AuditRecord) error {
	_, err := e.conn.Exec(ctx, `INSERT INTO audit_records (`+auditColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
		r.ID, r.ClientID, r.Seq, e.ts(r.CreatedAt), r.Action, r.Outcome, r.ActorName, r.ActorEmail, r.TargetType, r.TargetName,
		r.Environment, r.IP, r.UserAgent, r.PrevHash, r.Hash)
	return e.wrap("audit: insert", err)
}

func (e *executor) AuditRecordGetBySeq(ctx context.Context, clientID string, seq int64) (*store.AuditRecord, error) {
	r, err := scanAuditRecord(e.conn.QueryRow(ctx, `SELECT `+auditColumns+` FROM audit_records
		WHERE client_id = $1 AND seq = $2`, clientID, seq))
	if err != nil {
		return nil, e.wrap("audit: get by seq", err)
	}
	return r, nil
}

func (e *executor) AuditRecordList(ctx context.Context, p *store.AuditRecordListParams) ([]*store.AuditRecord, error) {
	q := newTenantQuery(e, `SELECT `+auditColumns+` FROM audit_records WHERE client_id = $1`, p.ClientID, p.Since, p.Until)
	if p.Before > 0 {
		q.WriteString(` AND seq < ` + q.arg(p.Before))
	}
	q.WriteString(` ORDER BY seq DESC LIMIT ` + q.arg(pageLimit(p.Limit)))
	rows, err := e.conn.Query(ctx, q.String(), q.args...)
	if err != nil {
		return nil, e.wrap("audit: list", err)
	}
	return collect(rows, scanAuditRecord, e, "audit: list")
}

func (e *executor) AuditRecordChain(ctx context.Context, clientID string, after int64, limit int) ([]*store.AuditRecord, error) {
	rows, err := e.conn.Query(ctx, `SELECT `+auditColumns+` FROM audit_records
		WHERE client_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, clientID, after, limit)
	if err != nil {
		return nil, e.wrap("audit: chain", err)
	}
	return collect(rows, scanAuditRecord, e, "audit: chain")
}
