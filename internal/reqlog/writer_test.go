package reqlog_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/hitchdev/hitch/internal/developer"
	"github.com/hitchdev/hitch/internal/reqlog"
	"github.com/hitchdev/hitch/internal/seal"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

func newClient(t *testing.T, st store.Store) string {
	t.Helper()
	box, err := seal.New(bytes.Repeat([]byte{7}, seal.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	creds, err := developer.NewService(st, box, time.Now).Create(context.Background(),
		developer.CreateParams{Name: "Writer test", Environment: "development"})
	if err != nil {
		t.Fatal(err)
	}
	return creds.ClientID
}

func captured(clientID string, i int) *reqlog.Captured {
	body := []byte(`{"external_user_id": "u1", "card": {"number": "4242424242424242"}}`)
	return &reqlog.Captured{ClientID: clientID, RequestID: fmt.Sprintf("req_writer_%03d", i), At: time.Now().UTC(),
		Method: "POST", Path: "/card", Status: 400, IP: "192.0.2.1",
		Request:  reqlog.CapturedBody{ContentType: "application/json", Data: append(reqlog.Buffer(), body...), Size: len(body)},
		Response: reqlog.CapturedBody{ContentType: "application/json", Data: []byte(`{"error_code": "INVALID_FIELD"}`), Size: 31}}
}

// Flush waits for what was recorded; Close writes what is queued; a failed
// insert drops and counts its requests instead of holding them.
func TestWriter(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		clientID := newClient(t, st)
		w := reqlog.NewWriter(st, slog.New(slog.DiscardHandler))
		for i := range 250 {
			w.Record(captured(clientID, i))
		}
		if err := w.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		list, err := st.RequestLogList(ctx, &store.RequestLogListParams{ClientID: clientID, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if written, dropped := w.Stats(); len(list) != 250 || written != 250 || dropped != 0 {
			t.Fatalf("%d rows, %d written, %d dropped", len(list), written, dropped)
		}
		if l := list[0]; l.RequestBody == "" || l.ExternalUserID != "u1" || l.ErrorCode != "INVALID_FIELD" ||
			bytes.Contains([]byte(l.RequestBody), []byte("4242")) {
			t.Errorf("row %+v", l)
		}

		// An insert the store refuses (a row of no developer) is dropped.
		w.Record(captured("no-such-client", 999))
		if err := w.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if _, dropped := w.Stats(); dropped != 1 {
			t.Errorf("%d dropped, want 1", dropped)
		}

		for i := 300; i < 310; i++ {
			w.Record(captured(clientID, i))
		}
		if err := w.Close(ctx); err != nil {
			t.Fatal(err)
		}
		list, err = st.RequestLogList(ctx, &store.RequestLogListParams{ClientID: clientID, Limit: 1000})
		if err != nil || len(list) != 260 {
			t.Fatalf("after Close: %d rows, %v", len(list), err)
		}
		// A writer that never started closes at once.
		if err := reqlog.NewWriter(st, slog.New(slog.DiscardHandler)).Close(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// The queue holds at most MaxQueuedBytes of body buffers, however many
// requests it has room for: past it, requests are dropped and counted. The
// writer here is closed, so that nothing drains the queue.
func TestWriterBoundsQueuedBytes(t *testing.T) {
	t.Parallel()
	w := reqlog.NewWriter(nil, slog.New(slog.DiscardHandler))
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Buffers of the largest capture, shared and never pooled (their
	// capacity is over the cap), so that the test holds little memory.
	buf := make([]byte, 16, reqlog.MaxCapturedBody+1)
	const n = 600
	for i := range n {
		w.Record(&reqlog.Captured{ClientID: "c", RequestID: fmt.Sprintf("req_big_%03d", i), Method: "POST", Path: "/x",
			Request:  reqlog.CapturedBody{Data: buf, Size: reqlog.MaxCapturedBody},
			Response: reqlog.CapturedBody{Data: buf, Size: reqlog.MaxCapturedBody}})
	}
	_, dropped := w.Stats()
	queued := (n - dropped) * 2 * int64(cap(buf))
	if dropped == 0 || queued > reqlog.MaxQueuedBytes {
		t.Errorf("%d of %d requests dropped: %d MiB of buffers queued, want at most %d MiB", dropped, n,
			queued>>20, reqlog.MaxQueuedBytes>>20)
	}
}

// When the log falls behind, successful reads give way: past half the
// queue they are dropped, while errors and writes still fit in the other
// half. The writer here is closed, so that nothing drains the queue.
func TestWriterShedsSuccessfulReadsFirst(t *testing.T) {
	t.Parallel()
	w := reqlog.NewWriter(nil, slog.New(slog.DiscardHandler))
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	request := func(method string, status, i int) *reqlog.Captured {
		return &reqlog.Captured{ClientID: "c", RequestID: fmt.Sprintf("req_shed_%05d", i), Method: method,
			Path: "/accounts/get", Status: status}
	}
	for i := range reqlog.QueueSize {
		r := request("GET", 200, i)
		if i%2 == 1 { // a POST that only reads is a read
			r.Method, r.Path = "POST", "/transactions/sync"
		}
		w.Record(r)
	}
	_, readsDropped := w.Stats()
	if readsDropped != reqlog.QueueSize/2 {
		t.Fatalf("%d of %d successful reads dropped, want %d", readsDropped, reqlog.QueueSize, reqlog.QueueSize/2)
	}
	for i := range reqlog.QueueSize / 2 {
		if i%2 == 0 {
			w.Record(request("GET", 404, i))
		} else {
			w.Record(request("POST", 200, i))
		}
	}
	if _, dropped := w.Stats(); dropped != readsDropped {
		t.Fatalf("%d errors and writes dropped, want none", dropped-readsDropped)
	}
	// The queue is full now, for every request.
	w.Record(request("GET", 500, 0))
	if _, dropped := w.Stats(); dropped != readsDropped+1 {
		t.Errorf("a full queue took an error")
	}
	// Each developer's dashboard counts its own.
	if mine, other := w.Dropped("c"), w.Dropped("d"); mine != readsDropped+1 || other != 0 {
		t.Errorf("dropped: %d of c's, %d of d's; want %d and 0", mine, other, readsDropped+1)
	}
}
