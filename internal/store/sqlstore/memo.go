package sqlstore

import (
	"context"
	"errors"
	"sync"
	"time"
)

// versionMemo remembers users' accounts versions while the database is
// unchanged, so that a read-mostly workload does not query the same version
// over and over (GET /accounts/get reads one on every request).
//
// An entry is kept only when the database's mark was the same before and
// after it was read, so it is what the database held at that mark; and it
// is returned only while the database's mark still equals that mark. A
// commit anywhere (any table, any connection or process) changes the mark
// and so retires every entry at once: the memo trades precision for a check
// that costs no query. Entries also expire after memoLifetime whatever the
// mark says, which bounds what an unforeseen failure of the mark could
// serve.
type versionMemo struct {
	marker Marker
	now    func() time.Time

	mu      sync.RWMutex
	mark    Mark
	entries map[versionKey]memoVersion
}

type versionKey struct{ clientID, externalUserID string }

type memoVersion struct {
	userID  string
	version int64
	readAt  time.Time
}

const (
	// maxMemo bounds the entries kept under one mark; past it the memo
	// starts over (entries only live until the next commit anyway).
	maxMemo = 1 << 16
	// memoLifetime bounds how long an entry is served: one query per user
	// a second under the heaviest read load.
	memoLifetime = time.Second
)

func newVersionMemo(m Marker, now func() time.Time) *versionMemo {
	return &versionMemo{marker: m, now: now, entries: map[versionKey]memoVersion{}}
}

// get returns the version kept for k if the database has not changed since
// it was read and it is not too old, and otherwise the current mark to
// keep a fresh read under (ok false when there is none).
func (vm *versionMemo) get(k versionKey) (v memoVersion, found bool, mark Mark, ok bool) {
	mark, ok = vm.marker.Mark()
	if !ok {
		return memoVersion{}, false, mark, false
	}
	vm.mu.RLock()
	if vm.mark == mark {
		v, found = vm.entries[k]
	}
	vm.mu.RUnlock()
	if found && vm.now().Sub(v.readAt) >= memoLifetime {
		found = false
	}
	return v, found, mark, true
}

// put keeps v, read from the database while its mark was mark, unless the
// mark has changed since: then v may already be out of date, and mark is
// not the newest to keep entries under.
func (vm *versionMemo) put(k versionKey, mark Mark, v memoVersion) {
	if now, ok := vm.marker.Mark(); !ok || now != mark {
		return
	}
	vm.mu.Lock()
	defer vm.mu.Unlock()
	if vm.mark != mark || len(vm.entries) >= maxMemo {
		vm.mark = mark
		clear(vm.entries)
	}
	vm.entries[k] = v
}

// UserAccountsVersion is the executor's, answered from the memo while the
// database is unchanged (see versionMemo). Transactions read it as it is.
func (db *DB) UserAccountsVersion(ctx context.Context, clientID, externalUserID string) (string, int64, error) {
	if db.memo == nil {
		return db.executor.UserAccountsVersion(ctx, clientID, externalUserID)
	}
	k := versionKey{clientID, externalUserID}
	v, found, mark, ok := db.memo.get(k)
	if found {
		return v.userID, v.version, nil
	}
	readAt := db.memo.now()
	userID, version, err := db.executor.UserAccountsVersion(ctx, clientID, externalUserID)
	if err == nil && ok {
		db.memo.put(k, mark, memoVersion{userID: userID, version: version, readAt: readAt})
	}
	return userID, version, err
}

// VersionMemoErr tells why users' accounts versions are read from the
// database on every call: nil when the memo is on.
func (db *DB) VersionMemoErr() error {
	if db.memo == nil {
		return errors.New("the " + db.drv.Name() + " driver cannot tell that the database is unchanged")
	}
	return db.memo.marker.MarkErr()
}
