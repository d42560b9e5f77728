package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hitchdev/hitch/internal/config"
	"github.com/hitchdev/hitch/internal/connector"
	"github.com/hitchdev/hitch/internal/store"
)

// connectorCommand opens the app and runs fn with it.
func connectorCommand(fn func(ctx context.Context, a *hitch, out io.Writer) error) runFunc {
	return func(ctx context.Context, cfg *config.Config, out, errOut io.Writer) error {
		a, err := newHitch(ctx, cfg, errOut)
		if err != nil {
			return err
		}
		defer a.Close()
		return fn(ctx, a, out)
	}
}

func connectorsCreateFlags(fs *flag.FlagSet) runFunc {
	name := fs.String("name", "", "name of the connector, such as the merchant it reads (required)")
	asJSON := fs.Bool("json", false, "print the credentials as JSON")
	return func(ctx context.Context, cfg *config.Config, out, errOut io.Writer) error {
		if *name == "" {
			return errors.New("connectors create: --name is required")
		}
		return connectorCommand(func(ctx context.Context, a *hitch, out io.Writer) error {
			creds, err := a.Connectors.Create(ctx, *name)
			if err != nil {
				return fmt.Errorf("connectors create: %w", err)
			}
			if *asJSON {
				q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
				fmt.Fprintf(out, "{\"id\": %s, \"secret\": %s}\n", q(creds.ID), q(creds.Secret))
				return nil
			}
			fmt.Fprintf(out, "id:     %s\nsecret: %s\n\n%s\n", creds.ID, creds.Secret,
				"The secret is shown only now: give it to the connector, which authenticates with HTTP Basic id:secret.")
			return nil
		})(ctx, cfg, out, errOut)
	}
}

func connectorsListFlags(fs *flag.FlagSet) runFunc {
	asJSON := fs.Bool("json", false, "print as JSON")
	return connectorCommand(func(ctx context.Context, a *hitch, out io.Writer) error {
		list, err := a.Connectors.List(ctx)
		if err != nil {
			return err
		}
		counts, err := a.Work.Stats(ctx)
		if err != nil {
			return err
		}
		type row struct {
			ID          string     `json:"id"`
			Name        string     `json:"name"`
			CreatedAt   time.Time  `json:"created_at"`
			RevokedAt   *time.Time `json:"revoked_at"`
			MerchantIDs []int64    `json:"merchant_ids"`
			LastSeenAt  *time.Time `json:"last_seen_at"`
			// InProgress is the work it holds now; Done and Failed, the work
			// it ended in the last 24 hours.
			InProgress int `json:"in_progress"`
			Done       int `json:"done_24h"`
			Failed     int `json:"failed_24h"`
		}
		rows := make([]row, len(list))
		for i, c := range list {
			rows[i] = row{ID: c.ID, Name: c.Name, CreatedAt: c.CreatedAt, RevokedAt: c.RevokedAt,
				MerchantIDs: c.MerchantIDs, LastSeenAt: c.LastSeenAt}
			if rows[i].MerchantIDs == nil {
				rows[i].MerchantIDs = []int64{}
			}
			for _, n := range counts {
				if n.ConnectorID != c.ID {
					continue
				}
				switch n.Status {
				case store.WorkDone:
					rows[i].Done += n.Count
				case store.WorkFailed:
					rows[i].Failed += n.Count
				default:
					rows[i].InProgress += n.Count
				}
			}
		}
		if *asJSON {
			return json.NewEncoder(out).Encode(rows)
		}
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tMERCHANTS\tLAST_SEEN\tIN_PROGRESS\tDONE_24H\tFAILED_24H\tCREATED_AT\tREVOKED_AT")
		for _, c := range rows {
			revoked, seen := "-", "never"
			if c.RevokedAt != nil {
				revoked = c.RevokedAt.Format(time.RFC3339)
			}
			if c.LastSeenAt != nil {
				seen = c.LastSeenAt.Format(time.RFC3339)
			}
			merchants := "-"
			if len(c.MerchantIDs) > 0 {
				merchants = strings.Trim(strings.Join(strings.Fields(fmt.Sprint(c.MerchantIDs)), ","), "[]")
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", c.ID, c.Name, merchants, seen,
				c.InProgress, c.Done, c.Failed, c.CreatedAt.Format(time.RFC3339), revoked)
		}
		return tw.Flush()
	})
}

func connectorsRevokeFlags(fs *flag.FlagSet) runFunc {
	id := fs.String("id", "", "connector to revoke (required)")
	return func(ctx context.Context, cfg *config.Config, out, errOut io.Writer) error {
		if *id == "" {
			return errors.New("connectors revoke: --id is required")
		}
		return connectorCommand(func(ctx context.Context, a *hitch, out io.Writer) error {
			err := a.Connectors.Revoke(ctx, *id)
			if errors.Is(err, connector.ErrNotFound) {
				return fmt.Errorf("connectors revoke: no connector %q", *id)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "revoked %s: running servers refuse it within %s\n", *id, connector.AuthCacheTTL)
			return nil
		})(ctx, cfg, out, errOut)
	}
}
