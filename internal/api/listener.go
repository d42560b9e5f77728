package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"
)

// MaxHeaderBytes bounds a request's line and headers (net/http reads up to
// 4 KiB more); a larger request is answered 431 HEADERS_TOO_LARGE.
const MaxHeaderBytes = 64 << 10

// HTTPServer is the http.Server that serves s: its timeouts and header
// limit. Serve it on s.Listener(ln).
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
}

// Listener returns ln with the answers net/http writes itself in the API's
// error body. net/http refuses a request it cannot read (a malformed
// request line or header, headers over MaxHeaderBytes, an unsupported
// Transfer-Encoding or HTTP version) before any handler runs, in plain text,
// and an Expect it does not support with an empty 417; it has no hook to
// change either. The connection recognises those answers by their exact
// form, which no handler of Hitch writes (a raw CRLF after the status line
// with no Date header, or a 417), and writes the wire error body instead.
func (s *Server) Listener(ln net.Listener) net.Listener {
	return &errorBodyListener{Listener: ln, s: s}
}

type errorBodyListener struct {
	net.Listener
	s *Server
}

func (l *errorBodyListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &errorBodyConn{Conn: c, s: l.s}, nil
}

type errorBodyConn struct {
	net.Conn
	s *Server
}

// Write passes everything through but net/http's own refusals.
func (c *errorBodyConn) Write(p []byte) (int, error) {
	status, ok := serverRefusal(p)
	if !ok {
		return c.Conn.Write(p)
	}
	if _, err := c.Conn.Write(c.s.refusal(status)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// CloseWrite lets net/http half-close the connection after a 431, as it
// does on a bare TCP connection, so that the client reads the answer
// before the connection ends.
func (c *errorBodyConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}

// plainRefusalHeaders follow the status line of every refusal net/http
// writes before a handler runs.
var plainRefusalHeaders = []byte("\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n")

// serverRefusal tells whether p is an answer net/http wrote itself, and its
// status.
func serverRefusal(p []byte) (int, bool) {
	if len(p) < 13 || !bytes.HasPrefix(p, []byte("HTTP/1.1 ")) || p[12] != ' ' && p[12] != '\r' {
		return 0, false
	}
	status, err := strconv.Atoi(string(p[9:12]))
	if err != nil || status < 400 {
		return 0, false
	}
	line := bytes.IndexByte(p, '\r')
	switch {
	case line > 0 && bytes.HasPrefix(p[line:], plainRefusalHeaders):
		return status, true
	case status == http.StatusExpectationFailed && bytes.HasSuffix(p, []byte("\r\nContent-Length: 0\r\n\r\n")):
		return status, true
	}
	return 0, false
}

// refusal is the whole answer, headers and wire error body, to a request
// net/http refused with status.
func (s *Server) refusal(status int) []byte {
	e := &Error{Status: status, Type: TypeInvalidRequest, Code: CodeMalformedRequest,
		Message: "The request is not valid HTTP/1.1: its request line or a header is malformed."}
	switch status {
	case http.StatusRequestHeaderFieldsTooLarge:
		e.Code, e.Message = CodeHeadersTooLarge, fmt.Sprintf("The request's line and headers are larger than %d bytes.", MaxHeaderBytes)
	case http.StatusNotImplemented:
		e.Code, e.Message = CodeUnsupportedProtocol, "The request's Transfer-Encoding is not supported: send chunked or a Content-Length."
	case http.StatusHTTPVersionNotSupported:
		e.Code, e.Message = CodeUnsupportedProtocol, "The request's HTTP version is not supported: use HTTP/1.1."
	case http.StatusExpectationFailed:
		e.Code, e.Message = CodeUnsupportedProtocol, "The request's Expect header is not supported: only 100-continue is."
	}
	id := newRequestID()
	body, _ := json.Marshal(errorBody{ErrorType: e.Type, ErrorCode: e.Code, ErrorMessage: e.Message, RequestID: id})
	s.Logger.Info("request", "status", status, "bytes", len(body), "request_id", id, "refused_by", "http server")
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", status, http.StatusText(status))
	h := http.Header{
		"Content-Type":   jsonContentType,
		"Content-Length": {strconv.Itoa(len(body))},
		"Connection":     {"close"},
		"Cache-Control":  {"no-store"},
		"Date":           {time.Now().UTC().Format(http.TimeFormat)},
		"Knot-Version":   apiVersionHeader,
		"X-Request-Id":   {id},
	}
	_ = h.Write(&b)
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}
