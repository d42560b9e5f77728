package api_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/hitchdev/hitch/client"
	"github.com/hitchdev/hitch/internal/account"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// The development simulator's decisions are committed with their tasks: a
// node that takes cards but runs no workers leaves the tasks pending with
// their decision, and the simulators of other nodes end each exactly once,
// with the decided outcome, even with two of them racing. One account's
// tasks, ended together, leave the account as ending them one by one
// would: the newest task's outcome as its last user action, the
// update_card scope from the switches that succeeded, and one event each
// in sequence.
func TestSimulatorEndsTasksOnAnyNode(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		front := newHarness(t, st)
		if err := front.api.DevLinkAccount(ctx, &client.DevLinkRequest{ExternalUserID: "u1", MerchantID: 1,
			Transactions: &client.DevTransactions{New: false}}); err != nil {
			t.Fatal(err)
		}
		want := map[int64]string{} // task: outcome event
		var newest int64
		for _, number := range []string{"4242424242424242", "4000000000000697", "4242424242424242", "4000000000009953"} {
			res, err := front.api.SubmitCard(ctx, &client.SubmitCardRequest{JWE: front.encrypt(t, goodCard(number)),
				ExternalUserID: "u1", MerchantID: 1})
			if err != nil {
				t.Fatal(err)
			}
			newest = res.TaskID
			front.clock.Advance(time.Millisecond) // the next task is newer
			want[res.TaskID] = "CARD_UPDATED"
			if number != "4242424242424242" {
				want[res.TaskID] = "CARD_FAILED"
			}
		}
		want[front.linkFailingVault(t, "u2")] = "VAULTING_FAILED"
		if len(want) != 5 {
			t.Fatalf("tasks = %v, want 5", want)
		}
		for id := range want {
			task, err := st.TaskGet(ctx, front.clientID, id)
			if err != nil || task.Status != store.TaskPending || task.Simulation == nil {
				t.Fatalf("task %d before any simulator = %+v, %v", id, task, err)
			}
		}

		newHarness(t, st, withWorkers)
		newHarness(t, st, withWorkers)
		for id, typ := range want {
			front.waitEvent(t, front.clientID, typ, id)
		}
		outcomes := map[int64]int{}
		var sequences []int64 // of u1's events
		for _, ev := range front.events(front.clientID) {
			var env envelope
			if err := json.Unmarshal(ev.Payload, &env); err != nil {
				t.Fatal(err)
			}
			if env.ExternalUserID == "u1" {
				sequences = append(sequences, env.Sequence)
			}
			if env.TaskID != nil && env.Event != "AUTHENTICATED" {
				outcomes[*env.TaskID]++
				if want[*env.TaskID] != env.Event {
					t.Errorf("task %d ended with %s, want %s", *env.TaskID, env.Event, want[*env.TaskID])
				}
			}
		}
		for id := range want {
			if outcomes[id] != 1 {
				t.Errorf("task %d has %d outcome events, want 1", id, outcomes[id])
			}
			task, err := st.TaskGet(ctx, front.clientID, id)
			if err != nil || task.Status == store.TaskPending || task.Simulation != nil {
				t.Errorf("task %d after the simulators = %+v, %v", id, task, err)
			}
		}
		slices.Sort(sequences)
		for i, seq := range sequences {
			if seq != sequences[0]+int64(i) {
				t.Fatalf("u1's event sequences = %v, want one each, in a row", sequences)
			}
		}
		last, err := st.TaskGet(ctx, front.clientID, newest)
		if err != nil {
			t.Fatal(err)
		}
		a, err := front.api.GetAccount(ctx, "u1", 1, "card_switcher")
		if err != nil {
			t.Fatal(err)
		}
		if action := a.LastUserAction; action.Status == nil || *action.Status != account.ActionFailure ||
			action.AttemptedAt == nil || !action.AttemptedAt.Equal(last.CreatedAt) {
			t.Errorf("last user action = %+v, want the newest task's failure at %v", action, last.CreatedAt)
		}
		if !slices.Contains(a.Connection.Scopes, client.Scope{Type: account.ScopeUpdateCard}) {
			t.Errorf("scopes = %v, want update_card from the switches that succeeded", a.Connection.Scopes)
		}
	})
}

// One account's tasks end as if each had ended alone, in order: with both
// products in one transaction, the account's last action of each product
// is that product's newest task's, and its last action overall the newest
// task's of all (u1: a card switch newer than a vaulting); and across more
// tasks than one transaction ends (u2), the newest's.
func TestSimulatorEndsChunksAsOneByOne(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		front := newHarness(t, st)
		vaultTask := front.linkFailingVault(t, "u1")
		if err := front.api.DevLinkAccount(ctx, &client.DevLinkRequest{ExternalUserID: "u2", MerchantID: 1,
			Transactions: &client.DevTransactions{New: false}}); err != nil {
			t.Fatal(err)
		}
		vaultAt := front.clock.Now()
		want := map[int64]string{vaultTask: "VAULTING_FAILED"}
		submit := func(user string, n int) {
			for i := range n {
				front.clock.Advance(time.Millisecond)
				number, typ := "4000000000000697", "CARD_FAILED" // insufficient funds
				if i%2 == 1 {
					number, typ = "4242424242424242", "CARD_UPDATED"
				}
				res, err := front.api.SubmitCard(ctx, &client.SubmitCardRequest{JWE: front.encrypt(t, goodCard(number)),
					ExternalUserID: user, MerchantID: 1})
				if err != nil {
					t.Fatal(err)
				}
				want[res.TaskID] = typ
			}
		}
		submit("u1", 10) // with the vaulting, one transaction's worth
		u1At := front.clock.Now()
		submit("u2", 40) // more than two transactions' worth
		u2At := front.clock.Now()

		newHarness(t, st, withWorkers)
		for id, typ := range want {
			front.waitEvent(t, front.clientID, typ, id)
		}
		for _, c := range []struct {
			user, product, status string
			at                    time.Time
		}{
			{"u1", "", account.ActionSuccess, u1At},
			{"u1", "card_switcher", account.ActionSuccess, u1At},
			{"u1", "vault", account.ActionFailure, vaultAt},
			{"u2", "", account.ActionSuccess, u2At},
		} {
			a, err := front.api.GetAccount(ctx, c.user, 1, c.product)
			if err != nil {
				t.Fatal(err)
			}
			if action := a.LastUserAction; action.Status == nil || *action.Status != c.status ||
				action.AttemptedAt == nil || !action.AttemptedAt.Equal(c.at) {
				t.Errorf("%s, type %q: last user action = %+v, want %s at %v", c.user, c.product, action, c.status, c.at)
			}
		}
	})
}

// linkFailingVault links merchant 1 for user's vault, with a simulated
// vaulting that fails, and returns its task, from AUTHENTICATED.
func (h *harness) linkFailingVault(t *testing.T, user string) int64 {
	t.Helper()
	if err := h.api.DevLinkAccount(context.Background(), &client.DevLinkRequest{ExternalUserID: user, MerchantID: 1,
		Vault: &client.DevVault{Outcome: "failed"}}); err != nil {
		t.Fatal(err)
	}
	for _, ev := range h.events(h.clientID) {
		var env envelope
		if err := json.Unmarshal(ev.Payload, &env); err != nil {
			t.Fatal(err)
		}
		if env.Event == "AUTHENTICATED" && env.ExternalUserID == user && env.TaskID != nil {
			return *env.TaskID
		}
	}
	t.Fatalf("no AUTHENTICATED with a task for %s", user)
	return 0
}
