package card

import (
	"cmp"
	"context"
	"log/slog"
	"maps"
	"slices"
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
	simulateSucceed = "succeed"
	simulateFail    = "fail:"
	simulatorBatch  = 100
	// simulatorChunk bounds the tasks ended in one transaction. On SQLite
	// a transaction holds the one writer: 100 tasks held it for about 8 ms,
	// long enough for every POST /card in flight to queue behind it with
	// the CPUs idle.
	simulatorChunk   = 16
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

// simulatedTask is a task the simulator ends, with its result.
type simulatedTask struct {
	task          *store.Task
	result        Result
	subscriptions []string
}

// simulateAccount ends one account's tasks, simulatorChunk at a time, each
// chunk in one transaction. Every other writer locks an account before its
// user, and so does this: a transaction spanning several accounts of one
// user would lock the user between them and could deadlock on PostgreSQL
// with, say, ingestion into the second account. If a chunk's transaction
// fails, each of its tasks is ended in its own, so that one that cannot end
// holds up no other.
func (s *Service) simulateAccount(ctx context.Context, tasks []*store.Task) error {
	var firstErr error
	items := make([]simulatedTask, 0, len(tasks))
	for _, t := range tasks {
		r := s.simulatedResult(t, *t.Simulation)
		subscriptions, err := s.checkResult(ctx, t, r)
		if err != nil {
			s.log.Warn("simulator: reading a task's outcome data", "task_id", t.ID, "error", err)
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		items = append(items, simulatedTask{task: t, result: r, subscriptions: subscriptions})
	}
	for chunk := range slices.Chunk(items, simulatorChunk) {
		now := s.now()
		err := s.store.InTx(ctx, func(ex store.Executor) error { return s.finishChunk(ctx, ex, chunk, now) })
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err == nil {
			continue
		}
		s.log.Warn("simulator: ending an account's tasks together failed; ending them one at a time", "tasks", len(chunk), "error", err)
		for _, it := range chunk {
			if _, err := s.finish(ctx, it.task, store.TaskPending, it.result); err != nil {
				firstErr = cmp.Or(firstErr, err)
			}
		}
	}
	return firstErr
}

// finishChunk ends tasks of one account in ex's transaction, oldest first,
// to the state that ending them one by one with finishIn would leave, in
// fewer statements: each task and its event, but the account's last user
// action once per product (the newest task's, the products in the order of
// those tasks) and the update_card scope once (if any card switch
// succeeded).
func (s *Service) finishChunk(ctx context.Context, ex store.Executor, chunk []simulatedTask, now time.Time) error {
	ended := make([]*store.Task, len(chunk))
	newest := map[string]int{} // product → index in chunk
	scope := -1
	for i, it := range chunk {
		t, err := s.endTask(ctx, ex, it.task, store.TaskPending, it.result, now)
		if err != nil {
			return err
		}
		if t == nil { // ended already, by another node
			continue
		}
		ended[i] = t
		if j, ok := newest[t.Product]; !ok || !t.CreatedAt.Before(ended[j].CreatedAt) {
			newest[t.Product] = i
		}
		if t.Product == "card_switcher" && it.result.Succeeded {
			scope = i
		}
	}
	// Each product's newest task, oldest first: the account's overall last
	// action is whichever is set last, as when the tasks end one by one.
	picks := slices.Collect(maps.Values(newest))
	slices.SortFunc(picks, func(a, b int) int {
		return cmp.Or(ended[a].CreatedAt.Compare(ended[b].CreatedAt), cmp.Compare(a, b))
	})
	for _, i := range picks {
		if err := s.setAction(ctx, ex, ended[i], chunk[i].result, now); err != nil {
			return err
		}
	}
	if scope >= 0 {
		if err := s.addUpdateCardScope(ctx, ex, ended[scope], now); err != nil {
			return err
		}
	}
	for i, t := range ended {
		if t == nil {
			continue
		}
		if err := s.recordEvent(ctx, ex, t, chunk[i].result, chunk[i].subscriptions, now); err != nil {
			return err
		}
	}
	return nil
}

// logger is cfg.Logger, or one that discards.
func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
