package storetest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

func newMember(t *testing.T, ex store.Executor, clientID, email, role string) *store.Member {
	t.Helper()
	m := &store.Member{ID: uuid.NewString(), ClientID: clientID, Email: email, Name: "N " + email, Role: role,
		PasswordHash: "$argon2id$x", CreatedAt: t0, UpdatedAt: t0}
	if err := ex.MemberInsert(context.Background(), m); err != nil {
		t.Fatalf("MemberInsert: %v", err)
	}
	return m
}

func TestMembers(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		newClient(t, st, "client-a")
		newClient(t, st, "client-b")
		a1 := newMember(t, st, "client-a", "ada@example.com", store.RoleAdmin)
		bob := newMember(t, st, "client-a", "bob@example.com", store.RoleViewer)
		b1 := newMember(t, st, "client-b", "eve@example.com", store.RoleAdmin)
		// E-mails are unique per developer: another developer may have a
		// member with the same one, the same developer may not.
		dup := &store.Member{ID: uuid.NewString(), ClientID: "client-a", Email: "ada@example.com", Name: "x", Role: store.RoleAdmin,
			PasswordHash: "h", CreatedAt: t0, UpdatedAt: t0}
		if err := st.MemberInsert(ctx, dup); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("e-mail taken in the same tenant: %v, want ErrConflict", err)
		}
		b2 := &store.Member{ID: uuid.NewString(), ClientID: "client-b", Email: "ada@example.com", Name: "Ada at B", Role: store.RoleViewer,
			PasswordHash: "h2", MustChangePassword: true, CreatedAt: t0.Add(time.Second), UpdatedAt: t0.Add(time.Second)}
		if err := st.MemberInsert(ctx, b2); err != nil {
			t.Fatalf("e-mail of another tenant's member: %v", err)
		}
		byEmail := func(p *store.MemberListByEmailParams) []*store.Member {
			t.Helper()
			list, err := st.MemberListByEmail(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			return list
		}
		all := byEmail(&store.MemberListByEmailParams{Email: "ada@example.com"})
		if len(all) != 2 || all[0].ID != a1.ID || all[1].ID != b2.ID || all[0].ClientID != "client-a" || !all[0].CreatedAt.Equal(t0) ||
			all[0].LockedUntil != nil || all[0].MustChangePassword || !all[1].MustChangePassword || all[1].PasswordHash != "h2" {
			t.Fatalf("list by email: %+v", all)
		}
		if got := byEmail(&store.MemberListByEmailParams{Email: "ada@example.com", Limit: 1}); len(got) != 1 || got[0].ID != a1.ID {
			t.Fatalf("list by email, limit 1: %+v", got)
		}
		if got := byEmail(&store.MemberListByEmailParams{Email: "ada@example.com", ClientID: "client-b"}); len(got) != 1 || got[0].ID != b2.ID {
			t.Fatalf("list by email of client-b: %+v", got)
		}
		for _, p := range []*store.MemberListByEmailParams{{Email: "nobody@example.com"}, {Email: "ada@example.com", ClientID: "client-c"},
			{Email: "eve@example.com", ClientID: "client-a"}} {
			if got := byEmail(p); len(got) != 0 {
				t.Fatalf("list by email %+v: %+v", p, got)
			}
		}
		if err := st.MemberSetPassword(ctx, "client-a", b2.ID, "h3", false, t0); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("set password across tenants: %v", err)
		}
		if err := st.MemberSetPassword(ctx, "client-b", b2.ID, "h3", false, t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if got, _ := st.MemberGet(ctx, "client-b", b2.ID); got.PasswordHash != "h3" || got.MustChangePassword ||
			!got.UpdatedAt.Equal(t0.Add(time.Hour)) {
			t.Fatalf("after set password: %+v", got)
		}
		if err := st.MemberSetPassword(ctx, "client-b", b2.ID, "h4", true, t0); err != nil {
			t.Fatal(err)
		}
		if got, _ := st.MemberGet(ctx, "client-b", b2.ID); got.PasswordHash != "h4" || !got.MustChangePassword {
			t.Fatalf("after set password, must change: %+v", got)
		}
		if got, _ := st.MemberGet(ctx, "client-a", a1.ID); got.PasswordHash != a1.PasswordHash {
			t.Fatalf("the other tenant's member with the e-mail changed: %+v", got)
		}
		if _, err := st.MemberGet(ctx, "client-b", a1.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another tenant's member: %v", err)
		}
		list, err := st.MemberList(ctx, "client-a")
		if err != nil || len(list) != 2 {
			t.Fatalf("list: %d %v", len(list), err)
		}
		if n, err := st.MemberCountAdmins(ctx, "client-a"); err != nil || n != 1 {
			t.Fatalf("admins: %d %v", n, err)
		}
		if err := st.MemberSetRole(ctx, "client-b", a1.ID, store.RoleViewer, t0); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("set role across tenants: %v", err)
		}
		if err := st.MemberSetRole(ctx, "client-a", bob.ID, store.RoleAdmin, t0); err != nil {
			t.Fatal(err)
		}
		if n, _ := st.MemberCountAdmins(ctx, "client-a"); n != 2 {
			t.Fatalf("admins after promotion: %d", n)
		}

		// Failures count to the maximum, which locks and starts again.
		until := t0.Add(15 * time.Minute)
		for i := 1; i <= 5; i++ {
			locked, err := st.MemberRecordFailure(ctx, "client-a", a1.ID, 5, until, t0)
			if err != nil || locked != (i == 5) {
				t.Fatalf("failure %d: locked %v, %v", i, locked, err)
			}
		}
		got, _ := st.MemberGet(ctx, "client-a", a1.ID)
		if got.FailedAttempts != 0 || got.LockedUntil == nil || !got.LockedUntil.Equal(until) {
			t.Fatalf("after 5 failures: %+v", got)
		}
		// While locked a failure counts nothing and does not lengthen the
		// lock, and a success changes nothing.
		if locked, err := st.MemberRecordFailure(ctx, "client-a", a1.ID, 5, until.Add(time.Hour), t0); err != nil || !locked {
			t.Fatalf("failure while locked: %v %v", locked, err)
		}
		if locked, err := st.MemberResetFailures(ctx, "client-a", a1.ID, until.Add(-time.Second)); err != nil || !locked {
			t.Fatalf("reset while locked: %v %v", locked, err)
		}
		got, _ = st.MemberGet(ctx, "client-a", a1.ID)
		if got.FailedAttempts != 0 || got.LockedUntil == nil || !got.LockedUntil.Equal(until) {
			t.Fatalf("after attempts while locked: %+v", got)
		}
		if locked, err := st.MemberResetFailures(ctx, "client-a", a1.ID, until); err != nil || locked {
			t.Fatalf("reset after the lock: %v %v", locked, err)
		}
		got, _ = st.MemberGet(ctx, "client-a", a1.ID)
		if got.FailedAttempts != 0 || got.LockedUntil != nil {
			t.Fatalf("after reset: %+v", got)
		}
		if _, err := st.MemberRecordFailure(ctx, "client-b", a1.ID, 5, until, t0); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("failure across tenants: %v", err)
		}
		if _, err := st.MemberResetFailures(ctx, "client-b", a1.ID, t0); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("reset across tenants: %v", err)
		}
		if err := st.MemberDelete(ctx, "client-a", b1.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("delete across tenants: %v", err)
		}
		if err := st.MemberDelete(ctx, "client-b", b1.ID); err != nil {
			t.Fatal(err)
		}
		if got := byEmail(&store.MemberListByEmailParams{Email: "ada@example.com"}); len(got) != 2 {
			t.Fatalf("after deleting another member: %d with the e-mail", len(got))
		}
	})
}

