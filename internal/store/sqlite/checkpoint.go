package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"sync/atomic"
	"time"
)

// SQLite copies the WAL's frames back into the database file in a
// checkpoint, which its default runs on the connection that committed, once
// the WAL holds 1,000 frames: the one writer copies them and waits for two
// fsyncs while every other write waits for it. Under POST /card that was a
// stall of several milliseconds about ten times a second, long enough for
// every request in flight to finish its RSA work and queue behind it with
// the CPUs idle (docs/benchmarks.md, session 11).
//
// So a goroutine of the store checkpoints from a connection of its own,
// which SQLite lets run beside the writer (a PASSIVE checkpoint takes no
// write lock), as soon as checkpointFrames frames wait to be copied. The
// writer keeps SQLite's own checkpoint, at restartFrames: only a checkpoint
// that starts with the writer idle can catch up with the WAL's last frame,
// and only then can the next write start the WAL file again from its
// beginning instead of growing it. By then the goroutine has copied all but
// the last few frames, so the writer's checkpoint is short and rare. Should
// the goroutine stop or fall behind, the writer's checkpoint still bounds
// the WAL, as SQLite's default does.
const (
	// checkpointFrames is how many frames not yet in the database file
	// start a checkpoint of the goroutine.
	checkpointFrames = 1000
	// restartFrames is the writer's own checkpoint threshold
	// (wal_autocheckpoint), on the WAL's length: 4,000 frames of 4 KiB
	// pages is a 16 MiB WAL file at most, in normal running.
	restartFrames = 4000
	// checkpointPoll is how often the goroutine reads the WAL index to
	// count the frames waiting: two preads, no query.
	checkpointPoll = 20 * time.Millisecond
	// checkpointPollBlind is how often it checkpoints when it cannot read
	// the WAL index (walMark.MarkErr): without a count, on a timer.
	checkpointPollBlind = time.Second
)

// checkpointer runs PASSIVE checkpoints on its own connection while the
// store is open.
type checkpointer struct {
	db *sql.DB
	// backlog counts the WAL's frames and those not yet copied, ok false
	// when it cannot.
	backlog func() (frames, uncopied uint32, ok bool)
	cancel  context.CancelFunc
	done    chan struct{}
	// runs counts the checkpoints run, for tests; lastErr is the last
	// one's error, if it failed.
	runs    atomic.Int64
	lastErr atomic.Pointer[error]
}

// startCheckpointer opens the checkpointer's connection with c and starts
// its goroutine. backlog may be nil: it then checkpoints every
// checkpointPollBlind.
func startCheckpointer(c *connector, backlog func() (uint32, uint32, bool)) *checkpointer {
	db := sql.OpenDB(c)
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	ctx, cancel := context.WithCancel(context.Background())
	cp := &checkpointer{db: db, backlog: backlog, cancel: cancel, done: make(chan struct{})}
	go cp.loop(ctx)
	return cp
}

func (cp *checkpointer) loop(ctx context.Context) {
	defer close(cp.done)
	poll := checkpointPoll
	if cp.backlog == nil {
		poll = checkpointPollBlind
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if cp.backlog != nil {
			// From restartFrames on, the writer's checkpoint is due, and
			// one of this goroutine's would only make it wait its turn.
			frames, uncopied, ok := cp.backlog()
			if !ok || uncopied < checkpointFrames || frames >= restartFrames {
				continue
			}
		}
		cp.checkpoint(ctx)
	}
}

// checkpoint runs one PASSIVE checkpoint: it copies what it can without
// waiting for any lock, and reports SQLITE_BUSY (as busy = 1, not an error)
// when another checkpoint, the writer's, is running.
func (cp *checkpointer) checkpoint(ctx context.Context) {
	var busy, log, copied int64
	err := cp.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &copied)
	cp.runs.Add(1)
	if err != nil && ctx.Err() == nil {
		cp.lastErr.Store(&err)
	}
}

// Err is the last failed checkpoint's error, or nil.
func (cp *checkpointer) Err() error {
	if err := cp.lastErr.Load(); err != nil {
		return *err
	}
	return nil
}

// Close stops the goroutine and closes its connection.
func (cp *checkpointer) Close() error {
	cp.cancel()
	<-cp.done
	return cp.db.Close()
}

// walCkptOffset is where the WAL index's checkpoint information starts,
// after the header's two copies; its first field is nBackfill, the number
// of WAL frames already copied into the database file
// (https://www.sqlite.org/walformat.html#the_wal_index_file_format).
const walCkptOffset = 96

// Backlog counts the WAL's frames (the header's mxFrame) and those not yet
// copied into the database file (less the checkpoint information's
// nBackfill). The two are read apart, so the count may be off by a commit;
// it only decides when to checkpoint.
func (w *walMark) Backlog() (frames, uncopied uint32, ok bool) {
	m, ok := w.Mark()
	if !ok {
		return 0, 0, false
	}
	var b [4]byte
	if n, _ := w.shm.f.ReadAt(b[:], walCkptOffset); n != len(b) {
		return 0, 0, false
	}
	mxFrame, nBackfill := binary.NativeEndian.Uint32(m[16:]), binary.NativeEndian.Uint32(b[:])
	if nBackfill >= mxFrame {
		return mxFrame, 0, true
	}
	return mxFrame, mxFrame - nBackfill, true
}
