package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A receiver in another process, asked here of one in this process: what
// arrived, what is missing, and the receipts.
func TestReceiverProcess(t *testing.T) {
	t.Parallel()
	rcv, err := startReceiver()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rcv.close)
	remote := &receiverProcess{base: strings.TrimSuffix(rcv.url, hooksPath), client: &http.Client{Timeout: 5 * time.Second}}
	deliver := func(id string) {
		req, _ := http.NewRequest(http.MethodPost, remote.hooksURL(), strings.NewReader(`{"timestamp":1700000000000}`))
		req.Header.Set("webhook-id", id)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	for _, id := range []string{"ev_1", "ev_1", "ev_2"} {
		deliver(id)
	}

	events := []created{{id: "ev_1"}, {id: "ev_2"}, {id: "ev_3"}}
	if n := remote.received(); n != 2 {
		t.Fatalf("received = %d, want 2", n)
	}
	if n := remote.missing(events); n != 1 {
		t.Fatalf("missing = %d, want 1 (ev_3)", n)
	}
	first, dups := remote.receipts()
	if len(first) != 2 || dups != 1 || first["ev_2"].eventMs != 1700000000000 || time.Since(first["ev_1"].at) > time.Minute {
		t.Fatalf("receipts = %+v, dups %d", first, dups)
	}
	if err := waitDelivered(context.Background(), remote, events[:2], 0, runningServer{}, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := waitDelivered(context.Background(), remote, events, 0, runningServer{}, 50*time.Millisecond); err == nil {
		t.Fatal("waitDelivered returned with ev_3 missing")
	}
}
