package api

import (
	"io"
	"net/http"
	"time"

	"github.com/hitchdev/hitch/internal/reqlog"
)

// logged records a request of the developer-authenticated routes in the
// request log (internal/reqlog), once its credentials named the developer:
// a request that did not authenticate cannot be attributed, and logging it
// would let anyone write into a developer's log. The request path only
// copies up to reqlog.MaxCapturedBody of each body and queues the copy;
// redaction and the insert happen on the writer's goroutine.
func (s *Server) logged(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.RequestLog == nil {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		at := start
		if s.Now != nil {
			at = s.Now()
		}
		in := &captureBody{ReadCloser: r.Body}
		r.Body = in
		out := &captureWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(out, r)
		st := stateFrom(r.Context())
		if st == nil || st.client == nil {
			return // the buffers go to the garbage collector
		}
		status := out.status
		if st.clientGone {
			status = statusClientClosedRequest
		}
		in.body.ContentType = r.Header.Get("Content-Type")
		out.body.ContentType = out.Header().Get("Content-Type")
		s.RequestLog.Record(&reqlog.Captured{
			ClientID: st.client.ID, RequestID: st.id, At: at, Method: r.Method, Path: r.URL.Path,
			RawQuery: r.URL.RawQuery, Status: status, Latency: time.Since(start), IP: s.clientIP(r),
			Request: in.body, Response: out.body,
		})
	})
}

// captureBody copies what the handler reads of a request body.
type captureBody struct {
	io.ReadCloser
	body reqlog.CapturedBody
}

func (c *captureBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.body.Keep(p[:n])
	return n, err
}

// captureWriter copies a response body and its status.
type captureWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
	body        reqlog.CapturedBody
}

func (c *captureWriter) WriteHeader(status int) {
	if !c.wroteHeader {
		c.status, c.wroteHeader = status, true
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *captureWriter) Write(b []byte) (int, error) {
	c.wroteHeader = true
	c.body.Keep(b)
	return c.ResponseWriter.Write(b)
}

func (c *captureWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
