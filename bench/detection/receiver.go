package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// detectedEvent is the event type every user must receive once.
const detectedEvent = "NEW_DETECTED_ACCOUNTS_AVAILABLE"

// delivery is one arrival of a NEW_DETECTED_ACCOUNTS_AVAILABLE event.
type delivery struct {
	// eventID is the envelope's id (also its webhook-id), the same on every
	// attempt.
	eventID string
	at      time.Time
	// eventMs is the envelope's timestamp (Unix ms), taken inside the
	// transaction that recorded the detections; 0 when absent.
	eventMs int64
	// accounts counts data.detected_accounts and data.unsupported_accounts.
	accounts int
}

// receiver is the webhook endpoint: an in-process net/http server that
// reads each delivery, answers 200 with no body, and keeps every
// NEW_DETECTED_ACCOUNTS_AVAILABLE delivery by the envelope's
// external_user_id. It does not verify signatures: it stands for a receiver
// that costs nothing.
type receiver struct {
	url string
	srv *http.Server

	mu     sync.Mutex
	byUser map[string][]delivery
	// other counts deliveries of other event types, by type.
	other map[string]int
	// malformed counts deliveries that were not an envelope with an event
	// type, or were of detectedEvent without an external_user_id.
	malformed int
}

func startReceiver() (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := newReceiver("http://" + ln.Addr().String() + "/hooks")
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go r.srv.Serve(ln)
	return r, nil
}

func newReceiver(url string) *receiver {
	return &receiver{url: url, byUser: map[string][]delivery{}, other: map[string]int{}}
}

func (r *receiver) close() { r.srv.Close() }

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	at := time.Now()
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil {
		return // Hitch gave up on this attempt; it will retry
	}
	r.record(body, at)
	w.WriteHeader(http.StatusOK)
}

// record files one delivery's body, which arrived at at.
func (r *receiver) record(body []byte, at time.Time) {
	var env struct {
		ID             string `json:"id"`
		Event          string `json:"event"`
		ExternalUserID string `json:"external_user_id"`
		Timestamp      int64  `json:"timestamp"`
		Data           struct {
			Detected    []json.RawMessage `json:"detected_accounts"`
			Unsupported []json.RawMessage `json:"unsupported_accounts"`
		} `json:"data"`
	}
	err := json.Unmarshal(body, &env)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case err != nil || env.Event == "" || env.Event == detectedEvent && env.ExternalUserID == "":
		r.malformed++
	case env.Event != detectedEvent:
		r.other[env.Event]++
	default:
		r.byUser[env.ExternalUserID] = append(r.byUser[env.ExternalUserID], delivery{eventID: env.ID, at: at,
			eventMs: env.Timestamp, accounts: len(env.Data.Detected) + len(env.Data.Unsupported)})
	}
}

// missing counts the users that have received nothing yet.
func (r *receiver) missing(users []string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, u := range users {
		if len(r.byUser[u]) == 0 {
			n++
		}
	}
	return n
}

// received is a copy of what has arrived: the deliveries by user, those
// that arrived after until left out unless until is zero, the other event
// types' counts, and the malformed deliveries.
func (r *receiver) received(until time.Time) (byUser map[string][]delivery, other map[string]int, malformed int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	byUser = make(map[string][]delivery, len(r.byUser))
	for u, ds := range r.byUser {
		for _, d := range ds {
			if until.IsZero() || !d.at.After(until) {
				byUser[u] = append(byUser[u], d)
			}
		}
	}
	other = make(map[string]int, len(r.other))
	for t, n := range r.other {
		other[t] = n
	}
	return byUser, other, r.malformed
}

// server is the process delivering, a *proc.Child.
type server interface {
	Exited() <-chan struct{}
	ExitErr(during string) error
}

// waitFor waits until every one of users has received an event, the
// server exits, ctx ends or timeout passes, and says which when it is not
// the first.
func (r *receiver) waitFor(ctx context.Context, users []string, srv server, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		n := r.missing(users)
		switch {
		case n == 0:
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("%d of %d users had no %s event %v after the last request", n, len(users), detectedEvent, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-srv.Exited():
			return srv.ExitErr("while detecting")
		case <-time.After(5 * time.Millisecond):
		}
	}
}
