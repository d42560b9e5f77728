package storetest_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// The conformance suite: every test runs on SQLite and, when configured, on
// PostgreSQL, each in an isolated database.

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 123456000, time.UTC)

func newClient(t *testing.T, ex store.Executor, id string) *store.Client {
	t.Helper()
	c, err := ex.ClientInsert(context.Background(), &store.ClientInsertParams{ID: id, Name: "Client " + id, Environment: "development", CreatedAt: t0})
	if err != nil {
		t.Fatalf("ClientInsert: %v", err)
	}
	return c
}

func newUser(t *testing.T, ex store.Executor, clientID, externalUserID string) *store.User {
	t.Helper()
	u, err := ex.UserGetOrCreate(context.Background(), &store.UserGetOrCreateParams{
		ID: uuid.NewString(), ClientID: clientID, ExternalUserID: externalUserID, CreatedAt: t0})
	if err != nil {
		t.Fatalf("UserGetOrCreate: %v", err)
	}
	return u
}

// newAccount links merchantID to u.
func newAccount(t *testing.T, ex store.Executor, u *store.User, merchantID int64) *store.Account {
	t.Helper()
	a, err := ex.AccountLink(context.Background(), &store.AccountLinkParams{ID: uuid.NewString(), ClientID: u.ClientID,
		UserID: u.ID, MerchantID: merchantID, Now: t0})
	if err != nil {
		t.Fatalf("AccountLink: %v", err)
	}
	return a
}

func TestMigrations(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		if err := st.Migrate(ctx); err != nil { // second run is a no-op
			t.Fatalf("Migrate again: %v", err)
		}
		applied, latest, err := st.MigrationVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if applied != latest || latest < 1 {
			t.Fatalf("applied %d, latest %d", applied, latest)
		}
	})
}

func TestClients(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		if n, _ := st.ClientCount(ctx); n != 0 {
			t.Fatalf("count on empty store = %d", n)
		}
		a := newClient(t, st, "client-a")
		newClient(t, st, "client-b")
		if _, err := st.ClientInsert(ctx, &store.ClientInsertParams{ID: "client-a", Name: "dup", Environment: "development", CreatedAt: t0}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("duplicate insert: got %v, want ErrConflict", err)
		}
		got, err := st.ClientGetByID(ctx, "client-a")
		if err != nil {
			t.Fatal(err)
		}
		if *got != *a || !got.CreatedAt.Equal(t0) || got.CreatedAt.Location() != time.UTC {
			t.Fatalf("got %+v, want %+v", got, a)
		}
		if _, err := st.ClientGetByID(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("get unknown: %v", err)
		}
		list, err := st.ClientList(ctx)
		if err != nil || len(list) != 2 {
			t.Fatalf("list: %v %d", err, len(list))
		}
		if n, _ := st.ClientCount(ctx); n != 2 {
			t.Fatalf("count = %d", n)
		}
	})
}

