package main

import (
	"context"
	"fmt"

	"github.com/hitchdev/hitch/bench/internal/hitch"
	"github.com/hitchdev/hitch/bench/internal/proc"
)

// startHitch starts Hitch with --workers webhook workers (and --debug-addr
// when given), then extra, and returns it once it is ready.
func startHitch(ctx context.Context, o options, launcher *hitch.Launcher, name string, extra ...string) (*proc.Child, string, error) {
	flags := []string{"--webhook-workers", fmt.Sprint(o.workers)}
	if o.debugAddr != "" {
		flags = append(flags, "--debug-addr", o.debugAddr)
	}
	c, base, err := launcher.Start(ctx, name, append(flags, extra...)...)
	if err != nil {
		return nil, "", err
	}
	if _, err := c.WaitReady(ctx, base+"/readyz"); err != nil {
		c.Stop()
		return nil, "", err
	}
	return c, base, nil
}

// addEndpoint registers url as a webhook endpoint receiving every event.
func addEndpoint(ctx context.Context, api *hitch.APIClient, url string) error {
	_, err := api.PostJSON(ctx, "/webhooks/endpoints", map[string]any{"url": url})
	return err
}
