package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/riverqueue/river"

	"github.com/hitchdev/hitch"
	"github.com/hitchdev/hitch/internal/account"
	"github.com/hitchdev/hitch/internal/api"
	"github.com/hitchdev/hitch/internal/audit"
	"github.com/hitchdev/hitch/internal/card"
	"github.com/hitchdev/hitch/internal/config"
	"github.com/hitchdev/hitch/internal/connector"
	"github.com/hitchdev/hitch/internal/detection"
	"github.com/hitchdev/hitch/internal/developer"
	"github.com/hitchdev/hitch/internal/event"
	"github.com/hitchdev/hitch/internal/link"
	"github.com/hitchdev/hitch/internal/member"
	"github.com/hitchdev/hitch/internal/merchant"
	"github.com/hitchdev/hitch/internal/queue"
	"github.com/hitchdev/hitch/internal/seal"
	"github.com/hitchdev/hitch/internal/session"
	"github.com/hitchdev/hitch/internal/simulate"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/postgres"
	"github.com/hitchdev/hitch/internal/store/sqlite"
	"github.com/hitchdev/hitch/internal/transaction"
	"github.com/hitchdev/hitch/internal/web"
	"github.com/hitchdev/hitch/internal/webhook"
)

// app is everything a command needs, built once from the Config.
type app struct {
	cfg        *config.Config
	log        *slog.Logger
	store      store.Store
	box        *seal.Box
	catalog    *merchant.Catalog
	developers *developer.Service
	sessions   *session.Service
	accounts   *account.Service
	keys       *card.Keys
	cards      *card.Service
	detections *detection.Service
	queue      *queue.Queue
	webhooks   *webhook.Service
	txns       *transaction.Service
	simulator  *simulate.Connector
	connectors *connector.Service
	links      *link.Service
	audit      *audit.Log
	members    *member.Service
	pages      *web.Handler
	metrics    *prometheus.Registry
	now        func() time.Time
	// workersStopped makes stopWorkers run once (it is deferred and also
	// called in order on a clean shutdown).
	workersStopped bool
	// stopSimulator ends the development simulator's loop, returning once
	// the loop has.
	stopSimulator func()
}

// now is the service clock: UTC, to the microsecond both databases keep.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

func newLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// openStore opens the configured database and applies migrations.
func openStore(ctx context.Context, cfg *config.Config) (store.Store, error) {
	db, err := cfg.Database()
	if err != nil {
		return nil, err
	}
	var st store.Store
	switch db.Driver {
	case "postgres":
		st, err = postgres.Open(ctx, db.DSN, postgres.Options{})
	default:
		st, err = sqlite.Open(ctx, db.DSN)
	}
	if err != nil {
		return nil, err
	}
	if err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, err
	}
	if err := queue.Migrate(ctx, st); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// masterKey reads HITCH_MASTER_KEY, or in development the key file in the
// data directory (created on first use).
func masterKey(cfg *config.Config) ([]byte, error) {
	if cfg.MasterKey != "" {
		key, err := seal.ParseKey(cfg.MasterKey)
		if err != nil {
			return nil, fmt.Errorf("invalid HITCH_MASTER_KEY: %w", err)
		}
		return key, nil
	}
	// config.Validate has already refused production without a key.
	return seal.LoadOrCreateKeyFile(filepath.Join(cfg.DataDir, "master.key"))
}

