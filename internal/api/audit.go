package api

import (
	"net/http"
	"net/url"
	"regexp"
	"time"

	"github.com/hitchdev/hitch/internal/audit"
)

// auditPage is the number of records per page of GET /audit_logs.
const auditPage = 100

// auditTimePattern is the one form start and end take.
var auditTimePattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$`)

type auditRecordJSON struct {
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

type auditLogsResponse struct {
	Data       []auditRecordJSON `json:"data"`
	NextCursor *string           `json:"next_cursor"`
	Limit      int               `json:"limit"`
}

// listAuditLogs serves the developer's audit log newest first, 100 records
// a page. Pages follow the records' sequence numbers, so records written
// while a client pages neither repeat nor shift a page.
func (s *Server) listAuditLogs(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	p := audit.ListParams{ClientID: clientFrom(r.Context()).ID, Limit: auditPage}
	var err error
	if p.Since, err = auditTime(q, "start"); err != nil {
		return err
	}
	if p.Until, err = auditTime(q, "end"); err != nil {
		return err
	}
	if p.Until != nil {
		// end names a whole second, which it includes.
		until := p.Until.Add(time.Second - time.Microsecond)
		p.Until = &until
	}
	if p.Since != nil && p.Until != nil && p.Until.Before(*p.Since) {
		return errInvalidField("The end field must not be before start.")
	}
	if raw, ok := q["next_cursor"]; ok {
		if len(raw) > 1 || raw[0] == "" {
			return errInvalidCursor()
		}
		p.Cursor = raw[0]
	}
	page, err := audit.List(r.Context(), s.Store, p)
	if err != nil {
		return err
	}
	out := auditLogsResponse{Data: make([]auditRecordJSON, 0, len(page.Records)), Limit: auditPage}
	if page.NextCursor != "" {
		out.NextCursor = &page.NextCursor
	}
	for _, rec := range page.Records {
		var j auditRecordJSON
		j.ID, j.Datetime = rec.ID, rec.CreatedAt
		j.Event.Action, j.Event.Outcome.Status = rec.Action, rec.Outcome
		j.Actor.Name, j.Actor.Email = rec.ActorName, rec.ActorEmail
		j.Target.Type, j.Target.Name, j.Target.Environment = rec.TargetType, rec.TargetName, rec.Environment
		j.Context.IP, j.Context.UserAgent = rec.IP, rec.UserAgent
		out.Data = append(out.Data, j)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// auditTime reads an optional YYYY-MM-DDTHH:MM:SSZ parameter.
func auditTime(q url.Values, name string) (*time.Time, error) {
	raw, ok := q[name]
	if !ok {
		return nil, nil
	}
	invalid := errInvalidField("The %s field must be a UTC time of the form YYYY-MM-DDTHH:MM:SSZ, such as 2026-01-15T18:04:05Z.", name)
	if len(raw) != 1 || !auditTimePattern.MatchString(raw[0]) {
		return nil, invalid
	}
	t, err := time.Parse("2006-01-02T15:04:05Z", raw[0])
	if err != nil {
		return nil, invalid
	}
	return &t, nil
}
