package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"runtime/debug"
	"time"

	"github.com/hitchdev/hitch/internal/store"
)

// APIVersion is the only Knot-Version the API speaks; it is echoed on every
// response.
const APIVersion = "2.0"

// apiVersionHeader is the Knot-Version header's value, shared by every
// response (nothing modifies it) so that setting it allocates nothing.
var apiVersionHeader = []string{APIVersion}

// requestState is what the middleware learns about a request while it is
// served: its id, and the developer once authenticated. It is put in the
// context once, by withRequestID, and filled in in place, so that each
// request makes one context and one shallow copy of the request, not one per
// layer. It is written and read on the request's goroutine only (auth fills
// in the client before the handler runs, the access log reads it after);
// a layer that ran the handler on another goroutine would have to copy it.
type requestState struct {
	id     string
	client *store.Client
	// clientGone: the client went away before its answer (writeError).
	clientGone bool
}

type requestStateKey struct{}

func stateFrom(ctx context.Context) *requestState {
	st, _ := ctx.Value(requestStateKey{}).(*requestState)
	return st
}

// incomingRequestID is what an X-Request-Id from the caller must look like
// to be honoured; anything else is replaced.
var incomingRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{8,128}$`)

func requestIDFrom(ctx context.Context) string {
	if st := stateFrom(ctx); st != nil {
		return st.id
	}
	return ""
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "req_" + hex.EncodeToString(b[:])
}

// withRequestID gives every request an id (the caller's, when sane), echoed
// in X-Request-Id and in error bodies.
func (s *Server) withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !incomingRequestID.MatchString(id) {
			id = newRequestID()
		}
		w.Header()["X-Request-Id"] = []string{id}
		st := &requestState{id: id}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestStateKey{}, st)))
	})
}

// withVersion answers in the only API version there is, and refuses a
// request for another one.
func (s *Server) withVersion(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Knot-Version"] = apiVersionHeader
		if v := r.Header.Get("Knot-Version"); v != "" && v != APIVersion {
			writeError(w, r, s.Logger, &Error{Status: http.StatusBadRequest, Type: TypeInvalidRequest,
				Code: CodeInvalidField, Message: fmt.Sprintf("The Knot-Version header must be %s.", APIVersion)})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// withAccessLog logs one line per request: method, path (never the query,
// which holds user ids), status, size, duration, request and client id.
// Headers are never logged, so neither is Authorization.
func (s *Server) withAccessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		level, status := slog.LevelInfo, rec.status
		if rec.status >= 500 {
			level = slog.LevelError
		}
		st := stateFrom(r.Context())
		// A fault answered to a client that had gone (a page, which has no
		// writeError) is the client's doing too.
		gone := rec.status >= 500 && errors.Is(r.Context().Err(), context.Canceled)
		if gone || st != nil && st.clientGone {
			status, level = statusClientClosedRequest, slog.LevelInfo
		}
		attrs := [7]slog.Attr{
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", status),
			slog.Int("bytes", rec.bytes),
			slog.Duration("duration", time.Since(start)),
		}
		n := 5
		if st != nil {
			attrs[n] = slog.String("request_id", st.id)
			n++
			if st.client != nil {
				attrs[n] = slog.String("client_id", st.client.ID)
				n++
			}
		}
		s.Logger.LogAttrs(r.Context(), level, "request", attrs[:n]...)
	})
}

// statusClientClosedRequest is the access log's status of a request whose
// client went away before its answer (nginx's 499); it is never sent.
const statusClientClosedRequest = 499

// panicError is a panic recovered while serving a request.
type panicError struct {
	value any
	stack []byte
}

func (e *panicError) Error() string { return fmt.Sprintf("panic: %v\n%s", e.value, e.stack) }

// withRecover turns a panic into a 500 with the wire error body.
func (s *Server) withRecover(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				writeError(w, r, s.Logger, &panicError{value: v, stack: debug.Stack()})
			}
		}()
		next.ServeHTTP(w, r)
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status      int
	bytes       int
	wroteHeader bool
}

func (r *statusRecorder) WriteHeader(status int) {
	if !r.wroteHeader {
		r.status, r.wroteHeader = status, true
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	r.wroteHeader = true
	n, err := r.ResponseWriter.Write(b)
	r.bytes += n
	return n, err
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
