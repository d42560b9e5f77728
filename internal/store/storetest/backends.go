// Package storetest opens isolated stores for tests on every backend and
// holds the conformance suite that both SQL drivers must pass.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/postgres"
	"github.com/hitchdev/hitch/internal/store/sqlite"
)

// EnvDatabaseURL names the variable that enables PostgreSQL tests.
const EnvDatabaseURL = "HITCH_TEST_DATABASE_URL"

// postgresMissing says why a PostgreSQL test did not run.
const postgresMissing = EnvDatabaseURL + " is not set: the PostgreSQL twin runs when it names a database " +
	"(postgres://user@host:5432/db), as CI sets it"

// Backend opens a fresh, migrated, isolated store for one test.
type Backend struct {
	Name string
	Open func(t testing.TB) store.Store
	// OpenPair opens two stores on one fresh database.
	OpenPair func(t testing.TB) (store.Store, store.Store)
}

// Backends lists SQLite and PostgreSQL, always: without
// HITCH_TEST_DATABASE_URL, opening PostgreSQL skips the test that asks,
// saying why (RequirePostgres), so that the suite shows what it did not
// run. (The argument is unused; callers pass their test or benchmark.)
func Backends(testing.TB) []Backend {
	return []Backend{
		{Name: "sqlite", Open: OpenSQLite, OpenPair: openSQLitePair},
		{Name: "postgres", Open: OpenPostgres, OpenPair: openPostgresPair},
	}
}

// PostgresURL is the PostgreSQL URL tests run against, or "".
func PostgresURL() string { return os.Getenv(EnvDatabaseURL) }

// RequirePostgres returns the PostgreSQL URL tests run against. Without
// one it skips t, saying why, or fails it under CI (CI=true), which must
// not silently halve the suite.
func RequirePostgres(t testing.TB) string {
	t.Helper()
	url := PostgresURL()
	if url == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal(postgresMissing + "; required when CI=true")
		}
		t.Skip(postgresMissing)
	}
	return url
}

// ForEach runs fn as a parallel subtest on every backend (the PostgreSQL
// one skipped without HITCH_TEST_DATABASE_URL).
func ForEach(t *testing.T, fn func(t *testing.T, st store.Store)) {
	t.Helper()
	for _, b := range Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, b.Open(t))
		})
	}
}

// OpenSQLite opens a migrated SQLite store in the test's temporary directory.
func OpenSQLite(t testing.TB) store.Store {
	t.Helper()
	return openSQLiteAt(t, filepath.Join(t.TempDir(), "hitch.db"))
}

func openSQLiteAt(t testing.TB, path string) store.Store {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("migrate sqlite: %v", err)
	}
	return db
}

// ForEachPair runs fn as a parallel subtest on every backend with two
// stores open on one database, as two processes (or nodes) have: each with
// its own connections and whatever it keeps in memory (the PostgreSQL
// subtest skipped without HITCH_TEST_DATABASE_URL).
func ForEachPair(t *testing.T, fn func(t *testing.T, a, b store.Store)) {
	t.Helper()
	for _, b := range Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			first, second := b.OpenPair(t)
			fn(t, first, second)
		})
	}
}

func openSQLitePair(t testing.TB) (store.Store, store.Store) {
	path := filepath.Join(t.TempDir(), "hitch.db")
	return openSQLiteAt(t, path), openSQLiteAt(t, path)
}

func openPostgresPair(t testing.TB) (store.Store, store.Store) {
	schema := NewSchema(t, RequirePostgres(t))
	return openPostgresIn(t, schema), openPostgresIn(t, schema)
}

// OpenPostgres creates a schema of the test's own, opens a migrated store in
// it and drops the schema when the test ends.
func OpenPostgres(t testing.TB) store.Store {
	t.Helper()
	st, _ := OpenPostgresSchema(t)
	return st
}

// OpenPostgresSchema is OpenPostgres that also returns the schema name.
func OpenPostgresSchema(t testing.TB) (store.Store, string) {
	t.Helper()
	schema := NewSchema(t, RequirePostgres(t))
	return openPostgresIn(t, schema), schema
}

// openPostgresIn opens a migrated store in schema.
func openPostgresIn(t testing.TB, schema string) store.Store {
	t.Helper()
	ctx := context.Background()
	db, err := postgres.Open(ctx, PostgresURL(), postgres.Options{Schema: schema, MaxConns: 8})
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("migrate postgres: %v", err)
	}
	return db
}

// NewSchema creates an empty schema with a random name, dropped at cleanup.
func NewSchema(t testing.TB, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "hitch_test_" + hex.EncodeToString(b)
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect postgres: %v", err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Errorf("drop schema: %v", err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	return schema
}

// ExecRaw runs a statement on the store's own driver, outside the Executor,
// as someone with database access could (tests of what the application
// finds, such as a tampered audit record). args use $N placeholders.
func ExecRaw(t testing.TB, st store.Store, query string, args ...any) {
	t.Helper()
	ctx := context.Background()
	err := st.InTx(ctx, func(ex store.Executor) error {
		raw, ok := ex.(interface{ Raw() any })
		if !ok {
			return fmt.Errorf("the executor %T has no native transaction", ex)
		}
		switch tx := raw.Raw().(type) {
		case *sql.Tx:
			_, err := tx.ExecContext(ctx, query, args...)
			return err
		case pgx.Tx:
			_, err := tx.Exec(ctx, query, args...)
			return err
		default:
			return fmt.Errorf("unknown native transaction %T", tx)
		}
	})
	if err != nil {
		t.Fatalf("raw %q: %v", query, err)
	}
}
