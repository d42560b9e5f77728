package queue

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// recordArgs ask recordWorker to record a client named ClientID and
// complete the job in one transaction, then fail that transaction when
// FailAfter is set.
type recordArgs struct {
	ClientID  string `json:"client_id"`
	FailAfter bool   `json:"fail_after"`
}

func (recordArgs) Kind() string { return "queue_test_record" }

type recordWorker struct {
	river.WorkerDefaults[recordArgs]
	st store.Store
}

func (w *recordWorker) Work(ctx context.Context, job *river.Job[recordArgs]) error {
	return w.st.InTx(ctx, func(ex store.Executor) error {
		if _, err := ex.ClientInsert(ctx, &store.ClientInsertParams{ID: job.Args.ClientID, Name: "n",
			Environment: "development", CreatedAt: time.Now().UTC()}); err != nil {
			return err
		}
		if err := CompleteTx(ctx, ex, job); err != nil {
			return err
		}
		if job.Args.FailAfter {
			return errors.New("failed after completing")
		}
		return nil
	})
}

// Jobs inserted in a transaction exist once it commits and not when it
// rolls back; Pending counts them, oldest first.
func TestInsertTx(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		if err := Migrate(ctx, st); err != nil {
			t.Fatal(err)
		}
		q, err := New(st, Config{})
		if err != nil {
			t.Fatal(err)
		}
		insert := func(ids ...string) error {
			params := make([]river.InsertManyParams, len(ids))
			for i, id := range ids {
				params[i] = river.InsertManyParams{Args: recordArgs{ClientID: id}}
			}
			return st.InTx(ctx, func(ex store.Executor) error { return q.InsertTx(ctx, ex, params) })
		}
		before := time.Now()
		if err := insert("a", "b"); err != nil {
			t.Fatal(err)
		}
		rollback := errors.New("roll back")
		if err := st.InTx(ctx, func(ex store.Executor) error {
			if err := q.InsertTx(ctx, ex, []river.InsertManyParams{{Args: recordArgs{ClientID: "gone"}}}); err != nil {
				return err
			}
			return rollback
		}); !errors.Is(err, rollback) {
			t.Fatalf("rolled back insert: %v", err)
		}
		if err := insert("c"); err != nil {
			t.Fatal(err)
		}
		if err := q.InsertTx(ctx, st, []river.InsertManyParams{{Args: recordArgs{ClientID: "d"}}}); err == nil {
			t.Error("an insert outside a transaction was accepted")
		}
		jobs, err := q.Jobs(ctx, river.NewJobListParams().Kinds(recordArgs{}.Kind()).OrderBy(river.JobListOrderByID, river.SortOrderAsc))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, j := range jobs {
			got = append(got, string(j.EncodedArgs))
		}
		if len(jobs) != 3 || jobs[0].State != rivertype.JobStateAvailable {
			t.Fatalf("jobs %v, want a, b and c available", got)
		}
		n, oldest, err := q.Pending(ctx, recordArgs{}.Kind())
		if err != nil || n != 3 || !oldest.Equal(jobs[0].CreatedAt) || oldest.Before(before.Add(-time.Second)) {
			t.Errorf("Pending = %d, %v, %v; want 3 since %v", n, oldest, err, jobs[0].CreatedAt)
		}
		if n, oldest, err := q.Pending(ctx, "no_such_kind"); err != nil || n != 0 || !oldest.IsZero() {
			t.Errorf("Pending of no job = %d, %v, %v", n, oldest, err)
		}
	})
}

// A job completed by CompleteTx is completed with its transaction's
// writes, and not at all when that transaction rolls back.
func TestCompleteTx(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		if err := Migrate(ctx, st); err != nil {
			t.Fatal(err)
		}
		workers := river.NewWorkers()
		river.AddWorker(workers, &recordWorker{st: st})
		q, err := New(st, Config{Workers: workers, FetchPollInterval: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		err = st.InTx(ctx, func(ex store.Executor) error {
			return q.InsertTx(ctx, ex, []river.InsertManyParams{
				{Args: recordArgs{ClientID: "kept"}},
				{Args: recordArgs{ClientID: "rolled-back", FailAfter: true}, InsertOpts: &river.InsertOpts{MaxAttempts: 1}},
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := q.Stop(stopCtx); err != nil {
				t.Errorf("stop: %v", err)
			}
		})
		states := map[string]rivertype.JobState{}
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			jobs, err := q.Jobs(ctx, river.NewJobListParams().Kinds(recordArgs{}.Kind()))
			if err != nil {
				t.Fatal(err)
			}
			finished := 0
			for _, j := range jobs {
				var a recordArgs
				if err := json.Unmarshal(j.EncodedArgs, &a); err != nil {
					t.Fatal(err)
				}
				states[a.ClientID] = j.State
				if j.FinalizedAt != nil {
					finished++
				}
			}
			if finished == 2 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("jobs not finished after 15 s: %v", states)
			}
		}
		if states["kept"] != rivertype.JobStateCompleted || states["rolled-back"] != rivertype.JobStateDiscarded {
			t.Errorf("job states %v, want kept completed and rolled-back discarded", states)
		}
		if _, err := st.ClientGetByID(ctx, "kept"); err != nil {
			t.Errorf("the completed job's write: %v", err)
		}
		if _, err := st.ClientGetByID(ctx, "rolled-back"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the rolled-back job's write: %v, want not found", err)
		}
	})
}
