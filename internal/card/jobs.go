package card

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/riverqueue/river"

	"github.com/hitchdev/hitch/internal/store"
)

// DeadlineArgs is the job that fails a task still in state From at its
// deadline: a card switch whose card never came, or a production task
// whose connector never answered (its sealed card is erased with it).
type DeadlineArgs struct {
	ClientID string `json:"client_id"`
	TaskID   int64  `json:"task_id"`
	From     string `json:"from"`
}

func (DeadlineArgs) Kind() string { return "task_deadline" }

// SimulateArgs is the development simulator working a task: it ends it
// with the outcome decided when the task started (the test card's, for a
// card switch). It holds no card data. Hitch no longer inserts these jobs
// (tasks carry the decision, see RunSimulator); the worker stays for jobs
// an older version queued.
type SimulateArgs struct {
	ClientID string `json:"client_id"`
	TaskID   int64  `json:"task_id"`
	Fail     bool   `json:"fail"`
	Reason   string `json:"reason,omitempty"`
}

func (SimulateArgs) Kind() string { return "task_simulate" }

// DeadlineWorker runs DeadlineArgs jobs.
type DeadlineWorker struct {
	river.WorkerDefaults[DeadlineArgs]
	s *Service
}

// SimulateWorker runs SimulateArgs jobs.
type SimulateWorker struct {
	river.WorkerDefaults[SimulateArgs]
	s *Service
}

// AddWorkers registers the task jobs' workers.
func (s *Service) AddWorkers(workers *river.Workers) {
	river.AddWorker(workers, &DeadlineWorker{s: s})
	river.AddWorker(workers, &SimulateWorker{s: s})
}

func (w *DeadlineWorker) Work(ctx context.Context, job *river.Job[DeadlineArgs]) error {
	reason := ReasonNoCard
	if job.Args.From == store.TaskPending {
		reason = ReasonNotHandled
	}
	_, err := w.s.Finish(ctx, job.Args.ClientID, job.Args.TaskID, job.Args.From, Result{Reason: reason})
	if errors.Is(err, ErrTaskNotFound) { // its developer or account is gone
		return nil
	}
	return err
}

func (w *SimulateWorker) Work(ctx context.Context, job *river.Job[SimulateArgs]) error {
	task, err := w.s.store.TaskGet(ctx, job.Args.ClientID, job.Args.TaskID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	decision := simulation(job.Args.Fail, job.Args.Reason)
	_, err = w.s.finish(ctx, task, store.TaskPending, w.s.simulatedResult(task, *decision))
	return err
}

// simulatedVaultCard is the card the simulator finds on file at a
// merchant: a Visa whose last four and expiry follow from the account, so
// that vaulting the same account again finds the same card.
func simulatedVaultCard(t *store.Task, now time.Time) *store.CardSummary {
	h := fnv.New32a()
	h.Write([]byte(t.AccountID))
	sum := h.Sum32()
	return &store.CardSummary{Brand: "visa", LastFour: fmt.Sprintf("%04d", sum%10000),
		ExpMonth: int(sum/10000%12) + 1, ExpYear: now.Year() + 1 + int(sum/120000%4)}
}
