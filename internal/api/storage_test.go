package api_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/hitchdev/hitch/client"
	"github.com/hitchdev/hitch/internal/store"
)

// Secrets, session values and aggregator tokens never reach the database in
// plain text: every table is dumped and searched for them.
func TestNoSecretsStoredInPlainText(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		s, err := h.api.CreateSession(ctx, &client.CreateSessionRequest{Type: "link", ExternalUserID: "u1",
			ProcessorToken: ptr("processor-token-canary-123")})
		if err != nil {
			t.Fatal(err)
		}
		linkCard(t, h.api, "u1", 1)
		dump := dumpDatabase(t, h.store)
		if !strings.Contains(dump, h.clientID) || !strings.Contains(dump, s.SessionID) {
			t.Fatal("the dump does not hold the rows it should: the test is blind")
		}
		for _, canary := range []string{h.secret, strings.TrimPrefix(h.secret, "hsk_"), s.Session,
			strings.TrimPrefix(s.Session, "sess_"), "processor-token-canary-123"} {
			if strings.Contains(dump, canary) {
				t.Errorf("the database holds %q in plain text", canary)
			}
		}
	})
}

// dumpDatabase renders every row of every table as text.
func dumpDatabase(t *testing.T, st store.Store) string {
	t.Helper()
	var b strings.Builder
	err := st.InTx(context.Background(), func(ex store.Executor) error {
		switch tx := ex.(interface{ Raw() any }).Raw().(type) {
		case *sql.Tx:
			return dumpSQLite(tx, &b)
		case pgx.Tx:
			return dumpPostgres(tx, &b)
		default:
			return fmt.Errorf("unknown transaction %T", tx)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func dumpSQLite(tx *sql.Tx, b *strings.Builder) error {
	rows, err := tx.Query(`SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		return err
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return err
		}
		tables = append(tables, name)
	}
	rows.Close()
	for _, table := range tables {
		rows, err := tx.Query(`SELECT * FROM "` + table + `"`)
		if err != nil {
			return err
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				return err
			}
			for _, v := range vals {
				fmt.Fprintf(b, "%s|%v\n", v, v)
			}
		}
		rows.Close()
	}
	return nil
}

func dumpPostgres(tx pgx.Tx, b *strings.Builder) error {
	ctx := context.Background()
	rows, err := tx.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`)
	if err != nil {
		return err
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, table := range tables {
		rows, err := tx.Query(ctx, `SELECT row_to_json(t)::text FROM "`+table+`" t`)
		if err != nil {
			return err
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		b.WriteString(strings.Join(lines, "\n"))
	}
	return nil
}
