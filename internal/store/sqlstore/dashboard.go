package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hitchdev/hitch/internal/store"
)

// Members

const memberColumns = `id, client_id, email, name, role, password_hash, failed_attempts, locked_until, must_change_password,
	created_at, updated_at`

// memberDests are a member's scan destinations, in memberColumns' order.
func memberDests(m *store.Member) []any {
	return []any{&m.ID, &m.ClientID, &m.Email, &m.Name, &m.Role, &m.PasswordHash, &m.FailedAttempts,
		nullTimeDest{&m.LockedUntil}, &m.MustChangePassword, timeDest{&m.CreatedAt}, timeDest{&m.UpdatedAt}}
}

func scanMember(row Row) (*store.Member, error) {
	var m store.Member
	if err := row.Scan(memberDests(&m)...); err != nil {
		return nil, err
	}
	return &m, nil
}

func (e *executor) MemberInsert(ctx context.Context, m *store.Member) error {
	_, err := e.conn.Exec(ctx, `INSERT INTO members (`+memberColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		m.ID, m.ClientID, m.Email, m.Name, m.Role, m.PasswordHash, m.FailedAttempts, e.nullTs(m.LockedUntil),
		m.MustChangePassword, e.ts(m.CreatedAt), e.ts(m.UpdatedAt))
	return e.wrap("member: insert", err)
}

// MemberListByEmail is served by the (email, client_id) unique index.
func (e *executor) MemberListByEmail(ctx context.Context, p *store.MemberListByEmailParams) ([]*store.Member, error) {
	q := `SELECT ` + memberColumns + ` FROM members WHERE email = $1 AND ($2 = '' OR client_id = $2) ORDER BY created_at, id`
	args := []any{p.Email, p.ClientID}
	if p.Limit > 0 {
		q += ` LIMIT $3`
		args = append(args, p.Limit)
	}
	rows, err := e.conn.Query(ctx, q, args...)
	if err != nil {
		return nil, e.wrap("member: list by email", err)
	}
	return collect(rows, scanMember, e, "member: list by email")
}

func (e *executor) MemberGet(ctx context.Context, clientID, id string) (*store.Member, error) {
	m, err := scanMember(e.conn.QueryRow(ctx, `SELECT `+memberColumns+` FROM members WHERE client_id = $1 AND id = $2`, clientID, id))
	if err != nil {
		return nil, e.wrap("member: get", err)
	}
	return m, nil
}

func (e *executor) MemberList(ctx context.Context, clientID string) ([]*store.Member, error) {
	rows, err := e.conn.Query(ctx, `SELECT `+memberColumns+` FROM members WHERE client_id = $1 ORDER BY created_at, id`, clientID)
	if err != nil {
		return nil, e.wrap("member: list", err)
	}
	return collect(rows, scanMember, e, "member: list")
}

