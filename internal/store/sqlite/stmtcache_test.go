package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
)

func openCached(t *testing.T) *sql.DB {
	t.Helper()
	db := sql.OpenDB(&connector{dsn: "file:" + filepath.Join(t.TempDir(), "c.db") + "?_pragma=journal_mode(WAL)"})
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE n (v INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for v := range 3 {
		if _, err := db.Exec(`INSERT INTO n (v) VALUES (?)`, v); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// The same query text run while its own rows are open (a nested query in a
// transaction) must not share the cached statement.
func TestStmtCacheNestedQuery(t *testing.T) {
	t.Parallel()
	db := openCached(t)
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	const q = `SELECT v FROM n WHERE v >= ? ORDER BY v`
	outer, err := tx.QueryContext(ctx, q, 0)
	if err != nil {
		t.Fatal(err)
	}
	var pairs []string
	for outer.Next() {
		var v int
		if err := outer.Scan(&v); err != nil {
			t.Fatal(err)
		}
		inner, err := tx.QueryContext(ctx, q, v)
		if err != nil {
			t.Fatal(err)
		}
		for inner.Next() {
			var w int
			if err := inner.Scan(&w); err != nil {
				t.Fatal(err)
			}
			pairs = append(pairs, fmt.Sprint(v, w))
		}
		if err := inner.Err(); err != nil {
			t.Fatal(err)
		}
		inner.Close()
	}
	if err := outer.Err(); err != nil {
		t.Fatal(err)
	}
	outer.Close()
	want := "[0 0 0 1 0 2 1 1 1 2 2 2]"
	if got := fmt.Sprint(pairs); got != want {
		t.Fatalf("pairs = %s, want %s", got, want)
	}
	// Closed rows give their statement back: the next run reads from the start.
	var n int
	if err := tx.QueryRowContext(ctx, q, 1).Scan(&n); err != nil || n != 1 {
		t.Fatalf("after close: %d, %v; want 1", n, err)
	}
}

// More distinct queries than the cache holds, a failing statement, and a
// schema change under cached statements all keep giving right answers.
func TestStmtCacheBoundsAndSchemaChange(t *testing.T) {
	t.Parallel()
	db := openCached(t)
	for i := range maxCachedStmts + 20 {
		var got int
		if err := db.QueryRow(fmt.Sprintf(`SELECT count(*) + %d FROM n`, i)).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != 3+i {
			t.Fatalf("query %d = %d, want %d", i, got, 3+i)
		}
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	err = conn.Raw(func(dc any) error {
		if n := len(dc.(*cachingConn).stmts); n > maxCachedStmts {
			return fmt.Errorf("%d statements cached, bound is %d", n, maxCachedStmts)
		}
		return nil
	})
	conn.Close()
	if err != nil {
		t.Fatal(err)
	}

	if _, err := db.Exec(`INSERT INTO missing (v) VALUES (1)`); err == nil {
		t.Fatal("insert into a missing table succeeded")
	}
	const q = `SELECT * FROM n ORDER BY v LIMIT 1`
	cols := func() []string {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		c, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if got := fmt.Sprint(cols()); got != "[v]" {
		t.Fatalf("columns = %s", got)
	}
	if _, err := db.Exec(`ALTER TABLE n ADD COLUMN w TEXT`); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(cols()); got != "[v w]" {
		t.Fatalf("columns after ALTER = %s, want [v w]", got)
	}
}
