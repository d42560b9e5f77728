package reqlog

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/hitchdev/hitch/internal/store"
)

// DefaultRetention is how long requests are kept unless
// --request-log-retention says otherwise: 14 days.
const DefaultRetention = 14 * 24 * time.Hour

// pruneBatch is how many rows one delete removes, so that no statement
// holds SQLite's writer for long.
const pruneBatch = 1000

// PruneInterval is how often the pruning job runs.
const PruneInterval = time.Hour

// Pruner deletes requests older than the retention.
type Pruner struct {
	Store store.Store
	// Retention is how long a request is kept.
	Retention time.Duration
	Now       func() time.Time
}

// Prune deletes every request recorded before now minus the retention, in
// batches, and reports how many it deleted.
func (p *Pruner) Prune(ctx context.Context) (int64, error) {
	before := p.Now().Add(-p.Retention)
	var total int64
	for {
		n, err := p.Store.RequestLogDeleteBefore(ctx, before, pruneBatch)
		total += n
		if err != nil || n < pruneBatch {
			return total, err
		}
	}
}

// PruneArgs is the periodic job that prunes the request log.
type PruneArgs struct{}

// Kind implements river.JobArgs.
func (PruneArgs) Kind() string { return "request_log_prune" }

type pruneWorker struct {
	river.WorkerDefaults[PruneArgs]
	p *Pruner
}

func (w *pruneWorker) Work(ctx context.Context, _ *river.Job[PruneArgs]) error {
	_, err := w.p.Prune(ctx)
	return err
}

// AddWorkers registers the pruning job's worker.
func (p *Pruner) AddWorkers(workers *river.Workers) {
	river.AddWorker(workers, &pruneWorker{p: p})
}

// PeriodicJobs are the pruning job, hourly and at start.
func (p *Pruner) PeriodicJobs() []*river.PeriodicJob {
	return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(PruneInterval),
		func() (river.JobArgs, *river.InsertOpts) { return PruneArgs{}, nil },
		&river.PeriodicJobOpts{RunOnStart: true})}
}
