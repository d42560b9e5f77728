// Package config holds Hitch's one Config, read from flags and HITCH_*
// environment variables (flags win), with documented defaults.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hitchdev/hitch/internal/clientip"
)

// Environments.
const (
	Development = "development"
	Production  = "production"
)

// Config is everything a Hitch process is configured with.
type Config struct {
	// Addr is the listen address. Default 127.0.0.1:8080.
	Addr string
	// Env is development or production. Default development.
	Env string
	// DataDir holds the SQLite database and, in development, the generated
	// master key. Default ./data.
	DataDir string
	// DatabaseURL is sqlite:PATH, a bare path, or postgres://…. Default
	// sqlite:<DataDir>/hitch.db.
	DatabaseURL string
	// LogFormat is text or json. Default text.
	LogFormat string
	// LogLevel is debug, info, warn or error. Default info.
	LogLevel string
	// PublicURL is the externally reachable base URL, used in links such as
	// merchant logos. Default http://<Addr>, with the port serve listens
	// on (ListeningOn).
	PublicURL string
	// derivedPublicURL is the PublicURL that Validate derived from Addr,
	// "" when one was configured.
	derivedPublicURL string
	// RateLimit is the sustained requests per second allowed per client on
	// each node (0 turns limiting off). Default 100.
	RateLimit float64
	// RateBurst is the burst above RateLimit. Default 200.
	RateBurst int
	// TrustedProxies are the reverse proxies and load balancers whose
	// X-Forwarded-For names the client for per-IP limits and the audit log
	// (HITCH_TRUSTED_PROXIES, CIDRs or IPs separated by commas). Default
	// none: the client is the connection's peer and the header is ignored.
	TrustedProxies []netip.Prefix
	// CacheMiB is the memory, in MiB, for rendered account listings and
	// sync pages served again while their data is unchanged; 0 turns it
	// off. Default 32.
	CacheMiB int
	// ShutdownTimeout bounds how long in-flight requests and then running
	// jobs may finish after SIGTERM, together. Default 15s.
	ShutdownTimeout time.Duration
	// SecretGrace is how long a rotated-out client secret keeps working.
	// Default 24h.
	SecretGrace time.Duration
	// RequestLogRetention is how long the request log keeps each API
	// request of a developer; 0 turns the request log off. Default 336h
	// (14 days).
	RequestLogRetention time.Duration
	// DebugAddr, when set, serves Go's pprof profiles on a separate
	// listener for operators (keep it on loopback). Default off.
	DebugAddr string
	// WebhookRetrySchedule is the wait before each delivery attempt after
	// the previous one failed, the first (0s) standing for the first attempt
	// (HITCH_WEBHOOK_RETRY_SCHEDULE, e.g. 0s,5s,5m: three attempts).
	// Default: the published schedule of docs/webhooks.md.
	WebhookRetrySchedule []time.Duration
	// WebhookTimeout bounds one delivery attempt. Default 10s.
	WebhookTimeout time.Duration
	// WebhookWorkers is how many deliveries one node runs at once.
	// Default 200.
	WebhookWorkers int
	// CardWindow is how long a card switch task waits for its card data
	// after AUTHENTICATED before it fails. Default 15s.
	CardWindow time.Duration
	// TaskDeadline is how long a production task with its card waits for
	// its connector's result before it fails and the card is erased.
	// Default 10m.
	TaskDeadline time.Duration
	// ConnectorLease is how long a connector holds a login or refresh
	// without calling Hitch about it (default 30s): a connector that dies
	// loses its work after it.
	ConnectorLease time.Duration
	// RefreshInterval is how often connectors refresh each linked account
	// (default 4h).
	RefreshInterval time.Duration
	// KeyGrace is how long a rotated-out JWE key keeps decrypting (the
	// default of `hitch keys rotate --grace`). Default 168h (7 days).
	KeyGrace time.Duration
	// WebhookAllowPrivate lets a production deployment deliver webhooks to
	// http and private or loopback addresses (default false: only public
	// https), for a production deployment tried on one machine.
	WebhookAllowPrivate bool
	// Workers runs the job workers in serve (default true); false makes a
	// node that only serves the API, with `hitch worker` processes working.
	Workers bool

	// MasterKey seals secrets at rest (HITCH_MASTER_KEY only: never a flag,
	// so it does not show in process listings). Required in production; in
	// development a key is generated into DataDir when unset.
	MasterKey string
	// DevClientID and DevSecret fix the development client that serve
	// creates (HITCH_DEV_CLIENT_ID, HITCH_DEV_SECRET).
	DevClientID string
	DevSecret   string
}

