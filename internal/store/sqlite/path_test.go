package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A database path is a file name, not a URI: '#', '?' and '%' in it name
// that file, and a backup is of that file. A '#' once ended SQLite's file
// name, so that subtests named "sqlite#01" shared one database at a cut
// path, outside their temporary directories and readable by every user.
func TestOpenPathWithURICharacters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "a#b", "c?d%41", "hitch.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if info, err := os.Stat(path); err != nil || info.Size() == 0 {
		t.Fatalf("the database is not at %s: %v", path, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "a#b" {
			t.Errorf("a database file beside it: %s", e.Name())
		}
	}

	// A backup is of that file too.
	to := filepath.Join(dir, "a#b", "backup?.db")
	if err := Backup(ctx, path, to); err != nil {
		t.Fatal(err)
	}
	backup, err := Open(ctx, to)
	if err != nil {
		t.Fatal(err)
	}
	defer backup.Close()
	if applied, latest, err := backup.MigrationVersion(ctx); err != nil || applied != latest {
		t.Errorf("the backup has migration %d of %d: %v", applied, latest, err)
	}
}
