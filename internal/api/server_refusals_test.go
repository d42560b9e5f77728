package api_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hitchdev/hitch/client"
)

// rawRequest writes req on a new connection to the harness as is, and reads
// the one answer.
func (h *harness) rawRequest(t *testing.T, req string) *response {
	t.Helper()
	u, err := url.Parse(h.url)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: body}
}

// What net/http refuses before any handler runs comes in the API's error
// body too, with a request id, as every other error does.
func TestServerRefusalsHaveTheErrorBody(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, h *harness) {
		cases := []struct {
			name   string
			req    string
			status int
			code   string
		}{
			{"control character in Content-Type", "POST /session/create HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\x01\r\n" +
				"Content-Length: 2\r\n\r\n{}", 400, "MALFORMED_REQUEST"},
			{"header line without a colon", "GET /healthz HTTP/1.1\r\nHost: a\r\nNo Colon\r\n\r\n", 400, "MALFORMED_REQUEST"},
			{"two Content-Lengths", "POST /session/create HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
				400, "MALFORMED_REQUEST"},
			{"no Host", "GET /healthz HTTP/1.1\r\n\r\n", 400, "MALFORMED_REQUEST"},
			{"malformed request line", "G(T /healthz HTTP/1.1\r\nHost: a\r\n\r\n", 400, "MALFORMED_REQUEST"},
			{"headers over the limit", "GET /healthz HTTP/1.1\r\nHost: a\r\nX-Big: " + strings.Repeat("a", 80<<10) + "\r\n\r\n",
				431, "HEADERS_TOO_LARGE"},
			{"unsupported Transfer-Encoding", "POST /session/create HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n",
				501, "UNSUPPORTED_PROTOCOL"},
			{"unsupported HTTP version", "GET /healthz HTTP/2.5\r\nHost: a\r\n\r\n", 505, "UNSUPPORTED_PROTOCOL"},
			{"unsupported Expect", "POST /session/create HTTP/1.1\r\nHost: a\r\nExpect: lunch\r\nContent-Length: 2\r\n\r\n{}",
				417, "UNSUPPORTED_PROTOCOL"},
		}
		for _, c := range cases {
			r := h.rawRequest(t, c.req)
			if r.status != c.status || r.header.Get("Content-Type") != "application/json" {
				t.Errorf("%s: %d %s %q", c.name, r.status, r.header.Get("Content-Type"), r.body)
				continue
			}
			if e := r.errorBody(t); e.Type != "INVALID_REQUEST" || e.Code != c.code {
				t.Errorf("%s: %s/%s %q, want INVALID_REQUEST/%s", c.name, e.Type, e.Code, e.Message, c.code)
			}
		}

		// Through the validating client: the answer is the documented one.
		req, err := http.NewRequest("GET", h.url+"/healthz", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Big", strings.Repeat("a", 80<<10))
		resp, err := h.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e client.Error
		if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge ||
			e.Code != "HEADERS_TOO_LARGE" {
			t.Errorf("headers over the limit: %d %+v %v", resp.StatusCode, e, err)
		}

		// A request under the limit on the same server is served, and a
		// kept-alive connection still carries answers untouched.
		if r := h.do("GET", "/healthz", nil, http.Header{"X-Big": {strings.Repeat("a", 32<<10)}}); r.status != http.StatusOK {
			t.Errorf("headers under the limit: %d %s", r.status, r.body)
		}
	})
}