// Database is a parsed DatabaseURL.
type Database struct {
	Driver string // "sqlite" or "postgres"
	// DSN is the SQLite file path or the PostgreSQL URL.
	DSN string
}

// Env variables that are not settings of their own but are known, so that a
// typo in any other HITCH_* variable is reported.
var knownEnv = map[string]bool{
	"HITCH_MASTER_KEY":        true,
	"HITCH_DEV_CLIENT_ID":     true,
	"HITCH_DEV_SECRET":        true,
	"HITCH_TEST_DATABASE_URL": true, // read by the test suite, not by the binary
}

// FlagSet registers the configuration flags on fs, defaulting each from the
// environment. Call Finish after fs.Parse.
type FlagSet struct {
	cfg    *Config
	getenv func(string) string
	fs     *flag.FlagSet
	// envOf maps a flag name to its environment variable.
	envOf map[string]string
	err   error
}

// NewFlagSet creates a flag set named name holding every configuration flag.
func NewFlagSet(name string, getenv func(string) string) *FlagSet {
	f := &FlagSet{
		cfg:    &Config{},
		getenv: getenv,
		fs:     flag.NewFlagSet(name, flag.ContinueOnError),
		envOf:  map[string]string{},
	}
	f.fs.SetOutput(io.Discard)
	c := f.cfg
	f.str(&c.Addr, "addr", "HITCH_ADDR", "127.0.0.1:8080", "listen address")
	f.str(&c.Env, "env", "HITCH_ENV", Development, "environment: development or production")
	f.str(&c.DataDir, "data-dir", "HITCH_DATA_DIR", "./data", "directory for the SQLite database and the development master key")
	f.str(&c.DatabaseURL, "database-url", "HITCH_DATABASE_URL", "", "sqlite:PATH or postgres://… (default sqlite:<data-dir>/hitch.db)")
	f.str(&c.LogFormat, "log-format", "HITCH_LOG_FORMAT", "text", "log format: text or json")
	f.str(&c.LogLevel, "log-level", "HITCH_LOG_LEVEL", "info", "log level: debug, info, warn or error")
	f.str(&c.PublicURL, "public-url", "HITCH_PUBLIC_URL", "", "externally reachable base URL (default http://<addr>)")
	f.float(&c.RateLimit, "rate-limit", "HITCH_RATE_LIMIT", 100, "requests per second per client and node; 0 turns it off")
	f.integer(&c.RateBurst, "rate-burst", "HITCH_RATE_BURST", 200, "burst above --rate-limit")
	f.proxies(&c.TrustedProxies, "trusted-proxies", "HITCH_TRUSTED_PROXIES",
		"CIDRs or IPs of reverse proxies whose X-Forwarded-For names the client, e.g. 10.0.0.0/8 (default none)")
	f.integer(&c.CacheMiB, "cache-size", "HITCH_CACHE_SIZE", 32, "MiB for account listings and sync pages served again while unchanged; 0 turns it off")
	f.duration(&c.ShutdownTimeout, "shutdown-timeout", "HITCH_SHUTDOWN_TIMEOUT", 15*time.Second, "time in-flight requests and then running jobs get to finish on shutdown, together")
	f.duration(&c.SecretGrace, "secret-grace", "HITCH_SECRET_GRACE", 24*time.Hour, "how long a rotated-out client secret keeps working")
	f.duration(&c.RequestLogRetention, "request-log-retention", "HITCH_REQUEST_LOG_RETENTION", 14*24*time.Hour,
		"how long the request log keeps each API request (0 turns it off)")
	f.str(&c.DebugAddr, "debug-addr", "HITCH_DEBUG_ADDR", "", "address for pprof profiles, e.g. 127.0.0.1:6060 (default off)")
	f.durations(&c.WebhookRetrySchedule, "webhook-retry-schedule", "HITCH_WEBHOOK_RETRY_SCHEDULE",
		"0s,5s,5m,30m,2h,5h,10h,10h", "wait before each webhook delivery attempt, the first being 0s")
	f.duration(&c.WebhookTimeout, "webhook-timeout", "HITCH_WEBHOOK_TIMEOUT", 10*time.Second, "time a webhook receiver gets to answer")
	f.integer(&c.WebhookWorkers, "webhook-workers", "HITCH_WEBHOOK_WORKERS", 200, "webhook deliveries one node runs at once")
	f.duration(&c.CardWindow, "card-window", "HITCH_CARD_WINDOW", 15*time.Second, "time a card switch waits for its card data")
	f.duration(&c.TaskDeadline, "task-deadline", "HITCH_TASK_DEADLINE", 10*time.Minute, "time a production task waits for its connector")
	f.duration(&c.ConnectorLease, "connector-lease", "HITCH_CONNECTOR_LEASE", 30*time.Second, "how long a connector holds work without calling Hitch about it")
	f.duration(&c.RefreshInterval, "refresh-interval", "HITCH_REFRESH_INTERVAL", 4*time.Hour, "how often connectors refresh each linked account")
	f.duration(&c.KeyGrace, "key-grace", "HITCH_KEY_GRACE", 7*24*time.Hour, "time a rotated-out JWE key keeps decrypting")
	f.boolean(&c.WebhookAllowPrivate, "webhook-allow-private", "HITCH_WEBHOOK_ALLOW_PRIVATE", false, "in production, also deliver webhooks to http and private addresses (a deployment tried locally)")
	f.boolean(&c.Workers, "workers", "HITCH_WORKERS", true, "run job workers (webhook delivery) in serve")
	c.MasterKey = getenv("HITCH_MASTER_KEY")
	c.DevClientID = getenv("HITCH_DEV_CLIENT_ID")
	c.DevSecret = getenv("HITCH_DEV_SECRET")
	return f
}

