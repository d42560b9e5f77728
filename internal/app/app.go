// Package app builds Hitch's services and its HTTP handler from the
// configuration, once: the hitch command and the tests both call New, so
// that the tests run the dependency graph that production runs.
package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
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
	"github.com/hitchdev/hitch/internal/reqlog"
	"github.com/hitchdev/hitch/internal/seal"
	"github.com/hitchdev/hitch/internal/session"
	"github.com/hitchdev/hitch/internal/simulate"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/transaction"
	"github.com/hitchdev/hitch/internal/web"
	"github.com/hitchdev/hitch/internal/webhook"
)

// Deps are what New takes besides the configuration: what the caller has
// opened, and the few seams tests set.
type Deps struct {
	// Store is open and migrated, River's migrations included
	// (queue.Migrate).
	Store store.Store
	// Box seals secrets at rest with the master key.
	Box *seal.Box
	Log *slog.Logger
	// Clock is the clock of the services and the API's rate limits. Nil:
	// the wall clock, in UTC to the microsecond both databases keep, and
	// the monotonic clock for rate limits.
	Clock func() time.Time
	// Catalog is the merchant catalog (nil: merchant.Load's).
	Catalog *merchant.Catalog
	// Members tunes dashboard sign-ins (zero: the defaults).
	Members member.Config
	// JobPollInterval is how often idle workers look for jobs that no
	// insert notification announced (zero: the queue's default).
	JobPollInterval time.Duration
}

// App is one Hitch process's services and handler.
type App struct {
	Config       *config.Config
	Log          *slog.Logger
	Store        store.Store
	Developers   *developer.Service
	Sessions     *session.Service
	Accounts     *account.Service
	Keys         *card.Keys
	Cards        *card.Service
	Detections   *detection.Service
	Queue        *queue.Queue
	Webhooks     *webhook.Service
	Transactions *transaction.Service
	Simulator    *simulate.Connector
	Connectors   *connector.Service
	// Work routes logins and refreshes to connectors.
	Work    *connector.Work
	Links   *link.Service
	Audit   *audit.Log
	Members *member.Service
	Metrics *prometheus.Registry
	Catalog *merchant.Catalog
	// RequestLog records the developers' API requests (nil when
	// --request-log-retention is 0); Close it after the server stops.
	RequestLog *reqlog.Writer
	// API is the HTTP handler: the API, the hosted flow, the dashboard.
	API *api.Server

	// stopSimulator ends the development simulator's loop (nil while the
	// workers are not running).
	stopSimulator func()
}

