package client

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// Audit log

// AuditLogsRequest filters GET /audit_logs. Start and End are whole UTC
// seconds, both included; zero values leave the bound out.
type AuditLogsRequest struct {
	Start, End time.Time
	// NextCursor is the previous page's NextCursor.
	NextCursor string
}

// AuditRecord is one action of a team member in the dashboard, or one
// change made with the API credentials or by the operator (docs/audit.md).
type AuditRecord struct {
	ID       string    `json:"id"`
	Datetime time.Time `json:"datetime"`
	Event    struct {
		Action  string `json:"action"`
		Outcome struct {
			Status string `json:"status"`
		} `json:"outcome"`
	} `json:"event"`
	Actor struct {
		Name  string `json:"name"`
		Email string `json:"email"`
	} `json:"actor"`
	Target struct {
		Type        string  `json:"type"`
		Name        *string `json:"name"`
		Environment string  `json:"environment"`
	} `json:"target"`
	Context struct {
		IP        string `json:"ip"`
		UserAgent string `json:"user_agent"`
	} `json:"context"`
}

// AuditLogPage is a page of the audit log, newest first.
type AuditLogPage struct {
	Data []AuditRecord `json:"data"`
	// NextCursor is nil on the last page.
	NextCursor *string `json:"next_cursor"`
	Limit      int     `json:"limit"`
}

// AuditLogs returns a page of the developer's audit log.
func (c *Client) AuditLogs(ctx context.Context, req *AuditLogsRequest) (*AuditLogPage, error) {
	q := url.Values{}
	const layout = "2006-01-02T15:04:05Z"
	if !req.Start.IsZero() {
		q.Set("start", req.Start.UTC().Format(layout))
	}
	if !req.End.IsZero() {
		q.Set("end", req.End.UTC().Format(layout))
	}
	if req.NextCursor != "" {
		q.Set("next_cursor", req.NextCursor)
	}
	var out AuditLogPage
	return &out, c.do(ctx, http.MethodGet, "/audit_logs", q, nil, &out)
}
