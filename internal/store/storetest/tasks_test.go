package storetest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

func TestTasks(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		newClient(t, st, "a")
		newClient(t, st, "b")
		u := newUser(t, st, "a", "user-1")
		acct, err := st.AccountLink(ctx, &store.AccountLinkParams{ID: uuid.NewString(), ClientID: "a", UserID: u.ID,
			MerchantID: 1, Now: t0})
		if err != nil {
			t.Fatal(err)
		}
		deadline := t0.Add(15 * time.Second)
		task := &store.Task{ID: 1 << 52, ClientID: "a", ExternalUserID: "user-1", UserID: u.ID, AccountID: acct.ID,
			MerchantID: 1, Product: "card_switcher", CardID: ptr("card-1"), Status: store.TaskAwaitingCard,
			Metadata: json.RawMessage(`{"k":"v"}`), CardDeadline: &deadline, CreatedAt: t0, UpdatedAt: t0}
		if err := st.TaskInsert(ctx, task); err != nil {
			t.Fatal(err)
		}
		if err := st.TaskInsert(ctx, task); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("same id again: %v, want ErrConflict", err)
		}
		tooBig := *task
		tooBig.ID = 1 << 53
		if err := st.TaskInsert(ctx, &tooBig); err == nil {
			t.Fatal("an id of 2^53 was stored")
		}
		got, err := st.TaskGet(ctx, "a", task.ID)
		if err != nil || got.Status != store.TaskAwaitingCard || *got.CardID != "card-1" || string(got.Metadata) != `{"k":"v"}` ||
			!got.CardDeadline.Equal(deadline) || got.SessionID != nil || got.CardBrand != nil || got.ExternalUserID != "user-1" {
			t.Fatalf("get = %+v, %v", got, err)
		}
		if _, err := st.TaskGet(ctx, "b", task.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another tenant read the task: %v", err)
		}

		summary := store.CardSummary{Brand: "visa", LastFour: "4242", ExpMonth: 12, ExpYear: 2031}
		attach := func(clientID string, at time.Time) (*store.Task, error) {
			return st.TaskAttachCard(ctx, &store.TaskAttachCardParams{ClientID: clientID, ID: task.ID, Card: summary, Now: at})
		}
		if _, err := attach("b", t0); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another tenant attached a card: %v", err)
		}
		if _, err := attach("a", deadline); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a card at the deadline was taken: %v", err)
		}
		got, err = attach("a", deadline.Add(-time.Microsecond))
		if err != nil || got.Status != store.TaskPending || *got.CardLastFour != "4242" || *got.CardExpYear != 2031 {
			t.Fatalf("attach = %+v, %v", got, err)
		}
		if _, err := attach("a", t0); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a second card was taken: %v", err)
		}
		if err := st.TaskSeal(ctx, "a", task.ID, []byte("sealed")); err != nil {
			t.Fatal(err)
		}

		pending, err := st.TaskListPending(ctx, &store.TaskListPendingParams{MerchantID: 1, Limit: 10})
		if err != nil || len(pending) != 1 || pending[0].ID != task.ID {
			t.Fatalf("pending = %+v, %v", pending, err)
		}
		if other, _ := st.TaskListPending(ctx, &store.TaskListPendingParams{MerchantID: 2, Limit: 10}); len(other) != 0 {
			t.Fatalf("merchant 2's pending tasks = %+v", other)
		}

		// Many claim at once: one gets the card, and the row keeps none.
		var wg sync.WaitGroup
		var mu sync.Mutex
		var won [][]byte
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := st.TaskClaim(ctx, "a", task.ID, t0.Add(time.Minute))
				if err == nil {
					mu.Lock()
					won = append(won, c.CardSealed)
					mu.Unlock()
				} else if !errors.Is(err, store.ErrNotFound) {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if len(won) != 1 || !bytes.Equal(won[0], []byte("sealed")) {
			t.Fatalf("claims won: %q", won)
		}
		if got, _ := st.TaskGet(ctx, "a", task.ID); got.CardSealed != nil || got.ClaimedAt == nil {
			t.Fatalf("claimed task = %+v", got)
		}
		if list, _ := st.TaskListPending(ctx, &store.TaskListPendingParams{Limit: 10}); len(list) != 0 {
			t.Fatalf("a claimed task is listed: %+v", list)
		}

		finish := func(from, status string) (*store.Task, error) {
			return st.TaskFinish(ctx, &store.TaskFinishParams{ClientID: "a", ID: task.ID, From: from, Status: status,
				Reason: ptr("card"), Now: t0.Add(2 * time.Minute)})
		}
		if _, err := finish(store.TaskAwaitingCard, store.TaskFailed); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("finished from the wrong state: %v", err)
		}
		got, err = finish("", store.TaskFailed)
		if err != nil || got.Status != store.TaskFailed || *got.Reason != "card" || got.FinishedAt == nil ||
			*got.CardLastFour != "4242" {
			t.Fatalf("finish = %+v, %v", got, err)
		}
		if _, err := finish("", store.TaskSucceeded); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("finished twice: %v", err)
		}

		// Vault: the card summary comes with the end of the task.
		vault := &store.Task{ID: 7, ClientID: "a", ExternalUserID: "user-1", UserID: u.ID, AccountID: acct.ID, MerchantID: 1,
			Product: "vault", Status: store.TaskPending, CreatedAt: t0, UpdatedAt: t0}
		if err := st.TaskInsert(ctx, vault); err != nil {
			t.Fatal(err)
		}
		got, err = st.TaskFinish(ctx, &store.TaskFinishParams{ClientID: "a", ID: 7, From: store.TaskPending,
			Status: store.TaskSucceeded, Card: &summary, Now: t0})
		if err != nil || *got.CardBrand != "visa" || *got.CardExpMonth != 12 || got.Reason != nil {
			t.Fatalf("vault finish = %+v, %v", got, err)
		}
	})
}

