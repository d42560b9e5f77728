package webhook

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/hitchdev/hitch/internal/store"
)

// A delivery that succeeds does not write its attempt itself. It records
// the attempt as its job's River output (store.AttemptOutput), which River
// writes in the statement that completes the job, and the archiver later
// moves completed jobs into webhook_attempts, their output becoming the
// attempt. So a success costs no statement of its own while a backlog
// drains, the attempt is stored with the job's completion or not at all,
// and River's job table keeps only the deliveries not yet archived.
//
// Writing the attempt before returning kept each worker's slot while the
// attempt committed, and bounded a PostgreSQL backlog's deliveries a
// second (docs/benchmarks.md, session 16).

const (
	// archiveBatch bounds the jobs one statement moves.
	archiveBatch = 1000
	// archiveDelay is the time between passes while this process has
	// successes to archive: River completes jobs in batches shortly after
	// they return, and the wait lets a batch of them form.
	archiveDelay = 100 * time.Millisecond
	// archiveGiveUp ends the passes when none has moved anything for this
	// long: another node archived the jobs, or River has not completed
	// them (it runs them again, or the sweep finds them).
	archiveGiveUp = 10 * time.Second
	// archiveSweep is how often the archiver looks when no success woke it,
	// for the jobs of a node that stopped before archiving them.
	archiveSweep = 10 * time.Second
	// archiveLookback bounds the passes made for this process's jobs to
	// those River finalized this recently (it finalizes a job when its run
	// ends and commits that within a few hundred milliseconds), so that
	// they do not walk the other kinds' completed jobs River keeps a day;
	// the sweep looks at every completed job.
	archiveLookback = time.Minute
)

// recordSuccess makes the attempt the job's output.
func recordSuccess(ctx context.Context, a *store.WebhookAttempt) error {
	out := store.AttemptOutput{Attempt: a.Attempt, StartedUS: a.StartedAt.UnixMicro(),
		DurationUS: a.Duration.Microseconds(), Body: a.ResponseBody}
	if a.StatusCode != nil {
		out.Status = *a.StatusCode
	}
	return river.RecordOutput(ctx, out)
}

// completing tells the archiver that a job is about to complete.
func (s *Service) completing() {
	s.unarchived.Add(1)
	select {
	case s.archiveWake <- struct{}{}:
	default:
	}
}

// RunArchiver moves completed deliveries into their attempts until ctx
// ends, then once more for what River completed while it stopped: call it
// in a process that works jobs, and end it after River has stopped.
func (s *Service) RunArchiver(ctx context.Context) {
	sweep := time.NewTicker(archiveSweep)
	defer sweep.Stop()
	for {
		select {
		case <-ctx.Done():
			// The last passes, bounded as the recorder's were.
			final, cancel := context.WithTimeout(context.WithoutCancel(ctx), RecordSlack)
			s.archiveAll(final, time.Time{})
			cancel()
			return
		case <-s.archiveWake:
			s.archivePending(ctx)
		case <-sweep.C:
			s.archiveAll(ctx, time.Time{})
		}
	}
}

// archivePending runs a pass every archiveDelay until the jobs this process
// completed are archived, or for archiveGiveUp without one moving.
func (s *Service) archivePending(ctx context.Context) {
	progress := time.Now()
	for s.unarchived.Load() > 0 {
		select {
		case <-ctx.Done():
			return
		case <-time.After(archiveDelay):
		}
		n := int64(s.archiveAll(ctx, time.Now().Add(-archiveLookback)))
		if n == 0 {
			if time.Since(progress) > archiveGiveUp {
				s.unarchived.Store(0)
			}
			continue
		}
		progress = time.Now()
		// Jobs of other nodes count too: never below zero. A job of this
		// process not archived yet by then is by the next success's
		// passes, or the sweep.
		for {
			old := s.unarchived.Load()
			if s.unarchived.CompareAndSwap(old, max(old-n, 0)) {
				break
			}
		}
	}
}

// archiveAll runs passes over the jobs finalized since then until one
// moves less than a full batch or ctx ends, and returns how many jobs they
// moved. ctx ends the passes, not a pass: each has a deadline of its own
// and no other cancellation, as a pass is short and one cut off at
// shutdown would only count an error.
func (s *Service) archiveAll(ctx context.Context, since time.Time) int {
	total := 0
	for ctx.Err() == nil {
		n := s.archive(since)
		total += n
		if n < archiveBatch {
			break
		}
	}
	return total
}

// archive runs one pass and returns how many jobs it moved.
func (s *Service) archive(since time.Time) int {
	ctx, cancel := context.WithTimeout(context.Background(), RecordSlack)
	defer cancel()
	var n int
	err := s.store.InTx(ctx, func(ex store.Executor) error {
		var err error
		n, err = ex.WebhookAttemptsArchive(ctx, JobKind, since, archiveBatch)
		return err
	})
	if err != nil {
		s.metrics.archiveErrors.Inc()
		s.log.Warn("webhook attempts not archived; the next pass retries", "error", err)
		return 0
	}
	return n
}