// affected turns "no row changed" into ErrNotFound.
func (e *executor) affected(op string, n int64, err error) error {
	if err != nil {
		return e.wrap(op, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", op, store.ErrNotFound)
	}
	return nil
}

func (e *executor) MemberDelete(ctx context.Context, clientID, id string) error {
	n, err := e.conn.Exec(ctx, `DELETE FROM members WHERE client_id = $1 AND id = $2`, clientID, id)
	return e.affected("member: delete", n, err)
}

func (e *executor) MemberSetRole(ctx context.Context, clientID, id, role string, now time.Time) error {
	n, err := e.conn.Exec(ctx, `UPDATE members SET role = $3, updated_at = $4 WHERE client_id = $1 AND id = $2`,
		clientID, id, role, e.ts(now))
	return e.affected("member: set role", n, err)
}

func (e *executor) MemberSetPassword(ctx context.Context, clientID, id, passwordHash string, mustChange bool, now time.Time) error {
	n, err := e.conn.Exec(ctx, `UPDATE members SET password_hash = $3, must_change_password = $4, updated_at = $5
		WHERE client_id = $1 AND id = $2`, clientID, id, passwordHash, mustChange, e.ts(now))
	return e.affected("member: set password", n, err)
}

func (e *executor) MemberCountAdmins(ctx context.Context, clientID string) (int, error) {
	var n int
	err := e.conn.QueryRow(ctx, `SELECT COUNT(*) FROM members WHERE client_id = $1 AND role = 'admin'`, clientID).Scan(&n)
	return n, e.wrap("member: count admins", err)
}

// The lock is decided in the database, by conditional updates: a failure
// or a success that reads a stale member (a password hash takes tens of
// milliseconds) cannot overshoot the lock or sign in through it. On
// PostgreSQL an UPDATE that waited for a concurrent one re-checks its WHERE
// on the row as committed; SQLite runs one writer at a time.

func (e *executor) MemberRecordFailure(ctx context.Context, clientID, id string, maxFailures int, lockedUntil, now time.Time) (bool, error) {
	var failures int
	err := e.conn.QueryRow(ctx, `UPDATE members SET
			failed_attempts = CASE WHEN failed_attempts + 1 >= $3 THEN 0 ELSE failed_attempts + 1 END,
			locked_until = CASE WHEN failed_attempts + 1 >= $3 THEN $4 ELSE locked_until END,
			updated_at = $5
		WHERE client_id = $1 AND id = $2 AND (locked_until IS NULL OR locked_until <= $5)
		RETURNING failed_attempts`,
		clientID, id, maxFailures, e.ts(lockedUntil), e.ts(now)).Scan(&failures)
	if err != nil {
		if err := e.wrap("member: record failure", err); !errors.Is(err, store.ErrNotFound) {
			return false, err
		}
		return true, e.memberExists(ctx, clientID, id, "member: record failure")
	}
	return failures == 0, nil // the count starts again only at a lock
}

func (e *executor) MemberResetFailures(ctx context.Context, clientID, id string, now time.Time) (bool, error) {
	n, err := e.conn.Exec(ctx, `UPDATE members SET failed_attempts = 0, locked_until = NULL, updated_at = $3
		WHERE client_id = $1 AND id = $2 AND (locked_until IS NULL OR locked_until <= $3)`, clientID, id, e.ts(now))
	if err != nil {
		return false, e.wrap("member: reset failures", err)
	}
	if n == 0 {
		return true, e.memberExists(ctx, clientID, id, "member: reset failures")
	}
	return false, nil
}

// memberExists tells a conditional update that matched nothing because the
// member is locked from one whose member is gone (ErrNotFound).
func (e *executor) memberExists(ctx context.Context, clientID, id, op string) error {
	var one int
	err := e.conn.QueryRow(ctx, `SELECT 1 FROM members WHERE client_id = $1 AND id = $2`, clientID, id).Scan(&one)
	return e.wrap(op, err)
}

// Dashboard sessions

func (e *executor) DashboardSessionInsert(ctx context.Context, s *store.DashboardSession) error {
	_, err := e.conn.Exec(ctx, `INSERT INTO dashboard_sessions (id, client_id, member_id, token_hash, created_at, last_seen_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		s.ID, s.ClientID, s.MemberID, s.TokenHash, e.ts(s.CreatedAt), e.ts(s.LastSeenAt), e.ts(s.ExpiresAt))
	return e.wrap("dashboard session: insert", err)
}

func (e *executor) DashboardSessionGetByTokenHash(ctx context.Context, tokenHash []byte) (*store.DashboardSession, *store.Member, error) {
	var s store.DashboardSession
	var m store.Member
	err := e.conn.QueryRow(ctx, `SELECT s.id, s.client_id, s.member_id, s.token_hash, s.created_at, s.last_seen_at, s.expires_at,
			m.id, m.client_id, m.email, m.name, m.role, m.password_hash, m.failed_attempts, m.locked_until,
			m.must_change_password, m.created_at, m.updated_at
		FROM dashboard_sessions s JOIN members m ON m.id = s.member_id AND m.client_id = s.client_id
		WHERE s.token_hash = $1`, tokenHash).Scan(append([]any{
		&s.ID, &s.ClientID, &s.MemberID, &s.TokenHash, timeDest{&s.CreatedAt}, timeDest{&s.LastSeenAt}, timeDest{&s.ExpiresAt}},
		memberDests(&m)...)...)
	if err != nil {
		return nil, nil, e.wrap("dashboard session: get by token hash", err)
	}
	return &s, &m, nil
}

func (e *executor) DashboardSessionTouch(ctx context.Context, clientID, id string, now time.Time) error {
	n, err := e.conn.Exec(ctx, `UPDATE dashboard_sessions SET last_seen_at = $3 WHERE client_id = $1 AND id = $2`,
		clientID, id, e.ts(now))
	return e.affected("dashboard session: touch", n, err)
}

func (e *executor) DashboardSessionDelete(ctx context.Context, clientID, id string) error {
	n, err := e.conn.Exec(ctx, `DELETE FROM dashboard_sessions WHERE client_id = $1 AND id = $2`, clientID, id)
	return e.affected("dashboard session: delete", n, err)
}

func (e *executor) DashboardSessionDeleteExpired(ctx context.Context, now, idleBefore time.Time) (int64, error) {
	n, err := e.conn.Exec(ctx, `DELETE FROM dashboard_sessions WHERE expires_at <= $1 OR last_seen_at < $2`,
		e.ts(now), e.ts(idleBefore))
	return n, e.wrap("dashboard session: delete expired", err)
}

func (e *executor) DashboardSessionDeleteMember(ctx context.Context, clientID, memberID string) (int64, error) {
	n, err := e.conn.Exec(ctx, `DELETE FROM dashboard_sessions WHERE client_id = $1 AND member_id = $2`, clientID, memberID)
	return n, e.wrap("dashboard session: delete member", err)
}

func (e *executor) DashboardSessionDeleteOthers(ctx context.Context, clientID, memberID, keepID string) (int64, error) {
	n, err := e.conn.Exec(ctx, `DELETE FROM dashboard_sessions WHERE client_id = $1 AND member_id = $2 AND id <> $3`,
		clientID, memberID, keepID)
	return n, e.wrap("dashboard session: delete others", err)
}

// Hidden merchants

func (e *executor) MerchantHide(ctx context.Context, clientID string, merchantID int64, now time.Time) error {
	_, err := e.conn.Exec(ctx, `INSERT INTO hidden_merchants (client_id, merchant_id, hidden_at) VALUES ($1, $2, $3)
		ON CONFLICT (client_id, merchant_id) DO NOTHING`, clientID, merchantID, e.ts(now))
	return e.wrap("merchant: hide", err)
}

func (e *executor) MerchantShow(ctx context.Context, clientID string, merchantID int64) error {
	_, err := e.conn.Exec(ctx, `DELETE FROM hidden_merchants WHERE client_id = $1 AND merchant_id = $2`, clientID, merchantID)
	return e.wrap("merchant: show", err)
}

func (e *executor) MerchantHiddenList(ctx context.Context, clientID string) (map[int64]bool, error) {
	rows, err := e.conn.Query(ctx, `SELECT merchant_id FROM hidden_merchants WHERE client_id = $1`, clientID)
	if err != nil {
		return nil, e.wrap("merchant: list hidden", err)
	}
	defer rows.Close()
	out := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, e.wrap("merchant: list hidden", err)
		}
		out[id] = true
	}
	return out, e.wrap("merchant: list hidden", rows.Err())
}

// Users

func (e *executor) UserList(ctx context.Context, p *store.UserListParams) ([]*store.User, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 50
	}
	// The prefix is compared with substr, not LIKE: nothing to escape, and
	// no range bounds that a PostgreSQL collation could order differently.
	args := []any{p.ClientID, p.After, limit}
	q := `SELECT ` + userColumns + ` FROM users WHERE client_id = $1 AND external_user_id > $2`
	if p.Prefix != "" {
		args = append(args, p.Prefix)
		q += ` AND substr(external_user_id, 1, length(CAST($4 AS TEXT))) = CAST($4 AS TEXT)`
	}
	rows, err := e.conn.Query(ctx, q+` ORDER BY external_user_id LIMIT $3`, args...)
	if err != nil {
		return nil, e.wrap("user: list", err)
	}
	return collect(rows, scanUser, e, "user: list")
}
