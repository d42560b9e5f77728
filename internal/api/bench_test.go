package api_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// BenchmarkAccountsGet serves GET /accounts/get for a user with 10 linked
// accounts through the whole handler stack (auth, logging, store, JSON),
// without the network.
//
//	go test ./internal/api -run '^$' -bench AccountsGet -cpu 1,2
func BenchmarkAccountsGet(b *testing.B) {
	for _, backend := range storetest.Backends(b) {
		b.Run(backend.Name, func(b *testing.B) { benchmarkAccountsGet(b, backend.Open(b)) })
	}
}

func benchmarkAccountsGet(b *testing.B, st store.Store) {
	t := &testing.T{}
	h := newHarness(t, st, func(o *harnessOptions) { o.discardLogs = true })
	for id := int64(1); id <= 10; id++ {
		linkCard(t, h.api, "bench-user", id)
	}
	handler := h.server
	req := httptest.NewRequest("GET", "/accounts/get?external_user_id=bench-user", nil)
	req.SetBasicAuth(h.clientID, h.secret)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w := httptest.NewRecorder()
			handler.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				b.Errorf("status %d", w.Code)
			}
		}
	})
}