func TestClientSecrets(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		newClient(t, st, "c1")
		insert := func(hash string, at time.Time) {
			t.Helper()
			if err := st.ClientSecretInsert(ctx, &store.ClientSecretInsertParams{ID: uuid.NewString(), ClientID: "c1", Hash: []byte(hash), Sealed: []byte("sealed-" + hash), CreatedAt: at}); err != nil {
				t.Fatal(err)
			}
		}
		insert("h1", t0)
		if err := st.ClientSecretExpireCurrent(ctx, "c1", t0.Add(24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		insert("h2", t0.Add(time.Minute))

		live, err := st.ClientSecretListLive(ctx, "c1", t0.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if len(live) != 2 || string(live[0].Hash) != "h2" || live[0].ExpiresAt != nil || live[1].ExpiresAt == nil {
			t.Fatalf("live during grace = %+v", live)
		}
		live, _ = st.ClientSecretListLive(ctx, "c1", t0.Add(25*time.Hour))
		if len(live) != 1 || string(live[0].Hash) != "h2" || string(live[0].Sealed) != "sealed-h2" {
			t.Fatalf("live after grace = %+v", live)
		}
	})
}

func TestUsersAndSequence(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		newClient(t, st, "a")
		newClient(t, st, "b")
		ua := newUser(t, st, "a", "user-1")
		again := newUser(t, st, "a", "user-1")
		ub := newUser(t, st, "b", "user-1")
		if ua.ID != again.ID {
			t.Fatalf("get or create made a second user")
		}
		if ua.ID == ub.ID {
			t.Fatalf("two clients share a user")
		}
		if _, err := st.UserGet(ctx, "b", "user-2"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown user: %v", err)
		}
		for want := int64(1); want <= 3; want++ {
			seq, err := st.UserNextEventSequence(ctx, "a", ua.ID)
			if err != nil || seq != want {
				t.Fatalf("sequence = %d, %v; want %d", seq, err, want)
			}
		}
		if seq, _ := st.UserNextEventSequence(ctx, "b", ub.ID); seq != 1 {
			t.Fatalf("sequences are not per user: %d", seq)
		}
		if _, err := st.UserNextEventSequence(ctx, "b", ua.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("other tenant's user: %v", err)
		}
	})
}

func TestSessions(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		newClient(t, st, "a")
		newClient(t, st, "b")
		u := newUser(t, st, "a", "user-1")
		card, merchant := "card-1", int64(44)
		s, err := st.SessionInsert(ctx, &store.SessionInsertParams{
			ID: uuid.NewString(), ClientID: "a", UserID: u.ID, Type: "card_switcher", TokenHash: []byte("hash-1"),
			CardID: &card, MerchantID: &merchant, ProcessorTokenSealed: []byte{1, 2, 3},
			Metadata: json.RawMessage(`{"k":"v"}`), CreatedAt: t0, ExpiresAt: t0.Add(30 * time.Minute),
		})
		if err != nil {
			t.Fatal(err)
		}
		if s.ExternalUserID != "user-1" || *s.CardID != card || *s.MerchantID != merchant {
			t.Fatalf("inserted session = %+v", s)
		}
		var md map[string]string
		if err := json.Unmarshal(s.Metadata, &md); err != nil || md["k"] != "v" {
			t.Fatalf("metadata = %s", s.Metadata)
		}
		got, err := st.SessionGetByTokenHash(ctx, "a", []byte("hash-1"))
		if err != nil || got.ID != s.ID {
			t.Fatalf("get by hash: %v", err)
		}
		if _, err := st.SessionGetByTokenHash(ctx, "b", []byte("hash-1")); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("other tenant read the session: %v", err)
		}
		if got, err := st.SessionGet(ctx, "a", s.ID); err != nil || got.ID != s.ID || got.ExternalUserID != "user-1" {
			t.Fatalf("get by id: %v %+v", err, got)
		}
		if _, err := st.SessionGet(ctx, "b", s.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("other tenant read the session by id: %v", err)
		}
		later := t0.Add(time.Hour)
		ext, err := st.SessionUpdateExpiry(ctx, &store.SessionUpdateExpiryParams{ClientID: "a", ID: s.ID, ExpiresAt: later})
		if err != nil || !ext.ExpiresAt.Equal(later) {
			t.Fatalf("extend: %v %v", err, ext)
		}
		if _, err := st.SessionUpdateExpiry(ctx, &store.SessionUpdateExpiryParams{ClientID: "b", ID: s.ID, ExpiresAt: later}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("other tenant extended the session: %v", err)
		}
		noMeta, err := st.SessionInsert(ctx, &store.SessionInsertParams{ID: uuid.NewString(), ClientID: "a", UserID: u.ID,
			Type: "link", TokenHash: []byte("hash-2"), CreatedAt: t0, ExpiresAt: t0.Add(time.Minute)})
		if err != nil || noMeta.Metadata != nil || noMeta.CardID != nil {
			t.Fatalf("session without options: %v %+v", err, noMeta)
		}
	})
}

