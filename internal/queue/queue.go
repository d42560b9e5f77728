// Package queue runs Hitch's background jobs on River, on whichever store is
// configured: River's SQLite driver over the store's writer connection, or
// its pgx driver over the store's pool. Jobs are inserted in the caller's
// store transaction (InsertTx), so a job exists if and only if the change
// that caused it committed.
package queue

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/hitchdev/hitch/internal/store"
)

// Queue names.
const (
	// QueueWebhooks holds webhook deliveries: network-bound, so many run at
	// once.
	QueueWebhooks = "webhooks"
	// QueueDefault holds everything else.
	QueueDefault = river.QueueDefault
)

// Config tunes the client.
type Config struct {
	Logger *slog.Logger
	// Workers are the job kinds this process works. Nil makes an insert-only
	// client (one that never starts).
	Workers *river.Workers
	// WebhookWorkers is how many deliveries run at once (default 200).
	WebhookWorkers int
	// FetchPollInterval bounds how long a job waits before a worker sees it
	// when no notification arrives (default 1 s, River's). Notifications
	// are what wake workers: inserting a job writes one in the same
	// transaction, which PostgreSQL delivers with LISTEN/NOTIFY at commit
	// and River's SQLite driver by polling a table every 50 ms. Each poll
	// for jobs, by contrast, is a write transaction: at 50 ms they were two
	// thirds of an idle SQLite server's CPU (docs/benchmarks.md, session 9).
	FetchPollInterval time.Duration
	// JobTimeout bounds one run of a job (default 1 minute). A job still
	// marked running 10 s after it (its node died) is run again.
	JobTimeout time.Duration
}

// Queue inserts and works jobs.
type Queue struct {
	c       client
	working bool
}

