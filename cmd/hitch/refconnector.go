package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/hitchdev/hitch/connector"
	"github.com/hitchdev/hitch/connector/browser"
	"github.com/hitchdev/hitch/examples/refconnector"
	"github.com/hitchdev/hitch/internal/config"
)

// Environment variables of the reference connector's credentials: never
// flags, which process listings show.
const (
	envConnectorID     = "CONNECTOR_ID"
	envConnectorSecret = "CONNECTOR_SECRET"
)

// refconnectorFlags runs the reference connector (examples/refconnector)
// against a Hitch deployment: it logs users in at the reference shop in
// Chromium and reads their orders, as a production connector does.
func refconnectorFlags(fs *flag.FlagSet) runFunc {
	hitchURL := fs.String("hitch-url", "http://127.0.0.1:8080", "the Hitch deployment's base URL")
	site := fs.String("site", "http://127.0.0.1:8090", "the reference shop's base URL")
	contexts := fs.Int("contexts", 4, "browser contexts (logins, refreshes, card tasks) at once")
	screenshots := fs.String("screenshots", "", "folder for masked screenshots of failed steps (default none)")
	stepTimeout := fs.Duration("step-timeout", 30*time.Second, "time one browser step may take")
	return func(ctx context.Context, cfg *config.Config, out, errOut io.Writer) error {
		id, secret := os.Getenv(envConnectorID), os.Getenv(envConnectorSecret)
		if id == "" || secret == "" {
			return errors.New("refconnector: set " + envConnectorID + " and " + envConnectorSecret + " (from `hitch connectors create`)")
		}
		if *contexts < 1 || *contexts > 64 {
			return fmt.Errorf("refconnector: --contexts must be from 1 to 64")
		}
		log := newLogger(cfg, errOut)
		pool, err := browser.NewPool(ctx, browser.Options{Contexts: *contexts, ScreenshotDir: *screenshots, StepTimeout: *stepTimeout, Log: log})
		if err != nil {
			return fmt.Errorf("refconnector: %w", err)
		}
		defer pool.Close()
		shop := refconnector.New(*site)
		log.Info("refconnector running", "hitch", *hitchURL, "site", *site, "merchant_id", shop.MerchantID(), "contexts", *contexts)
		return connector.Run(ctx, connector.Config{
			Client: connector.NewClient(*hitchURL, id, secret, nil),
			Pool:   pool,
			Sites:  []connector.Site{shop},
			Log:    log,
		})
	}
}