func TestDashboardSessions(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		newClient(t, st, "client-a")
		m := newMember(t, st, "client-a", "ada@example.com", store.RoleAdmin)
		s := &store.DashboardSession{ID: uuid.NewString(), ClientID: "client-a", MemberID: m.ID, TokenHash: bytes.Repeat([]byte{7}, 32),
			CreatedAt: t0, LastSeenAt: t0, ExpiresAt: t0.Add(12 * time.Hour)}
		if err := st.DashboardSessionInsert(ctx, s); err != nil {
			t.Fatal(err)
		}
		gs, gm, err := st.DashboardSessionGetByTokenHash(ctx, s.TokenHash)
		if err != nil || gs.ID != s.ID || gm.ID != m.ID || gm.Email != m.Email || !gs.ExpiresAt.Equal(s.ExpiresAt) {
			t.Fatalf("get: %+v %+v %v", gs, gm, err)
		}
		if _, _, err := st.DashboardSessionGetByTokenHash(ctx, []byte("nope")); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown hash: %v", err)
		}
		if err := st.DashboardSessionTouch(ctx, "client-a", s.ID, t0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		gs, _, _ = st.DashboardSessionGetByTokenHash(ctx, s.TokenHash)
		if !gs.LastSeenAt.Equal(t0.Add(time.Minute)) {
			t.Fatalf("touch: %v", gs.LastSeenAt)
		}
		// Idle for 30 minutes: deleted.
		n, err := st.DashboardSessionDeleteExpired(ctx, t0.Add(time.Hour), t0.Add(time.Hour-30*time.Minute))
		if err != nil || n != 1 {
			t.Fatalf("delete expired: %d %v", n, err)
		}
		if err := st.DashboardSessionDelete(ctx, "client-a", s.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("delete again: %v", err)
		}
		// Removing the member ends its sign-ins.
		s.ID = uuid.NewString()
		if err := st.DashboardSessionInsert(ctx, s); err != nil {
			t.Fatal(err)
		}
		if err := st.MemberDelete(ctx, "client-a", m.ID); err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.DashboardSessionGetByTokenHash(ctx, s.TokenHash); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("after the member is removed: %v", err)
		}
	})
}

