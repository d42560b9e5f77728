package api_test

import (
	"context"
	"html"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hitchdev/hitch/client"
	"github.com/hitchdev/hitch/internal/store"
)

var (
	auditSeqRE  = regexp.MustCompile(`<tr data-seq="(\d+)">`)
	auditNextRE = regexp.MustCompile(`id="audit-next" href="([^"]+)"|href="([^"]+)" id="audit-next"`)
)

// auditPage is one page of the dashboard's audit log: the sequence numbers
// of its records, in order, and the path of the next page ("" on the last).
func (d *dash) auditPage(path string) (seqs []int64, next string) {
	d.t.Helper()
	r := d.get(path)
	if r.status != http.StatusOK {
		d.t.Fatalf("GET %s: %d %.500s", path, r.status, r.body)
	}
	for _, m := range auditSeqRE.FindAllSubmatch(r.body, -1) {
		n, _ := strconv.ParseInt(string(m[1]), 10, 64)
		seqs = append(seqs, n)
	}
	if m := auditNextRE.FindSubmatch(r.body); m != nil {
		next = html.UnescapeString(string(m[1]) + string(m[2]))
	}
	return seqs, next
}

// auditPages follows the next-page links from path to the last page.
func (d *dash) auditPages(path string) [][]int64 {
	d.t.Helper()
	var pages [][]int64
	for path != "" {
		var seqs []int64
		seqs, path = d.auditPage(path)
		pages = append(pages, seqs)
		if len(pages) > 100 {
			d.t.Fatal("the next-page links do not end")
		}
	}
	return pages
}

func (h *harness) auditSeq(clientID string) int64 {
	h.t.Helper()
	n, err := h.store.ClientAuditSeq(context.Background(), clientID)
	if err != nil {
		h.t.Fatal(err)
	}
	return n
}

// The audit page lists every record once, newest first, 50 a page, for
// every role; reading it records nothing; records written while a member
// pages lead the next first page instead of shifting the pages.
func TestDashboardAuditPage(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		h.addMember("ada@example.com", store.RoleAdmin)
		viewer := h.dash()
		viewer.mustSignIn("vic@example.com", h.addMember("vic@example.com", store.RoleViewer))
		h.writeAudit(h.clientID, 120)
		total := h.auditSeq(h.clientID) // 3 of the team and 120
		if total != 123 {
			t.Fatalf("%d records written, want 123", total)
		}

		overview := viewer.get("/dashboard")
		if !strings.Contains(string(overview.body), `<a href="/dashboard/audit" id="overview-audit">`) ||
			!strings.Contains(string(overview.body), `<a href="/dashboard/audit">Audit log</a>`) {
			t.Fatalf("no link to the audit page on the overview or in the navigation: %.2000s", overview.body)
		}

		first, next := viewer.auditPage("/dashboard/audit")
		if len(first) != 50 || first[0] != total || next == "" {
			t.Fatalf("first page: %d records from %v, next %q", len(first), first[:min(len(first), 1)], next)
		}
		// Records written now come after the listing began: they are not
		// on its later pages, and push nothing off them.
		h.writeAudit(h.clientID, 7)
		pages := append([][]int64{first}, viewer.auditPages(next)...)
		if sizes := []int{len(pages[0]), len(pages[1]), len(pages[2])}; len(pages) != 3 || !slices.Equal(sizes, []int{50, 50, 23}) {
			t.Fatalf("%d pages of %v records, want 50, 50, 23", len(pages), sizes)
		}
		var all []int64
		for _, p := range pages {
			all = append(all, p...)
		}
		for i, seq := range all { // total down to 1: no duplicate, no gap
			if seq != total-int64(i) {
				t.Fatalf("record %d of the listing is seq %d, want %d", i, seq, total-int64(i))
			}
		}
		again, _ := viewer.auditPage("/dashboard/audit")
		if again[0] != total+7 {
			t.Fatalf("the new first page starts at %d, want %d", again[0], total+7)
		}
		// Reading the log wrote nothing.
		if n := h.auditSeq(h.clientID); n != total+7 {
			t.Fatalf("paging the audit log wrote %d records", n-total-7)
		}

		// The cursors are those of GET /audit_logs: a page link's cursor
		// continues the API's listing at the same record.
		_, second := viewer.auditPage("/dashboard/audit")
		cur := second[strings.Index(second, "cursor=")+len("cursor="):]
		apiPage, err := h.api.AuditLogs(ctx, &client.AuditLogsRequest{NextCursor: cur})
		if err != nil {
			t.Fatal(err)
		}
		rec, err := h.store.AuditRecordGetBySeq(ctx, h.clientID, total+7-50)
		if err != nil || apiPage.Data[0].ID != rec.ID {
			t.Fatalf("GET /audit_logs with the page's cursor starts at %s, want seq %d (%v)", apiPage.Data[0].ID, total+7-50, err)
		}

		// A cursor that is not the audit log's, or is another developer's,
		// is refused.
		other := h.newDeveloper(h.env)
		h.writeAudit(other.ClientID, 101)
		otherPage, err := h.clientFor(other).AuditLogs(ctx, &client.AuditLogsRequest{})
		if err != nil || otherPage.NextCursor == nil {
			t.Fatalf("another developer's log: %v", err)
		}
		for _, c := range []string{*otherPage.NextCursor, "nope"} {
			if r := viewer.get("/dashboard/audit?cursor=" + c); r.status != http.StatusBadRequest ||
				!strings.Contains(string(r.body), "Start again from its first page") || auditSeqRE.Match(r.body) {
				t.Errorf("cursor %q: %d %.300s", c, r.status, r.body)
			}
		}
	})
}

