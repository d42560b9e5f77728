// Package hitch builds cmd/hitch and runs it for the benchmarks: each
// `hitch serve` on a free loopback port, a fresh data dir and a fresh
// database, with a fixed development client, and calls its API.
package hitch

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hitchdev/hitch/bench/internal/proc"
)

const hitchModule = "github.com/hitchdev/hitch"

// DevClientID is HITCH_DEV_CLIENT_ID, the Basic user of every Hitch started.
const DevClientID = "bench_client_0001"

// Config is the flags both benchmarks take to say where Hitch comes from
// and what it runs on.
type Config struct {
	// Repo is the repository root (--repo); empty means the first directory
	// up from the working directory whose go.mod declares the Hitch module.
	Repo string
	// DatabaseURL is a PostgreSQL server (--database-url), each start in a
	// new schema; empty means SQLite in the fresh data dir.
	DatabaseURL string
	// Keep leaves the temporary directory in place (--keep, default false);
	// Close then says where it is.
	Keep bool
	// Flags are added to every Hitch started (--hitch-flag, repeated), to
	// compare settings: --hitch-flag=--request-log-retention=0.
	Flags []string
}

// AddFlags registers --database-url, --repo, --keep and --hitch-flag on fs.
func (c *Config) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.DatabaseURL, "database-url", "", "PostgreSQL URL to benchmark on, a fresh schema for each server started (default: SQLite in a fresh data dir)")
	fs.StringVar(&c.Repo, "repo", "", "Hitch repository root (default: found by walking up from the working directory)")
	fs.BoolVar(&c.Keep, "keep", false, "keep the temporary directory (binary, data dirs, server logs)")
	fs.Func("hitch-flag", "a flag for every hitch started, repeatable (e.g. --hitch-flag=--request-log-retention=0)",
		func(v string) error {
			if !strings.HasPrefix(v, "-") {
				return fmt.Errorf("%q is not a flag", v)
			}
			c.Flags = append(c.Flags, v)
			return nil
		})
}

// Validate checks --database-url.
func (c Config) Validate() error {
	if c.DatabaseURL != "" && !IsPostgresURL(c.DatabaseURL) {
		return errors.New("--database-url: want postgres://… (leave it empty for SQLite)")
	}
	return nil
}

// Launcher starts `hitch serve` processes from a binary it built into a
// temporary directory. Close stops them and removes what they left.
type Launcher struct {
	// Work is the temporary directory: the binary, data dirs and logs.
	Work string
	// Secret is HITCH_DEV_SECRET, the Basic password of DevClientID.
	Secret string

	cfg      Config
	progress io.Writer
	bin      string
	dbs      databases
	// started are every process started, for their logs and Close.
	started []*proc.Child
	// servers are the data dir and database of each `hitch serve` started,
	// by name, for StartWorker.
	servers map[string]server
}

// server is where a `hitch serve` keeps its data.
type server struct{ dataDir, dbURL string }

