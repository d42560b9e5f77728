package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/hitchdev/hitch/internal/config"
	"github.com/hitchdev/hitch/internal/store/sqlite"
)

// backupFlags copies the SQLite database while Hitch runs. PostgreSQL has
// its own tools for that, which know its whole cluster (docs/operations.md).
func backupFlags(fs *flag.FlagSet) runFunc {
	to := fs.String("to", "", "the new file to write the copy to (required)")
	return func(ctx context.Context, cfg *config.Config, out, _ io.Writer) error {
		if *to == "" {
			return errors.New("backup: --to FILE is required")
		}
		db, err := cfg.Database()
		if err != nil {
			return err
		}
		if db.Driver != "sqlite" {
			return errors.New("backup: hitch backup copies SQLite databases; back up PostgreSQL with pg_dump " +
				"(e.g. pg_dump --format=custom --file=hitch.dump \"$HITCH_DATABASE_URL\", restored with pg_restore; see docs/operations.md)")
		}
		if err := sqlite.Backup(ctx, db.DSN, *to); err != nil {
			return err
		}
		fmt.Fprintf(out, "backed up %s to %s\n", db.DSN, *to)
		return nil
	}
}
