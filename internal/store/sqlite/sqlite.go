// Package sqlite is Hitch's embedded store: a single SQLite file in WAL mode
// through the pure-Go modernc.org/sqlite driver, with one writer connection
// and a pool of read-only connections.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/hitchdev/hitch/internal/store/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Open opens (creating if needed) the database file at path.
func Open(ctx context.Context, path string) (*sqlstore.DB, error) {
	d, err := open(ctx, path)
	if err != nil {
		return nil, err
	}
	db, err := sqlstore.New(d)
	if err != nil {
		d.Close()
		return nil, err
	}
	return db, nil
}

// open opens the driver of Open.
func open(ctx context.Context, path string) (*driver, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("sqlite: create directory: %w", err)
		}
	}
	// Create the file readable by its owner only; SQLite gives the -wal and
	// -shm files the database file's mode.
	if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		f.Close()
	} else if !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("sqlite: create database file: %w", err)
	}
	// Ordinary SQLite settings for a server, no more: WAL, so that reads run
	// beside the one writer (SQLite checkpoints it by itself); a busy
	// timeout, so that a writer in another process waits instead of failing;
	// one writer connection that takes the lock at BEGIN; query_only readers.
	pragmas := url.Values{}
	for _, p := range []string{
		"journal_mode(WAL)",
		"busy_timeout(10000)",
		"foreign_keys(1)",
		"synchronous(NORMAL)", // durable in WAL mode except for the last commits on power loss
	} {
		pragmas.Add("_pragma", p)
	}

	writerQuery := cloneValues(pragmas)
	writerQuery.Set("_txlock", "immediate") // take the write lock at BEGIN, not on first write
	writer := sql.OpenDB(&connector{dsn: "file:" + uriPath(path) + "?" + writerQuery.Encode()})
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	writer.SetConnMaxIdleTime(0)

	readerQuery := cloneValues(pragmas)
	readerQuery.Add("_pragma", "query_only(1)")
	reader := sql.OpenDB(&connector{dsn: "file:" + uriPath(path) + "?" + readerQuery.Encode()})
	readers := max(4, runtime.GOMAXPROCS(0))
	reader.SetMaxOpenConns(readers)
	reader.SetMaxIdleConns(readers)
	reader.SetConnMaxIdleTime(0)

	d := &driver{writer: writer, reader: reader}
	// Open the writer first so that WAL mode is set before readers attach.
	if err := d.Ping(ctx); err != nil {
		d.Close()
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return d, nil
}

// uriPath escapes a file name for SQLite's file: URI, in which '?' starts
// the parameters, '#' a fragment and '%' an escape.
func uriPath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

type driver struct {
	writer *sql.DB // one connection: SQLite has one writer at a time
	reader *sql.DB // query_only connections for reads outside transactions
}

func (d *driver) Name() string { return "sqlite" }

func (d *driver) Ping(ctx context.Context) error {
	if err := d.writer.PingContext(ctx); err != nil {
		return err
	}
	return d.reader.PingContext(ctx)
}

func (d *driver) Close() error {
	return errors.Join(d.reader.Close(), d.writer.Close())
}

func (d *driver) Migrations() fs.FS {
	sub, _ := fs.Sub(migrations, "migrations")
	return sub
}

func (d *driver) MigrationLockSQL() string { return "" }

// AnalyzeSQL is empty: without statistics SQLite's planner already looks
// rows up by the unique and leading index columns the queries name, and
// statistics gathered on a young database would mislead it later.
func (d *driver) AnalyzeSQL() string { return "" }

// TextSet reads the strings from a JSON array: SQLite probes the index once
// per element of an IN subquery.
func (d *driver) TextSet(placeholder string) string {
	return " IN (SELECT value FROM json_each(" + placeholder + "))"
}

func (d *driver) TextSetArg(items []string) any {
	b, _ := json.Marshal(items)
	return string(b)
}

// Native is the writer: River writes on every fetch, and SQLite has one
// writer at a time.
func (d *driver) Native() (any, string) { return d.writer, "" }

// Time keeps timestamps as INTEGER Unix microseconds: they compare as
// numbers and read back without parsing (parsing text timestamps was a
// fifth of the CPU of listing accounts).
func (d *driver) Time(t time.Time) any { return t.UnixMicro() }

func (d *driver) IsNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// IsUnavailable: the file stayed locked by another process (a long
// transaction in the sqlite3 shell, a backup tool) past the busy timeout.
// Other file errors (unreadable, disk full, corrupt) do not pass by
// themselves and stay faults.
func (d *driver) IsUnavailable(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return true
	}
	return false
}

func (d *driver) IsUniqueViolation(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	return se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

// isRead tells plain reads, which go to the reader pool, from everything
// else (including INSERT … RETURNING), which goes to the writer.
func isRead(query string) bool {
	q := strings.TrimSpace(query)
	return len(q) >= 6 && strings.EqualFold(q[:6], "SELECT")
}

func (d *driver) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	return execResult(d.writer.ExecContext(ctx, query, args...))
}

func (d *driver) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	db := d.writer
	if isRead(query) {
		db = d.reader
	}
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

func (d *driver) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	if isRead(query) {
		return d.reader.QueryRowContext(ctx, query, args...)
	}
	return d.writer.QueryRowContext(ctx, query, args...)
}

func (d *driver) Begin(ctx context.Context) (sqlstore.Tx, error) {
	tx, err := d.writer.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return &sqlTx{tx: tx}, nil
}

type sqlTx struct{ tx *sql.Tx }

func (t *sqlTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	return execResult(t.tx.ExecContext(ctx, query, args...))
}

func (t *sqlTx) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	rows, err := t.tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

func (t *sqlTx) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return t.tx.QueryRowContext(ctx, query, args...)
}

func (t *sqlTx) Commit(context.Context) error { return t.tx.Commit() }

func (t *sqlTx) Rollback(context.Context) error {
	if err := t.tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		return err
	}
	return nil
}

func (t *sqlTx) Raw() any { return t.tx }

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { _ = r.Rows.Close() }

func execResult(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
