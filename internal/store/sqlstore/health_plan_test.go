package sqlstore_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/hitchdev/hitch/internal/store/sqlstore"
)

// The health pages' window reads go through their indexes and read the
// window's rows only, whatever another developer holds or the developer
// held before the window: client-b has 20,000 attempts and login steps in
// the window, client-a 2,000 before it and 10 in it. With statistics as
// the tables were bulk-loaded (stale), custom and generic plans alike.
func TestHealthWindowPlans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn, schema := migratedSchema(t)
	for _, q := range []string{
		`SET search_path = ` + pgx.Identifier{schema}.Sanitize(),
		`ALTER TABLE webhook_attempts SET (autovacuum_enabled = false)`,
		`ALTER TABLE account_logins SET (autovacuum_enabled = false)`,
		`INSERT INTO clients (id, name, environment, created_at) VALUES ('client-a', 'A', 'development', now()), ('client-b', 'B', 'development', now())`,
		`INSERT INTO users (id, client_id, external_user_id, created_at) VALUES
			('00000000-0000-0000-0000-00000000000a', 'client-a', 'u', now()), ('00000000-0000-0000-0000-00000000000b', 'client-b', 'u', now())`,
		`INSERT INTO accounts (id, client_id, user_id, merchant_id, connection_status, linked_at, created_at, updated_at) VALUES
			('00000000-0000-0000-0000-0000000000aa', 'client-a', '00000000-0000-0000-0000-00000000000a', 1, 'connected', now(), now(), now()),
			('00000000-0000-0000-0000-0000000000bb', 'client-b', '00000000-0000-0000-0000-00000000000b', 1, 'connected', now(), now(), now())`,
		`INSERT INTO events (id, client_id, type, sequence, payload, created_at) VALUES
			('00000000-0000-0000-0000-0000000000ea', 'client-a', 'TEST', 1, '{}', now()),
			('00000000-0000-0000-0000-0000000000eb', 'client-b', 'TEST', 1, '{}', now())`,
		`INSERT INTO webhook_endpoints (id, client_id, url, secret_sealed, status, created_at, updated_at) VALUES
			('we_a', 'client-a', 'https://a.example/h', '\x00', 'enabled', now(), now()),
			('we_b', 'client-b', 'https://b.example/h', '\x00', 'enabled', now(), now())`,
		`INSERT INTO webhook_attempts (client_id, event_id, endpoint_id, attempt, started_at, duration_us, outcome)
			SELECT 'client-b', '00000000-0000-0000-0000-0000000000eb', 'we_b', i, now() - i * interval '1 ms', 1000, 'succeeded'
			FROM generate_series(1, 20000) i`,
		`INSERT INTO webhook_attempts (client_id, event_id, endpoint_id, attempt, started_at, duration_us, outcome)
			SELECT 'client-a', '00000000-0000-0000-0000-0000000000ea', 'we_a', i, now() - interval '2 days' - i * interval '1 s', 1000, 'failed'
			FROM generate_series(1, 2000) i`,
		`INSERT INTO webhook_attempts (client_id, event_id, endpoint_id, attempt, started_at, duration_us, outcome)
			SELECT 'client-a', '00000000-0000-0000-0000-0000000000ea', 'we_a', i, now() - i * interval '1 s', 1000, 'succeeded'
			FROM generate_series(1, 10) i`,
		`INSERT INTO account_logins (client_id, user_id, account_id, merchant_id, product, status, created_at)
			SELECT 'client-b', '00000000-0000-0000-0000-00000000000b', '00000000-0000-0000-0000-0000000000bb', 1, 'transaction_link', 'authenticated', now() - i * interval '1 ms'
			FROM generate_series(1, 20000) i`,
		`INSERT INTO account_logins (client_id, user_id, account_id, merchant_id, product, status, created_at)
			SELECT 'client-a', '00000000-0000-0000-0000-00000000000a', '00000000-0000-0000-0000-0000000000aa', 1, 'transaction_link', 'authenticated',
				now() - CASE WHEN i <= 10 THEN i * interval '1 s' ELSE interval '2 days' + i * interval '1 s' END
			FROM generate_series(1, 2010) i`,
		`PREPARE attempts_since AS ` + sqlstore.WebhookAttemptsSinceSQL,
		`PREPARE logins_since AS ` + sqlstore.AccountLoginsSinceSQL,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, c := range []struct{ stmt, index string }{
		{`EXECUTE attempts_since('client-a', now() - interval '1 hour', 20001)`, "webhook_attempts_client_started"},
		{`EXECUTE logins_since('client-a', now() - interval '1 hour', 20001)`, "account_logins_client_created"},
	} {
		for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			if _, err := conn.Exec(ctx, `SET plan_cache_mode = `+mode); err != nil {
				t.Fatal(err)
			}
			var out []byte
			if err := conn.QueryRow(ctx, `EXPLAIN (ANALYZE, FORMAT JSON) `+c.stmt).Scan(&out); err != nil {
				t.Fatal(err)
			}
			var plans []struct {
				Plan planNode `json:"Plan"`
			}
			if err := json.Unmarshal(out, &plans); err != nil || len(plans) != 1 {
				t.Fatalf("EXPLAIN output %s: %v", out, err)
			}
			used := false
			plans[0].Plan.walk(func(n planNode) {
				used = used || n.IndexName == c.index
				if n.RelationName == "" {
					return
				}
				if n.NodeType == "Seq Scan" {
					t.Errorf("%s %s: scans %s sequentially:\n%s", c.stmt, mode, n.RelationName, out)
				}
				if read := n.ActualRows * n.ActualLoops; read > 10 {
					t.Errorf("%s %s: %s on %s reads %v rows, want the window's 10:\n%s", c.stmt, mode, n.NodeType, n.RelationName, read, out)
				}
			})
			if !used {
				t.Errorf("%s %s: %s not used:\n%s", c.stmt, mode, c.index, out)
			}
		}
	}
}
