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

	"github.com/hitchdev/hitch/internal/app"
	"github.com/hitchdev/hitch/internal/audit"
	"github.com/hitchdev/hitch/internal/config"
	"github.com/hitchdev/hitch/internal/developer"
	"github.com/hitchdev/hitch/internal/field"
	"github.com/hitchdev/hitch/internal/webhook"
)

// webhookCommand opens the app and checks that --client-id names a client,
// then runs fn.
func webhookCommand(name string, clientID *string, fn func(ctx context.Context, a *hitch, out io.Writer) error) runFunc {
	return func(ctx context.Context, cfg *config.Config, out, errOut io.Writer) error {
		if *clientID == "" {
			return fmt.Errorf("webhooks %s: --client-id is required", name)
		}
		a, err := newHitch(ctx, cfg, errOut)
		if err != nil {
			return err
		}
		defer a.Close()
		if _, err := a.Developers.Get(ctx, *clientID); errors.Is(err, developer.ErrNotFound) {
			return fmt.Errorf("webhooks %s: no client %q", name, *clientID)
		} else if err != nil {
			return err
		}
		err = fn(ctx, a, out)
		var invalid *field.Error
		switch {
		case errors.As(err, &invalid):
			return fmt.Errorf("webhooks %s: --%s %s", name, invalid.Field, invalid.Message)
		case errors.Is(err, webhook.ErrNotFound):
			return fmt.Errorf("webhooks %s: no endpoint with that --id for client %q", name, *clientID)
		case err != nil:
			return fmt.Errorf("webhooks %s: %w", name, err)
		}
		return nil
	}
}

// printSecret writes an endpoint with its secret as text or, with asJSON,
// exactly as {"id": "...", "url": "...", "secret": "whsec_..."}.
func printSecret(out io.Writer, ep *webhook.Endpoint, secret string, asJSON bool, note string) {
	if asJSON {
		q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
		fmt.Fprintf(out, "{\"id\": %s, \"url\": %s, \"secret\": %s}\n", q(ep.ID), q(ep.URL), q(secret))
		return
	}
	fmt.Fprintf(out, "id:     %s\nurl:    %s\nsecret: %s\n\n%s\n", ep.ID, ep.URL, secret, note)
}

func webhooksAddFlags(fs *flag.FlagSet) runFunc {
	clientID := fs.String("client-id", "", "client whose events the endpoint receives (required)")
	url := fs.String("url", "", "endpoint URL (required; https in production)")
	events := fs.String("events", "", "comma-separated event types to receive (default: every event)")
	asJSON := fs.Bool("json", false, "print the endpoint and its secret as JSON")
	return webhookCommand("add", clientID, func(ctx context.Context, a *hitch, out io.Writer) error {
		if *url == "" {
			return field.Invalid("url", "is required")
		}
		var types []string
		if *events != "" {
			for _, t := range strings.Split(*events, ",") {
				types = append(types, strings.TrimSpace(t))
			}
		}
		p := webhook.CreateParams{ClientID: *clientID, URL: *url, EventTypes: types}
		ep, secret, err := a.Webhooks.Create(ctx, p, webhook.RecordedAdd(ctx, a.Audit, audit.Operator("webhooks add"), p))
		if err != nil {
			return err
		}
		printSecret(out, ep, secret, *asJSON, "The secret is shown only now: give it to the receiver to verify signatures.")
		return nil
	})
}

// endpointRow is an endpoint as the --json output of list and update shows
// it.
type endpointRow struct {
	ID             string    `json:"id"`
	URL            string    `json:"url"`
	Events         []string  `json:"events"`
	Status         string    `json:"status"`
	DisabledReason *string   `json:"disabled_reason"`
	CreatedAt      time.Time `json:"created_at"`
}

func rowOf(ep *webhook.Endpoint) endpointRow {
	return endpointRow{ep.ID, ep.URL, ep.EventTypes, ep.Status, ep.DisabledReason, ep.CreatedAt}
}

// eventsText is the endpoint's filter as text: "all" for every type.
func eventsText(ep *webhook.Endpoint) string {
	if len(ep.EventTypes) == 0 {
		return "all"
	}
	return strings.Join(ep.EventTypes, ",")
}

