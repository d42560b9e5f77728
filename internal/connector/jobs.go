package connector

import (
	"context"
	"time"

	"github.com/riverqueue/river"
)

// MaintainArgs is the periodic job that keeps connector work moving: it
// releases expired leases and queues due refreshes.
type MaintainArgs struct{}

// Kind implements river.JobArgs.
func (MaintainArgs) Kind() string { return "connector_maintain" }

type maintainWorker struct {
	river.WorkerDefaults[MaintainArgs]
	w *Work
}

func (m *maintainWorker) Work(ctx context.Context, _ *river.Job[MaintainArgs]) error {
	if err := m.w.Reap(ctx); err != nil {
		return err
	}
	_, err := m.w.ScheduleRefreshes(ctx)
	return err
}

// MaintainInterval is how often the maintenance job runs: a quarter of the
// refresh interval, between 1 and 15 seconds, so that a refresh a dead
// connector held goes to another within about a lease and a tick.
func (w *Work) MaintainInterval() time.Duration {
	return min(max(w.cfg.RefreshInterval/4, time.Second), 15*time.Second)
}

// AddWorkers registers the maintenance job's worker.
func (w *Work) AddWorkers(workers *river.Workers) {
	river.AddWorker(workers, &maintainWorker{w: w})
}

// PeriodicJobs are the maintenance job on its schedule.
func (w *Work) PeriodicJobs() []*river.PeriodicJob {
	return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(w.MaintainInterval()),
		func() (river.JobArgs, *river.InsertOpts) { return MaintainArgs{}, nil },
		&river.PeriodicJobOpts{RunOnStart: true})}
}
