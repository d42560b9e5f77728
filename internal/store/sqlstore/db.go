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
	// group commits concurrent transactions together on a single writer
	// (nil otherwise).
	group *grouper
}

var _ store.Store = (*DB)(nil)

// New wraps an open driver. It does not migrate: call Migrate.
func New(drv Driver) (*DB, error) {
	migrations, err := loadMigrations(drv.Migrations())
	if err != nil {
		return nil, err
	}
	db := &DB{executor: executor{conn: drv, drv: drv}, drv: drv, migrations: migrations}
	if _, ok := drv.(SingleWriter); ok {
		db.group = newGrouper(drv)
	}
	return db, nil
}

func (db *DB) Dialect() string                { return db.drv.Name() }
func (db *DB) Ping(ctx context.Context) error { return db.drv.Ping(ctx) }

// Close refuses new transactions, waits for those queued to run, and
// closes the database.
func (db *DB) Close() error {
	if db.group != nil {
		db.group.close()
	}
	return db.drv.Close()
}

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

// InTx runs fn in a transaction. A panic in fn rolls back and re-panics.
// On a single writer, concurrent calls commit in groups (see grouper).
func (db *DB) InTx(ctx context.Context, fn func(store.Executor) error) (err error) {
	if db.group != nil {
		return db.group.inTx(ctx, fn)
	}
	tx, err := db.drv.Begin(ctx)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			if rbErr := tx.Rollback(context.WithoutCancel(ctx)); rbErr != nil && err != nil {
				err = errors.Join(err, fmt.Errorf("store: rollback: %w", rbErr))
			}
		}
	}()
	ex := &TxExecutor{executor: executor{conn: tx, drv: db.drv}, tx: tx}
	if err := fn(ex); err != nil {
		return err
	}
	if err := flushDeferred(ctx, tx, ex.deferred); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	committed = true
	return nil
}

// TxExecutor is the Executor handed to InTx callbacks.
type TxExecutor struct {
	executor
	tx       Tx
	deferred []deferred
}

// deferred is an item of work left for the end of a transaction.
type deferred struct {
	key   any
	item  any
	flush func(ctx context.Context, rawTx any, items []any) error
}

// BeforeCommit leaves item to the end of the transaction: just before it
// commits, flush runs once for each key, in the native transaction (see
// Raw), with the items of that key in the order they were left. On a
// single writer the transaction is a group's, so one flush serves every
// call of the group: River's job inserts, one statement per group instead
// of one per call. The items of a call that fails are dropped with its
// writes; a flush that fails fails the whole transaction.
func (t *TxExecutor) BeforeCommit(key, item any, flush func(ctx context.Context, rawTx any, items []any) error) {
	t.deferred = append(t.deferred, deferred{key: key, item: item, flush: flush})
}

// flushDeferred runs the flushes of ds in tx, each key once, in the order
// keys first appear. A panic in a flush is returned as an error: on a
// single writer it runs on the grouper's goroutine.
func flushDeferred(ctx context.Context, tx Tx, ds []deferred) (err error) {
	if len(ds) == 0 {
		return nil
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("store: before commit: panic: %v", p)
		}
	}()
	var keys []any
	items := map[any][]any{}
	flushes := map[any]func(context.Context, any, []any) error{}
	for _, d := range ds {
		if _, ok := flushes[d.key]; !ok {
			keys = append(keys, d.key)
			flushes[d.key] = d.flush
		}
		items[d.key] = append(items[d.key], d.item)
	}
	for _, k := range keys {
		if err := flushes[k](ctx, tx.Raw(), items[k]); err != nil {
			return fmt.Errorf("store: before commit: %w", err)
		}
	}
	return nil
}

// Raw returns the native transaction (*sql.Tx for SQLite, pgx.Tx for
// PostgreSQL) so that job inserts can join it.
func (t *TxExecutor) Raw() any { return t.tx.Raw() }