func TestAccounts(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		newClient(t, st, "a")
		newClient(t, st, "b")
		u := newUser(t, st, "a", "user-1")
		other := newUser(t, st, "b", "user-1")
		link := func(clientID, userID string, merchantID int64, at time.Time) *store.Account {
			t.Helper()
			a, err := st.AccountLink(ctx, &store.AccountLinkParams{ID: uuid.NewString(), ClientID: clientID, UserID: userID,
				MerchantID: merchantID, Scopes: []string{"update_card"}, Now: at})
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
		a1 := link("a", u.ID, 10, t0)
		link("a", u.ID, 20, t0.Add(time.Second))
		link("b", other.ID, 30, t0)
		if a1.ConnectionStatus != "connected" || len(a1.Scopes) != 1 || a1.LifecycleStatus != nil || a1.LastActionAt != nil {
			t.Fatalf("new account = %+v", a1)
		}

		list, err := st.AccountList(ctx, &store.AccountListParams{ClientID: "a", ExternalUserID: "user-1"})
		if err != nil || len(list) != 2 || list[0].MerchantID != 10 || list[1].MerchantID != 20 {
			t.Fatalf("list = %v %+v", err, list)
		}
		// Tenant b's user-1 is another person: only b's account shows.
		if l, _ := st.AccountList(ctx, &store.AccountListParams{ClientID: "b", ExternalUserID: "user-1"}); len(l) != 1 || l[0].MerchantID != 30 || l[0].ClientID != "b" {
			t.Fatalf("tenant b's list = %+v", l)
		}

		// Lifecycle is per product; without a product, the latest attempt wins.
		set := func(product, status string, at time.Time) {
			t.Helper()
			if err := st.AccountLifecycleSet(ctx, &store.AccountLifecycleSetParams{ClientID: "a", AccountID: a1.ID,
				Product: product, Status: status, ActionStatus: "success", At: at}); err != nil {
				t.Fatal(err)
			}
		}
		set("card_switcher", "authenticated", t0.Add(time.Minute))
		set("transaction_link", "failed", t0.Add(2*time.Minute))
		get := func(product string) *store.Account {
			t.Helper()
			a, err := st.AccountGet(ctx, &store.AccountGetParams{ClientID: "a", UserID: u.ID, MerchantID: 10, Product: product})
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
		if s := get("card_switcher").LifecycleStatus; s == nil || *s != "authenticated" {
			t.Fatalf("card_switcher lifecycle = %v", s)
		}
		if s := get("").LifecycleStatus; s == nil || *s != "failed" {
			t.Fatalf("latest lifecycle = %v", s)
		}
		if s := get("vault").LifecycleStatus; s != nil {
			t.Fatalf("vault lifecycle = %v", *s)
		}
		if a := get(""); a.LastActionAt == nil || !a.LastActionAt.Equal(t0.Add(2*time.Minute)) || *a.LastActionStatus != "success" {
			t.Fatalf("last action = %+v", a)
		}

		disconnect := &store.AccountSetConnectionParams{
			AccountRef: store.AccountRef{ClientID: "a", UserID: u.ID, MerchantID: 10, Now: t0.Add(3 * time.Minute)},
			Status:     "disconnected", Scopes: nil}
		dis, changed, err := st.AccountSetConnection(ctx, disconnect)
		if err != nil || !changed || dis.ConnectionStatus != "disconnected" || len(dis.Scopes) != 0 || dis.Scopes == nil {
			t.Fatalf("disconnect: %v %v %+v", err, changed, dis)
		}
		if _, changed, err := st.AccountSetConnection(ctx, disconnect); err != nil || changed {
			t.Fatalf("disconnect again: changed %v, %v", changed, err)
		}
		disconnect.MerchantID = 99
		if _, _, err := st.AccountSetConnection(ctx, disconnect); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("disconnect a missing account: %v", err)
		}

		ref := &store.AccountRef{ClientID: "a", UserID: u.ID, MerchantID: 10, Now: t0.Add(4 * time.Minute)}
		if err := st.AccountUnlink(ctx, ref); err != nil {
			t.Fatal(err)
		}
		if err := st.AccountUnlink(ctx, ref); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unlink twice: %v", err)
		}
		if _, err := st.AccountGet(ctx, &store.AccountGetParams{ClientID: "a", UserID: u.ID, MerchantID: 10}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("get unlinked: %v", err)
		}
		if err := st.AccountUnlink(ctx, &store.AccountRef{ClientID: "b", UserID: u.ID, MerchantID: 20, Now: t0}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("tenant b unlinked tenant a's account: %v", err)
		}

		relinked := link("a", u.ID, 10, t0.Add(5*time.Minute))
		if relinked.ID != a1.ID || relinked.ConnectionStatus != "connected" || !relinked.LinkedAt.Equal(t0.Add(5*time.Minute)) {
			t.Fatalf("relinked = %+v", relinked)
		}
	})
}

