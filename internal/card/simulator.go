package card

import (
	"cmp"
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/hitchdev/hitch/internal/store"
)

// The development simulator ends the tasks it has decided (test cards,
// vaulting) from the database: a task carries its decision in
// tasks.simulation from the transaction that makes it pending, and
// RunSimulator ends such tasks in batches. Nothing is lost to a crash (the
// decision is committed with the task, and any node's simulator ends it),
// and a card costs no River job: a job's insert, fetch and completion cost
// about as much as the rest of a POST /card besides RSA. A database moved
// from development to production keeps such tasks pending: nothing runs
// the simulator there.
const (
	simulateSucceed  = "succeed"
	simulateFail     = "fail:"
	simulatorBatch   = 100
	simulatorPolling = time.Second
	// simulatorGather is how long the simulator lets tasks gather after
	// it is woken, so that a busy node ends them in batches rather than a
	// transaction each.
	simulatorGather = 50 * time.Millisecond
)

// simulation is the decision stored for a task: succeed, or fail with
// reason ("" for the product's default).
func simulation(fail bool, reason string) *string {
	d := simulateSucceed
	if fail {
		d = simulateFail + reason
	}
	return &d
}

// simulatedResult is how the simulator ends task on decision.
func (s *Service) simulatedResult(task *store.Task, decision string) Result {
	reason, fail := strings.CutPrefix(decision, simulateFail)
	r := Result{Succeeded: !fail}
	switch {
	case fail && reason == "" && task.Product == "vault":
		r.Reason = ReasonNotRetrieved
	case fail && !validReason(reason):
		r.Reason = "other"
	case fail:
		r.Reason = reason
	case task.Product == "vault":
		r.Card = simulatedVaultCard(task, s.now())
	}
	return r
}

// poke wakes the simulator for a task just committed.
func (s *Service) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// RunSimulator ends the development simulator's tasks until ctx ends: at
// once when this node commits one, and every second for those of other
// nodes (or left by a node that stopped). It returns at once in
// production. Several nodes may run it: a task ends once, by whichever
// finishes it first.
func (s *Service) RunSimulator(ctx context.Context) {
	if !s.cfg.Development {
		return
	}
	tick := time.NewTicker(simulatorPolling)
	defer tick.Stop()
	for {
		if err := s.simulateDue(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("simulator: ending tasks", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
			select {
			case <-ctx.Done():
				return
			case <-time.After(simulatorGather):
			}
		case <-tick.C:
		}
	}
}

// simulateDue ends every task waiting for the simulator, walking them
// oldest first with a cursor, so that a task that cannot end now does not
// hold up the ones after it (it is tried again on the next round).
func (s *Service) simulateDue(ctx context.Context) error {
	var after *store.Task
	var firstErr error
	for {
		tasks, err := s.store.TaskListSimulations(ctx, &store.TaskListSimulationsParams{After: after, Limit: simulatorBatch})
		if err != nil {
			return err
		}
		for _, group := range byAccount(tasks) {
			if err := s.simulateAccount(ctx, group); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				firstErr = cmp.Or(firstErr, err)
			}
		}
		if len(tasks) < simulatorBatch {
			return firstErr
		}
		after = tasks[len(tasks)-1]
	}
}

// byAccount splits tasks into groups of one account's tasks, in the order
// each account first appears.
func byAccount(tasks []*store.Task) [][]*store.Task {
	var groups [][]*store.Task
	index := map[string]int{}
	for _, t := range tasks {
		i, ok := index[t.AccountID]
		if !ok {
			i = len(groups)
			index[t.AccountID] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], t)
	}
	return groups
}

// simulateAccount ends one account's tasks in one transaction. Every
// other writer locks an account before its user, and so does this: a
// transaction spanning several accounts of one user would lock the user
// between them and could deadlock on PostgreSQL with, say, ingestion into
// the second account. If the transaction fails, each task is ended in its
// own, so that one that cannot end holds up no other.
func (s *Service) simulateAccount(ctx context.Context, tasks []*store.Task) error {
	type item struct {
		task          *store.Task
		result        Result
		subscriptions []string
	}
	var firstErr error
	items := make([]item, 0, len(tasks))
	for _, t := range tasks {
		r := s.simulatedResult(t, *t.Simulation)
		subscriptions, err := s.checkResult(ctx, t, r)
		if err != nil {
			s.log.Warn("simulator: reading a task's outcome data", "task_id", t.ID, "error", err)
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		items = append(items, item{task: t, result: r, subscriptions: subscriptions})
	}
	now := s.now()
	err := s.store.InTx(ctx, func(ex store.Executor) error {
		for _, it := range items {
			if _, err := s.finishIn(ctx, ex, it.task, store.TaskPending, it.result, it.subscriptions, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil || ctx.Err() != nil {
		return cmp.Or(err, firstErr)
	}
	s.log.Warn("simulator: ending an account's tasks together failed; ending them one at a time", "tasks", len(items), "error", err)
	for _, it := range items {
		if _, err := s.finish(ctx, it.task, store.TaskPending, it.result); err != nil {
			firstErr = cmp.Or(firstErr, err)
		}
	}
	return firstErr
}

// logger is cfg.Logger, or one that discards.
func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
