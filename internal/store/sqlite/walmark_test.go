package sqlite

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/sqlstore"
)

var t0 = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

// openAt opens and migrates the store at path, closed when the test ends.
func openAt(t *testing.T, path string) *sqlstore.DB {
	t.Helper()
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return db
}

// openWithClient opens a store in a new directory, with client c.
func openWithClient(t *testing.T) (*sqlstore.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hitch.db")
	db := openAt(t, path)
	insertClient(t, db)
	return db, path
}

func insertClient(t *testing.T, db *sqlstore.DB) {
	t.Helper()
	if _, err := db.ClientInsert(context.Background(), &store.ClientInsertParams{ID: "c", Name: "C", Environment: "development", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
}

// markOf reads the mark of the database at path through a walMark of its
// own.
func markOf(t *testing.T, path string) func() sqlstore.Mark {
	t.Helper()
	w := openWALMark(context.Background(), &connector{dsn: "file:" + path + "?_pragma=query_only(1)"})
	t.Cleanup(func() { w.Close() })
	if err := w.MarkErr(); err != nil {
		t.Fatal(err)
	}
	return func() sqlstore.Mark {
		t.Helper()
		m, ok := w.Mark()
		if !ok {
			t.Fatal("the WAL index header could not be read")
		}
		return m
	}
}

// The mark stays while the database is only read and changes with every
// commit: of the store's own writer, of another connection, of another
// process.
func TestWALMarkChangesWithEveryCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, path := openWithClient(t)
	mark := markOf(t, path)
	before := mark()
	for range 3 {
		if _, err := db.ClientGetByID(ctx, "c"); err != nil {
			t.Fatal(err)
		}
	}
	if mark() != before {
		t.Fatal("reads changed the mark")
	}
	user := linkIn(t, db, "", 1)
	afterOwn := mark()
	if afterOwn == before {
		t.Fatal("the store's own commit left the mark as it was")
	}
	linkIn(t, openAt(t, path), user, 2)
	afterOther := mark()
	if afterOther == afterOwn {
		t.Fatal("another connection's commit left the mark as it was")
	}
	linkInProcess(t, path, user, 3)
	if mark() == afterOther {
		t.Fatal("another process's commit left the mark as it was")
	}
}

// A user's accounts version read through a store is the current one
// whichever connection or process changed the accounts, though the store
// keeps versions while the database is unchanged.
func TestAccountsVersionSeesEveryWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, path := openWithClient(t)
	user := linkIn(t, db, "", 1)
	version := func() int64 {
		t.Helper()
		_, v, err := db.UserAccountsVersion(ctx, "c", "u1")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	v1 := version()
	if again := version(); again != v1 {
		t.Fatalf("version %d, then %d with nothing changed", v1, again)
	}
	other := openAt(t, path)
	linkIn(t, other, user, 2)
	v2 := version()
	if v2 == v1 {
		t.Fatal("a link through another connection left the version as it was")
	}
	linkInProcess(t, path, user, 3)
	v3 := version()
	if v3 == v2 {
		t.Fatal("a link by another process left the version as it was")
	}
	linkIn(t, db, user, 4)
	if version() == v3 {
		t.Fatal("a link through the store itself left the version as it was")
	}
}

// linkIn links merchant for user u1 of client c (creating the user when
// userID is ""), and returns the user's id.
func linkIn(t *testing.T, db *sqlstore.DB, userID string, merchant int64) string {
	t.Helper()
	ctx := context.Background()
	if userID == "" {
		u, err := db.UserGetOrCreate(ctx, &store.UserGetOrCreateParams{ID: uuid.NewString(), ClientID: "c", ExternalUserID: "u1", CreatedAt: t0})
		if err != nil {
			t.Fatal(err)
		}
		userID = u.ID
	}
	if _, err := db.AccountLink(ctx, &store.AccountLinkParams{ID: uuid.NewString(), ClientID: "c", UserID: userID,
		MerchantID: merchant, Scopes: []string{"update_card"}, Now: t0}); err != nil {
		t.Fatal(err)
	}
	return userID
}

// linkInProcess links merchant for the user in another process: this test
// binary, running TestLinkHelperProcess.
func linkInProcess(t *testing.T, path, userID string, merchant int64) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLinkHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "HITCH_HELPER_DB="+path, "HITCH_HELPER_USER="+userID,
		"HITCH_HELPER_MERCHANT="+strconv.FormatInt(merchant, 10))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("helper process: %v\n%s", err, out)
	}
}

// TestLinkHelperProcess is linkInProcess's other process; it does nothing
// in a normal run.
func TestLinkHelperProcess(t *testing.T) {
	path := os.Getenv("HITCH_HELPER_DB")
	if path == "" {
		t.Skip("run by linkInProcess")
	}
	merchant, err := strconv.ParseInt(os.Getenv("HITCH_HELPER_MERCHANT"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	linkIn(t, openAt(t, path), os.Getenv("HITCH_HELPER_USER"), merchant)
}

// The store keeps versions (its mark answers) on a database opened as
// serve opens it, and reads the -shm file SQLite uses, also when the
// database's path is a symbolic link.
func TestWALMarkIsOn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	real := filepath.Join(dir, "real.db")
	openAt(t, real)
	link := filepath.Join(dir, "link.db")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	// A stale -shm file beside the link must not be the one read.
	if err := os.WriteFile(link+"-shm", make([]byte, 32768), 0o600); err != nil {
		t.Fatal(err)
	}
	db := openAt(t, link)
	if err := db.VersionMemoErr(); err != nil {
		t.Fatalf("the version memo is off: %v", err)
	}
	w := openWALMark(context.Background(), &connector{dsn: "file:" + link + "?_pragma=query_only(1)"})
	t.Cleanup(func() { w.Close() })
	if w.shm == nil || w.shm.path != real+"-shm" {
		t.Fatalf("reads %+v (%v), want %s", w.shm, w.MarkErr(), real+"-shm")
	}
	before, _ := w.Mark()
	insertClient(t, db)
	if after, ok := w.Mark(); !ok || after == before {
		t.Fatal("a commit through the link left the mark as it was")
	}
}

// A walMark's descriptor of the -shm file outlives every store of the
// process on the database: closing it would drop the POSIX locks SQLite's
// connections hold on the file.
func TestWALMarkSharesItsDescriptor(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "hitch.db")
	a, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	b := openAt(t, path)
	shmFiles.Lock()
	s := shmFiles.m[path+"-shm"]
	refs := 0
	if s != nil {
		refs = s.refs
	}
	shmFiles.Unlock()
	if refs != 2 {
		t.Fatalf("%d walMarks read the -shm file, want 2 (one per store)", refs)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	// b's connections still hold their locks: the descriptor is open.
	if _, err := s.f.Stat(); err != nil {
		t.Fatalf("the descriptor was closed while a store was open: %v", err)
	}
	insertClient(t, b)
}