// A member's other sign-ins end together, and only theirs: not the one
// kept, not another member's (of the same developer, or of another
// developer with the same e-mail).
func TestDashboardSessionDeleteOthers(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		newClient(t, st, "client-a")
		newClient(t, st, "client-b")
		ada := newMember(t, st, "client-a", "ada@example.com", store.RoleAdmin)
		bob := newMember(t, st, "client-a", "bob@example.com", store.RoleAdmin)
		adaB := newMember(t, st, "client-b", "ada@example.com", store.RoleAdmin)
		sessions := map[string]*store.DashboardSession{}
		for i, c := range []struct {
			name string
			m    *store.Member
		}{{"ada1", ada}, {"ada2", ada}, {"ada3", ada}, {"bob", bob}, {"adaB", adaB}} {
			s := &store.DashboardSession{ID: uuid.NewString(), ClientID: c.m.ClientID, MemberID: c.m.ID,
				TokenHash: bytes.Repeat([]byte{byte(i + 1)}, 32), CreatedAt: t0, LastSeenAt: t0, ExpiresAt: t0.Add(time.Hour)}
			if err := st.DashboardSessionInsert(ctx, s); err != nil {
				t.Fatal(err)
			}
			sessions[c.name] = s
		}
		if n, err := st.DashboardSessionDeleteOthers(ctx, "client-b", ada.ID, sessions["ada1"].ID); err != nil || n != 0 {
			t.Fatalf("across tenants: %d %v", n, err)
		}
		if n, err := st.DashboardSessionDeleteOthers(ctx, "client-a", ada.ID, sessions["ada1"].ID); err != nil || n != 2 {
			t.Fatalf("delete others: %d %v", n, err)
		}
		for name, s := range sessions {
			_, _, err := st.DashboardSessionGetByTokenHash(ctx, s.TokenHash)
			if gone := errors.Is(err, store.ErrNotFound); gone != (name == "ada2" || name == "ada3") {
				t.Errorf("session %s: %v", name, err)
			}
		}
		// All of a member's sign-ins end together (a lock), only theirs.
		if n, err := st.DashboardSessionDeleteMember(ctx, "client-b", ada.ID); err != nil || n != 0 {
			t.Fatalf("delete member across tenants: %d %v", n, err)
		}
		if n, err := st.DashboardSessionDeleteMember(ctx, "client-a", ada.ID); err != nil || n != 1 {
			t.Fatalf("delete member: %d %v", n, err)
		}
		for name, s := range sessions {
			_, _, err := st.DashboardSessionGetByTokenHash(ctx, s.TokenHash)
			if gone := errors.Is(err, store.ErrNotFound); gone != (name == "ada1" || name == "ada2" || name == "ada3") {
				t.Errorf("session %s after deleting ada's: %v", name, err)
			}
		}
	})
}

