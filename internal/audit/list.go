package audit

import (
	"context"
	"errors"
	"time"

	"github.com/hitchdev/hitch/internal/cursor"
	"github.com/hitchdev/hitch/internal/store"
)

// ErrInvalidCursor: a cursor that is malformed or was handed to another
// developer.
var ErrInvalidCursor = errors.New("audit: invalid cursor")

// ListParams select one page of a developer's log.
type ListParams struct {
	ClientID string
	// Since and Until bound the records' time, both included, when set.
	Since, Until *time.Time
	// Cursor is a previous page's NextCursor; "" for the first page.
	Cursor string
	// Limit is the page's size (at least 1).
	Limit int
}

// Page is a page of records, newest first.
type Page struct {
	Records []*store.AuditRecord
	// NextCursor continues the listing after Records; "" on the last page.
	NextCursor string
}

// cursorScope binds a cursor to its developer. GET /audit_logs and the
// dashboard's audit page share it, so each takes the other's cursors.
func cursorScope(clientID string) string { return "audit_logs:" + clientID }

// List returns a page of the developer's records, newest first. Pages
// follow the records' sequence numbers, so records written while a reader
// pages neither repeat nor shift a page: they lead the next first page.
func List(ctx context.Context, ex store.Executor, p ListParams) (*Page, error) {
	p.Limit = max(p.Limit, 1)
	q := &store.AuditRecordListParams{ClientID: p.ClientID, Since: p.Since, Until: p.Until, Limit: p.Limit + 1}
	if p.Cursor != "" {
		seq, ok := cursor.Decode(p.Cursor, cursorScope(p.ClientID))
		if !ok || seq < 1 {
			return nil, ErrInvalidCursor
		}
		q.Before = seq
	}
	recs, err := ex.AuditRecordList(ctx, q)
	if err != nil {
		return nil, err
	}
	page := &Page{Records: recs}
	if len(recs) > p.Limit {
		page.Records = recs[:p.Limit]
		page.NextCursor = cursor.Encode(cursorScope(p.ClientID), page.Records[p.Limit-1].Seq)
	}
	return page, nil
}