// A user's accounts version changes with every change to the user's
// accounts, whichever store (process or node) on the database made it, and
// only then.
func TestUserAccountsVersion(t *testing.T) {
	t.Parallel()
	storetest.ForEachPair(t, func(t *testing.T, st, other store.Store) {
		ctx := context.Background()
		newClient(t, st, "a")
		u := newUser(t, st, "a", "user-1")
		bystander := newUser(t, st, "a", "user-2")
		version := func(reader store.Store) int64 {
			t.Helper()
			id, v, err := reader.UserAccountsVersion(ctx, "a", "user-1")
			if err != nil || id != u.ID {
				t.Fatalf("UserAccountsVersion = %q, %d, %v; want user %s", id, v, err, u.ID)
			}
			return v
		}
		last := version(st)
		changes := []struct {
			name   string
			writer store.Store
			change func(w store.Store) error
		}{
			{"a link", st, func(w store.Store) error {
				_, err := w.AccountLink(ctx, &store.AccountLinkParams{ID: uuid.NewString(), ClientID: "a", UserID: u.ID,
					MerchantID: 10, Now: t0})
				return err
			}},
			{"a link through the other store", other, func(w store.Store) error {
				_, err := w.AccountLink(ctx, &store.AccountLinkParams{ID: uuid.NewString(), ClientID: "a", UserID: u.ID,
					MerchantID: 20, Now: t0})
				return err
			}},
			{"a disconnection in a transaction", other, func(w store.Store) error {
				return w.InTx(ctx, func(ex store.Executor) error {
					_, _, err := ex.AccountSetConnection(ctx, &store.AccountSetConnectionParams{
						AccountRef: store.AccountRef{ClientID: "a", UserID: u.ID, MerchantID: 10, Now: t0}, Status: "disconnected"})
					return err
				})
			}},
			{"an unlink", st, func(w store.Store) error {
				return w.AccountUnlink(ctx, &store.AccountRef{ClientID: "a", UserID: u.ID, MerchantID: 20, Now: t0})
			}},
		}
		for _, c := range changes {
			if err := c.change(c.writer); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			for _, reader := range []store.Store{st, other} {
				if v := version(reader); v == last {
					t.Fatalf("after %s the version is still %d", c.name, v)
				}
			}
			last = version(st)
		}
		newAccount(t, other, bystander, 30)
		if v := version(st); v != last {
			t.Fatalf("another user's link changed the version from %d to %d", last, v)
		}
		if _, _, err := st.UserAccountsVersion(ctx, "a", "nobody"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("an unknown user's version: %v", err)
		}
	})
}