// A taken task id is ErrConflict and leaves the transaction usable, so
// that the caller can draw another id in it: on PostgreSQL a failed
// statement would abort the transaction.
func TestTaskIDTakenInTransaction(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		newClient(t, st, "a")
		u := newUser(t, st, "a", "user-1")
		acct := newAccount(t, st, u, 1)
		task := func(id int64) *store.Task {
			return &store.Task{ID: id, ClientID: "a", ExternalUserID: "user-1", UserID: u.ID, AccountID: acct.ID,
				MerchantID: 1, Product: "card_switcher", Status: store.TaskPending, CreatedAt: t0, UpdatedAt: t0}
		}
		if err := st.TaskInsert(ctx, task(7)); err != nil {
			t.Fatal(err)
		}
		err := st.InTx(ctx, func(ex store.Executor) error {
			if err := ex.TaskInsert(ctx, task(7)); !errors.Is(err, store.ErrConflict) {
				t.Errorf("a taken id in a transaction: %v, want ErrConflict", err)
			}
			return ex.TaskInsert(ctx, task(8))
		})
		if err != nil {
			t.Fatalf("the transaction after a taken id: %v", err)
		}
		if _, err := st.TaskGet(ctx, "a", 8); err != nil {
			t.Fatalf("the task inserted after a taken id: %v", err)
		}
	})
}

