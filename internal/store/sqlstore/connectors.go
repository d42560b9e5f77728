package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/hitchdev/hitch/internal/store"
)

// Connectors

const connectorColumns = `id, name, secret_hash, created_at, revoked_at`

func scanConnector(row Row) (*store.Connector, error) {
	var c store.Connector
	if err := row.Scan(&c.ID, &c.Name, &c.SecretHash, timeDest{&c.CreatedAt}, nullTimeDest{&c.RevokedAt}); err != nil {
		return nil, err
	}
	return &c, nil
}

func (e *executor) ConnectorInsert(ctx context.Context, c *store.Connector) error {
	_, err := e.conn.Exec(ctx, `INSERT INTO connectors (`+connectorColumns+`) VALUES ($1, $2, $3, $4, $5)`,
		c.ID, c.Name, c.SecretHash, e.ts(c.CreatedAt), e.nullTs(c.RevokedAt))
	return e.wrap("connector: insert", err)
}

func (e *executor) ConnectorGet(ctx context.Context, id string) (*store.Connector, error) {
	c, err := scanConnector(e.conn.QueryRow(ctx, `SELECT `+connectorColumns+` FROM connectors WHERE id = $1`, id))
	if err != nil {
		return nil, e.wrap("connector: get", err)
	}
	return c, nil
}

func (e *executor) ConnectorList(ctx context.Context) ([]*store.Connector, error) {
	rows, err := e.conn.Query(ctx, `SELECT `+connectorColumns+` FROM connectors ORDER BY created_at, id`)
	if err != nil {
		return nil, e.wrap("connector: list", err)
	}
	return collect(rows, scanConnector, e, "connector: list")
}

func (e *executor) ConnectorRevoke(ctx context.Context, id string, at time.Time) error {
	// COALESCE keeps the first revocation's time: revoking again is a no-op.
	n, err := e.conn.Exec(ctx, `UPDATE connectors SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1`, id, e.ts(at))
	if err != nil {
		return e.wrap("connector: revoke", err)
	}
	if n == 0 {
		return fmt.Errorf("connector: revoke: %w", store.ErrNotFound)
	}
	return nil
}
