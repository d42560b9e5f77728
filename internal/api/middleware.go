package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"runtime/debug"
	"time"
)

// APIVersion is the only Knot-Version the API speaks; it is echoed on every
// response.
const APIVersion = "2.0"

type requestIDKey struct{}

// incomingRequestID is what an X-Request-Id from the caller must look like
// to be honoured; anything else is replaced.
var incomingRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{8,128}$`)

func requestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

func newRequestID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "req_" + hex.EncodeToString(b)
}

// withRequestID gives every request an id (the caller's, when sane), echoed
// in X-Request-Id and in error bodies, and the API version header.
func (s *Server) withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !incomingRequestID.MatchString(id) {
			id = newRequestID()
		}
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id)))
	})
}

// withVersion answers in the only API version there is, and refuses a
// request for another one.
func (s *Server) withVersion(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Knot-Version", APIVersion)
		if v := r.Header.Get("Knot-Version"); v != "" && v != APIVersion {
			writeError(w, r, s.Logger, &Error{Status: http.StatusBadRequest, Type: TypeInvalidRequest,
				Code: CodeInvalidField, Message: fmt.Sprintf("The Knot-Version header must be %s.", APIVersion)})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// logFields are filled in while a request is served and read by the access
// log when it ends.
type logFields struct {
	clientID string
}

type logFieldsKey struct{}

func setLogClient(ctx context.Context, clientID string) {
	if f, ok := ctx.Value(logFieldsKey{}).(*logFields); ok {
		f.clientID = clientID
	}
}

// withAccessLog logs one line per request: method, path (never the query,
// which holds user ids), status, size, duration, request and client id.
// Headers are never logged, so neither is Authorization.
func (s *Server) withAccessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		fields := &logFields{}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), logFieldsKey{}, fields)))
		level := slog.LevelInfo
		if rec.status >= 500 {
			level = slog.LevelError
		}
		attrs := []slog.Attr{
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", rec.status),
			slog.Int("bytes", rec.bytes),
			slog.Duration("duration", time.Since(start)),
			slog.String("request_id", requestIDFrom(r.Context())),
		}
		if fields.clientID != "" {
			attrs = append(attrs, slog.String("client_id", fields.clientID))
		}
		s.Logger.LogAttrs(r.Context(), level, "request", attrs...)
	})
}

// withRecover turns a panic into a 500 with the wire error body.
func (s *Server) withRecover(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				writeError(w, r, s.Logger, fmt.Errorf("panic: %v\n%s", v, debug.Stack()))
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