// Flags is the underlying flag set, for commands to add their own flags.
func (f *FlagSet) Flags() *flag.FlagSet { return f.fs }

// Usage writes the flags and their defaults to w.
func (f *FlagSet) Usage(w io.Writer) {
	f.fs.SetOutput(w)
	f.fs.PrintDefaults()
	f.fs.SetOutput(io.Discard)
}

func (f *FlagSet) str(p *string, name, env, def, usage string) {
	f.envOf[name] = env
	if v := f.getenv(env); v != "" {
		def = v
	}
	f.fs.StringVar(p, name, def, usage+" ("+env+")")
}

func (f *FlagSet) float(p *float64, name, env string, def float64, usage string) {
	f.envOf[name] = env
	if v := f.getenv(env); v != "" {
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			f.fail(fmt.Errorf("invalid %s %q: not a number", env, v))
		}
		def = n
	}
	f.fs.Float64Var(p, name, def, usage+" ("+env+")")
}

func (f *FlagSet) integer(p *int, name, env string, def int, usage string) {
	f.envOf[name] = env
	if v := f.getenv(env); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			f.fail(fmt.Errorf("invalid %s %q: not an integer", env, v))
		}
		def = n
	}
	f.fs.IntVar(p, name, def, usage+" ("+env+")")
}

func (f *FlagSet) duration(p *time.Duration, name, env string, def time.Duration, usage string) {
	f.envOf[name] = env
	if v := f.getenv(env); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			f.fail(fmt.Errorf("invalid %s %q: not a duration such as 30s or 24h", env, v))
		}
		def = d
	}
	f.fs.DurationVar(p, name, def, usage+" ("+env+")")
}

func (f *FlagSet) boolean(p *bool, name, env string, def bool, usage string) {
	f.envOf[name] = env
	if v := f.getenv(env); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			f.fail(fmt.Errorf("invalid %s %q: want true or false", env, v))
		}
		def = b
	}
	f.fs.BoolVar(p, name, def, usage+" ("+env+")")
}

// durations is a comma-separated list of durations.
func (f *FlagSet) durations(p *[]time.Duration, name, env, def, usage string) {
	f.envOf[name] = env
	if v := f.getenv(env); v != "" {
		def = v
	}
	list, err := parseDurations(def)
	if err != nil {
		f.fail(fmt.Errorf("invalid %s %q: %v", env, def, err))
	}
	*p = list
	f.fs.Func(name, usage+" (default "+def+") ("+env+")", func(v string) error {
		list, err := parseDurations(v)
		if err != nil {
			return err
		}
		*p = list
		return nil
	})
}

// proxies is a comma-separated list of CIDRs and IP addresses.
func (f *FlagSet) proxies(p *[]netip.Prefix, name, env, usage string) {
	f.envOf[name] = env
	if v := f.getenv(env); v != "" {
		list, err := clientip.ParseProxies(v)
		if err != nil {
			f.fail(fmt.Errorf("invalid %s %q: %v", env, v, err))
		}
		*p = list
	}
	f.fs.Func(name, usage+" ("+env+")", func(v string) error {
		list, err := clientip.ParseProxies(v)
		if err != nil {
			return err
		}
		*p = list
		return nil
	})
}

