package hitch

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// psqlTimeout bounds each psql call.
const psqlTimeout = 30 * time.Second

// IsPostgresURL reports whether s is a postgres:// or postgresql:// URL.
func IsPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// databases gives each Hitch start a fresh database: on SQLite the fresh
// data dir is enough; on PostgreSQL it is a new schema, made with psql and
// dropped by dropAll.
type databases struct {
	// baseURL is --database-url; empty means SQLite.
	baseURL  string
	progress func(format string, args ...any)
	schemas  []string
}

// store names the database for the report.
func (d *databases) store() string {
	if d.baseURL == "" {
		return "sqlite"
	}
	return "postgres"
}

// fresh returns the --database-url for a new Hitch process: empty on SQLite,
// otherwise the base URL with a new, empty schema as its search_path.
func (d *databases) fresh(ctx context.Context) (string, error) {
	if d.baseURL == "" {
		return "", nil
	}
	if _, err := exec.LookPath("psql"); err != nil {
		return "", errors.New("--database-url needs psql on PATH to create and drop a schema per run")
	}
	schema := "bench_" + randomHex(6)
	if err := d.psql(ctx, "CREATE SCHEMA "+schema); err != nil {
		return "", err
	}
	d.schemas = append(d.schemas, schema)
	return withSearchPath(d.baseURL, schema)
}

// dropAll drops the schemas fresh made, the last first.
func (d *databases) dropAll() {
	for _, schema := range slices.Backward(d.schemas) {
		// The benchmark's ctx may be over (Ctrl-C); the schema still has to go.
		if err := d.psql(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			d.progress("%v", err)
		}
	}
	d.schemas = nil
}

// psql runs one SQL statement on the base database.
func (d *databases) psql(ctx context.Context, sql string) error {
	ctx, cancel := context.WithTimeout(ctx, psqlTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", libpqURL(d.baseURL), "-c", sql)
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("psql %q: %w: %s", sql, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// withSearchPath adds "-c search_path=schema" to the URL's options startup
// parameter, which pgx and libpq both send to the server.
func withSearchPath(rawURL, schema string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", errors.New("--database-url: not a URL") // the error may quote the password
	}
	q := u.Query()
	q.Set("options", strings.TrimSpace(q.Get("options")+" -c search_path="+schema))
	// Spaces as %20, not +: pgx takes a + in a query value literally. A
	// literal + is %2B after Encode, so the replacement is safe.
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
	return u.String(), nil
}

// libpqURL is u without the pool_* parameters that pgx reads (for Hitch's
// pool, e.g. pool_max_conns) and libpq, so psql, refuses.
func libpqURL(u string) string {
	parsed, err := url.Parse(u)
	if err != nil {
		return u
	}
	q := parsed.Query()
	for k := range q {
		if strings.HasPrefix(k, "pool_") {
			q.Del(k)
		}
	}
	parsed.RawQuery = q.Encode()
	return parsed.String()
}
