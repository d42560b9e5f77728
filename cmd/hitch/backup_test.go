package main

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hitchdev/hitch/client"
)

// TestBackupWhileServing backs a serving SQLite node up with `hitch backup`
// while requests keep writing, starts a node on the copy, and finds there
// every event committed before the backup began, the transactions and the
// JWE key.
func TestBackupWhileServing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := append(deliveryEnv(t, "backup_client"), "HITCH_DATA_DIR="+dir)
	node := startHitch(t, env)
	api := newHitchAPI(t, "backup_client")
	ctx := context.Background()
	c := client.New(node.base, api.clientID, api.secret, client.WithHTTPClient(api.http))

	key, err := c.JWEKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.DevLinkAccount(ctx, &client.DevLinkRequest{ExternalUserID: "u1", MerchantID: 1,
		Transactions: &client.DevTransactions{New: true}}); err != nil {
		t.Fatal(err)
	}
	var transactions []string
	eventually(t, "the linked account's transactions", 30*time.Second, func() bool {
		transactions = syncAll(t, api, node.base)
		return len(transactions) > 0
	})
	// The backup starts at the 300th event, while eight clients keep
	// adding events.
	led := &eventLedger{committed: map[string]string{}, cutOff: map[string]bool{}}
	backupFile := filepath.Join(t.TempDir(), "backup.db")
	var out, errOut bytes.Buffer
	var before []string
	var start sync.Once
	done := make(chan int, 1)
	createTestEvents(t, api, []string{node.base}, led, 600, 300, func() {
		start.Do(func() {
			before = led.ids()
			go func() { done <- run(ctx, []string{"backup", "--to", backupFile}, env, &out, &errOut) }()
		})
	})
	if code := <-done; code != 0 {
		t.Fatalf("hitch backup exited %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), backupFile) {
		t.Errorf("hitch backup printed %q, want the file it wrote", out.String())
	}
	if code := run(ctx, []string{"backup", "--to", backupFile}, env, &out, &errOut); code != 1 ||
		!strings.Contains(errOut.String(), "exists") {
		t.Errorf("a second backup to the same file exited %d: %s; want 1, saying the file exists", code, errOut.String())
	}
	node.kill()

	restored := startHitch(t, append(slices.Clone(env), "HITCH_DATABASE_URL=sqlite:"+backupFile,
		"HITCH_DATA_DIR="+t.TempDir()))
	listed := api.listEvents(t, restored.base)
	for _, id := range before {
		if _, ok := listed[id]; !ok {
			t.Fatalf("event %s, committed before the backup, is not in it (%d of %d events there)", id, len(listed), led.count())
		}
	}
	for id := range listed {
		if _, ok := led.committed[id]; !ok && listed[id].Type == "TEST" {
			t.Errorf("the backup lists event %s, which no request committed", id)
		}
	}
	if got := syncAll(t, api, restored.base); !slices.Equal(got, transactions) {
		t.Errorf("the backup's transactions %q, want %q", got, transactions)
	}
	c = client.New(restored.base, api.clientID, api.secret, client.WithHTTPClient(api.http))
	if got, err := c.JWEKey(ctx); err != nil || got.Kid != key.Kid || got.N != key.N {
		t.Errorf("the backup's JWE key %+v (%v), want kid %s", got, err, key.Kid)
	}
	t.Logf("backup with %d of %d events (%d before it began), %d transactions", len(listed), led.count(), len(before), len(transactions))
}

// TestBackupRefusesPostgreSQL: hitch backup points at pg_dump.
func TestBackupRefusesPostgreSQL(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"backup", "--to", filepath.Join(t.TempDir(), "b")},
		[]string{"HITCH_DATABASE_URL=postgres://hitch@127.0.0.1:1/hitch"}, &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), "pg_dump") {
		t.Fatalf("exit %d, %q; want 1, pointing at pg_dump", code, errOut.String())
	}
}

// syncAll reads the ids of u1's transactions at merchant 1, every page.
func syncAll(t *testing.T, api *hitchAPI, base string) []string {
	t.Helper()
	var ids []string
	var cursor *string
	for {
		var page struct {
			Transactions []struct {
				ID string `json:"id"`
			} `json:"transactions"`
			NextCursor *string `json:"next_cursor"`
		}
		body := map[string]any{"external_user_id": "u1", "merchant_id": 1, "limit": 100}
		if cursor != nil {
			body["cursor"] = *cursor
		}
		if _, err := api.call(base, "POST", "/transactions/sync", body, &page); err != nil {
			t.Fatal(err)
		}
		for _, tx := range page.Transactions {
			ids = append(ids, tx.ID)
		}
		if page.NextCursor == nil || len(page.Transactions) == 0 {
			return ids
		}
		cursor = page.NextCursor
	}
}