func TestAccountActionsAndScopes(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		newClient(t, st, "a")
		u := newUser(t, st, "a", "user-1")
		acct, err := st.AccountLink(ctx, &store.AccountLinkParams{ID: uuid.NewString(), ClientID: "a", UserID: u.ID,
			MerchantID: 1, Scopes: []string{}, Now: t0})
		if err != nil {
			t.Fatal(err)
		}
		get := func(product string) *store.Account {
			t.Helper()
			a, err := st.AccountGet(ctx, &store.AccountGetParams{ClientID: "a", UserID: u.ID, MerchantID: 1, Product: product})
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
		if err := st.AccountLifecycleSet(ctx, &store.AccountLifecycleSetParams{ClientID: "a", AccountID: acct.ID,
			Product: "card_switcher", Status: "authenticated", ActionStatus: "pending", At: t0}); err != nil {
			t.Fatal(err)
		}
		if err := st.AccountLifecycleSet(ctx, &store.AccountLifecycleSetParams{ClientID: "a", AccountID: acct.ID,
			Product: "vault", Status: "authenticated", ActionStatus: "success", At: t0.Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
		// The card switch ends after the vault login: only its product's
		// action changes, with the time of its attempt.
		if err := st.AccountActionSet(ctx, &store.AccountActionSetParams{ClientID: "a", AccountID: acct.ID,
			Product: "card_switcher", Status: "failure", AttemptedAt: t0, Now: t0.Add(2 * time.Minute)}); err != nil {
			t.Fatal(err)
		}
		if a := get("card_switcher"); *a.LastActionStatus != "failure" || !a.LastActionAt.Equal(t0) || *a.LifecycleStatus != "authenticated" {
			t.Fatalf("card_switcher = %+v", a)
		}
		if a := get("vault"); *a.LastActionStatus != "success" || !a.LastActionAt.Equal(t0.Add(time.Minute)) {
			t.Fatalf("vault = %+v", a)
		}
		if a := get("transaction_link"); a.LastActionStatus != nil || a.LastActionAt != nil || a.LifecycleStatus != nil {
			t.Fatalf("transaction_link = %+v", a)
		}
		if err := st.AccountActionSet(ctx, &store.AccountActionSetParams{ClientID: "b", AccountID: acct.ID,
			Product: "vault", Status: "failure", AttemptedAt: t0, Now: t0}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another tenant set an action: %v", err)
		}

		for range 2 { // adding twice keeps one
			if err := st.AccountAddScope(ctx, "a", acct.ID, "update_card", t0); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.AccountAddScope(ctx, "a", acct.ID, "cancel", t0); err != nil {
			t.Fatal(err)
		}
		if a := get(""); len(a.Scopes) != 2 || a.Scopes[0] != "update_card" || a.Scopes[1] != "cancel" {
			t.Fatalf("scopes = %v", a.Scopes)
		}
		// Linking again keeps the scopes; a disconnected account takes none.
		if _, err := st.AccountLink(ctx, &store.AccountLinkParams{ID: uuid.NewString(), ClientID: "a", UserID: u.ID,
			MerchantID: 1, Scopes: []string{}, Now: t0}); err != nil {
			t.Fatal(err)
		}
		if a := get(""); len(a.Scopes) != 2 {
			t.Fatalf("scopes after linking again = %v", a.Scopes)
		}
		if _, _, err := st.AccountSetConnection(ctx, &store.AccountSetConnectionParams{
			AccountRef: store.AccountRef{ClientID: "a", UserID: u.ID, MerchantID: 1, Now: t0},
			Status:     "disconnected", Scopes: []string{}}); err != nil {
			t.Fatal(err)
		}
		if err := st.AccountAddScope(ctx, "a", acct.ID, "update_card", t0); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a disconnected account took a scope: %v", err)
		}
	})
}

func TestJWEKeyRetirement(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		for i, kid := range []string{"k1", "k2"} {
			if _, err := st.JWEKeyInsert(ctx, &store.JWEKeyInsertParams{KID: kid, PublicJWK: json.RawMessage(`{}`),
				PrivateSealed: []byte("private-" + kid), CreatedAt: t0.Add(time.Duration(i) * time.Second)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.JWEKeyRetireOthers(ctx, "k2", t0.Add(time.Hour), t0); err != nil {
			t.Fatal(err)
		}
		// Rotating again with a longer grace keeps k1's sooner time.
		if err := st.JWEKeyRetireOthers(ctx, "k2", t0.Add(5*time.Hour), t0); err != nil {
			t.Fatal(err)
		}
		keys, err := st.JWEKeyList(ctx)
		if err != nil || len(keys) != 2 || keys[0].KID != "k2" || keys[0].RetiresAt != nil ||
			!keys[1].RetiresAt.Equal(t0.Add(time.Hour)) || string(keys[1].PrivateSealed) != "private-k1" {
			t.Fatalf("keys = %+v, %v", keys, err)
		}
		if usable, _ := st.JWEKeyListUsable(ctx, t0.Add(time.Hour)); len(usable) != 1 || usable[0].KID != "k2" {
			t.Fatalf("usable at k1's retirement = %+v", usable)
		}
		// Once retired, a key's private half is erased at the next rotation.
		if err := st.JWEKeyRetireOthers(ctx, "k2", t0.Add(5*time.Hour), t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		keys, _ = st.JWEKeyList(ctx)
		if len(keys[1].PrivateSealed) != 0 || len(keys[0].PrivateSealed) == 0 {
			t.Fatalf("after retirement: %q, %q", keys[0].PrivateSealed, keys[1].PrivateSealed)
		}
	})
}

func ptr[T any](v T) *T { return &v }