func parseDurations(v string) ([]time.Duration, error) {
	var out []time.Duration
	for _, part := range strings.Split(v, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d < 0 {
			return nil, fmt.Errorf("want durations such as 0s,5s,5m separated by commas")
		}
		out = append(out, d)
	}
	if len(out) > 20 {
		return nil, fmt.Errorf("at most 20 retries")
	}
	return out, nil
}

func (f *FlagSet) fail(err error) {
	if f.err == nil {
		f.err = err
	}
}

// Parse parses args and returns the validated Config. environ is the
// process environment (KEY=VALUE), checked for unknown HITCH_* variables.
func (f *FlagSet) Parse(args []string, environ []string) (*Config, error) {
	if err := f.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: "); ok {
			return nil, errors.New(name + ": unknown flag")
		}
		return nil, err // invalid value "…" for flag -name: why
	}
	if f.fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", f.fs.Arg(0))
	}
	if f.err != nil {
		return nil, f.err
	}
	if err := f.checkEnv(environ); err != nil {
		return nil, err
	}
	if err := f.cfg.Validate(); err != nil {
		return nil, err
	}
	return f.cfg, nil
}

func (f *FlagSet) checkEnv(environ []string) error {
	known := map[string]bool{}
	for k := range knownEnv {
		known[k] = true
	}
	for _, env := range f.envOf {
		known[env] = true
	}
	var unknown []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "HITCH_") && !known[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("unknown setting %s in the environment", unknown[0])
	}
	return nil
}

// Validate checks every setting and fills in derived defaults. Its errors
// are one line naming the setting.
func (c *Config) Validate() error {
	if c.Env != Development && c.Env != Production {
		return fmt.Errorf("invalid --env %q (HITCH_ENV): must be development or production", c.Env)
	}
	host, port, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return fmt.Errorf("invalid --addr %q (HITCH_ADDR): want host:port", c.Addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("invalid --addr %q (HITCH_ADDR): bad port", c.Addr)
	}
	if c.DebugAddr != "" {
		if _, _, err := net.SplitHostPort(c.DebugAddr); err != nil {
			return fmt.Errorf("invalid --debug-addr %q (HITCH_DEBUG_ADDR): want host:port", c.DebugAddr)
		}
	}
	if c.WebhookTimeout <= 0 || c.WebhookTimeout > time.Minute {
		return fmt.Errorf("invalid --webhook-timeout %s (HITCH_WEBHOOK_TIMEOUT): must be between 1ns and 1m", c.WebhookTimeout)
	}
	if c.WebhookWorkers < 1 || c.WebhookWorkers > 1000 {
		return fmt.Errorf("invalid --webhook-workers %d (HITCH_WEBHOOK_WORKERS): must be 1 to 1000", c.WebhookWorkers)
	}
	if len(c.WebhookRetrySchedule) == 0 || c.WebhookRetrySchedule[0] != 0 {
		return errors.New("invalid --webhook-retry-schedule (HITCH_WEBHOOK_RETRY_SCHEDULE): " +
			"the first entry is the first attempt and must be 0s, e.g. 0s,5s,5m")
	}
	if c.DataDir == "" {
		return errors.New("invalid --data-dir (HITCH_DATA_DIR): must not be empty")
	}
	if _, err := c.Database(); err != nil {
		return err
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		return fmt.Errorf("invalid --log-format %q (HITCH_LOG_FORMAT): must be text or json", c.LogFormat)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("invalid --log-level %q (HITCH_LOG_LEVEL): must be debug, info, warn or error", c.LogLevel)
	}
	if c.PublicURL == "" {
		c.PublicURL = addrURL(host, port)
		c.derivedPublicURL = c.PublicURL
	}
	u, err := url.Parse(c.PublicURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("invalid --public-url %q (HITCH_PUBLIC_URL): want an http(s) URL", c.PublicURL)
	}
	c.PublicURL = strings.TrimRight(c.PublicURL, "/")
	if c.RateLimit < 0 || math.IsNaN(c.RateLimit) || math.IsInf(c.RateLimit, 0) {
		return fmt.Errorf("invalid --rate-limit %v (HITCH_RATE_LIMIT): must be 0 or more", c.RateLimit)
	}
	if c.CacheMiB < 0 || c.CacheMiB > 1<<20 {
		return fmt.Errorf("invalid --cache-size %d (HITCH_CACHE_SIZE): want 0 (off) to %d MiB", c.CacheMiB, 1<<20)
	}
	if c.RateBurst < 1 {
		return fmt.Errorf("invalid --rate-burst %d (HITCH_RATE_BURST): must be at least 1", c.RateBurst)
	}
	if c.ShutdownTimeout <= 0 {
		return fmt.Errorf("invalid --shutdown-timeout %v (HITCH_SHUTDOWN_TIMEOUT): must be positive", c.ShutdownTimeout)
	}
	if c.RequestLogRetention < 0 {
		return fmt.Errorf("invalid --request-log-retention %v (HITCH_REQUEST_LOG_RETENTION): must not be negative", c.RequestLogRetention)
	}
	if c.SecretGrace < 0 {
		return fmt.Errorf("invalid --secret-grace %v (HITCH_SECRET_GRACE): must not be negative", c.SecretGrace)
	}
	if c.CardWindow < time.Second || c.CardWindow > time.Hour {
		return fmt.Errorf("invalid --card-window %v (HITCH_CARD_WINDOW): must be between 1s and 1h", c.CardWindow)
	}
	if c.ConnectorLease < 2*time.Second || c.ConnectorLease > 5*time.Minute {
		return fmt.Errorf("invalid --connector-lease %v (HITCH_CONNECTOR_LEASE): must be between 2s and 5m", c.ConnectorLease)
	}
	if c.RefreshInterval < time.Second || c.RefreshInterval > 7*24*time.Hour {
		return fmt.Errorf("invalid --refresh-interval %v (HITCH_REFRESH_INTERVAL): must be between 1s and 168h", c.RefreshInterval)
	}
	if c.TaskDeadline < time.Second || c.TaskDeadline > 24*time.Hour {
		return fmt.Errorf("invalid --task-deadline %v (HITCH_TASK_DEADLINE): must be between 1s and 24h", c.TaskDeadline)
	}
	if c.KeyGrace < 0 {
		return fmt.Errorf("invalid --key-grace %v (HITCH_KEY_GRACE): must not be negative", c.KeyGrace)
	}
	if c.Env == Production && c.MasterKey == "" {
		return errors.New("HITCH_MASTER_KEY is required in production (32 random bytes, base64 or hex)")
	}
	if (c.DevClientID == "") != (c.DevSecret == "") {
		return errors.New("HITCH_DEV_CLIENT_ID and HITCH_DEV_SECRET must be set together")
	}
	if c.DevSecret != "" && (len(c.DevSecret) < 32 || len(c.DevSecret) > 256) {
		return errors.New("invalid HITCH_DEV_SECRET: must be 32 to 256 characters")
	}
	return nil
}

