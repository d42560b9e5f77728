package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// openDriver opens a driver on a new database file, closed when the test
// ends, with a table of page-sized rows to fill the WAL with.
func openDriver(t *testing.T) (*driver, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hitch.db")
	d, err := open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if err := d.MarkErr(); err != nil {
		t.Skipf("the WAL index cannot be read here: %v", err)
	}
	if _, err := d.Exec(context.Background(), "CREATE TABLE filler (b BLOB NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	return d, path
}

// fill commits n transactions of one page-sized row each: two or three
// frames each (the row's overflow page, the table's leaf, now and then an
// interior page).
func fill(t *testing.T, d *driver, n int) {
	t.Helper()
	for range n {
		if _, err := d.Exec(context.Background(), "INSERT INTO filler (b) VALUES (zeroblob(3000))"); err != nil {
			t.Fatal(err)
		}
	}
}

// walFrames reads the WAL's frames and those not yet copied.
func walFrames(t *testing.T, d *driver) (mxFrame, backlog uint32) {
	t.Helper()
	mxFrame, backlog, ok := d.mark.Backlog()
	if !ok {
		t.Fatal("the WAL index could not be read")
	}
	return mxFrame, backlog
}

// Backlog counts what a checkpoint has left to copy: all of a WAL never
// checkpointed, none once a checkpoint has copied everything.
func TestWALBacklogCountsFramesToCopy(t *testing.T) {
	t.Parallel()
	d, _ := openDriver(t)
	if err := d.checkpoints.Close(); err != nil { // this test checkpoints itself
		t.Fatal(err)
	}
	d.checkpoints = nil
	fill(t, d, 100)
	mxFrame, backlog := walFrames(t, d)
	var busy, log, copied int64
	if err := d.writer.QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &copied); err != nil {
		t.Fatal(err)
	}
	if busy != 0 || log != int64(mxFrame) || copied != log {
		t.Fatalf("checkpoint: busy %d, log %d, copied %d; want 0, %d, %d", busy, log, copied, mxFrame, mxFrame)
	}
	if backlog != mxFrame {
		t.Fatalf("before any checkpoint the backlog was %d frames, want the WAL's %d", backlog, mxFrame)
	}
	if _, backlog := walFrames(t, d); backlog != 0 {
		t.Fatalf("after a checkpoint that copied everything the backlog is %d frames, want 0", backlog)
	}
}

// The checkpointer copies the WAL into the database file while the WAL is
// still shorter than the writer's own threshold, so that the writer does
// not have to.
func TestCheckpointerCopiesBesideTheWriter(t *testing.T) {
	t.Parallel()
	d, _ := openDriver(t)
	fill(t, d, 1200) // more than checkpointFrames, less than restartFrames
	mxFrame, _ := walFrames(t, d)
	if mxFrame < checkpointFrames || mxFrame >= restartFrames {
		t.Fatalf("the WAL has %d frames; the test needs %d to %d", mxFrame, checkpointFrames, restartFrames)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		m, backlog := walFrames(t, d)
		if backlog < checkpointFrames && d.checkpoints.runs.Load() > 0 {
			if m < mxFrame {
				t.Fatalf("the WAL restarted (%d frames, then %d): the writer checkpointed", mxFrame, m)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s the backlog is %d of %d frames and the checkpointer ran %d times",
				backlog, m, d.checkpoints.runs.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := d.checkpoints.Err(); err != nil {
		t.Fatal(err)
	}
}

// Under writes that never pause, the WAL file still stops growing: the
// writer's own checkpoint, at restartFrames, lets the next write start the
// file again from its beginning. It may come late, after a checkpoint of
// the goroutine that was running when the WAL reached restartFrames (in
// runs of this test, at 5,000 to 7,200 frames); without restarts it would
// reach about 28,000.
func TestWALStaysBoundedUnderSteadyWrites(t *testing.T) {
	t.Parallel()
	d, path := openDriver(t)
	fill(t, d, 5*restartFrames/2) // about five times restartFrames frames
	info, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	const frame = 4096 + 24
	if limit := int64(2*restartFrames) * frame; info.Size() > limit {
		t.Fatalf("the WAL file is %d bytes, more than %d frames", info.Size(), info.Size()/frame)
	}
	if d.checkpoints.runs.Load() == 0 {
		t.Fatal("the checkpointer never ran")
	}
	if err := d.checkpoints.Err(); err != nil {
		t.Fatal(err)
	}
}