// client is River's Client without its transaction type parameter.
type client interface {
	insertManyTx(ctx context.Context, rawTx any, params []river.InsertManyParams) error
	pending(ctx context.Context, kind string) (count int64, oldest time.Time, err error)
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// New makes a client on db's own pool. It does not start working: call
// Start.
func New(db store.Store, cfg Config) (*Queue, error) {
	jobTimeout := cmp.Or(cfg.JobTimeout, time.Minute)
	rc := &river.Config{
		Logger:            cfg.Logger,
		FetchCooldown:     2 * time.Millisecond,
		FetchPollInterval: cmp.Or(cfg.FetchPollInterval, time.Second),
		JobTimeout:        jobTimeout,
		// River's default waits an hour before it runs again the jobs of a
		// node that died mid-job; every job here ends by its timeout, so a
		// job still running 10 s past it has lost its node.
		RescueStuckJobsAfter: jobTimeout + 10*time.Second,
		// Failed deliveries keep their errors in Hitch's own attempts table;
		// River keeps finished jobs a day for operators to look at, except
		// completed deliveries, which the webhook archiver moves into
		// the attempts table as soon as River completes them.
		CompletedJobRetentionPeriod: 24 * time.Hour,
	}
	if cfg.Logger == nil {
		rc.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Workers != nil {
		rc.Workers = cfg.Workers
		rc.Queues = map[string]river.QueueConfig{
			QueueDefault:  {MaxWorkers: 10},
			QueueWebhooks: {MaxWorkers: cmp.Or(cfg.WebhookWorkers, 200)},
		}
	}
	pool, schema := db.Native()
	rc.Schema = schema
	q := &Queue{working: cfg.Workers != nil}
	switch pool := pool.(type) {
	case *sql.DB:
		c, err := river.NewClient(riversqlite.New(pool), rc)
		if err != nil {
			return nil, fmt.Errorf("queue: %w", err)
		}
		q.c = &riverClient[*sql.Tx]{Client: c, noReturning: true, pendingFn: func(ctx context.Context, kind string) (int64, time.Time, error) {
			return pendingSQLite(ctx, pool, kind)
		}}
	case *pgxpool.Pool:
		c, err := river.NewClient(riverpgxv5.New(pool), rc)
		if err != nil {
			return nil, fmt.Errorf("queue: %w", err)
		}
		q.c = &riverClient[pgx.Tx]{Client: c, pendingFn: func(ctx context.Context, kind string) (int64, time.Time, error) {
			return pendingPostgres(ctx, pool, kind)
		}}
	default:
		return nil, fmt.Errorf("queue: unsupported pool %T", pool)
	}
	return q, nil
}

// Migrate applies River's own migrations under the store's migration lock.
func Migrate(ctx context.Context, db store.Store) error {
	pool, schema := db.Native()
	switch pool := pool.(type) {
	case *sql.DB:
		return migrate(ctx, db, riversqlite.New(pool), schema)
	case *pgxpool.Pool:
		return migrate(ctx, db, riverpgxv5.New(pool), schema)
	default:
		return fmt.Errorf("queue: unsupported pool %T", pool)
	}
}

// InsertTx inserts jobs in the store transaction ex (an Executor handed to
// store.InTx). Where the store can (sqlstore's BeforeCommit), the insert
// waits for the end of the transaction, to go in one statement with the
// jobs of every other call whose writes commit with it: a failed insert
// then fails the transaction, and an error here only means ex is not a
// transaction.
func (q *Queue) InsertTx(ctx context.Context, ex store.Executor, params []river.InsertManyParams) error {
	if len(params) == 0 {
		return nil
	}
	if d, ok := ex.(beforeCommitter); ok && !slices.ContainsFunc(params, unique) {
		d.BeforeCommit(q, slices.Clone(params), q.insertDeferred)
		return nil
	}
	raw, ok := ex.(interface{ Raw() any })
	if !ok {
		return errors.New("queue: insert outside a transaction")
	}
	return q.c.insertManyTx(inTx(ctx), raw.Raw(), params)
}

// unique reports whether p asks River for a unique job. Those are inserted
// at once: two with one unique key in one statement would fail it on
// PostgreSQL (ON CONFLICT cannot touch a row twice), where two statements
// skip the second. No Hitch job is unique today.
func unique(p river.InsertManyParams) bool {
	if p.InsertOpts != nil && !reflect.ValueOf(p.InsertOpts.UniqueOpts).IsZero() {
		return true
	}
	a, ok := p.Args.(river.JobArgsWithInsertOpts)
	return ok && !reflect.ValueOf(a.InsertOpts().UniqueOpts).IsZero()
}

// beforeCommitter is a transaction that can leave work for just before it
// commits (sqlstore.TxExecutor).
type beforeCommitter interface {
	BeforeCommit(key, item any, flush func(ctx context.Context, rawTx any, items []any) error)
}

// insertDeferred inserts the jobs InsertTx left, each item a
// []river.InsertManyParams, in one statement.
func (q *Queue) insertDeferred(ctx context.Context, rawTx any, items []any) error {
	var all []river.InsertManyParams
	for _, it := range items {
		all = append(all, it.([]river.InsertManyParams)...)
	}
	return q.c.insertManyTx(inTx(ctx), rawTx, all)
}

// Start starts working jobs, when the queue has workers.
func (q *Queue) Start(ctx context.Context) error {
	if !q.working {
		return nil
	}
	return q.c.Start(ctx)
}

// Stop waits for running jobs to finish, up to ctx's deadline.
func (q *Queue) Stop(ctx context.Context) error {
	if !q.working {
		return nil
	}
	return q.c.Stop(ctx)
}

// Pending reports how many jobs of kind wait to run (available, scheduled,
// retryable or running), and when the oldest of them was inserted (zero when
// none).
func (q *Queue) Pending(ctx context.Context, kind string) (int64, time.Time, error) {
	return q.c.pending(ctx, kind)
}

type riverClient[TTx any] struct {
	*river.Client[TTx]
	pendingFn func(ctx context.Context, kind string) (int64, time.Time, error)
	// noReturning inserts with InsertManyFastTx, which does not read the
	// inserted rows back. On SQLite that skips decoding every JSON column
	// of every new job: a transaction inserting one job went from about
	// 250 to 205 µs and from 186 to 84 allocations (BenchmarkInsertTx).
	// It skips a unique conflict silently (only the count it returns
	// drops), which ignoring InsertManyTx's results also did; no job here
	// has unique options.
	// On PostgreSQL it is COPY, a round trip more than one INSERT for the
	// one or two jobs a change inserts, so PostgreSQL keeps InsertManyTx.
	noReturning bool
}

func (c *riverClient[TTx]) pending(ctx context.Context, kind string) (int64, time.Time, error) {
	return c.pendingFn(ctx, kind)
}

func (c *riverClient[TTx]) insertManyTx(ctx context.Context, rawTx any, params []river.InsertManyParams) error {
	tx, ok := rawTx.(TTx)
	if !ok {
		return fmt.Errorf("queue: transaction is %T, want %T", rawTx, *new(TTx))
	}
	var err error
	if c.noReturning {
		_, err = c.InsertManyFastTx(ctx, tx, params)
	} else {
		_, err = c.InsertManyTx(ctx, tx, params)
	}
	if err != nil {
		return fmt.Errorf("queue: insert: %w", err)
	}
	return nil
}

func migrate[TTx any](ctx context.Context, db store.Store, driver riverdriver.Driver[TTx], schema string) error {
	m, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: slog.New(slog.DiscardHandler), Schema: schema})
	if err != nil {
		return fmt.Errorf("queue: migrate: %w", err)
	}
	// One version per transaction: some of River's PostgreSQL migrations add
	// an enum value that a later one uses, which one transaction refuses.
	for {
		applied := 0
		err := db.InMigrationTx(ctx, func(rawTx any) error {
			tx, ok := rawTx.(TTx)
			if !ok {
				return fmt.Errorf("queue: migrate: transaction is %T", rawTx)
			}
			// MigrateTx is deprecated for batching versions in one
			// transaction; one step at a time under our lock is what it
			// cannot do wrong, and Migrate takes no lock against other nodes.
			//lint:ignore SA1019 one version per call, under the migration lock
			res, err := m.MigrateTx(ctx, tx, rivermigrate.DirectionUp, &rivermigrate.MigrateOpts{MaxSteps: 1})
			if err != nil {
				return fmt.Errorf("queue: migrate: %w", err)
			}
			applied = len(res.Versions)
			return nil
		})
		if err != nil || applied == 0 {
			return err
		}
	}
}