// NewLauncher finds the repository, makes the temporary directory, named
// by the os.MkdirTemp pattern workPrefix, and builds cmd/hitch into it,
// before anything is timed. It reports progress on the progress writer.
func NewLauncher(ctx context.Context, cfg Config, workPrefix string, progress io.Writer) (*Launcher, error) {
	repo, err := findRepo(cfg.Repo)
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", workPrefix)
	if err != nil {
		return nil, err
	}
	l := &Launcher{Work: work, Secret: randomHex(20), cfg: cfg, progress: progress, servers: map[string]server{}}
	l.dbs = databases{baseURL: cfg.DatabaseURL, progress: l.Progress}
	l.Progress("building hitch from %s", repo)
	if l.bin, err = build(ctx, repo, work); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// Close stops every process started, drops the PostgreSQL schemas and
// removes the temporary directory, unless Config.Keep.
func (l *Launcher) Close() {
	for _, c := range slices.Backward(l.started) {
		c.Stop()
	}
	l.dbs.dropAll()
	if l.cfg.Keep {
		l.Progress("kept %s", l.Work)
		return
	}
	os.RemoveAll(l.Work)
}

// Progress tells the user what the benchmark is doing, one line a call.
func (l *Launcher) Progress(format string, args ...any) {
	fmt.Fprintf(l.progress, "bench: "+format+"\n", args...)
}

// Store names the database for the report: "sqlite" or "postgres".
func (l *Launcher) Store() string { return l.dbs.store() }

// FreshDatabase returns the --database-url of a new, empty database: empty
// on SQLite (a fresh data dir is one), otherwise the base URL with a new
// schema as its search_path, dropped by Close.
func (l *Launcher) FreshDatabase(ctx context.Context) (string, error) { return l.dbs.fresh(ctx) }

// Start launches `hitch serve --env development --rate-limit 0` on a free
// loopback port, a fresh data dir and a fresh database, with extra flags
// after the fixed ones, and returns the process and its base URL. It does
// not wait for it to be ready: the database is made first, so that the
// time to ready is Hitch's alone.
func (l *Launcher) Start(ctx context.Context, name string, extra ...string) (*proc.Child, string, error) {
	dataDir := filepath.Join(l.Work, "data-"+name)
	if err := os.Mkdir(dataDir, 0o700); err != nil {
		return nil, "", err
	}
	dbURL, err := l.dbs.fresh(ctx)
	if err != nil {
		return nil, "", err
	}
	addr, err := proc.FreeLoopbackAddr()
	if err != nil {
		return nil, "", err
	}
	c, err := l.start("hitch "+name, "hitch-"+name, dataDir, dbURL, []string{"serve", "--addr", addr}, extra)
	if err != nil {
		return nil, "", err
	}
	l.servers[name] = server{dataDir: dataDir, dbURL: dbURL}
	return c, "http://" + addr, nil
}

// StartWorker launches `hitch worker --env development` on the data dir and
// database of the `hitch serve` that Start started as serveName, with
// extra flags: a process that only works jobs, beside an API-only server
// (--workers=false).
func (l *Launcher) StartWorker(serveName, name string, extra ...string) (*proc.Child, error) {
	srv, ok := l.servers[serveName]
	if !ok {
		return nil, fmt.Errorf("no hitch serve started as %q", serveName)
	}
	return l.start("hitch worker "+name, "hitch-worker-"+name, srv.dataDir, srv.dbURL, []string{"worker"}, extra)
}

// start runs the binary with cmd (a subcommand and its own flags), the
// fixed flags, then extra, logging to <work>/<logName>.log.
func (l *Launcher) start(name, logName, dataDir, dbURL string, cmd, extra []string) (*proc.Child, error) {
	argv := append([]string{l.bin}, cmd...)
	argv = append(argv, "--data-dir", dataDir, "--env", "development", "--rate-limit", "0")
	if dbURL != "" {
		argv = append(argv, "--database-url", dbURL)
	}
	argv = append(argv, l.cfg.Flags...)
	argv = append(argv, extra...)
	c, err := proc.Start(name, filepath.Join(l.Work, logName+".log"), l.env(), argv...)
	if err != nil {
		return nil, err
	}
	l.started = append(l.started, c)
	return c, nil
}

// env is the benchmark's environment without its HITCH_* variables (Hitch
// refuses unknown ones), plus the fixed development client.
// HITCH_DEBUG_ADDR passes through, so that a loaded server can be profiled
// (bench/README.md).
func (l *Launcher) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HITCH_") || strings.HasPrefix(kv, "HITCH_DEBUG_ADDR=") {
			env = append(env, kv)
		}
	}
	return append(env, "HITCH_DEV_CLIENT_ID="+DevClientID, "HITCH_DEV_SECRET="+l.Secret)
}

// WarnLogs returns what each Hitch process logged at warn level or above,
// by process name, leaving out processes that logged nothing.
func (l *Launcher) WarnLogs() map[string][]string {
	out := map[string][]string{}
	for _, c := range l.started {
		b, err := os.ReadFile(c.LogPath())
		if err != nil || len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if atLeastWarn(line) {
				out[c.Name()] = append(out[c.Name()], line)
			}
		}
	}
	return out
}

// atLeastWarn reports whether a log line, text or JSON, is at warn or error.
func atLeastWarn(line string) bool {
	for _, mark := range []string{"level=WARN", "level=ERROR", `"level":"WARN"`, `"level":"ERROR"`} {
		if strings.Contains(line, mark) {
			return true
		}
	}
	return false
}

// findRepo returns the Hitch repository root: dir when given, otherwise the
// first directory up from the working directory whose go.mod declares the
// Hitch module.
func findRepo(dir string) (string, error) {
	if dir != "" {
		if !isHitchRoot(dir) {
			return "", fmt.Errorf("--repo %s: no go.mod for %s there", dir, hitchModule)
		}
		return filepath.Abs(dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if isHitchRoot(d) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod for %s above %s; pass --repo", hitchModule, wd)
		}
	}
}

func isHitchRoot(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if mod, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(mod), `"`) == hitchModule
		}
	}
	return false
}

// build builds cmd/hitch into work.
func build(ctx context.Context, repo, work string) (string, error) {
	bin := filepath.Join(work, "hitch")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/hitch")
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/hitch: %w\n%s", err, out)
	}
	return bin, nil
}

// randomHex is n random bytes in hex (2n characters).
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand panics instead)
	return hex.EncodeToString(b)
}
