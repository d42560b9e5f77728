package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/hitchdev/hitch/internal/audit"
	"github.com/hitchdev/hitch/internal/config"
	"github.com/hitchdev/hitch/internal/field"
	"github.com/hitchdev/hitch/internal/member"
	"github.com/hitchdev/hitch/internal/store"
)

func membersAddFlags(fs *flag.FlagSet) runFunc {
	clientID := fs.String("client-id", "", "developer the member belongs to (required)")
	email := fs.String("email", "", "the member's e-mail address, used to sign in (required)")
	role := fs.String("role", "", "admin, developer or viewer (required)")
	name := fs.String("name", "", "the member's name (default: the e-mail address)")
	asJSON := fs.Bool("json", false, "print the member and password as JSON")
	return func(ctx context.Context, cfg *config.Config, out, errOut io.Writer) error {
		if *clientID == "" || *email == "" || *role == "" {
			return errors.New("members add: --client-id, --email and --role are required")
		}
		a, err := newHitch(ctx, cfg, errOut)
		if err != nil {
			return err
		}
		defer a.Close()
		m, password, err := a.Members.Add(ctx, nil, member.AddParams{ClientID: *clientID, Email: *email, Name: *name, Role: *role},
			audit.Origin{UserAgent: "hitch members add"})
		var invalid *field.Error
		switch {
		case errors.Is(err, store.ErrNotFound):
			return fmt.Errorf("members add: no client %q", *clientID)
		case errors.Is(err, member.ErrExists):
			return fmt.Errorf("members add: %s is a member of client %q already", *email, *clientID)
		case errors.As(err, &invalid):
			return fmt.Errorf("members add: --%s %s", invalid.Field, invalid.Message)
		case err != nil:
			return err
		}
		if *asJSON {
			return json.NewEncoder(out).Encode(map[string]string{"id": m.ID, "client_id": m.ClientID, "email": m.Email,
				"name": m.Name, "role": m.Role, "password": password})
		}
		// Only a configured public URL is sure to name the server: this
		// command does not know which address a running serve listens on.
		where := "the dashboard (/dashboard on Hitch's address)"
		if cfg.PublicURLSet() {
			where = cfg.PublicURL + "/dashboard"
		}
		fmt.Fprintf(out, "email:    %s\nname:     %s\nrole:     %s\npassword: %s\n\n"+
			"The password is shown only now. Sign in at %s, where the member chooses their own.\n",
			m.Email, m.Name, m.Role, password, where)
		return nil
	}
}

func auditVerifyFlags(fs *flag.FlagSet) runFunc {
	clientID := fs.String("client-id", "", "verify one developer's chain (default: every developer's)")
	return func(ctx context.Context, cfg *config.Config, out, errOut io.Writer) error {
		a, err := newHitch(ctx, cfg, errOut)
		if err != nil {
			return err
		}
		defer a.Close()
		var heads []*audit.Head
		if *clientID != "" {
			var h *audit.Head
			if _, err = a.Store.ClientGetByID(ctx, *clientID); errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("audit verify: no client %q", *clientID)
			} else if err == nil {
				h, err = audit.Verify(ctx, a.Store, *clientID)
			}
			if h != nil {
				heads = append(heads, h)
			}
		} else {
			heads, err = audit.VerifyAll(ctx, a.Store)
		}
		for _, h := range heads {
			fmt.Fprintf(out, "%s\t%d records\tok\thead %x\n", h.ClientID, h.Records, h.Hash)
		}
		return err
	}
}
