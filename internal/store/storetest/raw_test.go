package storetest_test

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// execRaw runs SQL on a native transaction, to test what the database itself
// enforces.
func execRaw(ctx context.Context, raw any, query string) error {
	switch tx := raw.(type) {
	case *sql.Tx:
		_, err := tx.ExecContext(ctx, query)
		return err
	case pgx.Tx:
		_, err := tx.Exec(ctx, query)
		return err
	default:
		return fmt.Errorf("unknown transaction type %T", raw)
	}
}