func webhooksListFlags(fs *flag.FlagSet) runFunc {
	clientID := fs.String("client-id", "", "client whose endpoints to list (required)")
	asJSON := fs.Bool("json", false, "print as JSON")
	return webhookCommand("list", clientID, func(ctx context.Context, a *hitch, out io.Writer) error {
		eps, err := a.Webhooks.List(ctx, *clientID)
		if err != nil {
			return err
		}
		if *asJSON {
			rows := make([]endpointRow, len(eps))
			for i, ep := range eps {
				rows[i] = rowOf(ep)
			}
			return json.NewEncoder(out).Encode(rows)
		}
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tURL\tEVENTS\tSTATUS\tCREATED_AT")
		for _, ep := range eps {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", ep.ID, ep.URL, eventsText(ep), ep.Status, ep.CreatedAt.Format(time.RFC3339))
		}
		return tw.Flush()
	})
}

func webhooksUpdateFlags(fs *flag.FlagSet) runFunc {
	clientID := fs.String("client-id", "", "client owning the endpoint (required)")
	id := fs.String("id", "", "endpoint to change (required)")
	url := fs.String("url", "", "the endpoint's new URL (default: unchanged)")
	events := fs.String("events", "", "comma-separated event types to receive, or all for every event (default: unchanged)")
	asJSON := fs.Bool("json", false, "print the endpoint as JSON")
	return webhookCommand("update", clientID, func(ctx context.Context, a *hitch, out io.Writer) error {
		if *id == "" {
			return errors.New("--id is required")
		}
		// A flag left out leaves its field as it is, as a field left out of
		// PATCH /webhooks/endpoints/{id} does; fs is parsed by now.
		p := webhook.UpdateParams{ClientID: *clientID, ID: *id}
		var err error
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "url":
				p.URL = url
			case "events":
				var types []string
				types, err = parseEvents(*events)
				p.EventTypes = &types
			}
		})
		if err != nil {
			return err
		}
		if p.URL == nil && p.EventTypes == nil {
			return errors.New("give --url, --events or both")
		}
		ep, err := a.Webhooks.Update(ctx, p, webhook.Recorded(ctx, a.Audit, audit.Operator("webhooks update"), audit.ActionWebhookEdit, *clientID, *id))
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(out).Encode(rowOf(ep))
		}
		fmt.Fprintf(out, "id:     %s\nurl:    %s\nevents: %s\nstatus: %s\n", ep.ID, ep.URL, eventsText(ep), ep.Status)
		return nil
	})
}

// parseEvents reads update's --events: "all" takes every type (an empty
// filter); an empty value is refused rather than read as "all", so that an
// unset shell variable does not widen the filter.
func parseEvents(raw string) ([]string, error) {
	switch strings.TrimSpace(raw) {
	case "all":
		return []string{}, nil
	case "":
		return nil, field.Invalid("events", "is empty: name event types, or all for every one")
	}
	var types []string
	for _, t := range strings.Split(raw, ",") {
		types = append(types, strings.TrimSpace(t))
	}
	return types, nil
}

func webhooksRemoveFlags(fs *flag.FlagSet) runFunc {
	clientID := fs.String("client-id", "", "client owning the endpoint (required)")
	id := fs.String("id", "", "endpoint to remove (required)")
	return webhookCommand("remove", clientID, func(ctx context.Context, a *hitch, out io.Writer) error {
		if err := a.Webhooks.Delete(ctx, *clientID, *id,
			webhook.Recorded(ctx, a.Audit, audit.Operator("webhooks remove"), audit.ActionWebhookRemove, *clientID, *id)); err != nil {
			return err
		}
		fmt.Fprintf(out, "removed %s\n", *id)
		return nil
	})
}

func webhooksRotateFlags(fs *flag.FlagSet) runFunc {
	clientID := fs.String("client-id", "", "client owning the endpoint (required)")
	id := fs.String("id", "", "endpoint whose secret to rotate (required)")
	asJSON := fs.Bool("json", false, "print the endpoint and its new secret as JSON")
	return webhookCommand("rotate-secret", clientID, func(ctx context.Context, a *hitch, out io.Writer) error {
		ep, secret, err := a.Webhooks.RotateSecret(ctx, *clientID, *id,
			webhook.Recorded(ctx, a.Audit, audit.Operator("webhooks rotate-secret"), audit.ActionWebhookUpdate, *clientID, *id))
		if err != nil {
			return err
		}
		printSecret(out, ep, secret, *asJSON, fmt.Sprintf("Deliveries carry signatures with both secrets until %s.",
			ep.RotationEndsAt(app.Now()).Format(time.RFC3339)))
		return nil
	})
}
