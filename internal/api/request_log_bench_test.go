package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/hitchdev/hitch/internal/reqlog"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// BenchmarkRequestLog serves GET /accounts/get (10 linked accounts, a
// 5 KB answer) through the whole handler stack, without the network, one
// request at a time, three ways: with the request log off; with the
// queued writer Hitch uses (the request copies its bodies and queues them;
// a goroutine redacts and inserts in batches); and with a synchronous
// insert (the request also redacts and inserts its row before it ends).
// The difference to "off" is the request log's cost per request.
//
//	go test ./internal/api -run '^$' -bench RequestLog -benchtime 3000x -count 3
func BenchmarkRequestLog(b *testing.B) {
	for _, backend := range storetest.Backends(b) {
		b.Run(backend.Name, func(b *testing.B) {
			st := backend.Open(b)
			t := &testing.T{}
			h := newHarness(t, st, func(o *harnessOptions) { o.discardLogs = true })
			for id := int64(1); id <= 10; id++ {
				linkCard(t, h.api, "bench-user", id)
			}
			writer := h.server.RequestLog
			req := httptest.NewRequest("GET", "/accounts/get?external_user_id=bench-user", nil)
			req.SetBasicAuth(h.clientID, h.secret)
			// took holds each request's time in the handler: what a client
			// waits, with the writer's goroutine on the other CPU.
			var took []time.Duration
			serve := func(b *testing.B) *httptest.ResponseRecorder {
				w := httptest.NewRecorder()
				start := time.Now()
				h.server.ServeHTTP(w, req)
				took = append(took, time.Since(start))
				if w.Code != http.StatusOK {
					b.Fatalf("status %d", w.Code)
				}
				return w
			}
			p50 := func(b *testing.B) {
				slices.Sort(took)
				b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
				took = took[:0]
			}
			b.Run("off", func(b *testing.B) {
				h.server.RequestLog = nil
				defer func() { h.server.RequestLog = writer }()
				b.ReportAllocs()
				for b.Loop() {
					serve(b)
				}
				p50(b)
			})
			b.Run("queued", func(b *testing.B) {
				written, dropped := writer.Stats()
				b.ReportAllocs()
				for b.Loop() {
					serve(b)
				}
				b.StopTimer()
				p50(b)
				if err := writer.Flush(context.Background()); err != nil {
					b.Fatal(err)
				}
				w2, d2 := writer.Stats()
				b.ReportMetric(float64(d2-dropped)/float64(b.N), "dropped/op")
				b.ReportMetric(float64(w2-written)/float64(b.N), "written/op")
			})
			b.Run("sync", func(b *testing.B) {
				h.server.RequestLog = nil
				defer func() { h.server.RequestLog = writer }()
				ctx := context.Background()
				b.ReportAllocs()
				for b.Loop() {
					start := time.Now()
					w := serve(b)
					c := &reqlog.Captured{ClientID: h.clientID, RequestID: w.Header().Get("X-Request-Id"), At: start,
						Method: req.Method, Path: req.URL.Path, RawQuery: req.URL.RawQuery, Status: w.Code,
						Latency: time.Since(start), IP: "192.0.2.1",
						Response: reqlog.CapturedBody{ContentType: w.Header().Get("Content-Type"),
							Data: append(reqlog.Buffer(), w.Body.Bytes()...), Size: w.Body.Len()}}
					if err := st.RequestLogInsert(ctx, []*store.RequestLog{reqlog.Redact(c)}); err != nil {
						b.Fatal(err)
					}
					took[len(took)-1] = time.Since(start)
				}
				p50(b)
			})
		})
	}
}