// addrURL is the default public URL of a listen address.
func addrURL(host, port string) string {
	if host == "" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// PublicURLSet reports whether PublicURL was configured rather than
// derived from Addr: a command other than serve knows no more than the
// configuration, so only a configured URL is sure to name the server.
func (c *Config) PublicURLSet() bool { return c.PublicURL != c.derivedPublicURL }

// ListeningOn tells the configuration the address serve listens on, which
// differs from Addr when Addr's port is 0: a PublicURL derived from Addr
// then takes the real port.
func (c *Config) ListeningOn(addr net.Addr) {
	tcp, ok := addr.(*net.TCPAddr)
	if c.PublicURLSet() || !ok {
		return
	}
	host, _, _ := net.SplitHostPort(c.Addr)
	c.PublicURL = addrURL(host, strconv.Itoa(tcp.Port))
	c.derivedPublicURL = c.PublicURL
}

// Database parses DatabaseURL.
func (c *Config) Database() (Database, error) {
	raw := c.DatabaseURL
	switch {
	case raw == "":
		return Database{Driver: "sqlite", DSN: filepath.Join(c.DataDir, "hitch.db")}, nil
	case strings.HasPrefix(raw, "postgres://"), strings.HasPrefix(raw, "postgresql://"):
		if _, err := url.Parse(raw); err != nil {
			return Database{}, errors.New("invalid --database-url (HITCH_DATABASE_URL): not a URL")
		}
		return Database{Driver: "postgres", DSN: raw}, nil
	case strings.HasPrefix(raw, "sqlite:"):
		path := strings.TrimPrefix(strings.TrimPrefix(raw, "sqlite:"), "//")
		if path == "" {
			return Database{}, errors.New("invalid --database-url (HITCH_DATABASE_URL): sqlite: needs a path")
		}
		return Database{Driver: "sqlite", DSN: path}, nil
	case strings.Contains(raw, "://"):
		scheme, _, _ := strings.Cut(raw, "://")
		return Database{}, fmt.Errorf("invalid --database-url (HITCH_DATABASE_URL): unsupported scheme %q; use sqlite:PATH or postgres://", scheme)
	default:
		return Database{Driver: "sqlite", DSN: raw}, nil
	}
}
