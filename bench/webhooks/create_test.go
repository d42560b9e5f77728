package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Creating events against a fake API that delivers each event to the
// receiver before it answers: every event is created once, received once,
// and the paced creates are spaced out.
func TestCreateAndReceive(t *testing.T) {
	t.Parallel()
	rcv, err := startReceiver()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rcv.close)
	var n atomic.Int64
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != testEventPath {
			http.NotFound(w, r)
			return
		}
		id := fmt.Sprintf("ev_%d", n.Add(1))
		body := fmt.Sprintf(`{"id":%q,"timestamp":%d}`, id, time.Now().UnixMilli())
		req, _ := http.NewRequest(http.MethodPost, rcv.url, strings.NewReader(body))
		req.Header.Set("webhook-id", id)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		resp.Body.Close()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"event_id":%q}`, id)
	}))
	t.Cleanup(api.Close)

	ctx := context.Background()
	cr, err := createEvents(ctx, api.URL, "user", "secret", 50, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(cr.events) != 50 || cr.failures.Count() != 0 {
		t.Fatalf("%d created, failures %+v", len(cr.events), cr.failures)
	}
	if err := waitDelivered(ctx, rcv, cr.events, 0, runningServer{}, time.Second); err != nil {
		t.Fatal(err)
	}
	first, dups := rcv.receipts()
	s := summarizeDeliveries(cr.events, first, dups)
	if s.Delivered != 50 || s.Duplicates != 0 || s.Early != 50 {
		t.Errorf("got %+v; want 50 delivered, each before its 200", s)
	}

	start := time.Now()
	paced, err := createPaced(ctx, api.URL, "user", "secret", 100, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(paced.events) != 10 || time.Since(start) < 90*time.Millisecond {
		t.Errorf("%d paced events in %v; want 10 over 100 ms", len(paced.events), time.Since(start))
	}
}

// runningServer is a server process that never exits.
type runningServer struct{}

func (runningServer) Exited() <-chan struct{} { return nil }

func (runningServer) ExitErr(string) error { return errors.New("runningServer never exits") }