const pendingSQL = `SELECT COUNT(*), MIN(created_at) FROM river_job
	WHERE kind = $1 AND state IN ('available', 'scheduled', 'retryable', 'running')`

func pendingSQLite(ctx context.Context, db *sql.DB, kind string) (int64, time.Time, error) {
	var n int64
	var oldest sql.NullString
	if err := db.QueryRowContext(ctx, pendingSQL, kind).Scan(&n, &oldest); err != nil {
		return 0, time.Time{}, fmt.Errorf("queue: pending: %w", err)
	}
	if !oldest.Valid {
		return n, time.Time{}, nil
	}
	// riversqlite keeps timestamps as text in UTC.
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", time.RFC3339Nano} {
		if t, err := time.Parse(layout, oldest.String); err == nil {
			return n, t, nil
		}
	}
	return n, time.Time{}, fmt.Errorf("queue: pending: unexpected time %q", oldest.String)
}

func pendingPostgres(ctx context.Context, pool *pgxpool.Pool, kind string) (int64, time.Time, error) {
	var n int64
	var oldest *time.Time
	if err := pool.QueryRow(ctx, pendingSQL, kind).Scan(&n, &oldest); err != nil {
		return 0, time.Time{}, fmt.Errorf("queue: pending: %w", err)
	}
	if oldest == nil {
		return n, time.Time{}, nil
	}
	return n, *oldest, nil
}

// inTx is ctx for statements in a store transaction: without its
// cancellation, which on SQLite would interrupt the statement and so roll
// back the whole transaction, shared by a group of callers (store.InTx).
func inTx(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }
