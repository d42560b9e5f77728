package storetest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/postgres"
	"github.com/hitchdev/hitch/internal/store/sqlite"
	"github.com/hitchdev/hitch/internal/store/sqlstore"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// openUnmigrated opens an empty store of a backend, not migrated.
func openUnmigrated(t *testing.T, backend string) *sqlstore.DB {
	t.Helper()
	ctx := context.Background()
	var db *sqlstore.DB
	var err error
	switch backend {
	case "sqlite":
		db, err = sqlite.Open(ctx, filepath.Join(t.TempDir(), "hitch.db"))
	case "postgres":
		url := storetest.RequirePostgres(t)
		db, err = postgres.Open(ctx, url, postgres.Options{Schema: storetest.NewSchema(t, url), MaxConns: 4})
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Migration 0011 makes e-mails unique per developer and adds
// must_change_password. On SQLite it rebuilds members and the sign-ins
// that reference them: members, their sign-ins and the foreign key
// between them all survive.
func TestMigrationMembersPerDeveloper(t *testing.T) {
	t.Parallel()
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := openUnmigrated(t, b.Name)
			if err := db.MigrateTo(ctx, 10); err != nil {
				t.Fatal(err)
			}
			newClient(t, db, "client-a")
			newClient(t, db, "client-b")
			// Rows as 0010's schema holds them, written as its code did.
			var at any = t0
			if db.Dialect() == "sqlite" {
				at = t0.UnixMicro()
			}
			memberID, sessionID, token := uuid.NewString(), uuid.NewString(), bytes.Repeat([]byte{9}, 32)
			storetest.ExecRaw(t, db, `INSERT INTO members (id, client_id, email, name, role, password_hash, failed_attempts,
				created_at, updated_at) VALUES ($1, 'client-a', 'ada@example.com', 'Ada', 'admin', 'h', 2, $2, $2)`, memberID, at)
			storetest.ExecRaw(t, db, `INSERT INTO dashboard_sessions (id, client_id, member_id, token_hash, created_at, last_seen_at,
				expires_at) VALUES ($1, 'client-a', $2, $3, $4, $4, $4)`, sessionID, memberID, token, at)

			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			got, err := db.MemberListByEmail(ctx, &store.MemberListByEmailParams{Email: "ada@example.com"})
			if err != nil || len(got) != 1 {
				t.Fatalf("members after the migration: %d %v", len(got), err)
			}
			if m := got[0]; m.ID != memberID || m.Name != "Ada" || m.FailedAttempts != 2 || !m.CreatedAt.Equal(t0) ||
				!m.MustChangePassword {
				t.Fatalf("the member after the migration: %+v", m)
			}
			if s, m, err := db.DashboardSessionGetByTokenHash(ctx, token); err != nil || s.ID != sessionID || m.ID != memberID {
				t.Fatalf("the sign-in after the migration: %v", err)
			}
			// New members do not have to change their password unless told.
			fresh := newMember(t, db, "client-b", "ada@example.com", store.RoleViewer)
			if m, _ := db.MemberGet(ctx, "client-b", fresh.ID); m.MustChangePassword {
				t.Fatal("a new member must change their password by default")
			}
			dup := &store.Member{ID: uuid.NewString(), ClientID: "client-a", Email: "ada@example.com", Name: "x",
				Role: store.RoleAdmin, PasswordHash: "h", CreatedAt: t0, UpdatedAt: t0}
			if err := db.MemberInsert(ctx, dup); !errors.Is(err, store.ErrConflict) {
				t.Fatalf("a second ada@example.com of client-a: %v", err)
			}
			// The sign-ins still reference the members: removing one ends
			// its sign-ins, and a sign-in of no member is refused.
			if err := db.MemberDelete(ctx, "client-a", memberID); err != nil {
				t.Fatal(err)
			}
			if _, _, err := db.DashboardSessionGetByTokenHash(ctx, token); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("the sign-in of a removed member: %v", err)
			}
			orphan := &store.DashboardSession{ID: uuid.NewString(), ClientID: "client-a", MemberID: memberID, TokenHash: token,
				CreatedAt: t0, LastSeenAt: t0, ExpiresAt: t0.Add(time.Hour)}
			if err := db.DashboardSessionInsert(ctx, orphan); err == nil {
				t.Fatal("a sign-in of no member was stored")
			}
		})
	}
}

