package sqlstore

import (
	"context"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"time"
)

var migrationName = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.up\.sql$`)

type migration struct {
	version int
	name    string
	sql     string
}

func loadMigrations(fsys fs.FS) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("migrations: read: %w", err)
	}
	var migrations []migration
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migrations: unexpected file %q", e.Name())
		}
		body, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, fmt.Errorf("migrations: read %s: %w", e.Name(), err)
		}
		version, _ := strconv.Atoi(m[1])
		migrations = append(migrations, migration{version: version, name: m[2], sql: string(body)})
	}
	sort.Slice(migrations, func(i, j int) bool { return migrations[i].version < migrations[j].version })
	for i, m := range migrations {
		if m.version != i+1 {
			return nil, fmt.Errorf("migrations: expected version %04d, found %04d_%s", i+1, m.version, m.name)
		}
	}
	return migrations, nil
}

// applied_at is TIMESTAMP for PostgreSQL; SQLite stores Time's integer in it.
const createMigrationsTable = `CREATE TABLE IF NOT EXISTS hitch_migrations (
	version INTEGER PRIMARY KEY,
	name TEXT NOT NULL,
	applied_at TIMESTAMP NOT NULL
)`

// Migrate applies every pending migration, each in its own transaction.
func (db *DB) Migrate(ctx context.Context) error { return db.MigrateTo(ctx, len(db.migrations)) }

// MigrateTo applies the pending migrations up to version, each in its own
// transaction: a test of an upgrade starts from an older schema with it.
func (db *DB) MigrateTo(ctx context.Context, version int) error {
	if err := db.createMigrationsTable(ctx); err != nil {
		return err
	}
	applied := false
	for _, m := range db.migrations {
		if m.version > version {
			break
		}
		done, err := db.apply(ctx, m)
		if err != nil {
			return err
		}
		applied = applied || done
	}
	if analyze := db.drv.AnalyzeSQL(); applied && analyze != "" {
		// New tables and indexes have no statistics until autovacuum gets
		// to them, and plans made meanwhile can scan what an index finds.
		if _, err := db.drv.Exec(ctx, analyze); err != nil {
			return fmt.Errorf("migrate: analyze: %w", err)
		}
	}
	return nil
}

// createMigrationsTable creates the bookkeeping table under the migration
// lock, so that nodes starting together do not race on creating it.
func (db *DB) createMigrationsTable(ctx context.Context) error {
	tx, err := db.drv.Begin(ctx)
	if err != nil {
		return fmt.Errorf("migrate: begin: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	if lock := db.drv.MigrationLockSQL(); lock != "" {
		if _, err := tx.Exec(ctx, lock); err != nil {
			return fmt.Errorf("migrate: lock: %w", err)
		}
	}
	if _, err := tx.Exec(ctx, createMigrationsTable); err != nil {
		return fmt.Errorf("migrate: create table: %w", err)
	}
	return tx.Commit(ctx)
}

// apply applies m unless it already is, and reports whether it did.
func (db *DB) apply(ctx context.Context, m migration) (bool, error) {
	tx, err := db.drv.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("migrate: begin: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit

	if lock := db.drv.MigrationLockSQL(); lock != "" {
		if _, err := tx.Exec(ctx, lock); err != nil {
			return false, fmt.Errorf("migrate: lock: %w", err)
		}
	}
	var applied int
	if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM hitch_migrations WHERE version = $1`, m.version).Scan(&applied); err != nil {
		return false, fmt.Errorf("migrate: check %04d: %w", m.version, err)
	}
	if applied > 0 {
		return false, nil
	}
	if _, err := tx.Exec(ctx, m.sql); err != nil {
		return false, fmt.Errorf("migrate: apply %04d_%s: %w", m.version, m.name, err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO hitch_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
		m.version, m.name, db.drv.Time(time.Now())); err != nil {
		return false, fmt.Errorf("migrate: record %04d: %w", m.version, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return false, fmt.Errorf("migrate: commit %04d: %w", m.version, err)
	}
	return true, nil
}

// MigrationVersion reports the highest applied migration and the highest one
// this binary knows.
func (db *DB) MigrationVersion(ctx context.Context) (applied, latest int, err error) {
	latest = len(db.migrations)
	var v *int64
	if err := db.drv.QueryRow(ctx, `SELECT MAX(version) FROM hitch_migrations`).Scan(&v); err != nil {
		if db.drv.IsNoRows(err) {
			return 0, latest, nil
		}
		return 0, latest, fmt.Errorf("migrate: version: %w", err)
	}
	if v != nil {
		applied = int(*v)
	}
	return applied, latest, nil
}
