package api_test

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/hitchdev/hitch/client"
	"github.com/hitchdev/hitch/internal/audit"
	"github.com/hitchdev/hitch/internal/store"
)

// writeAudit appends n records to a developer's log, one transaction each.
func (h *harness) writeAudit(clientID string, n int) {
	h.t.Helper()
	ctx := context.Background()
	for range n {
		err := h.store.InTx(ctx, func(ex store.Executor) error {
			_, err := h.audit.Write(ctx, ex, audit.Entry{ClientID: clientID, Environment: h.env, Action: audit.ActionSecretView,
				Actor: audit.Actor{Name: "Ada", Email: "ada@example.com"}, TargetType: audit.TargetSecret,
				Origin: audit.Origin{IP: "192.0.2.1", UserAgent: "test"}})
			return err
		})
		if err != nil {
			h.t.Error(err)
			return
		}
	}
}

// Paging: 100 records a page, newest first, and records written while a
// client pages neither repeat nor push others off a page.
func TestAuditLogsPaging(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		h.writeAudit(h.clientID, 250)
		first, err := h.api.AuditLogs(ctx, &client.AuditLogsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if first.Limit != 100 || len(first.Data) != 100 || first.NextCursor == nil {
			t.Fatalf("first page: limit %d, %d records, cursor %v", first.Limit, len(first.Data), first.NextCursor)
		}
		var wg sync.WaitGroup
		wg.Go(func() { h.writeAudit(h.clientID, 60) })
		seen := map[string]bool{}
		var ids []string
		page := first
		for {
			for _, rec := range page.Data {
				if seen[rec.ID] {
					t.Fatalf("record %s twice", rec.ID)
				}
				seen[rec.ID] = true
				ids = append(ids, rec.ID)
			}
			if page.NextCursor == nil {
				break
			}
			if page, err = h.api.AuditLogs(ctx, &client.AuditLogsRequest{NextCursor: *page.NextCursor}); err != nil {
				t.Fatal(err)
			}
		}
		wg.Wait()
		if len(ids) != 250 {
			t.Fatalf("paged %d records, want the 250 there were when paging began", len(ids))
		}
		// Newest first: sequence numbers 250 down to 1.
		for i, id := range ids {
			rec, err := h.store.AuditRecordGetBySeq(ctx, h.clientID, int64(250-i))
			if err != nil || rec.ID != id {
				t.Fatalf("record %d of the listing is not seq %d", i, 250-i)
			}
		}
		// The records written meanwhile lead the next first page.
		again, _ := h.api.AuditLogs(ctx, &client.AuditLogsRequest{})
		if rec, _ := h.store.AuditRecordGetBySeq(ctx, h.clientID, 310); again.Data[0].ID != rec.ID {
			t.Fatalf("the newest record is not first")
		}
	})
}

func TestAuditLogsFilters(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		base := h.clock.Now().Truncate(time.Second).Add(time.Second)
		h.clock.Advance(base.Sub(h.clock.Now()))
		// Records at base, base+1s, base+2.5s and base+4s.
		for _, step := range []time.Duration{0, time.Second, 1500 * time.Millisecond, 1500 * time.Millisecond} {
			h.clock.Advance(step)
			h.writeAudit(h.clientID, 1)
		}
		count := func(start, end time.Time) int {
			t.Helper()
			page, err := h.api.AuditLogs(ctx, &client.AuditLogsRequest{Start: start, End: end})
			if err != nil {
				t.Fatal(err)
			}
			return len(page.Data)
		}
		if n := count(base.Add(time.Second), base.Add(2*time.Second)); n != 2 {
			t.Fatalf("start and end both included (the whole end second): %d records, want 2", n)
		}
		if n := count(base, base); n != 1 {
			t.Fatalf("one second: %d", n)
		}
		if n := count(base.Add(time.Second), time.Time{}); n != 3 {
			t.Fatalf("start only: %d", n)
		}
		if n := count(time.Time{}, base.Add(3*time.Second)); n != 3 {
			t.Fatalf("end only: %d", n)
		}
		if n := count(base.Add(time.Hour), time.Time{}); n != 0 {
			t.Fatalf("in the future: %d", n)
		}

		other := h.clientFor(h.newDeveloper("development"))
		h.writeAudit(h.clientID, 200)
		page, _ := h.api.AuditLogs(ctx, &client.AuditLogsRequest{})
		for _, c := range []struct {
			query string
			code  string
		}{
			{"start=2026-01-15", "INVALID_FIELD"},
			{"start=2026-01-15T18:04:05.5Z", "INVALID_FIELD"},
			{"start=2026-01-15T18:04:05%2B00:00", "INVALID_FIELD"},
			{"end=2026-13-15T18:04:05Z", "INVALID_FIELD"},
			{"end=2026-01-15t18:04:05z", "INVALID_FIELD"},
			{"start=2026-01-15T18:04:05Z&start=2026-01-15T18:04:06Z", "INVALID_FIELD"},
			{"start=2026-01-16T00:00:00Z&end=2026-01-15T00:00:00Z", "INVALID_FIELD"},
			{"next_cursor=garbage", "INVALID_CURSOR_FORMAT"},
			{"next_cursor=", "INVALID_CURSOR_FORMAT"},
			{"next_cursor=" + url.QueryEscape(*page.NextCursor) + "x", "INVALID_CURSOR_FORMAT"},
		} {
			r := h.do("GET", "/audit_logs?"+c.query, nil, nil)
			if r.status != http.StatusBadRequest || r.errorBody(t).Code != c.code {
				t.Errorf("%s: %d %s, want 400 %s", c.query, r.status, r.body, c.code)
			}
		}
		// A cursor of one developer is refused to another.
		_, err := other.AuditLogs(ctx, &client.AuditLogsRequest{NextCursor: *page.NextCursor})
		expectError(t, err, http.StatusBadRequest, "INVALID_REQUEST", "INVALID_CURSOR_FORMAT")
		if r := h.do("GET", "/audit_logs", nil, noAuth); r.status != http.StatusUnauthorized {
			t.Fatalf("without credentials: %d", r.status)
		}
	})
}

// A developer sees its own records only; in production too.
func TestAuditLogsTenantIsolation(t *testing.T) {
	t.Parallel()
	for _, env := range []string{"development", "production"} {
		t.Run(env, func(t *testing.T) {
			t.Parallel()
			opts := []func(*harnessOptions){}
			if env == "production" {
				opts = append(opts, production)
			}
			each(t, func(t *testing.T, h *harness) {
				ctx := context.Background()
				b := h.newDeveloper(env)
				h.writeAudit(h.clientID, 3)
				h.writeAudit(b.ClientID, 2)
				a, err := h.api.AuditLogs(ctx, &client.AuditLogsRequest{})
				if err != nil || len(a.Data) != 3 {
					t.Fatalf("A: %v %v", a, err)
				}
				bp, err := h.clientFor(b).AuditLogs(ctx, &client.AuditLogsRequest{})
				if err != nil || len(bp.Data) != 2 {
					t.Fatalf("B: %v %v", bp, err)
				}
				for _, rec := range bp.Data {
					for _, ra := range a.Data {
						if rec.ID == ra.ID {
							t.Fatalf("B sees A's record %s", rec.ID)
						}
					}
					if rec.Target.Environment != env {
						t.Fatalf("environment %q", rec.Target.Environment)
					}
				}
			}, opts...)
		})
	}
}
