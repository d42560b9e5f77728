package sqlstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/hitchdev/hitch/internal/store"
)

// DB is a store.Store over a dialect Driver.
type DB struct {
	executor
	drv        Driver
	migrations []migration
}

var _ store.Store = (*DB)(nil)

// New wraps an open driver. It does not migrate: call Migrate.
func New(drv Driver) (*DB, error) {
	migrations, err := loadMigrations(drv.Migrations())
	if err != nil {
		return nil, err
	}
	return &DB{executor: executor{conn: guard(drv), drv: drv}, drv: drv, migrations: migrations}, nil
}

func (db *DB) Dialect() string                { return db.drv.Name() }
func (db *DB) Ping(ctx context.Context) error { return db.drv.Ping(ctx) }

// Close closes the database's connections.
func (db *DB) Close() error { return db.drv.Close() }

// Native returns the dialect's own pool and schema (see Driver.Native).
func (db *DB) Native() (pool any, schema string) { return db.drv.Native() }

// InMigrationTx runs fn in a transaction that holds the migration lock, with
// the native transaction, so that another library's migrations (River's)
// are applied one node at a time too.
func (db *DB) InMigrationTx(ctx context.Context, fn func(rawTx any) error) error {
	tx, err := db.drv.Begin(ctx)
	if err != nil {
		return fmt.Errorf("migrate: begin: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // a no-op after Commit
	if lock := db.drv.MigrationLockSQL(); lock != "" {
		if _, err := tx.Exec(ctx, lock); err != nil {
			return fmt.Errorf("migrate: lock: %w", err)
		}
	}
	if err := fn(tx.Raw()); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// InTx runs fn in one database transaction (on SQLite, BEGIN IMMEDIATE on
// the writer connection). An error or a panic in fn rolls back; the panic
// goes on.
func (db *DB) InTx(ctx context.Context, fn func(store.Executor) error) (err error) {
	tx, err := db.drv.Begin(ctx)
	if err != nil {
		return db.wrap("store: begin", err)
	}
	committed := false
	defer func() {
		if !committed {
			if rbErr := tx.Rollback(context.WithoutCancel(ctx)); rbErr != nil && err != nil {
				err = errors.Join(err, fmt.Errorf("store: rollback: %w", rbErr))
			}
		}
	}()
	if err := fn(&TxExecutor{executor: executor{conn: guard(tx), drv: db.drv}, tx: tx}); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return db.wrap("store: commit", err)
	}
	committed = true
	return nil
}

// TxExecutor is the Executor handed to InTx callbacks.
type TxExecutor struct {
	executor
	tx Tx
}

// Raw returns the native transaction (*sql.Tx for SQLite, pgx.Tx for
// PostgreSQL) so that job inserts can join it.
func (t *TxExecutor) Raw() any { return t.tx.Raw() }
