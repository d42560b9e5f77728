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

func TestDetectionRequests(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		newClient(t, st, "a")
		newClient(t, st, "b")
		u := newUser(t, st, "a", "user-1")
		sessionID := uuid.NewString()
		req := &store.DetectionRequest{ID: uuid.NewString(), ClientID: "a", UserID: u.ID, SessionID: &sessionID,
			EmailSealed: []byte{1, 2}, ProcessorTokenSealed: []byte{3}, Metadata: json.RawMessage(`{"k":"v"}`), CreatedAt: t0}
		if err := st.DetectionRequestInsert(ctx, req); err != nil {
			t.Fatal(err)
		}
		later := &store.DetectionRequest{ID: uuid.NewString(), ClientID: "a", UserID: u.ID, PhoneSealed: []byte{4},
			CreatedAt: t0.Add(time.Second)}
		if err := st.DetectionRequestInsert(ctx, later); err != nil {
			t.Fatal(err)
		}
		got, err := st.DetectionRequestGet(ctx, "a", req.ID)
		if err != nil || got.Status != store.DetectionPending || got.ExternalUserID != "user-1" || *got.SessionID != sessionID ||
			string(got.EmailSealed) != "\x01\x02" || got.PhoneSealed != nil || got.Found != nil || !got.CreatedAt.Equal(t0) ||
			string(got.Metadata) != `{"k":"v"}` || later.Metadata != nil {
			t.Fatalf("get = %+v, %v", got, err)
		}
		if _, err := st.DetectionRequestGet(ctx, "b", req.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another tenant read the request: %v", err)
		}
		// A request with a detect unit open is not done; with its last unit
		// ended, it is, once.
		unit := &store.Work{ID: "wk_1", Kind: store.WorkDetect, ClientID: "a", ExternalUserID: "user-1", MerchantID: 1,
			Product: "detect", RequestID: &req.ID, Status: store.WorkPending, CreatedAt: t0, UpdatedAt: t0}
		if _, err := st.WorkInsert(ctx, unit); err != nil {
			t.Fatal(err)
		}
		if w, err := st.WorkGet(ctx, unit.ID); err != nil || w.RequestID == nil || *w.RequestID != req.ID {
			t.Fatalf("unit = %+v, %v", w, err)
		}
		if err := st.DetectionRequestFound(ctx, "a", req.ID, 2); err != nil {
			t.Fatal(err)
		}
		if err := st.DetectionRequestFound(ctx, "b", req.ID, 5); err != nil {
			t.Fatal(err)
		}
		if done, err := st.DetectionRequestSettle(ctx, "a", req.ID, t0); err != nil || done {
			t.Fatalf("settled with a unit open: %v, %v", done, err)
		}
		if _, err := st.WorkSet(ctx, &store.WorkSetParams{ID: unit.ID, From: []string{store.WorkPending},
			Status: store.WorkDone, Now: t0}); err != nil {
			t.Fatal(err)
		}
		if done, err := st.DetectionRequestSettle(ctx, "b", req.ID, t0); err != nil || done {
			t.Fatalf("another tenant settled the request: %v, %v", done, err)
		}
		if done, err := st.DetectionRequestSettle(ctx, "a", req.ID, t0.Add(time.Minute)); err != nil || !done {
			t.Fatalf("settle: %v, %v", done, err)
		}
		if done, err := st.DetectionRequestSettle(ctx, "a", req.ID, t0); err != nil || done {
			t.Fatalf("settled twice: %v, %v", done, err)
		}
		if err := st.DetectionRequestFound(ctx, "a", req.ID, 1); err != nil {
			t.Fatal(err)
		}
		got, err = st.DetectionRequestGet(ctx, "a", req.ID)
		if err != nil || got.Status != store.DetectionDone || *got.Found != 3 || !got.FinishedAt.Equal(t0.Add(time.Minute)) ||
			got.EmailSealed != nil || string(got.ProcessorTokenSealed) != "\x03" {
			t.Fatalf("done = %+v, %v", got, err)
		}
		// Without units, a request settles at once, having found nothing.
		if done, err := st.DetectionRequestSettle(ctx, "a", later.ID, t0); err != nil || !done {
			t.Fatalf("settle without units: %v, %v", done, err)
		}
		if got, err := st.DetectionRequestGet(ctx, "a", later.ID); err != nil || *got.Found != 0 || got.PhoneSealed != nil {
			t.Fatalf("settled without units = %+v, %v", got, err)
		}
	})
}

