package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"syscall"
	"time"

	"github.com/hitchdev/hitch/internal/config"
	"github.com/hitchdev/hitch/internal/developer"
)

func serveFlags(*flag.FlagSet) func(context.Context, *config.Config, io.Writer, io.Writer) error {
	return serve
}

// serve runs the API until ctx ends (SIGINT/SIGTERM), then stops accepting,
// lets in-flight requests finish within the shutdown timeout and closes the
// store.
func serve(ctx context.Context, cfg *config.Config, _ io.Writer, errOut io.Writer) error {
	start := time.Now()
	// Listen first: with --addr's port 0 the port is known only now, and
	// the public URL derived from the address (the links Hitch answers
	// with, the URLs it logs) must name it.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("listen on %s: another program uses that port; choose another with --addr or HITCH_ADDR, e.g. --addr 127.0.0.1:8081", cfg.Addr)
		}
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	defer ln.Close()
	cfg.ListeningOn(ln.Addr())
	a, err := newHitch(ctx, cfg, errOut)
	if err != nil {
		return err
	}
	defer a.Close()

	if cfg.Env == config.Development {
		if err := a.bootstrapDevClient(ctx, errOut); err != nil {
			return err
		}
	}
	// Make the first JWE key off the start-up path: RSA generation takes
	// tens of milliseconds, and GET /jwe/key waits for it if it comes first.
	var background sync.WaitGroup
	defer background.Wait() // before the store closes
	background.Go(func() {
		if _, err := a.Keys.Current(context.WithoutCancel(ctx)); err != nil {
			a.Log.Error("preparing the JWE key failed", "error", err)
		}
	})

	if cfg.DebugAddr != "" {
		if err := serveDebug(ctx, cfg.DebugAddr, a); err != nil {
			return err
		}
	}
	// One deadline for the whole shutdown, set when it begins: requests
	// and then jobs finish within --shutdown-timeout together.
	var deadline time.Time
	if cfg.Workers {
		if err := a.StartWorkers(ctx); err != nil {
			return err
		}
		defer func() { a.stopWorkers(deadline) }()
	}

	srv := a.API.HTTPServer()
	// Long polls (a connector waiting for a user's answer, the hosted flow
	// waiting for a connector) answer "not yet" at once when shutdown
	// begins, instead of holding it for their whole wait.
	srv.RegisterOnShutdown(a.Work.Drain)
	a.Log.Info("hitch listening", "addr", ln.Addr().String(), "env", cfg.Env, "database", a.Store.Dialect(),
		"public_url", cfg.PublicURL, "startup", time.Since(start).Round(time.Millisecond))
	if err := a.logWhereToStart(ctx); err != nil {
		return err
	}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(a.API.Listener(ln)) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	a.Log.Info("shutting down", "timeout", cfg.ShutdownTimeout)
	deadline = time.Now().Add(cfg.ShutdownTimeout)
	shutdownCtx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		a.Log.Warn("in-flight requests did not finish in time", "error", err)
		srv.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	if cfg.Workers {
		a.stopWorkers(deadline)
	}
	a.Log.Info("stopped")
	return nil
}

// logWhereToStart names the pages to open: in development the demo and the
// dashboard; in production the dashboard, and how to create the first
// developer account while there is none.
func (a *hitch) logWhereToStart(ctx context.Context) error {
	base := a.Config.PublicURL
	if a.Config.Env == config.Development {
		a.Log.Info("open the demo and the dashboard", "demo", base+"/demo", "dashboard", base+"/dashboard")
		return nil
	}
	a.Log.Info("open the dashboard", "dashboard", base+"/dashboard")
	clients, err := a.Developers.List(ctx)
	if err != nil {
		return err
	}
	for _, c := range clients {
		if c.Environment == config.Production {
			return nil
		}
	}
	a.Log.Warn("there is no production developer account yet: create one with "+
		"`hitch clients create --env production --name NAME`, then its first dashboard admin with "+
		"`hitch members add --env production --client-id ID --email E --role admin`",
		"dashboard", base+"/dashboard")
	return nil
}

