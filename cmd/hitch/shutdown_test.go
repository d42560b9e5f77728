package main

import (
	"errors"
	mrand "math/rand/v2"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestShutdownUnderLoad sends SIGTERM to `hitch serve` while requests make
// events and deliveries are backlogged and in flight. Every request that
// reached the node gets its answer, the node exits 0 within
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
			refused   int // requests made after the node stopped listening
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
					case errors.Is(err, syscall.ECONNREFUSED):
						refused++
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
		if n := rcv.badSignatures.Load(); n > 0 {
			t.Errorf("%d deliveries failed signature verification", n)
		}
		t.Logf("SIGTERM after %d events with %d undelivered; %d events answered, %d requests refused after; "+
			"stopped in %v with %d delivered; all delivered after the restart (%d duplicates)",
			signalAt, backlog, len(ids), refused, took.Round(time.Millisecond), deliveredBeforeExit, rcv.duplicates())
	})
}
