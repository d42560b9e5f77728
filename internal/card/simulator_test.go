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

// Task ids are in [1, 2^53), ordered by the millisecond they were made in,
// and random within it.
func TestNewTaskIDOrdersByTime(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	seen := map[int64]bool{}
	prev := int64(0)
	for i := range 1000 {
		when := at.Add(time.Duration(i/10) * time.Millisecond) // ten ids a millisecond
		id := newTaskID(when)
		if id <= 0 || id >= 1<<53 {
			t.Fatalf("id %d out of [1, 2^53)", id)
		}
		if ms := id >> 12; ms != when.UnixMilli()-taskIDEpoch {
			t.Fatalf("id %d holds millisecond %d, want %d", id, ms, when.UnixMilli()-taskIDEpoch)
		}
		if i%10 == 0 && id <= prev {
			t.Fatalf("an id of a later millisecond, %d, is not above %d", id, prev)
		}
		prev = max(prev, id)
		seen[id&0xfff] = true
	}
	if len(seen) < 500 {
		t.Fatalf("1,000 ids drew only %d distinct low bits", len(seen))
	}
	// A clock outside the ids' years gets random ids, not one
	// millisecond's 4,096.
	for _, when := range []time.Time{time.Unix(0, 0), time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)} {
		high := map[int64]bool{}
		for range 100 {
			id := newTaskID(when)
			if id <= 0 || id >= 1<<53 {
				t.Fatalf("at %v: id %d out of [1, 2^53)", when, id)
			}
			high[id>>12] = true
		}
		if len(high) < 90 {
			t.Fatalf("at %v: 100 ids share %d values above their low 12 bits", when, len(high))
		}
	}
}
