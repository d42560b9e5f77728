package sqlstore

import (
	"context"
	"sync"
)

// versionMemo remembers users' accounts versions while the database is
// unchanged, so that a read-mostly workload does not query the same version
// over and over (GET /accounts/get reads one on every request).
//
// Every entry was read from the database after the mark it is kept under
// was taken, so while the database's mark still equals that mark no commit
// has come since, and the database holds what the entry was read from. A
// commit anywhere (any table, any connection or process) changes the mark
// and so retires every entry at once: the memo trades precision for a check
// that costs no query.
type versionMemo struct {
	marker Marker

	mu      sync.RWMutex
	mark    Mark
	entries map[versionKey]memoVersion
}

type versionKey struct{ clientID, externalUserID string }

type memoVersion struct {
	userID  string
	version int64
}

// maxMemo bounds the entries kept under one mark; past it the memo starts
// over (entries only live until the next commit anyway).
const maxMemo = 1 << 16

func newVersionMemo(m Marker) *versionMemo {
	return &versionMemo{marker: m, entries: map[versionKey]memoVersion{}}
}

// get returns the version kept for k if the database has not changed since
// it was read, and otherwise the current mark to keep a fresh read under.
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
	return v, found, mark, true
}

// put keeps v, read after mark was taken, under mark. A put under another
// mark than the memo's starts it over: an older mark only costs later
// misses, since get returns entries only while the database's mark equals
// the memo's.
func (vm *versionMemo) put(k versionKey, mark Mark, v memoVersion) {
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
	userID, version, err := db.executor.UserAccountsVersion(ctx, clientID, externalUserID)
	if err == nil && ok {
		db.memo.put(k, mark, memoVersion{userID: userID, version: version})
	}
	return userID, version, err
}
