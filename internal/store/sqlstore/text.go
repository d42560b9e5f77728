package sqlstore

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/hitchdev/hitch/internal/store"
)

// textGuard refuses string arguments that a store cannot hold as text
// (store.ErrInvalidText) before the database sees them, the same on both
// dialects: PostgreSQL fails on them ("invalid byte sequence for encoding
// UTF8") while SQLite keeps them or finds nothing. Every query of the
// executor goes through it.
type textGuard struct{ conn Conn }

// copyGuard is textGuard over a transaction that can bulk-load rows.
type copyGuard struct {
	textGuard
	copier Copier
}

// guard wraps c, keeping its ability to copy rows in bulk.
func guard(c Conn) Conn {
	if cp, ok := c.(Copier); ok {
		return copyGuard{textGuard{c}, cp}
	}
	return textGuard{c}
}

func (g textGuard) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if err := checkText(args); err != nil {
		return 0, err
	}
	return g.conn.Exec(ctx, query, args...)
}

func (g textGuard) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	if err := checkText(args); err != nil {
		return nil, err
	}
	return g.conn.Query(ctx, query, args...)
}

func (g textGuard) QueryRow(ctx context.Context, query string, args ...any) Row {
	if err := checkText(args); err != nil {
		return errRow{err}
	}
	return g.conn.QueryRow(ctx, query, args...)
}

func (g copyGuard) CopyFrom(ctx context.Context, table string, columns []string, rows [][]any) (int64, error) {
	for _, row := range rows {
		if err := checkText(row); err != nil {
			return 0, err
		}
	}
	return g.copier.CopyFrom(ctx, table, columns, rows)
}

// errRow is a row whose query was refused.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// checkText returns store.ErrInvalidText when a string argument holds a
// NUL or invalid UTF-8.
func checkText(args []any) error {
	for _, a := range args {
		var ok bool
		switch v := a.(type) {
		case string:
			ok = validText(v)
		case *string:
			ok = v == nil || validText(*v)
		case []string:
			ok = true
			for _, s := range v {
				ok = ok && validText(s)
			}
		default:
			continue
		}
		if !ok {
			return store.ErrInvalidText
		}
	}
	return nil
}

func validText(s string) bool { return strings.IndexByte(s, 0) < 0 && utf8.ValidString(s) }
