package sqlstore

import "time"

// WaitingCalls is how many InTx calls wait for their group's turn.
func WaitingCalls(db *DB) int {
	db.group.mu.Lock()
	defer db.group.mu.Unlock()
	return len(db.group.pending)
}

// GroupCommits is how many transactions the store's grouper committed.
func GroupCommits(db *DB) int64 { return db.group.commits.Load() }

// SetGroupTime sets how long a group hands out turns; call it before the
// store is used.
func SetGroupTime(db *DB, d time.Duration) { db.group.maxTime = d }
