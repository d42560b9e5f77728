package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/hitchdev/hitch/bench/internal/loadgen"
)

// requestTimeout bounds one request of the load generator.
const requestTimeout = 5 * time.Second

// cardLoad is the requests under load: conns workers, each on its own
// keep-alive connection to base, posting the bodies in turn, each worker
// from its own place in the list.
type cardLoad struct {
	base       string
	user, pass string
	bodies     [][]byte
	conns      int
}

// run loads Hitch for warmup then duration.
func (l cardLoad) run(ctx context.Context, warmup, duration time.Duration) (*loadgen.Stats, error) {
	u, err := url.Parse(l.base + "/card")
	if err != nil {
		return nil, err
	}
	reqs := make([][]byte, len(l.bodies))
	for i, body := range l.bodies {
		reqs[i] = loadgen.Request(http.MethodPost, u, l.user, l.pass, body)
	}
	var dials atomic.Int64
	conns := make([]*loadgen.Conn, l.conns)
	ops := make([]loadgen.Op, l.conns)
	for w := range ops {
		c := loadgen.NewConn(u.Host, requestTimeout, &dials)
		conns[w] = c
		next := w * len(reqs) / l.conns
		ops[w] = func(start time.Time) (string, error) {
			req := reqs[next%len(reqs)]
			next++
			return postCard(c, req, start)
		}
	}
	stats, err := loadgen.ClosedLoop(ctx, ops, warmup, duration)
	for _, c := range conns {
		c.Close()
	}
	if err != nil {
		return nil, err
	}
	stats.Dials = dials.Load()
	return stats, nil
}

// postCard sends one POST /card and checks the answer.
func postCard(c *loadgen.Conn, req []byte, start time.Time) (kind string, err error) {
	status, kind, err := c.Do(req, start)
	switch {
	case err != nil:
		return kind, err
	case status != http.StatusOK:
		return fmt.Sprintf("status %d", status), fmt.Errorf("status %d: %.200s", status, c.Body())
	}
	if err := checkCardAnswer(c.Body()); err != nil {
		return "body", err
	}
	return "", nil
}

// cardAnswerPrefix starts every accepted card's answer; the task id that
// follows differs from one answer to the next.
var cardAnswerPrefix = []byte(`{"message":"Success","task_id":`)

// checkCardAnswer wants {"message":"Success","task_id":N} with N a positive
// integer, as Hitch writes it (then a newline).
func checkCardAnswer(body []byte) error {
	rest, ok := bytes.CutPrefix(body, cardAnswerPrefix)
	rest, closed := bytes.CutSuffix(bytes.TrimRight(rest, "\n"), []byte("}"))
	if !ok || !closed || len(rest) == 0 || len(rest) > 19 || rest[0] == '0' || bytes.ContainsFunc(rest, notDigit) {
		return fmt.Errorf(`200 without {"message":"Success","task_id":…}: %.200q`, body)
	}
	return nil
}

func notDigit(r rune) bool { return r < '0' || r > '9' }
