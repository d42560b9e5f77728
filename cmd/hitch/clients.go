package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/hitchdev/hitch/internal/app"
	"github.com/hitchdev/hitch/internal/audit"
	"github.com/hitchdev/hitch/internal/config"
	"github.com/hitchdev/hitch/internal/developer"
	"github.com/hitchdev/hitch/internal/store"
)

type runFunc = func(context.Context, *config.Config, io.Writer, io.Writer) error

// printCredentials writes credentials as text or, with asJSON, exactly as
// {"client_id": "...", "secret": "...", "environment": "..."}.
func printCredentials(out io.Writer, c *developer.Credentials, asJSON bool, note string) {
	if asJSON {
		q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
		fmt.Fprintf(out, "{\"client_id\": %s, \"secret\": %s, \"environment\": %s}\n", q(c.ClientID), q(c.Secret), q(c.Environment))
		return
	}
	fmt.Fprintf(out, "client_id:   %s\nsecret:      %s\nenvironment: %s\n\n%s\n", c.ClientID, c.Secret, c.Environment, note)
}

func clientsCreateFlags(fs *flag.FlagSet) runFunc {
	name := fs.String("name", "", "name of the developer account (required)")
	asJSON := fs.Bool("json", false, "print the credentials as JSON")
	return func(ctx context.Context, cfg *config.Config, out, errOut io.Writer) error {
		if *name == "" {
			return errors.New("clients create: --name is required")
		}
		a, err := newHitch(ctx, cfg, errOut)
		if err != nil {
			return err
		}
		defer a.Close()
		// --env is both the configuration's environment and the client's.
		creds, err := a.Developers.Create(ctx, developer.CreateParams{Name: *name, Environment: cfg.Env})
		if err != nil {
			return err
		}
		printCredentials(out, creds, *asJSON, "The secret is shown only now: store it in your secret manager.")
		return nil
	}
}

func clientsListFlags(fs *flag.FlagSet) runFunc {
	asJSON := fs.Bool("json", false, "print as JSON")
	return func(ctx context.Context, cfg *config.Config, out, errOut io.Writer) error {
		a, err := newHitch(ctx, cfg, errOut)
		if err != nil {
			return err
		}
		defer a.Close()
		clients, err := a.Developers.List(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			type row struct {
				ClientID    string    `json:"client_id"`
				Name        string    `json:"name"`
				Environment string    `json:"environment"`
				CreatedAt   time.Time `json:"created_at"`
			}
			rows := make([]row, len(clients))
			for i, c := range clients {
				rows[i] = row{c.ID, c.Name, c.Environment, c.CreatedAt}
			}
			return json.NewEncoder(out).Encode(rows)
		}
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "CLIENT_ID\tNAME\tENVIRONMENT\tCREATED_AT")
		for _, c := range clients {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.ID, c.Name, c.Environment, c.CreatedAt.Format(time.RFC3339))
		}
		return tw.Flush()
	}
}

func clientsRotateFlags(fs *flag.FlagSet) runFunc {
	clientID := fs.String("client-id", "", "client to rotate (required)")
	grace := fs.Duration("grace", -1, "how long the old secret keeps working (default --secret-grace, 24h)")
	asJSON := fs.Bool("json", false, "print the credentials as JSON")
	return func(ctx context.Context, cfg *config.Config, out, errOut io.Writer) error {
		if *clientID == "" {
			return errors.New("clients rotate-secret: --client-id is required")
		}
		g := *grace
		if g < 0 {
			g = cfg.SecretGrace
		}
		a, err := newHitch(ctx, cfg, errOut)
		if err != nil {
			return err
		}
		defer a.Close()
		creds, err := a.Developers.RotateSecret(ctx, *clientID, g, func(ex store.Executor) error {
			return a.Audit.Record(ctx, ex, audit.Operator("clients rotate-secret"), *clientID, audit.ActionSecretRotate, audit.TargetSecret, nil)
		})
		if errors.Is(err, developer.ErrNotFound) {
			return fmt.Errorf("clients rotate-secret: no client %q", *clientID)
		}
		if err != nil {
			return err
		}
		printCredentials(out, creds, *asJSON, fmt.Sprintf("The previous secret keeps working until %s.",
			app.Now().Add(g).Format(time.RFC3339)))
		return nil
	}
}
