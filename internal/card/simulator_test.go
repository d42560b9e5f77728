package card

import (
	"reflect"
	"testing"
	"time"

	"github.com/hitchdev/hitch/internal/store"
)

func TestByAccount(t *testing.T) {
	t.Parallel()
	tasks := []*store.Task{{ID: 1, AccountID: "a"}, {ID: 2, AccountID: "b"}, {ID: 3, AccountID: "a"}, {ID: 4, AccountID: "c"}, {ID: 5, AccountID: "b"}}
	var got [][]int64
	for _, g := range byAccount(tasks) {
		var ids []int64
		for _, t := range g {
			ids = append(ids, t.ID)
		}
		got = append(got, ids)
	}
	if want := [][]int64{{1, 3}, {2, 5}, {4}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("byAccount = %v, want %v", got, want)
	}
}

func TestSimulatedResult(t *testing.T) {
	t.Parallel()
	s := &Service{now: time.Now}
	card := &store.Task{Product: "card_switcher", AccountID: "a"}
	vault := &store.Task{Product: "vault", AccountID: "a"}
	for _, tc := range []struct {
		task     *store.Task
		decision *string
		ok       bool
		reason   string
		withCard bool
	}{
		{card, simulation(false, ""), true, "", false},
		{card, simulation(true, "card expired"), false, "card expired", false},
		{card, simulation(true, ""), false, "other", false},
		{card, simulation(true, "no such reason"), false, "other", false},
		{vault, simulation(false, ""), true, "", true},
		{vault, simulation(true, ""), false, ReasonNotRetrieved, false},
	} {
		r := s.simulatedResult(tc.task, *tc.decision)
		if r.Succeeded != tc.ok || r.Reason != tc.reason || (r.Card != nil) != tc.withCard {
			t.Errorf("%s %q: %+v", tc.task.Product, *tc.decision, r)
		}
	}
}
