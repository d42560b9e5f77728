// Package loadgen is the benchmarks' HTTP/1.1 client and closed-loop load
// generator. It writes prebuilt requests on the socket and reads
// Content-Length answers itself, as wrk does, rather than going through
// net/http's client: on a two-core machine the client's goroutines and
// allocations would take CPU from the server it measures.
package loadgen

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"sync/atomic"
	"time"
)

// maxBody bounds a response body a Conn reads.
const maxBody = 1 << 20

// Request is the bytes of one request of u with Basic auth and, when body is
// not nil, a JSON body, to be written as is every time.
func Request(method string, u *url.URL, user, pass string, body []byte) []byte {
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
	head := method + " " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host +
		"\r\nAuthorization: Basic " + auth + "\r\nUser-Agent: hitch-bench\r\n"
	if body != nil {
		head += "Content-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n"
	}
	return append([]byte(head+"\r\n"), body...)
}

// Conn sends requests one at a time on one keep-alive connection, dialing
// again when the server closed it or a request failed. It is not safe for
// concurrent use.
type Conn struct {
	addr    string
	timeout time.Duration
	dials   *atomic.Int64

	conn net.Conn
	br   *bufio.Reader
	// body is the last answer's body, valid until the next Do.
	body []byte
}

// NewConn returns a Conn to addr (host:port) that has timeout for each
// request, from dialing to the end of the answer, and counts its dials in
// dials, which Conns may share. It dials on the first Do.
func NewConn(addr string, timeout time.Duration, dials *atomic.Int64) *Conn {
	return &Conn{addr: addr, timeout: timeout, dials: dials}
}

// Do sends req, made by Request, once and reads the answer; start is when
// the request's timeout begins. On failure it also returns the kind of
// failure, for counting: "transport", "read" or "timeout".
func (c *Conn) Do(req []byte, start time.Time) (status int, kind string, err error) {
	if c.conn == nil {
		c.dials.Add(1)
		conn, err := net.DialTimeout("tcp", c.addr, c.timeout)
		if err != nil {
			return 0, "transport", err
		}
		c.conn = conn
		if c.br == nil {
			c.br = bufio.NewReaderSize(conn, 16<<10)
		} else {
			c.br.Reset(conn)
		}
	}
	c.conn.SetDeadline(start.Add(c.timeout))
	status, keep, kind, err := c.exchange(req)
	if err != nil || !keep {
		c.Close()
	}
	if err != nil && os.IsTimeout(err) {
		return 0, "timeout", err
	}
	return status, kind, err
}

// Body is the last answer's body, valid until the next Do.
func (c *Conn) Body() []byte { return c.body }

// Close closes the connection, if one is open; the next Do dials again.
func (c *Conn) Close() {
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}

// exchange writes the request and reads the response into c.body. It
// understands what Hitch and the bare handler send: a Content-Length body.
func (c *Conn) exchange(req []byte) (status int, keep bool, kind string, err error) {
	if _, err := c.conn.Write(req); err != nil {
		return 0, false, "transport", err
	}
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return 0, false, "read", err
	}
	// "HTTP/1.1 200 OK\r\n"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) {
		return 0, false, "read", fmt.Errorf("malformed status line %q", line)
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, false, "read", fmt.Errorf("malformed status line %q", line)
	}
	length, keep := -1, true
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return 0, false, "read", err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return 0, false, "read", fmt.Errorf("malformed header %q", line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil || length < 0 || length > maxBody {
				return 0, false, "read", fmt.Errorf("bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			return 0, false, "read", fmt.Errorf("unsupported Transfer-Encoding %q", value)
		case bytes.EqualFold(name, []byte("Connection")) && bytes.EqualFold(value, []byte("close")):
			keep = false
		}
	}
	if length < 0 {
		return 0, false, "read", errors.New("response without Content-Length")
	}
	if cap(c.body) < length {
		c.body = make([]byte, length)
	}
	c.body = c.body[:length]
	if _, err := io.ReadFull(c.br, c.body); err != nil {
		return 0, false, "read", err
	}
	return status, keep, "", nil
}
