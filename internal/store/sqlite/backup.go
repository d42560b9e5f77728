package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
)

// Backup writes a consistent copy of the database file at path to the new
// file to, with VACUUM INTO, while other connections and processes keep
// reading and writing: the copy is the database as of one read
// transaction. to must not exist; it is created readable by its owner
// only, like the database.
func Backup(ctx context.Context, path, to string) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("sqlite: backup: %w", err)
	}
	f, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("sqlite: backup: %s exists; choose a new file", to)
		}
		return fmt.Errorf("sqlite: backup: %w", err)
	}
	f.Close()
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	db := sql.OpenDB(&connector{dsn: "file:" + uriPath(path) + "?" + q.Encode()})
	defer db.Close()
	// VACUUM INTO takes an empty file as new, and keeps its mode.
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", to); err != nil {
		os.Remove(to)
		return fmt.Errorf("sqlite: backup: %w", err)
	}
	return nil
}