func TestEvents(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		newClient(t, st, "a")
		newClient(t, st, "b")
		u := newUser(t, st, "a", "user-1")
		ext := "user-1"
		// The payload keeps its exact bytes (key order, spacing): deliveries
		// and their signatures depend on it.
		payload := `{"event": "ACCOUNT_LOGIN_REQUIRED",  "b":1,"a":2}`
		ev, err := st.EventInsert(ctx, &store.EventInsertParams{ID: uuid.NewString(), ClientID: "a", UserID: &u.ID,
			ExternalUserID: &ext, Type: "ACCOUNT_LOGIN_REQUIRED", Sequence: 1, Payload: json.RawMessage(payload), CreatedAt: t0})
		if err != nil {
			t.Fatal(err)
		}
		list, err := st.EventList(ctx, &store.EventListParams{ClientID: "a"})
		if err != nil || len(list) != 1 || list[0].ID != ev.ID || list[0].Type != "ACCOUNT_LOGIN_REQUIRED" {
			t.Fatalf("list = %v %+v", err, list)
		}
		if string(list[0].Payload) != payload {
			t.Fatalf("payload changed: %s", list[0].Payload)
		}
		if l, _ := st.EventList(ctx, &store.EventListParams{ClientID: "b"}); len(l) != 0 {
			t.Fatalf("tenant b sees tenant a's events")
		}
	})
}

func TestEventsAreAppendOnly(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		newClient(t, st, "a")
		if _, err := st.EventInsert(ctx, &store.EventInsertParams{ID: uuid.NewString(), ClientID: "a", Type: "X", Sequence: 1,
			Payload: json.RawMessage(`{}`), CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
		err := st.InTx(ctx, func(ex store.Executor) error {
			raw := ex.(interface{ Raw() any }).Raw()
			return execRaw(ctx, raw, `UPDATE events SET type = 'Y'`)
		})
		if err == nil {
			t.Fatal("updating an event succeeded")
		}
	})
}

func TestInTxRollsBack(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		boom := errors.New("boom")
		err := st.InTx(ctx, func(ex store.Executor) error {
			newClient(t, ex, "rolled-back")
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("InTx = %v", err)
		}
		if _, err := st.ClientGetByID(ctx, "rolled-back"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("rolled-back insert is visible: %v", err)
		}
		func() {
			defer func() {
				if p := recover(); p != "boom" {
					t.Fatalf("recovered %v, want InTx to let fn's panic go on", p)
				}
			}()
			_ = st.InTx(ctx, func(ex store.Executor) error {
				newClient(t, ex, "panicked")
				panic("boom")
			})
		}()
		if _, err := st.ClientGetByID(ctx, "panicked"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a panicking transaction's insert is visible: %v", err)
		}
		canceled, cancel := context.WithCancel(ctx)
		cancel()
		err = st.InTx(canceled, func(ex store.Executor) error {
			t.Error("fn ran with its context ended")
			return nil
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("InTx with its context ended = %v", err)
		}
		if err := st.InTx(ctx, func(ex store.Executor) error { newClient(t, ex, "committed"); return nil }); err != nil {
			t.Fatal(err)
		}
		if _, err := st.ClientGetByID(ctx, "committed"); err != nil {
			t.Fatalf("committed insert: %v", err)
		}
	})
}

func TestJWEKeys(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		for i, kid := range []string{"k1", "k2"} {
			if _, err := st.JWEKeyInsert(ctx, &store.JWEKeyInsertParams{KID: kid, PublicJWK: json.RawMessage(`{"kid": "` + kid + `"}`),
				PrivateSealed: []byte("sealed"), CreatedAt: t0.Add(time.Duration(i) * time.Hour)}); err != nil {
				t.Fatal(err)
			}
		}
		keys, err := st.JWEKeyListUsable(ctx, t0.Add(2*time.Hour))
		if err != nil || len(keys) != 2 || keys[0].KID != "k2" {
			t.Fatalf("usable = %v %+v", err, keys)
		}
	})
}
