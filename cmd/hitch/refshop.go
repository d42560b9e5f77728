package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/hitchdev/hitch/examples/refshop"
	"github.com/hitchdev/hitch/internal/config"
)

// refshopFlags runs the Hitch Reference Shop, the merchant website that the
// reference connector and the end-to-end tests drive, on --addr.
func refshopFlags(fs *flag.FlagSet) runFunc {
	adminToken := fs.String("admin-token", "", "bearer token for /admin and /admin/api (default: admin off)")
	return func(ctx context.Context, cfg *config.Config, out, errOut io.Writer) error {
		log := newLogger(cfg, errOut)
		shop := refshop.New(refshop.Config{AdminToken: *adminToken, Log: log})
		ln, err := net.Listen("tcp", cfg.Addr)
		if err != nil {
			return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
		}
		srv := &http.Server{Handler: shop, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
		log.Info("refshop listening", "addr", ln.Addr().String(), "admin", *adminToken != "")
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ln) }()
		select {
		case err := <-served:
			return err
		case <-ctx.Done():
		}
		shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
		defer cancel()
		if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return nil
	}
}
