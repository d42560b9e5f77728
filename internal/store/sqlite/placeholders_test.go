package sqlite

import "testing"

func TestAnonymousPlaceholders(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT a FROM t WHERE a = $1 AND b = $2`, `SELECT a FROM t WHERE a = ? AND b = ?`},
		{`INSERT INTO t VALUES ($1, $2), ($3, $4)`, `INSERT INTO t VALUES (?, ?), (?, ?)`},
		{`SELECT $1, $10`, `SELECT $1, $10`},                 // a gap
		{`SELECT $2, $1`, `SELECT $2, $1`},                   // out of order
		{`SELECT $1 WHERE a = $1`, `SELECT $1 WHERE a = $1`}, // used twice
		{`SELECT json_extract(j, '$.a') FROM t WHERE id = $1`, `SELECT json_extract(j, '$.a') FROM t WHERE id = ?`},
		{`SELECT 'it''s $1' WHERE a = $1`, `SELECT 'it''s $1' WHERE a = ?`},
		{`SELECT "col$1" FROM t WHERE a = $1`, `SELECT "col$1" FROM t WHERE a = ?`},
		{"SELECT a -- $9 here\nFROM t WHERE a = $1", "SELECT a -- $9 here\nFROM t WHERE a = ?"},
		{`SELECT a /* $9 */ FROM t WHERE a = $1`, `SELECT a /* $9 */ FROM t WHERE a = ?`},
		{`SELECT a /* $1 unclosed`, `SELECT a /* $1 unclosed`},
		{`SELECT $1, ?`, `SELECT $1, ?`},
		{`SELECT $1, :name`, `SELECT $1, :name`},
		{`SELECT $1, @name`, `SELECT $1, @name`},
		{`SELECT $a`, `SELECT $a`},
		{`SELECT $1a`, `SELECT $1a`},
		{`SELECT [x$1] FROM t WHERE a = $1`, `SELECT [x$1] FROM t WHERE a = $1`},
		{`SELECT a FROM t WHERE b = $1 AND c = $2`, `SELECT a FROM t WHERE b = ? AND c = ?`},
		{`INSERT INTO t VALUES ($1); INSERT INTO t VALUES ($2)`, `INSERT INTO t VALUES ($1); INSERT INTO t VALUES ($2)`},
		{"SELECT a FROM t WHERE a = $1;\n", "SELECT a FROM t WHERE a = ?;\n"},
		{`SELECT a FROM t WHERE a = ';' AND b = $1`, `SELECT a FROM t WHERE a = ';' AND b = ?`},
		{`SELECT col$1 FROM t WHERE a = $2`, `SELECT col$1 FROM t WHERE a = $2`},
	} {
		if got := anonymousPlaceholders(tc.in); got != tc.want {
			t.Errorf("anonymousPlaceholders(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