// The date filter keeps whole UTC days, both included, across pages.
func TestDashboardAuditPageDates(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		admin := h.dash()
		password := h.addMember("ada@example.com", store.RoleAdmin)
		admin.mustSignIn("ada@example.com", password)
		h.writeAudit(h.clientID, 60)
		day0 := h.clock.Now().Format(time.DateOnly)
		before := h.auditSeq(h.clientID) // 62, all on day0

		h.clock.Advance(48 * time.Hour)
		day2 := h.clock.Now().Format(time.DateOnly)
		day1 := h.clock.Now().Add(-24 * time.Hour).Format(time.DateOnly)
		h.writeAudit(h.clientID, 3)
		admin.mustSignIn("ada@example.com", password) // the sign-in ended while idle

		pages := admin.auditPages("/dashboard/audit?to=" + day0)
		if len(pages) != 2 || len(pages[0]) != 50 || len(pages[1]) != int(before)-50 || pages[0][0] != before || pages[1][len(pages[1])-1] != 1 {
			t.Fatalf("to %s: pages %v", day0, pages)
		}
		if pages := admin.auditPages("/dashboard/audit?from=" + day2); len(pages) != 1 || !slices.Equal(pages[0], []int64{before + 4, before + 3, before + 2, before + 1}) {
			t.Fatalf("from %s: %v", day2, pages)
		}
		if pages := admin.auditPages("/dashboard/audit?from=" + day1 + "&to=" + day1); len(pages) != 1 || len(pages[0]) != 0 {
			t.Fatalf("on %s: %v", day1, pages)
		}
		if pages := admin.auditPages("/dashboard/audit?from=" + day0 + "&to=" + day2); len(pages) != 2 || len(pages[0])+len(pages[1]) != int(before)+4 {
			t.Fatalf("%s to %s: %v", day0, day2, pages)
		}
		for query, message := range map[string]string{
			"from=yesterday":               "The From date must be a date such as 2026-01-15.",
			"to=2026-02-30":                "The To date must be a date such as 2026-01-15.",
			"from=" + day2 + "&to=" + day0: "The To date is before the From date.",
		} {
			r := admin.get("/dashboard/audit?" + query)
			if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), message) || auditSeqRE.Match(r.body) {
				t.Errorf("%s: %d %.300s", query, r.status, r.body)
			}
		}
	})
}