func TestHiddenMerchants(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		newClient(t, st, "client-a")
		newClient(t, st, "client-b")
		for _, id := range []int64{4, 4, 1} { // hiding twice is no error
			if err := st.MerchantHide(ctx, "client-a", id, t0); err != nil {
				t.Fatal(err)
			}
		}
		got, err := st.MerchantHiddenList(ctx, "client-a")
		if err != nil || len(got) != 2 || !got[4] || !got[1] {
			t.Fatalf("hidden: %v %v", got, err)
		}
		if other, _ := st.MerchantHiddenList(ctx, "client-b"); len(other) != 0 {
			t.Fatalf("another tenant sees %v", other)
		}
		if err := st.MerchantShow(ctx, "client-a", 4); err != nil {
			t.Fatal(err)
		}
		if got, _ := st.MerchantHiddenList(ctx, "client-a"); len(got) != 1 || !got[1] {
			t.Fatalf("after show: %v", got)
		}
	})
}

func TestAuditRecords(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		newClient(t, st, "client-a")
		newClient(t, st, "client-b")
		insert := func(clientID string, at time.Time) *store.AuditRecord {
			t.Helper()
			var r *store.AuditRecord
			err := st.InTx(ctx, func(ex store.Executor) error {
				seq, err := ex.ClientAuditSeqNext(ctx, clientID)
				if err != nil {
					return err
				}
				name := fmt.Sprint("target ", seq)
				r = &store.AuditRecord{ID: uuid.NewString(), ClientID: clientID, Seq: seq, CreatedAt: at, Action: "signin",
					Outcome: "success", ActorName: "Ada", ActorEmail: "ada@example.com", TargetType: "session", TargetName: &name,
					Environment: "development", IP: "127.0.0.1", UserAgent: "test", PrevHash: []byte{1}, Hash: []byte{2}}
				return ex.AuditRecordInsert(ctx, r)
			})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		for i := range 5 {
			insert("client-a", t0.Add(time.Duration(i)*time.Second))
		}
		insert("client-b", t0)
		if seq, _ := st.ClientAuditSeq(ctx, "client-a"); seq != 5 {
			t.Fatalf("seq a = %d", seq)
		}
		if seq, _ := st.ClientAuditSeq(ctx, "client-b"); seq != 1 {
			t.Fatalf("seq b = %d", seq)
		}
		// A rolled-back reservation is given again.
		_ = st.InTx(ctx, func(ex store.Executor) error {
			_, _ = ex.ClientAuditSeqNext(ctx, "client-a")
			return errors.New("roll back")
		})
		r6 := insert("client-a", t0.Add(10*time.Second))
		if r6.Seq != 6 {
			t.Fatalf("after a rollback seq = %d, want 6", r6.Seq)
		}
		got, err := st.AuditRecordGetBySeq(ctx, "client-a", 6)
		if err != nil || got.ID != r6.ID || *got.TargetName != "target 6" || !got.CreatedAt.Equal(r6.CreatedAt) ||
			!bytes.Equal(got.Hash, []byte{2}) || !bytes.Equal(got.PrevHash, []byte{1}) {
			t.Fatalf("get by seq: %+v %v", got, err)
		}
		if _, err := st.AuditRecordGetBySeq(ctx, "client-b", 6); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another tenant's seq: %v", err)
		}
		list, err := st.AuditRecordList(ctx, &store.AuditRecordListParams{ClientID: "client-a", Limit: 3})
		if err != nil || len(list) != 3 || list[0].Seq != 6 || list[2].Seq != 4 {
			t.Fatalf("first page: %v", err)
		}
		list, _ = st.AuditRecordList(ctx, &store.AuditRecordListParams{ClientID: "client-a", Before: 4, Limit: 10})
		if len(list) != 3 || list[0].Seq != 3 || list[2].Seq != 1 {
			t.Fatalf("second page: %d", len(list))
		}
		since, until := t0.Add(time.Second), t0.Add(3*time.Second)
		list, _ = st.AuditRecordList(ctx, &store.AuditRecordListParams{ClientID: "client-a", Since: &since, Until: &until})
		if len(list) != 3 || list[0].Seq != 4 || list[2].Seq != 2 {
			t.Fatalf("between: %d records", len(list))
		}
		chain, err := st.AuditRecordChain(ctx, "client-a", 2, 2)
		if err != nil || len(chain) != 2 || chain[0].Seq != 3 || chain[1].Seq != 4 {
			t.Fatalf("chain: %v", err)
		}
	})
}

