package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestShutdownUnderLoad sends SIGTERM to `hitch serve` while requests make
// events and deliveries are backlogged and in flight. Every request that
// reached the node gets its answer, one it closed unread records nothing,
// the node exits 0 within
// --shutdown-timeout, and every event it answered for is delivered, before
// the exit or by the node started again on the same database.
func TestShutdownUnderLoad(t *testing.T) {
	const (
		signalAt = 300 // committed events before SIGTERM
		timeout  = 10 * time.Second
	)
	forEachStore(t, func(t *testing.T, name string, env []string) {
		t.Parallel()
		env = append(deliveryEnv(t, "shutdown_client"), env...)
		env = append(env, "HITCH_SHUTDOWN_TIMEOUT="+timeout.String())
		rcv := newWebhookReceiver(func() time.Duration { return time.Duration(50+mrand.IntN(100)) * time.Millisecond })
		srv := httptest.NewServer(rcv)
		t.Cleanup(srv.Close)

		node := startHitch(t, env)
		api := newHitchAPI(t, "shutdown_client")
		rcv.setSecret(api.createEndpoint(t, node.base, srv.URL))

		// Eight clients add events until the signal; each finishes the
		// request it has in flight.
		var (
			mu        sync.Mutex
			committed = map[string]bool{}
			notTaken  = map[string]bool{} // messages of requests the node closed unread
			failures  []error
			signal    sync.Once
			signaled  = make(chan struct{})
			sentAt    time.Time
			backlog   int
		)
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-signaled:
						return
					default:
					}
					var resp struct {
						EventID string `json:"event_id"`
					}
					msg := "event " + strconv.Itoa(w) + "-" + strconv.Itoa(i)
					_, err := api.call(node.base, "POST", "/development/webhooks/test", map[string]string{"message": msg}, &resp)
					mu.Lock()
					switch {
					case err == nil && resp.EventID != "":
						committed[resp.EventID] = true
					case notReached(err):
						notTaken[msg] = true
					default:
						failures = append(failures, err)
					}
					n := len(committed)
					mu.Unlock()
					if n >= signalAt {
						signal.Do(func() {
							backlog = n - rcv.distinct()
							sentAt = time.Now()
							if err := node.cmd.Process.Signal(syscall.SIGTERM); err != nil {
								t.Error(err)
							}
							close(signaled)
						})
					}
				}
			})
		}
		wg.Wait()
		for _, err := range failures {
			t.Errorf("a request in flight at SIGTERM got no answer: %v", err)
		}
		if backlog <= 0 {
			t.Errorf("no delivery backlog at SIGTERM: the test did not stop the node mid-delivery")
		}

		select {
		case <-node.exited:
		case <-time.After(timeout + 5*time.Second):
			t.Fatalf("hitch still running %v after SIGTERM", timeout+5*time.Second)
		}
		took := time.Since(sentAt)
		if code := node.cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("hitch exited %d after SIGTERM, want 0", code)
		}
		if took > timeout+time.Second {
			t.Errorf("hitch took %v to stop, past --shutdown-timeout %v", took, timeout)
		}
		logs := node.logs.String()
		for _, msg := range []string{"did not finish in time", "did not stop in time"} {
			if strings.Contains(logs, msg) {
				t.Errorf("hitch logged %q on shutdown", msg)
			}
		}
		deliveredBeforeExit := rcv.distinct()

		ids := make([]string, 0, len(committed))
		for id := range committed {
			ids = append(ids, id)
		}
		node = startHitch(t, env)
		if missing := rcv.waitFor(ids, 90*time.Second); len(missing) > 0 {
			t.Fatalf("%d of %d answered events not delivered after the restart, e.g. %s", len(missing), len(ids), missing[0])
		}
		listed := api.listEvents(t, node.base)
		for _, id := range ids {
			if _, ok := listed[id]; !ok {
				t.Errorf("answered event %s is not listed", id)
			}
		}
		for id, ev := range listed {
			if notTaken[ev.Payload.Data.Message] {
				t.Errorf("event %s was recorded for a request that got no answer", id)
			}
		}
		if n := rcv.badSignatures.Load(); n > 0 {
			t.Errorf("%d deliveries failed signature verification", n)
		}
		t.Logf("SIGTERM after %d events with %d undelivered; %d events answered, %d requests closed unread; "+
			"stopped in %v with %d delivered; all delivered after the restart (%d duplicates)",
			signalAt, backlog, len(ids), len(notTaken), took.Round(time.Millisecond), deliveredBeforeExit, rcv.duplicates())
	})
}

// notReached reports whether a request failed before the server read it:
// refused once it stopped listening, or on a kept-alive connection that it
// closed as idle as the request went out (HTTP/1.1 allows no better).
func notReached(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF)
}

