// Package postgres is Hitch's store for multi-node deployments, on
// PostgreSQL through pgx/v5.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hitchdev/hitch/internal/store/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Options tune the pool. The zero value uses pgx's defaults.
type Options struct {
	// Schema, when set, becomes the connections' search_path (tests run
	// each in its own schema).
	Schema string
	// MaxConns caps the pool unless the URL sets pool_max_conns (default:
	// 8 per CPU, at least 32). The API holds a connection only for the
	// length of a query, and webhook workers share the pool, so a pool a
	// few times the CPU count keeps requests from queueing on it.
	MaxConns int32
}

// Open connects to the database at url.
func Open(ctx context.Context, url string, opts Options) (*sqlstore.DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's message can include the password; name the setting only.
		return nil, errors.New("postgres: invalid database URL")
	}
	if opts.Schema != "" {
		cfg.ConnConfig.RuntimeParams["search_path"] = opts.Schema
	}
	// The URL's pool_max_conns wins; then Options; then a default that
	// leaves room for the webhook workers beside the API: with 200 workers
	// and 16 connections on 2 CPUs, the API lost 2-39% of its throughput
	// while a backlog drained (bench/webhooks, median 19%, a third of the
	// runs above 25%); with 32, 11-16% in four runs.
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = max(32, 8*int32(runtime.GOMAXPROCS(0)))
		if opts.MaxConns > 0 {
			cfg.MaxConns = opts.MaxConns
		}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	d := &driver{pool: pool, schema: opts.Schema}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: ping: %w", err)
	}
	return sqlstore.New(d)
}

type driver struct {
	pool   *pgxpool.Pool
	schema string
}

func (d *driver) Native() (any, string) { return d.pool, d.schema }

func (d *driver) Name() string                   { return "postgres" }
func (d *driver) Ping(ctx context.Context) error { return d.pool.Ping(ctx) }
func (d *driver) Close() error                   { d.pool.Close(); return nil }

func (d *driver) Migrations() fs.FS {
	sub, _ := fs.Sub(migrations, "migrations")
	return sub
}

// TextSet is "= ANY(array)": an index condition on a btree.
func (d *driver) TextSet(placeholder string) string { return " = ANY(" + placeholder + "::text[])" }

func (d *driver) TextSetArg(items []string) any { return items }

// MigrationLockSQL serializes migrations across nodes with a transaction
// advisory lock (released at commit). The key is arbitrary but fixed.
func (d *driver) MigrationLockSQL() string { return `SELECT pg_advisory_xact_lock(4818237262)` }

// AnalyzeSQL analyzes every table of the schema in use.
func (d *driver) AnalyzeSQL() string {
	return `DO $$
DECLARE t text;
BEGIN
    FOR t IN SELECT format('%I.%I', schemaname, tablename) FROM pg_tables WHERE schemaname = current_schema() LOOP
        EXECUTE 'ANALYZE ' || t;
    END LOOP;
END
$$`
}

// Time passes timestamps as they are: the columns are timestamptz.
func (d *driver) Time(t time.Time) any { return t.UTC() }

func (d *driver) IsNoRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }

func (d *driver) IsUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}

// IsUnavailable: no connection could be made, the connection broke, or
// the server refuses to serve for now (connection exceptions, shutting
// down or starting, too many connections).
func (d *driver) IsUnavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "57P01", "57P02", "57P03", "53300": // admin/crash shutdown, cannot connect now, too many connections
			return true
		}
		return strings.HasPrefix(pgErr.Code, "08") // connection exception
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || errors.As(err, &netErr) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) || pgconn.SafeToRetry(err)
}

func (d *driver) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := d.pool.Exec(ctx, query, args...)
	return tag.RowsAffected(), err
}

func (d *driver) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	return d.pool.Query(ctx, query, args...)
}

func (d *driver) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return d.pool.QueryRow(ctx, query, args...)
}

func (d *driver) Begin(ctx context.Context) (sqlstore.Tx, error) {
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return pgTx{tx}, nil
}

type pgTx struct{ tx pgx.Tx }

func (t pgTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := t.tx.Exec(ctx, query, args...)
	return tag.RowsAffected(), err
}

func (t pgTx) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	return t.tx.Query(ctx, query, args...)
}

func (t pgTx) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return t.tx.QueryRow(ctx, query, args...)
}

func (t pgTx) Commit(ctx context.Context) error { return t.tx.Commit(ctx) }

func (t pgTx) Rollback(ctx context.Context) error {
	if err := t.tx.Rollback(ctx); err != nil && !errors.Is(err, pgx.ErrTxClosed) {
		return err
	}
	return nil
}

func (t pgTx) Raw() any { return t.tx }

// CopyFrom writes rows into table with COPY, which PostgreSQL takes in far
// less time than the same rows as INSERT statements.
func (t pgTx) CopyFrom(ctx context.Context, table string, columns []string, rows [][]any) (int64, error) {
	return t.tx.CopyFrom(ctx, pgx.Identifier{table}, columns, pgx.CopyFromRows(rows))
}