func TestDetectedAccounts(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		newClient(t, st, "a")
		newClient(t, st, "b")
		u := newUser(t, st, "a", "user-1")
		other := newUser(t, st, "b", "user-1") // the same external id at another developer
		created := t0.AddDate(-3, 0, 0)
		detect := func(user *store.User, merchantID *int64, name, key string, pos int64) bool {
			t.Helper()
			inserted, err := st.DetectedAccountInsert(ctx, &store.DetectedAccount{ID: uuid.NewString(), ClientID: user.ClientID,
				UserID: user.ID, MerchantID: merchantID, Name: name, NameKey: key, LoginMethod: "GOOGLE_SSO",
				AccountCreatedAt: &created, Source: "email", Position: pos, DetectedAt: t0})
			if err != nil {
				t.Fatal(err)
			}
			return inserted
		}
		last, err := st.UserDetectionPositions(ctx, "a", u.ID, 3)
		if err != nil || last != 3 {
			t.Fatalf("positions = %d, %v", last, err)
		}
		if !detect(u, ptr(int64(1)), "Amazon", "#1", 1) || !detect(u, nil, "Patreon, Inc.", "patreon", 2) ||
			!detect(u, ptr(int64(4)), "Netflix", "#4", 3) {
			t.Fatal("a new detection was not inserted")
		}
		if detect(u, ptr(int64(1)), "Amazon", "#1", 4) {
			t.Fatal("the same key was inserted twice")
		}
		if !detect(other, ptr(int64(1)), "Amazon", "#1", 1) {
			t.Fatal("another developer's user could not have the same detection")
		}
		if last, err := st.UserDetectionPositions(ctx, "a", u.ID, 2); err != nil || last != 5 {
			t.Fatalf("positions = %d, %v", last, err)
		}
		if _, err := st.UserDetectionPositions(ctx, "b", u.ID, 1); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another tenant reserved positions: %v", err)
		}

		keys, err := st.DetectedAccountKeys(ctx, "a", u.ID)
		if err != nil || len(keys) != 3 || !keys["#1"] || !keys["patreon"] || !keys["#4"] {
			t.Fatalf("keys = %v, %v", keys, err)
		}
		if keys, err := st.DetectedAccountKeys(ctx, "b", u.ID); err != nil || len(keys) != 0 {
			t.Fatalf("another tenant's keys = %v, %v", keys, err)
		}

		list := func(p store.DetectedAccountListParams) []string {
			t.Helper()
			p.ClientID = "a"
			if p.UserID == "" {
				p.UserID = u.ID
			}
			ds, err := st.DetectedAccountList(ctx, &p)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, d := range ds {
				names = append(names, d.Name)
			}
			return names
		}
		eq := func(got []string, want ...string) {
			t.Helper()
			if len(got) != len(want) {
				t.Fatalf("list = %v, want %v", got, want)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("list = %v, want %v", got, want)
				}
			}
		}
		eq(list(store.DetectedAccountListParams{}), "Amazon", "Patreon, Inc.", "Netflix")
		eq(list(store.DetectedAccountListParams{After: 1, Limit: 1}), "Patreon, Inc.")
		eq(list(store.DetectedAccountListParams{CatalogOnly: true}), "Amazon", "Netflix")
		eq(list(store.DetectedAccountListParams{MerchantID: 4}), "Netflix")
		eq(list(store.DetectedAccountListParams{UserID: other.ID})) // another developer's user
		all, err := st.DetectedAccountList(ctx, &store.DetectedAccountListParams{ClientID: "a", UserID: u.ID})
		if err != nil {
			t.Fatal(err)
		}
		d := all[0]
		if *d.MerchantID != 1 || d.NameKey != "#1" || d.LoginMethod != "GOOGLE_SSO" || !d.AccountCreatedAt.Equal(created) ||
			d.Source != "email" || d.Position != 1 || !d.DetectedAt.Equal(t0) || all[1].MerchantID != nil {
			t.Fatalf("detected = %+v", d)
		}

		// A linked account is left out of the unlinked listing, and comes
		// back when it is unlinked.
		if _, err := st.AccountLink(ctx, &store.AccountLinkParams{ID: uuid.NewString(), ClientID: "a", UserID: u.ID,
			MerchantID: 1, Now: t0}); err != nil {
			t.Fatal(err)
		}
		eq(list(store.DetectedAccountListParams{Unlinked: true}), "Patreon, Inc.", "Netflix")
		if err := st.AccountUnlink(ctx, &store.AccountRef{ClientID: "a", UserID: u.ID, MerchantID: 1, Now: t0}); err != nil {
			t.Fatal(err)
		}
		eq(list(store.DetectedAccountListParams{Unlinked: true}), "Amazon", "Patreon, Inc.", "Netflix")
	})
}