// Now is the service clock: UTC, to the microsecond both databases keep.
func Now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// New builds every service of cfg over d.Store. It starts nothing:
// StartWorkers runs the job workers.
func New(cfg *config.Config, d Deps) (*App, error) {
	now, limiterClock := d.Clock, d.Clock
	if now == nil {
		now, limiterClock = Now, time.Now
	}
	catalog := d.Catalog
	if catalog == nil {
		var err error
		if catalog, err = merchant.Load(); err != nil {
			return nil, err
		}
	}
	st, box, development := d.Store, d.Box, cfg.Env == config.Development
	a := &App{
		Config:     cfg,
		Log:        d.Log,
		Store:      st,
		Developers: developer.NewService(st, box, now),
		Keys:       card.NewKeys(st, box, now),
		Connectors: connector.NewService(st, now),
		Audit:      audit.NewLog(now),
		Metrics:    prometheus.NewRegistry(),
		Catalog:    catalog,
	}
	events := &event.Log{}
	a.Accounts = account.NewService(st, catalog, events, cfg.PublicURL, now)
	a.Transactions = transaction.NewService(st, events, a.Accounts.EventMerchant, now)
	a.Simulator = &simulate.Connector{Transactions: a.Transactions, Catalog: catalog, Now: now}
	workers := river.NewWorkers()
	a.Work = connector.NewWork(connector.WorkConfig{Store: st, Box: box, Now: now, RefreshInterval: cfg.RefreshInterval,
		Lease: cfg.ConnectorLease,
		Disconnect: func(ctx context.Context, clientID, externalUserID string, merchantID int64) error {
			_, err := a.Accounts.Disconnect(ctx, clientID, externalUserID, merchantID)
			if errors.Is(err, account.ErrNotFound) || errors.Is(err, account.ErrUserNotFound) {
				return nil // unlinked meanwhile: nothing to disconnect
			}
			return err
		},
		DetectionEnded: func(ctx context.Context, ex store.Executor, wk *store.Work) error {
			return a.Detections.SettleTx(ctx, ex, wk)
		}})
	a.Work.AddWorkers(workers)
	// The pruning job runs even with the log off, so that turning it off
	// deletes what it kept.
	pruner := &reqlog.Pruner{Store: st, Retention: cfg.RequestLogRetention, Now: now}
	pruner.AddWorkers(workers)
	if cfg.RequestLogRetention > 0 {
		a.RequestLog = reqlog.NewWriter(st, d.Log)
	}
	var err error
	a.Queue, err = queue.New(st, queue.Config{
		Logger:            d.Log.With("component", "river"),
		Workers:           workers,
		WebhookWorkers:    cfg.WebhookWorkers,
		JobTimeout:        cmp.Or(cfg.WebhookTimeout, webhook.DefaultTimeout) + queue.RecordSlack,
		FetchPollInterval: d.JobPollInterval,
		PeriodicJobs:      append(a.Work.PeriodicJobs(), pruner.PeriodicJobs()...),
	})
	if err != nil {
		return nil, err
	}
	a.Webhooks = webhook.NewService(st, a.Queue, box, a.Developers, events, d.Log, now, webhook.Config{
		Production:    !development,
		AllowPrivate:  cfg.WebhookAllowPrivate,
		RetrySchedule: cfg.WebhookRetrySchedule,
		Timeout:       cfg.WebhookTimeout,
		Workers:       cfg.WebhookWorkers,
	})
	river.AddWorker(workers, a.Webhooks.Worker())
	subscriptions := a.Transactions.SubscriptionIDs
	if development {
		subscriptions = a.Simulator.Subscriptions
	}
	a.Cards = card.NewService(st, box, a.Queue, a.Accounts, catalog, events, now, card.Config{
		Development:       development,
		CardWindow:        cfg.CardWindow,
		ConnectorDeadline: cfg.TaskDeadline,
		Subscriptions:     subscriptions,
		Logger:            d.Log.With("component", "simulator"),
	})
	a.Cards.AddWorkers(workers)
	a.Detections = detection.NewService(st, box, a.Queue, catalog, events, a.Accounts.EventMerchant, now,
		detection.Config{Environment: cfg.Env, Connectors: a.Work})
	a.Detections.AddWorkers(workers)
	a.Sessions = session.NewService(st, box, catalog, a.Detections, now)
	a.Links = link.NewService(link.Config{Environment: cfg.Env, Sessions: a.Sessions, Developers: a.Developers,
		Accounts: a.Accounts, Cards: a.Cards, Simulator: a.Simulator, Catalog: catalog, Store: st, Box: box,
		Authenticator: &link.Routed{Work: a.Work, Fallback: link.AuthenticatorFor(cfg.Env)}, Now: now})
	a.Members = member.NewService(st, a.Audit, now, d.Members)
	pagesConfig := web.Config{Environment: cfg.Env, Catalog: catalog, Logger: d.Log, PublicURL: cfg.PublicURL,
		TrustedProxies: cfg.TrustedProxies, Links: a.Links, Dashboard: &web.Dashboard{
			Members: a.Members, Audit: a.Audit, Store: st, Developers: a.Developers, Webhooks: a.Webhooks, Links: a.Links,
			SecureCookies: strings.HasPrefix(cfg.PublicURL, "https://"), SecretGrace: cfg.SecretGrace}}
	if a.RequestLog != nil {
		pagesConfig.Dashboard.RequestLog = a.RequestLog
	}
	if pagesConfig.Docs, err = fs.Sub(hitch.Docs, "docs"); err != nil {
		return nil, err
	}
	if development {
		pagesConfig.Demo = &web.Demo{Sessions: a.Sessions, Developers: a.Developers, Cards: a.Cards,
			CardWindow: cfg.CardWindow, ClientID: cfg.DevClientID}
	}
	pages, err := web.New(pagesConfig)
	if err != nil {
		return nil, err
	}
	a.Metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if err := a.Webhooks.Register(a.Metrics); err != nil {
		return nil, err
	}
	if err := a.Work.Metrics().Register(a.Metrics); err != nil {
		return nil, err
	}
	if a.RequestLog != nil {
		if err := a.RequestLog.Register(a.Metrics); err != nil {
			return nil, err
		}
	}
	a.API = api.New(api.Deps{
		Env:            cfg.Env,
		Store:          st,
		Developers:     a.Developers,
		Sessions:       a.Sessions,
		Accounts:       a.Accounts,
		Keys:           a.Keys,
		Cards:          a.Cards,
		Detections:     a.Detections,
		Webhooks:       a.Webhooks,
		Transactions:   a.Transactions,
		Simulator:      a.Simulator,
		Connectors:     a.Connectors,
		Work:           a.Work,
		Links:          a.Links,
		Audit:          a.Audit,
		RequestLog:     a.RequestLog,
		Pages:          pages,
		Metrics:        a.Metrics,
		Catalog:        catalog,
		Logger:         d.Log,
		RateLimit:      cfg.RateLimit,
		RateBurst:      cfg.RateBurst,
		CacheBytes:     cacheBytes(cfg.CacheMiB),
		OpenAPI:        hitch.OpenAPI,
		Now:            limiterClock,
		TrustedProxies: cfg.TrustedProxies,
	})
	return a, nil
}

// cacheBytes is api.Deps.CacheBytes for --cache-size, whose 0 turns the
// cache off.
func cacheBytes(mib int) int64 {
	if mib == 0 {
		return -1
	}
	return int64(mib) << 20
}

// StartWorkers starts working jobs (webhook deliveries, detection and card
// jobs) and the development simulator's loop, until StopWorkers.
func (a *App) StartWorkers(ctx context.Context) error {
	// River stops its client when the start context ends; it must outlive
	// a signal so that StopWorkers can drain running jobs.
	if err := a.Queue.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("start workers: %w", err)
	}
	loop, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Cards.RunSimulator(loop)
	}()
	a.stopSimulator = func() {
		cancel()
		<-done
	}
	return nil
}

// StopWorkers stops the simulator's loop, then lets running jobs finish
// until ctx ends; jobs still running then are rescued and run again by a
// node later. It does nothing when the workers are not running.
func (a *App) StopWorkers(ctx context.Context) error {
	if a.stopSimulator == nil {
		return nil
	}
	a.stopSimulator()
	a.stopSimulator = nil
	if err := a.Queue.Stop(ctx); err != nil {
		return fmt.Errorf("stop workers: %w", err)
	}
	return nil
}

const masterKeyCheckPurpose = "master_key_check"

// CheckMasterKey fails when the database was first used with another master
// key: its sealed secrets could not be opened, and it is better to say so at
// start than on the first webhook or card.
func CheckMasterKey(ctx context.Context, st store.Store, box *seal.Box) error {
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