func TestUserList(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		newClient(t, st, "client-a")
		newClient(t, st, "client-b")
		for _, id := range []string{"bob", "ann-2", "ann-1", "ann%", "carl"} {
			newUser(t, st, "client-a", id)
		}
		newUser(t, st, "client-b", "ann-3")
		ids := func(p *store.UserListParams) []string {
			t.Helper()
			users, err := st.UserList(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, u := range users {
				out = append(out, u.ExternalUserID)
			}
			return out
		}
		if got := fmt.Sprint(ids(&store.UserListParams{ClientID: "client-a", Prefix: "ann", Limit: 2})); got != "[ann% ann-1]" && got != "[ann-1 ann-2]" {
			// Collations differ in where % sorts; both orders are by the column.
			t.Fatalf("prefix page: %s", got)
		}
		if got := ids(&store.UserListParams{ClientID: "client-a", Prefix: "ann"}); len(got) != 3 {
			t.Fatalf("prefix: %v", got)
		}
		if got := ids(&store.UserListParams{ClientID: "client-a", Prefix: "ann%"}); len(got) != 1 || got[0] != "ann%" {
			t.Fatalf("a prefix with %%: %v", got)
		}
		all := ids(&store.UserListParams{ClientID: "client-a"})
		if len(all) != 5 {
			t.Fatalf("all: %v", all)
		}
		if rest := ids(&store.UserListParams{ClientID: "client-a", After: all[2]}); len(rest) != 2 || rest[0] != all[3] {
			t.Fatalf("after %s: %v", all[2], rest)
		}
	})
}

// Concurrent failures count up to the lock and no further: 22 at once lock
// the member with no failure left over (counting past the lock would leave
// 2, since the lock starts the count again).
func TestMemberFailuresConcurrent(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		newClient(t, st, "client-a")
		m := newMember(t, st, "client-a", "ada@example.com", store.RoleAdmin)
		until := t0.Add(15 * time.Minute)
		var wg sync.WaitGroup
		var lockedN atomic.Int32
		for range 22 {
			wg.Go(func() {
				locked, err := st.MemberRecordFailure(ctx, "client-a", m.ID, 5, until, t0)
				if err != nil {
					t.Error(err)
				}
				if locked {
					lockedN.Add(1)
				}
			})
		}
		wg.Wait()
		got, _ := st.MemberGet(ctx, "client-a", m.ID)
		if got.FailedAttempts != 0 || got.LockedUntil == nil || !got.LockedUntil.Equal(until) || lockedN.Load() != 18 {
			t.Fatalf("after 22 concurrent failures: %d failed attempts, locked until %v, %d answered locked",
				got.FailedAttempts, got.LockedUntil, lockedN.Load())
		}
	})
}
