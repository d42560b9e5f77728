package sqlstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hitchdev/hitch/internal/store"
)

// Connectors

const connectorColumns = `id, name, secret_hash, created_at, revoked_at, merchant_ids, last_seen_at`

func scanConnector(row Row) (*store.Connector, error) {
	var c store.Connector
	var merchants *string
	if err := row.Scan(&c.ID, &c.Name, &c.SecretHash, timeDest{&c.CreatedAt}, nullTimeDest{&c.RevokedAt},
		&merchants, nullTimeDest{&c.LastSeenAt}); err != nil {
		return nil, err
	}
	if merchants != nil {
		ids, err := splitIDs(*merchants)
		if err != nil {
			return nil, err
		}
		c.MerchantIDs = ids
	}
	return &c, nil
}

// idsArg stores merchant ids comma-separated, with a comma at each end so
// that a query can look one up with LIKE '%,<id>,%'.
func idsArg(ids []int64) string {
	var b strings.Builder
	b.WriteByte(',')
	for _, id := range ids {
		b.WriteString(strconv.FormatInt(id, 10))
		b.WriteByte(',')
	}
	return b.String()
}

func splitIDs(s string) ([]int64, error) {
	ids := []int64{}
	for _, f := range strings.Split(strings.Trim(s, ","), ",") {
		if f == "" {
			continue
		}
		id, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("merchant ids %q: %w", s, err)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func (e *executor) ConnectorInsert(ctx context.Context, c *store.Connector) error {
	var merchants any
	if c.MerchantIDs != nil {
		merchants = idsArg(c.MerchantIDs)
	}
	_, err := e.conn.Exec(ctx, `INSERT INTO connectors (`+connectorColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		c.ID, c.Name, c.SecretHash, e.ts(c.CreatedAt), e.nullTs(c.RevokedAt), merchants, e.nullTs(c.LastSeenAt))
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

func (e *executor) ConnectorDeclare(ctx context.Context, id string, merchantIDs []int64, at time.Time) error {
	n, err := e.conn.Exec(ctx, `UPDATE connectors SET merchant_ids = $2, last_seen_at = $3 WHERE id = $1`,
		id, idsArg(merchantIDs), e.ts(at))
	if err != nil {
		return e.wrap("connector: declare", err)
	}
	if n == 0 {
		return fmt.Errorf("connector: declare: %w", store.ErrNotFound)
	}
	return nil
}

func (e *executor) ConnectorSeen(ctx context.Context, id string, at time.Time) error {
	_, err := e.conn.Exec(ctx, `UPDATE connectors SET last_seen_at = $2 WHERE id = $1`, id, e.ts(at))
	return e.wrap("connector: seen", err)
}