// TestShutdownAnswersConnectorLongPoll sends SIGTERM while a connector
// waits in a long poll (up to 25 s) for a user's answer: the poll answers at
// once with no answer yet, and the node exits 0 long before the poll's
// wait or --shutdown-timeout would have ended.
func TestShutdownAnswersConnectorLongPoll(t *testing.T) {
	const timeout = 20 * time.Second
	forEachStore(t, func(t *testing.T, name string, env []string) {
		t.Parallel()
		env = append(deliveryEnv(t, "long_poll_client"), env...)
		env = append(env, "HITCH_SHUTDOWN_TIMEOUT="+timeout.String())
		code, out, stderr := cli(t, env, "connectors", "create", "--name", "Long poller", "--json")
		var creds struct{ ID, Secret string }
		if code != 0 || json.Unmarshal([]byte(out), &creds) != nil {
			t.Fatalf("connectors create: %d %q %s", code, out, stderr)
		}
		node := startHitch(t, env)
		api := newHitchAPI(t, "long_poll_client")
		conn := &hitchAPI{http: api.http, clientID: creds.ID, secret: creds.Secret}
		if _, err := conn.call(node.base, "PUT", "/internal/connector", map[string]any{"merchant_ids": []int{1}}, &map[string]any{}); err != nil {
			t.Fatal(err)
		}
		var session struct {
			Session string `json:"session"`
		}
		if _, err := api.call(node.base, "POST", "/session/create", map[string]string{"type": "transaction_link", "external_user_id": "typing"}, &session); err != nil {
			t.Fatal(err)
		}
		login := make(chan error, 1)
		go func() {
			var step map[string]any
			_, err := api.call(node.base, "POST", "/link/api/login", map[string]any{"session": session.Session, "client_id": api.clientID,
				"merchant_id": 1, "username": "ada", "password": "pw"}, &step)
			if err == nil && step["status"] != "otp_required" {
				err = fmt.Errorf("login step %v, want otp_required", step)
			}
			login <- err
		}()
		var work struct {
			Work []struct {
				ID    string `json:"id"`
				Lease string `json:"lease"`
			} `json:"work"`
		}
		eventually(t, "the connector to claim the login", 10*time.Second, func() bool {
			if _, err := conn.call(node.base, "POST", "/internal/work/claim", map[string]any{}, &work); err != nil {
				t.Fatal(err)
			}
			return len(work.Work) == 1
		})
		id, lease := work.Work[0].ID, work.Work[0].Lease
		if _, err := conn.call(node.base, "POST", "/internal/work/"+id+"/step", map[string]any{"lease": lease, "status": "otp_required"}, &map[string]any{}); err != nil {
			t.Fatal(err)
		}
		if err := <-login; err != nil {
			t.Fatal(err)
		}

		// SIGTERM once the long poll's request is written and the server
		// has had time to accept it and read it (the poll lasts 25 s): a
		// connection still in the listener's queue, or kept alive with its
		// request unread, is closed unanswered by any HTTP server that
		// stops, and the client sends again elsewhere.
		written := make(chan struct{})
		trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { close(written) }}
		answer := make(chan error, 1)
		go func() {
			body, _ := json.Marshal(map[string]any{"lease": lease, "wait_seconds": 25})
			req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "POST",
				node.base+"/internal/work/"+id+"/answer", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.SetBasicAuth(creds.ID, creds.Secret)
			resp, err := validatedClient(t, &http.Transport{}).Do(req)
			if err != nil {
				answer <- err
				return
			}
			defer resp.Body.Close()
			var out map[string]any
			err = json.NewDecoder(resp.Body).Decode(&out)
			if err != nil || resp.StatusCode != 200 || out["answer"] != nil {
				err = fmt.Errorf("answer: %d %v (%v), want 200 with no answer", resp.StatusCode, out, err)
			}
			answer <- err
		}()
		<-written
		time.Sleep(200 * time.Millisecond)
		sentAt := time.Now()
		if err := node.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := <-answer; err != nil {
			t.Errorf("the long poll in flight at SIGTERM: %v", err)
		}
		select {
		case <-node.exited:
		case <-time.After(timeout + 5*time.Second):
			t.Fatalf("hitch still running %v after SIGTERM", timeout+5*time.Second)
		}
		if took := time.Since(sentAt); took > 10*time.Second {
			t.Errorf("hitch took %v to stop with a long poll in flight", took)
		}
		if code := node.cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("hitch exited %d after SIGTERM, want 0", code)
		}
		if strings.Contains(node.logs.String(), "did not finish in time") {
			t.Errorf("hitch cut off requests on shutdown")
		}
	})
}
