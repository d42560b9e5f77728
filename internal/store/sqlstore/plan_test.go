package sqlstore_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/hitchdev/hitch/internal/store/sqlstore"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// planNode is the part of EXPLAIN (FORMAT JSON) the test reads.
type planNode struct {
	NodeType     string     `json:"Node Type"`
	RelationName string     `json:"Relation Name"`
	IndexName    string     `json:"Index Name"`
	ActualRows   float64    `json:"Actual Rows"`
	ActualLoops  float64    `json:"Actual Loops"`
	Plans        []planNode `json:"Plans"`
}

func (n planNode) walk(fn func(planNode)) {
	fn(n)
	for _, c := range n.Plans {
		c.walk(fn)
	}
}

// The version check behind cached sync pages reads one account whatever
// the statistics say: here the tables were bulk-loaded after the
// migrations analyzed them empty, and autovacuum is off, so the planner
// believes they hold nothing. 2,000 users of one developer each have an
// account at the same merchant; the check must read one user and one
// account, with generic and custom plans alike.
func TestAccountTransactionsVersionPlanIgnoresStaleStatistics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn, schema := migratedSchema(t)
	for _, q := range []string{
		`SET search_path = ` + pgx.Identifier{schema}.Sanitize(),
		`ALTER TABLE users SET (autovacuum_enabled = false)`,
		`ALTER TABLE accounts SET (autovacuum_enabled = false)`,
		`INSERT INTO clients (id, name, environment, created_at) VALUES ('client-a', 'A', 'development', now())`,
		`INSERT INTO users (id, client_id, external_user_id, created_at)
			SELECT gen_random_uuid(), 'client-a', 'user-' || i, now() FROM generate_series(1, 2000) i`,
		`INSERT INTO accounts (id, client_id, user_id, merchant_id, connection_status, linked_at, created_at, updated_at)
			SELECT gen_random_uuid(), 'client-a', id, 19, 'connected', now(), now(), now() FROM users`,
		`PREPARE version_check AS ` + sqlstore.AccountTransactionsVersionSQL,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		if _, err := conn.Exec(ctx, `SET plan_cache_mode = `+mode); err != nil {
			t.Fatal(err)
		}
		var out []byte
		if err := conn.QueryRow(ctx, `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE version_check('client-a', 'user-1500', 19)`).Scan(&out); err != nil {
			t.Fatal(err)
		}
		var plans []struct {
			Plan planNode `json:"Plan"`
		}
		if err := json.Unmarshal(out, &plans); err != nil || len(plans) != 1 {
			t.Fatalf("EXPLAIN output %s: %v", out, err)
		}
		plans[0].Plan.walk(func(n planNode) {
			if n.RelationName == "" {
				return
			}
			if n.NodeType == "Seq Scan" {
				t.Errorf("%s: %s scans %s sequentially:\n%s", mode, n.NodeType, n.RelationName, out)
			}
			if read := n.ActualRows * n.ActualLoops; read > 1 {
				t.Errorf("%s: %s on %s reads %v rows, want one:\n%s", mode, n.NodeType, n.RelationName, read, out)
			}
		})
	}
}

// Migrations leave the planner statistics of every table they create, so
// that plans made before autovacuum runs are not guesses.
func TestMigrateAnalyzesPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn, schema := migratedSchema(t)
	// reltuples is -1 for a table never analyzed (PostgreSQL 14 and later).
	rows, err := conn.Query(ctx, `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relkind = 'r' AND c.reltuples < 0 ORDER BY c.relname`, schema)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(names) > 0 {
		t.Errorf("tables without statistics after migrating: %v", names)
	}
}

// migratedSchema opens a migrated PostgreSQL schema of its own and a plain
// connection to the database, to look at its plans and statistics.
func migratedSchema(t *testing.T) (*pgx.Conn, string) {
	t.Helper()
	url := storetest.RequirePostgres(t)
	_, schema := storetest.OpenPostgresSchema(t)
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn, schema
}
