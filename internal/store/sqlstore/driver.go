// Package sqlstore implements store.Store once, over a small connection seam
// that each SQL dialect (internal/store/sqlite, internal/store/postgres)
// provides with its own native driver, migrations and error codes.
//
// The queries are written in the SQL that SQLite (3.35+) and PostgreSQL share:
// $N placeholders, INSERT … ON CONFLICT, RETURNING. A query that needs the
// dialect's own SQL is asked of the Driver instead.
package sqlstore

import (
	"context"
	"io/fs"
	"time"
)

// Conn runs queries on a pool or on a transaction.
type Conn interface {
	// Exec runs a statement and reports the rows it affected.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	QueryRow(ctx context.Context, query string, args ...any) Row
}

// Rows is a result set being read.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Row is a single-row result.
type Row interface {
	Scan(dest ...any) error
}

// Tx is an open database transaction.
type Tx interface {
	Conn
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
	// Raw is the native transaction (*sql.Tx or pgx.Tx), for libraries such
	// as River that insert in the caller's transaction.
	Raw() any
}

// Copier is a transaction that can bulk-load rows (PostgreSQL's COPY).
type Copier interface {
	CopyFrom(ctx context.Context, table string, columns []string, rows [][]any) (int64, error)
}

// Driver is one dialect's open database.
type Driver interface {
	Conn
	Begin(ctx context.Context) (Tx, error)
	Name() string
	Ping(ctx context.Context) error
	Close() error

	// Time converts a timestamp argument to the dialect's representation
	// (SQLite keeps INTEGER Unix microseconds, PostgreSQL timestamptz).
	Time(t time.Time) any

	// IsNoRows reports whether err means a single-row query found nothing.
	IsNoRows(err error) bool
	// IsUniqueViolation reports whether err is a unique constraint failure.
	IsUniqueViolation(err error) bool
	// IsUnavailable reports whether err means the database cannot be
	// reached or cannot serve for now (store.ErrUnavailable); a canceled or
	// timed-out context is not.
	IsUnavailable(err error) bool

	// Migrations holds the dialect's numbered NNNN_name.up.sql files.
	Migrations() fs.FS
	// Native is the dialect's own pool, for libraries that keep their
	// tables in the same database (River): SQLite's writer *sql.DB or a
	// *pgxpool.Pool, with the PostgreSQL schema in use ("" for the default).
	Native() (pool any, schema string)

	// TextSet is the SQL of "is one of the strings bound to placeholder",
	// to follow a column name, and TextSetArg binds the strings: one
	// parameter whatever their number, so that the statement stays the
	// same and its plan an index probe per string.
	TextSet(placeholder string) string
	TextSetArg(items []string) any

	// MigrationLockSQL is run at the start of each migration transaction so
	// that nodes starting together apply migrations one at a time ("" when
	// the transaction itself already serializes writers).
	MigrationLockSQL() string

	// AnalyzeSQL refreshes the planner's statistics of the store's tables,
	// run once migrations have changed the schema ("" when the dialect's
	// planner needs none).
	AnalyzeSQL() string
}
