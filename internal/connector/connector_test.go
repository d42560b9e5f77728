package connector_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hitchdev/hitch/internal/connector"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newService(st store.Store) (*connector.Service, *clock) {
	c := &clock{t: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
	return connector.NewService(st, c.Now), c
}

func TestCreateAuthenticateRevoke(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		svc, _ := newService(st)
		creds, err := svc.Create(ctx, "  Amazon orders  ")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(creds.ID, connector.IDPrefix) || !strings.HasPrefix(creds.Secret, connector.SecretPrefix) ||
			len(creds.Secret) < 32+len(connector.SecretPrefix) {
			t.Fatalf("credentials %q / %q", creds.ID, creds.Secret)
		}
		c, err := svc.Authenticate(ctx, creds.ID, creds.Secret)
		if err != nil || c.ID != creds.ID || c.Name != "Amazon orders" || c.RevokedAt != nil {
			t.Fatalf("Authenticate = %+v, %v", c, err)
		}
		other, err := svc.Create(ctx, "Netflix plans")
		if err != nil {
			t.Fatal(err)
		}
		for name, tc := range map[string][2]string{
			"wrong secret":        {creds.ID, creds.Secret + "x"},
			"another's secret":    {creds.ID, other.Secret},
			"unknown connector":   {"conn_000000000000000000000000", creds.Secret},
			"malformed id":        {"client-id", creds.Secret},
			"empty":               {"", ""},
			"oversized secret":    {creds.ID, strings.Repeat("s", 1000)},
			"secret as the id":    {creds.Secret, creds.ID},
			"id without a secret": {creds.ID, ""},
		} {
			if _, err := svc.Authenticate(ctx, tc[0], tc[1]); !errors.Is(err, connector.ErrInvalidCredentials) {
				t.Errorf("%s: err = %v", name, err)
			}
		}

		if err := svc.Revoke(ctx, creds.ID); err != nil {
			t.Fatal(err)
		}
		// Revoked through this service: refused at once, cache or not.
		if _, err := svc.Authenticate(ctx, creds.ID, creds.Secret); !errors.Is(err, connector.ErrInvalidCredentials) {
			t.Fatalf("revoked: err = %v", err)
		}
		if err := svc.Revoke(ctx, creds.ID); err != nil {
			t.Fatalf("revoke again: %v", err)
		}
		if err := svc.Revoke(ctx, "conn_nope"); !errors.Is(err, connector.ErrNotFound) {
			t.Fatalf("revoke unknown: %v", err)
		}
		if _, err := svc.Authenticate(ctx, other.ID, other.Secret); err != nil {
			t.Fatalf("the other connector: %v", err)
		}

		// Both may carry the same created_at, so find them by id.
		list, err := svc.List(ctx)
		if err != nil || len(list) != 2 {
			t.Fatalf("List = %+v, %v", list, err)
		}
		for _, c := range list {
			if revoked := c.RevokedAt != nil; revoked != (c.ID == creds.ID) {
				t.Errorf("connector %s (revoked one: %s) has revoked_at %v", c.ID, creds.ID, c.RevokedAt)
			}
		}
	})
}

// A connector revoked by another process (the CLI) stops working when the
// cached verification expires.
func TestRevokedElsewhereExpiresFromTheCache(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		svc, clk := newService(st)
		cli, _ := newService(st)
		creds, err := svc.Create(ctx, "Uber rides")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Authenticate(ctx, creds.ID, creds.Secret); err != nil {
			t.Fatal(err)
		}
		if err := cli.Revoke(ctx, creds.ID); err != nil {
			t.Fatal(err)
		}
		if _, ok := svc.Cached(creds.ID, creds.Secret); !ok {
			t.Fatal("a verified pair is not cached")
		}
		clk.Add(time.Minute)
		if _, err := svc.Authenticate(ctx, creds.ID, creds.Secret); !errors.Is(err, connector.ErrInvalidCredentials) {
			t.Fatalf("after the cache expired: %v", err)
		}
	})
}

func TestCreateRefusesBadNames(t *testing.T) {
	t.Parallel()
	svc, _ := newService(storetest.OpenSQLite(t))
	for _, name := range []string{"", "   ", strings.Repeat("n", 201), "nul\x00", "\xff"} {
		if _, err := svc.Create(context.Background(), name); err == nil {
			t.Errorf("Create(%q) succeeded", name)
		}
	}
}
