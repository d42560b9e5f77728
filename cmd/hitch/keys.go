package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/hitchdev/hitch/internal/app"
	"github.com/hitchdev/hitch/internal/audit"
	"github.com/hitchdev/hitch/internal/card"
	"github.com/hitchdev/hitch/internal/config"
	"github.com/hitchdev/hitch/internal/store"
)

func keysRotateFlags(fs *flag.FlagSet) runFunc {
	bits := fs.Int("bits", card.KeyBits, "RSA key size in bits (2048 or more)")
	grace := fs.Duration("grace", -1, "how long the previous keys keep decrypting (default --key-grace, 168h)")
	asJSON := fs.Bool("json", false, "print the new public key as JSON")
	return func(ctx context.Context, cfg *config.Config, out, errOut io.Writer) error {
		if *grace < 0 {
			*grace = cfg.KeyGrace
		}
		return connectorCommand(func(ctx context.Context, a *hitch, out io.Writer) error {
			// Every developer encrypts card data to the key: each one's log
			// records the rotation.
			jwk, err := a.Keys.Rotate(ctx, *bits, *grace, func(ex store.Executor, kid string) error {
				return a.Audit.RecordEveryDeveloper(ctx, ex, audit.Operator("keys rotate"), audit.ActionKeyRotate, audit.TargetJWEKey, &kid)
			})
			if err != nil {
				return fmt.Errorf("keys rotate: %w", err)
			}
			if *asJSON {
				return json.NewEncoder(out).Encode(jwk)
			}
			fmt.Fprintf(out, "kid: %s\n\nGET /jwe/key serves this key from now on (other nodes within a minute);\n"+
				"the previous keys decrypt until %s.\n", jwk.Kid, app.Now().Add(*grace).Format(time.RFC3339))
			return nil
		})(ctx, cfg, out, errOut)
	}
}

func keysListFlags(fs *flag.FlagSet) runFunc {
	asJSON := fs.Bool("json", false, "print as JSON")
	return connectorCommand(func(ctx context.Context, a *hitch, out io.Writer) error {
		list, err := a.Keys.List(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			type row struct {
				Kid       string     `json:"kid"`
				CreatedAt time.Time  `json:"created_at"`
				RetiresAt *time.Time `json:"retires_at"`
				Retired   bool       `json:"retired"`
			}
			rows := make([]row, len(list))
			for i, k := range list {
				rows[i] = row{k.Kid, k.CreatedAt, k.RetiresAt, k.Retired}
			}
			return json.NewEncoder(out).Encode(rows)
		}
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "KID\tCREATED_AT\tRETIRES_AT\tSTATE")
		for _, k := range list {
			retires, state := "-", "usable"
			if k.RetiresAt != nil {
				retires = k.RetiresAt.Format(time.RFC3339)
			}
			if k.Retired {
				state = "retired"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", k.Kid, k.CreatedAt.Format(time.RFC3339), retires, state)
		}
		return tw.Flush()
	})
}
