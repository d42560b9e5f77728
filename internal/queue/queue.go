// Package queue runs Hitch's background jobs on River, on whichever store is
// configured: River's SQLite driver over the store's writer connection, or
// its pgx driver over the store's pool. Jobs are inserted in the caller's
// store transaction (InsertTx), so a job exists if and only if the change
// that caused it committed, and a worker can complete its job in the
// transaction that records what the job did (CompleteTx).
package queue

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

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
	// WebhookWorkers is how many jobs of the webhooks queue this process
	// runs at once (default 200, as --webhook-workers).
	WebhookWorkers int
	// FetchPollInterval bounds how long a new job waits for a worker when
	// no insert notification wakes one (default 250 ms; see New).
	FetchPollInterval time.Duration
	// PeriodicJobs are inserted on their schedule by the leader among the
	// processes that work jobs.
	PeriodicJobs []*river.PeriodicJob
	// JobTimeout bounds one run of a job (default 1 minute). A job still
	// marked running 10 s after it (its process died) is run again.
	JobTimeout time.Duration
}

// completedRetention is how long River keeps a completed job. A completed
// delivery's attempt is in Hitch's attempt log, so River's row is only for
// an operator looking at the queue; an hour of them stays small while a
// backlog drains.
const completedRetention = time.Hour

// RecordSlack is the time a job may take after its timeout to record what
// it did (a delivery's attempt), before River may take it for lost.
const RecordSlack = 10 * time.Second

// fetchCooldown is the least time between two fetches of one queue, and
// between two insert notifications of one queue from one process. River's
// 100 ms default would hold a new job up to that long behind the one
// before it; 10 ms keeps commit-to-delivery in tens of milliseconds.
const fetchCooldown = 10 * time.Millisecond

// Queue inserts and works jobs.
type Queue struct {
	c       client
	working bool
}

// client is River's Client without its transaction type parameter.
type client interface {
	insertManyTx(ctx context.Context, rawTx any, params []river.InsertManyParams) error
	JobList(ctx context.Context, params *river.JobListParams) (*river.JobListResult, error)
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// New makes a client on db's own pool. It does not start working: call
// Start.
//
// New jobs reach workers through River's insert notifications: LISTEN/NOTIFY
// on PostgreSQL, and on SQLite a notification table that each process's
// River polls every 50 ms, so a `hitch worker` process sees another's
// inserts too. FetchPollInterval is the fallback when a notification is
// skipped (River sends at most one per queue per fetchCooldown); each poll
// is a write transaction on SQLite, hence not shorter.
func New(db store.Store, cfg Config) (*Queue, error) {
	jobTimeout := cmp.Or(cfg.JobTimeout, time.Minute)
	rc := &river.Config{
		Logger:            cfg.Logger,
		FetchCooldown:     fetchCooldown,
		FetchPollInterval: cmp.Or(cfg.FetchPollInterval, 250*time.Millisecond),
		JobTimeout:        jobTimeout,
		// River's default waits an hour before it runs again the jobs of a
		// process that died mid-job. Every job here ends by its timeout,
		// but for up to RecordSlack after it a delivery may still record
		// the attempt it made; a job still running 10 s past both has lost
		// its process.
		RescueStuckJobsAfter:        jobTimeout + RecordSlack + 10*time.Second,
		CompletedJobRetentionPeriod: completedRetention,
	}
	if cfg.Logger == nil {
		rc.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Workers != nil {
		rc.Workers = cfg.Workers
		rc.PeriodicJobs = cfg.PeriodicJobs
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
		q.c = &riverClient[*sql.Tx]{c}
	case *pgxpool.Pool:
		c, err := river.NewClient(riverpgxv5.New(pool), rc)
		if err != nil {
			return nil, fmt.Errorf("queue: %w", err)
		}
		q.c = &riverClient[pgx.Tx]{c}
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
// store.InTx): they commit with the transaction or not at all.
func (q *Queue) InsertTx(ctx context.Context, ex store.Executor, params []river.InsertManyParams) error {
	if len(params) == 0 {
		return nil
	}
	raw, ok := ex.(interface{ Raw() any })
	if !ok {
		return errors.New("queue: insert outside a transaction")
	}
	return q.c.insertManyTx(inTx(ctx), raw.Raw(), params)
}

// ErrNotRunning is CompleteTx's error when the job is no longer running:
// River rescued it as stuck and will run it again (or already has).
var ErrNotRunning = errors.New("queue: the job is no longer running")

// CompleteTx completes job, which the caller is working, in the store
// transaction ex: the job ends as completed if and only if the
// transaction's other writes commit. Call it from the job's Work.
func CompleteTx[T river.JobArgs](ctx context.Context, ex store.Executor, job *river.Job[T]) error {
	raw, ok := ex.(interface{ Raw() any })
	if !ok {
		return errors.New("queue: complete outside a transaction")
	}
	var err error
	switch tx := raw.Raw().(type) {
	case *sql.Tx:
		_, err = river.JobCompleteTx[*riversqlite.Driver](inTx(ctx), tx, job)
	case pgx.Tx:
		_, err = river.JobCompleteTx[*riverpgxv5.Driver](inTx(ctx), tx, job)
	default:
		err = fmt.Errorf("unsupported transaction %T", tx)
	}
	switch {
	case errors.Is(err, rivertype.ErrNotFound):
		return ErrNotRunning
	case err != nil:
		return fmt.Errorf("queue: complete job %d: %w", job.ID, err)
	}
	return nil
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

// pendingStates are the states of a job that has yet to finish.
var pendingStates = []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStateScheduled,
	rivertype.JobStateRetryable, rivertype.JobStateRunning}

// MaxPending is the most jobs Pending counts: River lists jobs rather than
// count them, and on SQLite the list takes the one writer connection, so
// a scrape reads at most this many rows.
const MaxPending = 1_000

// Pending reports how many jobs of kind wait to run or are running, up to
// MaxPending, and when the oldest of them was inserted (zero when none).
func (q *Queue) Pending(ctx context.Context, kind string) (int, time.Time, error) {
	jobs, err := q.Jobs(ctx, river.NewJobListParams().Kinds(kind).States(pendingStates...).
		OrderBy(river.JobListOrderByID, river.SortOrderAsc).First(MaxPending))
	if err != nil || len(jobs) == 0 {
		return 0, time.Time{}, err
	}
	oldest := jobs[0].CreatedAt
	for _, j := range jobs[1:] {
		if j.CreatedAt.Before(oldest) {
			oldest = j.CreatedAt
		}
	}
	return len(jobs), oldest, nil
}

// Jobs lists jobs as River's JobList does, for metrics and tests.
func (q *Queue) Jobs(ctx context.Context, params *river.JobListParams) ([]*rivertype.JobRow, error) {
	res, err := q.c.JobList(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("queue: list jobs: %w", err)
	}
	return res.Jobs, nil
}

type riverClient[TTx any] struct {
	*river.Client[TTx]
}

func (c *riverClient[TTx]) insertManyTx(ctx context.Context, rawTx any, params []river.InsertManyParams) error {
	tx, ok := rawTx.(TTx)
	if !ok {
		return fmt.Errorf("queue: transaction is %T, want %T", rawTx, *new(TTx))
	}
	if _, err := c.InsertManyTx(ctx, tx, params); err != nil {
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

// inTx is ctx for River's statements in a store transaction: without its
// cancellation, so that a cancelled caller fails at the store's own
// statements, which report it, rather than inside River's, where SQLite
// answers an interrupt by rolling the transaction back beneath the store.
func inTx(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }
