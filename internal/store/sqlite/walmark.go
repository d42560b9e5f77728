package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"

	"github.com/hitchdev/hitch/internal/store/sqlstore"
)

// walMark reads the header of the WAL index (the database's -shm file),
// which every commit rewrites, by any connection of any process: a changed
// header is how SQLite's own readers learn of a commit. Reading it costs two
// preads and no query, which lets the store keep results while the database
// is unchanged (sqlstore's version memo).
//
// The format is SQLite's documented WAL-index header
// (https://www.sqlite.org/walformat.html#the_wal_index_file_format): two
// 48-byte copies at offset 0, in the machine's byte order, beginning with
// the version 3007000, with isInit at byte 12 and a checksum of the first
// 40 bytes at byte 40. A writer updates the second copy, then the first.
// walMark reads them as SQLite's readers do (the first, then the second)
// and takes the header only if both are equal and the checksum holds;
// otherwise a commit was writing it, and it cannot tell.
//
// SQLite truncates or deletes the -shm file only when no connection, in any
// process, has the database open: walMark holds a connection of its own
// open for its whole life, so the file it reads is the one every
// connection writes. It reads through a descriptor of its own, shared by
// every store of the process on that file (shmFiles): closing any
// descriptor of a file drops every POSIX lock the process holds on it,
// SQLite's included, so that descriptor is closed only once no store of
// the process has the database open.
type walMark struct {
	keeper *sql.DB
	conn   *sql.Conn
	// shm is the file Mark reads, nil when it never answers; held is the
	// file's reference, released by Close even then.
	shm, held *shmFile
	err       error // why Mark never answers, or nil
}

// walIndexVersion is the WAL-index format's version, the header's first
// field.
const walIndexVersion = 3007000

// openWALMark opens the keeper connection with c, reads through it so that
// it maps the WAL index, and opens the -shm file SQLite uses for it. Mark
// never answers when this fails; MarkErr says why. Close releases what it
// holds, and must come after the store's other connections have closed.
func openWALMark(ctx context.Context, c *connector) *walMark {
	w := &walMark{keeper: sql.OpenDB(c)}
	w.keeper.SetMaxOpenConns(1)
	switch runtime.GOOS {
	case "linux", "darwin", "freebsd":
	default:
		// Where a read of the file is not known to see what SQLite
		// writes through its mapping of it.
		w.err = fmt.Errorf("the WAL index is not read on %s", runtime.GOOS)
		return w
	}
	var err error
	if w.conn, err = w.keeper.Conn(ctx); err != nil {
		w.err = err
		return w
	}
	// The file name as SQLite resolved it (symbolic links followed), whose
	// -shm file it uses.
	var file string
	if err := w.conn.QueryRowContext(ctx, "SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(&file); err != nil {
		w.err = err
		return w
	}
	if file == "" {
		w.err = errors.New("the database has no file")
		return w
	}
	shm, err := acquireShm(file + "-shm")
	if err != nil {
		w.err = err
		return w
	}
	// Held whatever follows: Close lets go of it, after the store's pools.
	w.held, w.shm = shm, shm
	// A header caught mid-commit is not a reason to give up for good.
	for range 10 {
		if _, ok := w.read(); ok {
			return w
		}
	}
	w.shm = nil
	w.err = fmt.Errorf("the WAL index of %s has no header this code reads", file)
	return w
}

// Mark returns the WAL-index header, or ok false when it cannot be read or
// a commit was writing it.
func (w *walMark) Mark() (m sqlstore.Mark, ok bool) {
	if w.shm == nil {
		return m, false
	}
	return w.read()
}

// read reads the header (Mark, once openWALMark has checked it can).
func (w *walMark) read() (m sqlstore.Mark, ok bool) {
	var second sqlstore.Mark
	if n, _ := w.shm.f.ReadAt(m[:], 0); n != len(m) {
		return m, false
	}
	if n, _ := w.shm.f.ReadAt(second[:], int64(len(m))); n != len(second) {
		return m, false
	}
	if m != second || binary.NativeEndian.Uint32(m[:]) != walIndexVersion || m[12] != 1 || !checksumOK(m[:]) {
		return m, false
	}
	return m, true
}

// checksumOK checks the header's checksum of its first 40 bytes, SQLite's
// walChecksumBytes in the machine's byte order.
func checksumOK(h []byte) bool {
	var s1, s2 uint32
	for i := 0; i < 40; i += 8 {
		s1 += binary.NativeEndian.Uint32(h[i:]) + s2
		s2 += binary.NativeEndian.Uint32(h[i+4:]) + s1
	}
	return s1 == binary.NativeEndian.Uint32(h[40:]) && s2 == binary.NativeEndian.Uint32(h[44:])
}

// MarkErr says why Mark never answers, or nil.
func (w *walMark) MarkErr() error { return w.err }

// Close closes the keeper connection, then lets go of the -shm file.
func (w *walMark) Close() error {
	var err error
	if w.conn != nil {
		err = w.conn.Close()
	}
	err = errors.Join(err, w.keeper.Close())
	if w.held != nil {
		releaseShm(w.held)
	}
	return err
}

// shmFile is the process's descriptor of one -shm file, with the number of
// walMarks reading it.
type shmFile struct {
	path string
	f    *os.File
	refs int
}

var shmFiles = struct {
	sync.Mutex
	m map[string]*shmFile
}{m: map[string]*shmFile{}}

func acquireShm(path string) (*shmFile, error) {
	shmFiles.Lock()
	defer shmFiles.Unlock()
	if s, ok := shmFiles.m[path]; ok {
		s.refs++
		return s, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	s := &shmFile{path: path, f: f, refs: 1}
	shmFiles.m[path] = s
	return s, nil
}

// releaseShm closes the descriptor once no walMark reads it, which is once
// every store of the process on that database has closed its connections
// (each closes its walMark last).
func releaseShm(s *shmFile) {
	shmFiles.Lock()
	defer shmFiles.Unlock()
	if s.refs--; s.refs == 0 {
		delete(shmFiles.m, s.path)
		s.f.Close()
	}
}
