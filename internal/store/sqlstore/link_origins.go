package sqlstore

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/hitchdev/hitch/internal/store"
)

// Allowed origins of the link flow: one row per developer with the whole
// list (listArg's comma-separated form), so that a replacement is a single
// upsert and two concurrent ones never merge.

func (e *executor) LinkOriginList(ctx context.Context, clientID string) ([]string, error) {
	var list string
	err := e.conn.QueryRow(ctx, `SELECT origins FROM link_origins WHERE client_id = $1`, clientID).Scan(&list)
	if err := e.wrap("link origin: list", err); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return []string{}, nil
		}
		return nil, err
	}
	origins := splitList(list)
	slices.Sort(origins)
	return origins, nil
}

func (e *executor) LinkOriginSet(ctx context.Context, clientID string, origins []string, now time.Time) error {
	if len(origins) == 0 {
		_, err := e.conn.Exec(ctx, `DELETE FROM link_origins WHERE client_id = $1`, clientID)
		return e.wrap("link origin: set", err)
	}
	sorted := slices.Clone(origins)
	slices.Sort(sorted)
	list, err := listArg(slices.Compact(sorted))
	if err != nil {
		return e.wrap("link origin: set", err)
	}
	_, err = e.conn.Exec(ctx, `INSERT INTO link_origins (client_id, origins, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (client_id) DO UPDATE SET origins = excluded.origins, updated_at = excluded.updated_at`,
		clientID, list, e.ts(now))
	return e.wrap("link origin: set", err)
}
