package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The controls of a receiver in another process, driven here against one
// in this process: hold, release, counts and receipts.
func TestReceiverControls(t *testing.T) {
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
			t.Error(err)
			return
		}
		resp.Body.Close()
	}

	remote.hold()
	held := make(chan struct{})
	go func() { deliver("ev_1"); close(held) }()
	select {
	case <-held:
		t.Fatal("a delivery went through while held")
	case <-time.After(50 * time.Millisecond):
	}
	if n := remote.received(); n != 0 {
		t.Fatalf("received %d while held", n)
	}
	remote.release()
	<-held
	deliver("ev_1")
	deliver("ev_2")

	events := []created{{id: "ev_1"}, {id: "ev_2"}, {id: "ev_3"}}
	if n := remote.received(); n != 2 {
		t.Fatalf("received = %d, want 2", n)
	}
	if n := remote.missing(events); n != 1 {
		t.Fatalf("missing = %d, want 1 (ev_3)", n)
	}
	first, dups, noID := remote.receipts()
	if len(first) != 2 || dups != 1 || noID != 0 || first["ev_2"].eventMs != 1700000000000 ||
		time.Since(first["ev_1"].at) > time.Minute {
		t.Fatalf("receipts = %+v, dups %d, no id %d", first, dups, noID)
	}
	if remote.connections() < 1 {
		t.Fatal("no connection counted")
	}
	if err := waitDelivered(context.Background(), remote, events[:2], 0, runningServer{}, time.Second); err != nil {
		t.Fatal(err)
	}
}