// stopWorkers lets running jobs finish until deadline (zero: the shutdown
// timeout from now); jobs still running after it are rescued and run again
// by a node later.
func (a *hitch) stopWorkers(deadline time.Time) {
	if deadline.IsZero() {
		deadline = time.Now().Add(a.Config.ShutdownTimeout)
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	if err := a.StopWorkers(ctx); err != nil {
		a.Log.Warn("workers did not stop in time", "error", err)
	}
}

func workerFlags(*flag.FlagSet) func(context.Context, *config.Config, io.Writer, io.Writer) error {
	return func(ctx context.Context, cfg *config.Config, _, errOut io.Writer) error {
		a, err := newHitch(ctx, cfg, errOut)
		if err != nil {
			return err
		}
		defer a.Close()
		if err := a.StartWorkers(ctx); err != nil {
			return err
		}
		a.Log.Info("hitch worker running", "env", cfg.Env, "database", a.Store.Dialect())
		<-ctx.Done()
		a.Log.Info("shutting down", "timeout", cfg.ShutdownTimeout)
		a.stopWorkers(time.Time{})
		a.Log.Info("stopped")
		return nil
	}
}

// bootstrapDevClient gives a development deployment credentials to use: the
// fixed HITCH_DEV_CLIENT_ID/HITCH_DEV_SECRET pair when set, otherwise a new
// client when the database has none, printed once.
func (a *hitch) bootstrapDevClient(ctx context.Context, out io.Writer) error {
	if a.Config.DevClientID != "" {
		_, err := a.Developers.Create(ctx, developer.CreateParams{Name: "Development", Environment: config.Development,
			ID: a.Config.DevClientID, Secret: a.Config.DevSecret})
		switch {
		case err == nil:
			a.Log.Info("created the development client from HITCH_DEV_CLIENT_ID", "client_id", a.Config.DevClientID)
		case errors.Is(err, developer.ErrExists): // an earlier start (or another node) made it
			if _, err := a.Developers.Authenticate(ctx, config.Development, a.Config.DevClientID, a.Config.DevSecret); err != nil {
				a.Log.Warn("HITCH_DEV_SECRET does not authenticate the existing development client; "+
					"requests with it will get 401 (rotate with `hitch clients rotate-secret`, or use a fresh data dir)",
					"client_id", a.Config.DevClientID)
			}
		default:
			return err
		}
		return nil
	}
	n, err := a.Developers.Count(ctx)
	if err != nil || n > 0 {
		return err
	}
	creds, err := a.Developers.Create(ctx, developer.CreateParams{Name: "Development", Environment: config.Development})
	if err != nil {
		return err
	}
	// Printed once, as the development bootstrap asks; production never
	// prints a secret.
	base := a.Config.PublicURL
	fmt.Fprintf(out, "\n  Development credentials (shown once; `hitch clients rotate-secret` makes new ones):\n"+
		"    client_id: %[1]s\n    secret:    %[2]s\n"+
		"  Try: curl -u %[1]s:%[2]s -H 'Content-Type: application/json' -d '{\"type\": \"link\", \"search\": \"uber\"}' %[3]s/merchant/list\n"+
		"  Demo:      %[3]s/demo\n"+
		"  Dashboard: %[3]s/dashboard, for members: hitch members add --client-id %[1]s --email you@example.com --role admin\n\n",
		creds.ClientID, creds.Secret, base)
	return nil
}

func migrateFlags(*flag.FlagSet) func(context.Context, *config.Config, io.Writer, io.Writer) error {
	return func(ctx context.Context, cfg *config.Config, out, _ io.Writer) error {
		st, err := openStore(ctx, cfg) // opening applies the migrations
		if err != nil {
			return err
		}
		defer st.Close()
		applied, _, err := st.MigrationVersion(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s database is at migration %04d\n", st.Dialect(), applied)
		return nil
	}
}

// serveDebug serves pprof on its own listener until ctx ends.
func serveDebug(ctx context.Context, addr string, a *hitch) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on --debug-addr %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	// No /debug/pprof/cmdline: the command line can hold --database-url.
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.Log.Error("debug listener failed", "error", err)
		}
	}()
	a.Log.Info("debug listener (pprof)", "addr", ln.Addr().String())
	return nil
}
