package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/hitchdev/hitch/client"
)

// requestTimeout bounds one POST /detect.
const requestTimeout = 10 * time.Second

// userID and userEmail name bench user i: an ordinary address, for which
// the simulator finds 5 to 25 accounts (test addresses have a "+tag").
func userID(i int) string    { return fmt.Sprintf("bench-%d", i) }
func userEmail(i int) string { return fmt.Sprintf("bench-%d@example.com", i) }

// sent is one user's POST /detect.
type sent struct {
	user string
	// at is just before the request was sent, answered when its answer
	// had been read.
	at, answered time.Time
	// errKind and err are set when the request failed: "status N" or
	// "transport".
	errKind string
	err     error
}

// newDetectClient is a client of the Hitch at base that keeps a
// connection alive per sender.
func newDetectClient(base, clientID, secret string, senders int) *client.Client {
	hc := &http.Client{Timeout: requestTimeout, Transport: &http.Transport{MaxIdleConnsPerHost: senders}}
	return client.New(base, clientID, secret, client.WithHTTPClient(hc))
}

// detect sends one POST /detect for user i.
func detect(ctx context.Context, c *client.Client, i int) sent {
	s := sent{user: userID(i)}
	req := &client.DetectRequest{ExternalUserID: s.user, Email: userEmail(i)}
	s.at = time.Now()
	_, err := c.Detect(ctx, req)
	s.answered = time.Now()
	if err != nil {
		s.err, s.errKind = err, "transport"
		if apiErr, ok := errors.AsType[*client.Error](err); ok {
			s.errKind = fmt.Sprintf("status %d", apiErr.StatusCode)
		}
	}
	return s
}

// sendDetects sends one POST /detect for each of users 0..n-1 from senders
// goroutines: in a closed loop when rate is 0 (each sends its next request
// as soon as its previous one is answered), otherwise starting one request
// every 1/rate seconds, as long as a sender is free. It returns the
// requests by user index; those ctx stopped have a zero at.
func sendDetects(ctx context.Context, c *client.Client, n, senders int, rate float64) []sent {
	out := make([]sent, n)
	next := make(chan int)
	go func() {
		defer close(next)
		if rate > 0 {
			pace(ctx, next, n, rate)
			return
		}
		for i := range n {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range senders {
		wg.Go(func() {
			for i := range next {
				if ctx.Err() != nil {
					return
				}
				out[i] = detect(ctx, c, i)
			}
		})
	}
	wg.Wait()
	return out
}

// pace hands out 0..n-1 on next, i at start + i/rate: a sender still busy
// then delays it, and those after it catch up.
func pace(ctx context.Context, next chan<- int, n int, rate float64) {
	start := time.Now()
	for i := range n {
		due := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		if wait := time.Until(due); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return
			}
		}
		select {
		case next <- i:
		case <-ctx.Done():
			return
		}
	}
}