func newApp(ctx context.Context, cfg *config.Config, logOut io.Writer) (*app, error) {
	key, err := masterKey(cfg)
	if err != nil {
		return nil, err
	}
	box, err := seal.New(key)
	if err != nil {
		return nil, err
	}
	catalog, err := merchant.Load()
	if err != nil {
		return nil, err
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := checkMasterKey(ctx, st, box); err != nil {
		st.Close()
		return nil, err
	}
	a := &app{
		cfg:        cfg,
		log:        newLogger(cfg, logOut),
		store:      st,
		box:        box,
		catalog:    catalog,
		developers: developer.NewService(st, box, now),
		keys:       card.NewKeys(st, box, now),
		connectors: connector.NewService(st, now),
		metrics:    prometheus.NewRegistry(),
		now:        now,
	}
	events := &event.Log{}
	a.accounts = account.NewService(st, catalog, events, cfg.PublicURL, now)
	a.txns = transaction.NewService(st, events, a.accounts.EventMerchant, now)
	a.simulator = &simulate.Connector{Transactions: a.txns, Catalog: catalog, Now: now}
	workers := river.NewWorkers()
	a.queue, err = queue.New(st, queue.Config{
		Logger:         a.log.With("component", "river"),
		Workers:        workers,
		WebhookWorkers: cfg.WebhookWorkers,
		JobTimeout:     cfg.WebhookTimeout + webhook.RecordSlack,
	})
	if err != nil {
		st.Close()
		return nil, err
	}
	a.webhooks = webhook.NewService(st, a.queue, box, a.developers, events, a.log, now, webhook.Config{
		Production:    cfg.Env == config.Production,
		RetrySchedule: cfg.WebhookRetrySchedule,
		Timeout:       cfg.WebhookTimeout,
		Workers:       cfg.WebhookWorkers,
	})
	river.AddWorker(workers, a.webhooks.Worker())
	subscriptions := a.txns.SubscriptionIDs
	if cfg.Env == config.Development {
		subscriptions = a.simulator.Subscriptions
	}
	a.cards = card.NewService(st, box, a.queue, a.accounts, catalog, events, now, card.Config{
		Development:       cfg.Env == config.Development,
		CardWindow:        cfg.CardWindow,
		ConnectorDeadline: cfg.TaskDeadline,
		Subscriptions:     subscriptions,
		Logger:            a.log.With("component", "simulator"),
	})
	a.cards.AddWorkers(workers)
	a.detections = detection.NewService(st, box, a.queue, catalog, events, a.accounts.EventMerchant, now,
		detection.Config{Environment: cfg.Env})
	a.detections.AddWorkers(workers)
	a.sessions = session.NewService(st, box, catalog, a.detections, now)
	a.links = link.NewService(link.Config{Environment: cfg.Env, Sessions: a.sessions, Developers: a.developers,
		Accounts: a.accounts, Cards: a.cards, Simulator: a.simulator, Catalog: catalog, Store: st, Box: box,
		Authenticator: link.AuthenticatorFor(cfg.Env), Now: now})
	a.audit = audit.NewLog(now)
	a.members = member.NewService(st, a.audit, now, member.Config{})
	pages := web.Config{Environment: cfg.Env, Catalog: catalog, Logger: a.log, PublicURL: cfg.PublicURL,
		TrustedProxies: cfg.TrustedProxies, Links: a.links, Dashboard: &web.Dashboard{
			Members: a.members, Audit: a.audit, Store: st, Developers: a.developers, Webhooks: a.webhooks, Links: a.links,
			SecureCookies: strings.HasPrefix(cfg.PublicURL, "https://"), SecretGrace: cfg.SecretGrace}}
	if cfg.Env == config.Development {
		pages.Demo = &web.Demo{Sessions: a.sessions, Developers: a.developers, ClientID: cfg.DevClientID}
	}
	if a.pages, err = web.New(pages); err != nil {
		st.Close()
		return nil, err
	}
	a.metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if err := a.webhooks.Register(a.metrics); err != nil {
		st.Close()
		return nil, err
	}
	return a, nil
}

const masterKeyCheckPurpose = "master_key_check"

// checkMasterKey fails when the database was first used with another master
// key: its sealed secrets could not be opened, and it is better to say so at
// start than on the first webhook or card.
func checkMasterKey(ctx context.Context, st store.Store, box *seal.Box) error {
	stored, err := st.MasterKeyCheck(ctx, box.Seal([]byte("hitch"), masterKeyCheckPurpose))
	if err != nil {
		return err
	}
	if _, err := box.Open(stored, masterKeyCheckPurpose); err != nil {
		return errors.New("the master key (HITCH_MASTER_KEY, or <data-dir>/master.key in development) " +
			"is not the one this database was first used with")
	}
	return nil
}

func (a *app) Close() error { return a.store.Close() }

func (a *app) apiServer() *api.Server {
	return api.New(api.Deps{
		Env:          a.cfg.Env,
		Store:        a.store,
		Developers:   a.developers,
		Sessions:     a.sessions,
		Accounts:     a.accounts,
		Keys:         a.keys,
		Cards:        a.cards,
		Detections:   a.detections,
		Webhooks:     a.webhooks,
		Transactions: a.txns,
		Simulator:    a.simulator,
		Connectors:   a.connectors,
		Links:        a.links,
		Pages:        a.pages,
		Metrics:      a.metrics,
		Catalog:      a.catalog,
		Logger:       a.log,
		RateLimit:    a.cfg.RateLimit,
		RateBurst:    a.cfg.RateBurst,
		OpenAPI:      hitch.OpenAPI,
		Now:          time.Now, // the rate limiter wants the monotonic clock

		TrustedProxies: a.cfg.TrustedProxies,
	})
}
