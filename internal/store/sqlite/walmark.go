package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"os"

	"github.com/hitchdev/hitch/internal/store/sqlstore"
)

// walMark reads the header of the WAL index (the database's -shm file),
// which every commit rewrites, by any connection of any process: a changed
// header is how SQLite's own readers learn of a commit. Reading it costs one
// pread and no query, which lets the store keep results while the database
// is unchanged (sqlstore's version memo).
//
// The format is SQLite's documented WAL-index header
// (https://www.sqlite.org/walformat.html#the_wal_index_file_format): two
// 48-byte copies of the header at offset 0, in the machine's byte order,
// beginning with the version 3007000 and with isInit at byte 12. A writer
// updates the second copy, then the first; a reader that finds them
// different has caught a commit in progress, and reports that it cannot
// tell.
//
// SQLite truncates or deletes the -shm file only when no connection, in any
// process, has the database open. walMark holds a connection of its own
// open for its whole life, so the file it reads is the one every
// connection is writing.
type walMark struct {
	keeper *sql.DB
	conn   *sql.Conn
	shm    *os.File
}

// walIndexVersion is the WAL-index format's version, the header's first
// field.
const walIndexVersion = 3007000

// openWALMark opens the keeper connection with c, reads through it so
// that it maps the WAL index, and opens the -shm file of the database at
// path.
func openWALMark(ctx context.Context, c *connector, path string) (*walMark, error) {
	w := &walMark{keeper: sql.OpenDB(c)}
	w.keeper.SetMaxOpenConns(1)
	var err error
	if w.conn, err = w.keeper.Conn(ctx); err != nil {
		w.Close()
		return nil, err
	}
	var n int
	if err := w.conn.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
		w.Close()
		return nil, err
	}
	if w.shm, err = os.Open(path + "-shm"); err != nil {
		w.Close()
		return nil, err
	}
	if _, ok := w.Mark(); !ok {
		w.Close()
		return nil, fmt.Errorf("the WAL index of %s has no header this code reads", path)
	}
	return w, nil
}

// Mark returns the WAL-index header, or ok false when it cannot be read or
// a commit was writing it.
func (w *walMark) Mark() (m sqlstore.Mark, ok bool) {
	var hdr [2 * len(m)]byte
	if n, _ := w.shm.ReadAt(hdr[:], 0); n != len(hdr) {
		return m, false
	}
	first, second := hdr[:len(m)], hdr[len(m):]
	if !bytes.Equal(first, second) || binary.NativeEndian.Uint32(first) != walIndexVersion || first[12] != 1 {
		return m, false
	}
	copy(m[:], first)
	return m, true
}

func (w *walMark) Close() error {
	if w.shm != nil {
		w.shm.Close()
	}
	if w.conn != nil {
		w.conn.Close()
	}
	return w.keeper.Close()
}