// Migration 0017 keeps each account's link metadata: the data.metadata of
// its latest AUTHENTICATED event, none when that event had none, and
// nothing from another user's events or from events of other types.
func TestMigrationAccountMetadata(t *testing.T) {
	t.Parallel()
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := openUnmigrated(t, b.Name)
			if err := db.MigrateTo(ctx, 16); err != nil {
				t.Fatal(err)
			}
			newClient(t, db, "client-a")
			ada, bob := newUser(t, db, "client-a", "ada"), newUser(t, db, "client-a", "bob")
			var at any = t0
			if db.Dialect() == "sqlite" {
				at = t0.UnixMicro()
			}
			for _, a := range []struct {
				user     *store.User
				merchant int64
			}{{ada, 4}, {ada, 1}, {ada, 7}, {bob, 1}} {
				storetest.ExecRaw(t, db, `INSERT INTO accounts (id, client_id, user_id, merchant_id, connection_status,
					linked_at, created_at, updated_at) VALUES ($1, 'client-a', $2, $3, 'connected', $4, $4, $4)`,
					uuid.NewString(), a.user.ID, a.merchant, at)
			}
			seq := map[string]int64{}
			event := func(u *store.User, typ string, merchant int64, data string) {
				seq[u.ID]++
				payload := fmt.Sprintf(`{"id":"x","event":%q,"sequence":%d,"external_user_id":%q,"merchant":{"id":%d,"name":"M"},"data":%s,"timestamp":1}`,
					typ, seq[u.ID], u.ExternalUserID, merchant, data)
				if _, err := db.EventInsert(ctx, &store.EventInsertParams{ID: uuid.NewString(), ClientID: "client-a", UserID: &u.ID,
					ExternalUserID: &u.ExternalUserID, Type: typ, Sequence: seq[u.ID], Payload: json.RawMessage(payload), CreatedAt: t0}); err != nil {
					t.Fatal(err)
				}
			}
			event(ada, "AUTHENTICATED", 4, `{"metadata":{"campaign":"spring"},"send_card":false}`)
			event(ada, "AUTHENTICATED", 1, `{"metadata":{"campaign":"one"},"send_card":false}`)
			event(ada, "AUTHENTICATED", 4, `{"entrypoint":null,"metadata":{"campaign":"autumn","plan":"gold"},"send_card":false}`)
			event(ada, "NEW_TRANSACTIONS_AVAILABLE", 4, `{"metadata":{"campaign":"batch"}}`)
			event(ada, "AUTHENTICATED", 1, `{"send_card":false}`)
			event(bob, "AUTHENTICATED", 7, `{"metadata":{"campaign":"bob"}}`)
			event(bob, "AUTHENTICATED", 1, `{"metadata":{"campaign":"bob"}}`)

			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				user     *store.User
				merchant int64
				want     string
			}{
				{ada, 4, `{"campaign":"autumn","plan":"gold"}`},
				{ada, 1, ""},
				{ada, 7, ""},
				{bob, 1, `{"campaign":"bob"}`},
			} {
				a, err := db.AccountGet(ctx, &store.AccountGetParams{ClientID: "client-a", UserID: c.user.ID, MerchantID: c.merchant})
				if err != nil {
					t.Fatal(err)
				}
				if string(a.Metadata) != c.want {
					t.Errorf("%s at %d: metadata %s, want %s", c.user.ExternalUserID, c.merchant, a.Metadata, c.want)
				}
			}
		})
	}
}
