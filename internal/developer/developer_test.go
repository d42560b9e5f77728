package developer_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hitchdev/hitch/internal/developer"
	"github.com/hitchdev/hitch/internal/seal"
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

func newService(t *testing.T, st store.Store) (*developer.Service, *clock) {
	t.Helper()
	box, err := seal.New(bytes.Repeat([]byte{1}, seal.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
	return developer.NewService(st, box, c.Now), c
}

func TestCreateAndAuthenticate(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		svc, _ := newService(t, st)
		creds, err := svc.Create(ctx, developer.CreateParams{Name: "Acme", Environment: "development"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(creds.Secret, developer.SecretPrefix) || len(creds.Secret) < 32+len(developer.SecretPrefix) {
			t.Fatalf("secret %q is not a prefixed 32-byte secret", creds.Secret)
		}
		c, err := svc.Authenticate(ctx, "development", creds.ClientID, creds.Secret)
		if err != nil || c.ID != creds.ClientID || c.Name != "Acme" {
			t.Fatalf("Authenticate = %+v, %v", c, err)
		}
		for name, tc := range map[string][3]string{
			"wrong secret":      {"development", creds.ClientID, creds.Secret + "x"},
			"unknown client":    {"development", "no-such-client", creds.Secret},
			"other environment": {"production", creds.ClientID, creds.Secret},
			"empty":             {"development", "", ""},
		} {
			if _, err := svc.Authenticate(ctx, tc[0], tc[1], tc[2]); !errors.Is(err, developer.ErrInvalidCredentials) {
				t.Errorf("%s: err = %v", name, err)
			}
		}
		got, err := svc.CurrentSecret(ctx, creds.ClientID)
		if err != nil || got != creds.Secret {
			t.Fatalf("CurrentSecret = %q, %v", got, err)
		}
	})
}

func TestCreateFixedCredentials(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		svc, _ := newService(t, st)
		secret := strings.Repeat("s", 40)
		if _, err := svc.Create(ctx, developer.CreateParams{Name: "Dev", Environment: "development", ID: "dev_client", Secret: secret}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Authenticate(ctx, "development", "dev_client", secret); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Create(ctx, developer.CreateParams{Name: "Dev", Environment: "development", ID: "dev_client", Secret: secret}); err == nil {
			t.Fatal("created the same client twice")
		}
		if _, err := svc.Create(ctx, developer.CreateParams{Name: "X", Environment: "development", Secret: "short"}); err == nil {
			t.Fatal("accepted a short secret")
		}
	})
}

func TestRotateSecretGraceAndCache(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		svc, clk := newService(t, st)
		old, _ := svc.Create(ctx, developer.CreateParams{Name: "Acme", Environment: "production"})
		if _, err := svc.Authenticate(ctx, "production", old.ClientID, old.Secret); err != nil { // now cached
			t.Fatal(err)
		}
		rotated, err := svc.RotateSecret(ctx, old.ClientID, time.Hour)
		if err != nil || rotated.Secret == old.Secret || rotated.Environment != "production" {
			t.Fatalf("rotate: %+v, %v", rotated, err)
		}
		for _, s := range []string{old.Secret, rotated.Secret} {
			if _, err := svc.Authenticate(ctx, "production", old.ClientID, s); err != nil {
				t.Fatalf("during grace: %v", err)
			}
		}
		clk.Add(time.Hour + time.Second) // past the grace period (and the cache TTL)
		if _, err := svc.Authenticate(ctx, "production", old.ClientID, old.Secret); !errors.Is(err, developer.ErrInvalidCredentials) {
			t.Fatalf("old secret after grace: %v", err)
		}
		if _, err := svc.Authenticate(ctx, "production", old.ClientID, rotated.Secret); err != nil {
			t.Fatalf("new secret after grace: %v", err)
		}

		// With no grace, a cached old secret stops working within the cache TTL.
		again, _ := svc.RotateSecret(ctx, old.ClientID, 0)
		if _, err := svc.Authenticate(ctx, "production", old.ClientID, again.Secret); err != nil {
			t.Fatal(err)
		}
		clk.Add(60 * time.Second)
		if _, err := svc.Authenticate(ctx, "production", old.ClientID, rotated.Secret); !errors.Is(err, developer.ErrInvalidCredentials) {
			t.Fatalf("rotated-out secret still works after 60 s: %v", err)
		}
		if _, err := svc.RotateSecret(ctx, "missing-client", time.Hour); !errors.Is(err, developer.ErrNotFound) {
			t.Fatalf("rotate unknown: %v", err)
		}
	})
}
