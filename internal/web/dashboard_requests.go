package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hitchdev/hitch/internal/member"
	"github.com/hitchdev/hitch/internal/store"
)

// requestsPerPage is how many requests a page of the request log lists.
const requestsPerPage = 50

// requestsPath is the request log; a request's page is requestsPath/{id},
// the request_id of its X-Request-Id header and error body.
const requestsPath = "/dashboard/requests"

// mountRequestLog adds the request log's pages and routes. Every role may
// read them: they show nothing a viewer may not see (bodies are redacted
// before they are stored).
func (d *dashboard) mountRequestLog(base *template.Template, handle func(string, http.HandlerFunc)) error {
	funcs := template.FuncMap{"latency": latencyMS, "list": func(s ...string) []string { return s }}
	for _, name := range []string{"requests", "request"} {
		t, err := template.Must(base.Clone()).Funcs(funcs).ParseFS(dashboardFS, "templates/dashboard/"+name+".html")
		if err != nil {
			return fmt.Errorf("web: dashboard page %s: %w", name, err)
		}
		d.pages[name] = t
	}
	handle("GET "+requestsPath, d.authed(d.requestLog))
	handle("GET "+requestsPath+"/{id}", d.authed(d.requestPage))
	return nil
}

// requestFilter is the request log's search form.
type requestFilter struct {
	RequestID string
	Status    string // 2xx, 4xx or 5xx
	Path      string
	ErrorCode string
	User      string
}

func (f *requestFilter) values() url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"request_id": f.RequestID, "status": f.Status, "path": f.Path,
		"error_code": f.ErrorCode, "user": f.User} {
		if s != "" {
			v.Set(k, s)
		}
	}
	return v
}

type requestsData struct {
	Filter   requestFilter
	Any      bool // a filter is set
	PerPage  int
	Requests []*store.RequestLog
	First    string
	Next     string
	// Dropped is how many of the developer's requests the log left out
	// since the server started.
	Dropped int64
}

func (d *dashboard) requestLog(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	q := r.URL.Query()
	f := requestFilter{RequestID: strings.TrimSpace(q.Get("request_id")), Status: q.Get("status"),
		Path: strings.TrimSpace(q.Get("path")), ErrorCode: strings.TrimSpace(q.Get("error_code")),
		User: strings.TrimSpace(q.Get("user"))}
	data := &requestsData{Filter: f, PerPage: requestsPerPage}
	if d.RequestLog != nil {
		data.Dropped = d.RequestLog.Dropped(p.Client.ID)
	}
	data.Any = len(f.values()) > 0
	v := &view{Title: "Request log", Active: "requests", P: p, Data: data}
	params := &store.RequestLogListParams{ClientID: p.Client.ID, RequestID: f.RequestID, PathPrefix: f.Path,
		ErrorCode: f.ErrorCode, ExternalUserID: f.User, Limit: requestsPerPage}
	switch f.Status {
	case "":
	case "2xx", "3xx", "4xx", "5xx":
		params.StatusClass = int(f.Status[0] - '0')
	default:
		v.Error = "The status must be 2xx, 3xx, 4xx or 5xx."
	}
	if raw := q.Get("before"); raw != "" {
		before, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || before <= 0 {
			v.Error = "This page link is not one the request log made. Start again from its first page."
		}
		params.Before = before
	}
	if v.Error != "" {
		d.render(w, r, http.StatusBadRequest, "requests", v)
		return nil
	}
	list, err := d.Store.RequestLogList(r.Context(), params)
	if err != nil {
		return err
	}
	// Searching a request id alone opens its request.
	if len(list) == 1 && f.RequestID != "" && f == (requestFilter{RequestID: f.RequestID}) && params.Before == 0 {
		http.Redirect(w, r, requestsPath+"/"+url.PathEscape(f.RequestID), http.StatusSeeOther)
		return nil
	}
	data.Requests = list
	filter := f.values()
	if params.Before != 0 {
		data.First = requestsPath + "?" + filter.Encode()
	}
	if len(list) == requestsPerPage {
		next := f.values()
		next.Set("before", strconv.FormatInt(list[len(list)-1].ID, 10))
		data.Next = requestsPath + "?" + next.Encode()
	}
	d.render(w, r, http.StatusOK, "requests", v)
	return nil
}

type requestData struct {
	Request *store.RequestLog
	// Latency in milliseconds, three decimals.
	Latency string
	// RequestBody and ResponseBody are the stored bodies indented for
	// reading.
	RequestBody, ResponseBody string
}

// indented indents a stored body, which the log keeps compact. A body cut
// at the log's limit, or a placeholder, is not JSON and is shown as kept.
func indented(body string) string {
	var b bytes.Buffer
	if json.Indent(&b, []byte(body), "", "  ") != nil {
		return body
	}
	return b.String()
}

func (d *dashboard) requestPage(w http.ResponseWriter, r *http.Request, p *member.Principal) error {
	id := r.PathValue("id")
	l, err := d.Store.RequestLogGet(r.Context(), p.Client.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return &pageError{http.StatusNotFound, "There is no request with this request_id in your request log. " +
			"It may be older than the log keeps, or another developer's."}
	}
	if err != nil {
		return err
	}
	d.render(w, r, http.StatusOK, "request", &view{Title: "Request " + l.RequestID, Active: "requests", P: p,
		Data: &requestData{Request: l, Latency: latencyMS(l.Latency), RequestBody: indented(l.RequestBody),
			ResponseBody: indented(l.ResponseBody)}})
	return nil
}

// latencyMS shows a latency in milliseconds.
func latencyMS(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 3, 64) + " ms"
}
