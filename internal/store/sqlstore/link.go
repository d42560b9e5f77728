package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/hitchdev/hitch/internal/store"
)

// Link challenges

func (e *executor) LinkChallengeInsert(ctx context.Context, c *store.LinkChallenge) error {
	_, err := e.conn.Exec(ctx, `INSERT INTO link_challenges (id, client_id, session_id, expires_at, created_at)
		VALUES ($1, $2, $3, $4, $5)`, c.ID, c.ClientID, c.SessionID, e.ts(c.ExpiresAt), e.ts(c.CreatedAt))
	return e.wrap("link challenge: insert", err)
}

func (e *executor) LinkChallengeAttempt(ctx context.Context, clientID, id, sessionID string, max int, now time.Time) (int, error) {
	// One statement decides: concurrent answers each take their own count.
	var attempts int
	err := e.conn.QueryRow(ctx, `UPDATE link_challenges SET attempts = attempts + 1
		WHERE client_id = $1 AND id = $2 AND session_id = $3 AND NOT spent AND attempts < $4 AND expires_at > $5
		RETURNING attempts`, clientID, id, sessionID, max, e.ts(now)).Scan(&attempts)
	if err != nil {
		return 0, e.wrap("link challenge: attempt", err)
	}
	return attempts, nil
}

func (e *executor) LinkChallengeSpend(ctx context.Context, clientID, id string) (bool, error) {
	n, err := e.conn.Exec(ctx, `UPDATE link_challenges SET spent = TRUE WHERE client_id = $1 AND id = $2 AND NOT spent`,
		clientID, id)
	if err != nil {
		return false, fmt.Errorf("link challenge: spend: %w", err)
	}
	return n > 0, nil
}

// Failed logins per session

func (e *executor) SessionLoginFailureReserve(ctx context.Context, clientID, sessionID string, max int) (bool, error) {
	n, err := e.conn.Exec(ctx, `UPDATE sessions SET login_failures = login_failures + 1
		WHERE client_id = $1 AND id = $2 AND login_failures < $3`, clientID, sessionID, max)
	if err != nil {
		return false, fmt.Errorf("session: reserve login failure: %w", err)
	}
	return n > 0, nil
}

func (e *executor) SessionLoginFailureRelease(ctx context.Context, clientID, sessionID string) error {
	_, err := e.conn.Exec(ctx, `UPDATE sessions SET login_failures = login_failures - 1
		WHERE client_id = $1 AND id = $2 AND login_failures > 0`, clientID, sessionID)
	if err != nil {
		return fmt.Errorf("session: release login failure: %w", err)
	}
	return nil
}
