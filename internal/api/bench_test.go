package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hitchdev/hitch/internal/detection"
	"github.com/hitchdev/hitch/internal/merchant"
	"github.com/hitchdev/hitch/internal/merchant/merchanttest"
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

// BenchmarkDetectedSearch serves POST /detected-accounts/search with 50
// names, for a user with 25 detected accounts, against a catalog of
// 10,000 generated merchants, through the whole handler stack without the
// network, one request at a time. Besides ns/op it reports the p50 and p99
// of the requests' server time (the target: p99 ≤ 5 ms).
//
//	go test ./internal/api -run '^$' -bench DetectedSearch -benchtime 2000x
func BenchmarkDetectedSearch(b *testing.B) {
	ms := merchanttest.Generate(10_000)
	catalog, err := merchant.New(ms)
	if err != nil {
		b.Fatal(err)
	}
	for _, backend := range storetest.Backends(b) {
		b.Run(backend.Name, func(b *testing.B) { benchmarkDetectedSearch(b, backend.Open(b), catalog, ms) })
	}
}

func benchmarkDetectedSearch(b *testing.B, st store.Store, catalog *merchant.Catalog, ms []merchant.Merchant) {
	t := &testing.T{}
	h := newHarness(t, st, func(o *harnessOptions) { o.discardLogs, o.catalog = true, catalog })
	ctx := context.Background()
	if _, err := h.detections.Start(ctx, h.clientID, "bench-user", detection.Input{Email: "bench+none@example.com"}); err != nil {
		b.Fatal(err)
	}
	// 20 catalog merchants and 5 known only by name, as a connector reports them.
	var found []detection.Found
	for i := range 20 {
		found = append(found, detection.Found{MerchantID: ms[i*500].ID, Source: detection.SourceEmail})
	}
	for _, name := range []string{"Patreon, Inc.", "Calm.com", "Headspace", "MasterClass", "Nextdoor"} {
		found = append(found, detection.Found{Name: name, Source: detection.SourceEmail})
	}
	if _, err := h.detections.Record(ctx, detection.RecordParams{ClientID: h.clientID, ExternalUserID: "bench-user", Found: found}); err != nil {
		b.Fatal(err)
	}
	// 50 names: 10 of the detected merchants (by name, by a legal name, with
	// a typo), 30 other catalog merchants, 10 not in the catalog.
	var names []string
	for i := range 10 {
		m := ms[i*500]
		switch {
		case i%3 == 0:
			names = append(names, m.Name)
		case i%3 == 1:
			names = append(names, strings.ToUpper(m.Name)+", INC.")
		case len(m.Name) >= 6: // long enough for a typo to be forgiven
			names = append(names, m.Name[:len(m.Name)-1])
		default:
			names = append(names, strings.ToLower(m.Name))
		}
	}
	for i := range 30 {
		names = append(names, ms[7+i*311].Name)
	}
	names = append(names, "Patreon", "calm", "Headspace Inc.", "Zzqyx", "Bumble", "Hinge", "Tinder Gold",
		"Squarespace", "www.wix.com", "Quizlet Plus")
	body, err := json.Marshal(map[string]any{"external_user_id": "bench-user", "names": names})
	if err != nil {
		b.Fatal(err)
	}
	handler := h.server
	serve := func() time.Duration {
		req := httptest.NewRequest("POST", "/detected-accounts/search", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.SetBasicAuth(h.clientID, h.secret)
		w := httptest.NewRecorder()
		start := time.Now()
		handler.ServeHTTP(w, req)
		took := time.Since(start)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
		return took
	}
	var results []struct{ Detected bool }
	w := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/detected-accounts/search", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth(h.clientID, h.secret)
	handler.ServeHTTP(w, req)
	if err := json.Unmarshal(w.Body.Bytes(), &results); err != nil || len(results) != 50 {
		b.Fatalf("search: %s, %v", w.Body, err)
	}
	detected := 0
	for _, r := range results {
		if r.Detected {
			detected++
		}
	}
	if detected != 13 { // the 10 detected merchants and Patreon, calm, Headspace Inc.
		b.Fatalf("%d of 50 names detected, want 13", detected)
	}
	b.ReportAllocs()
	durations := make([]time.Duration, 0, b.N)
	for b.Loop() {
		durations = append(durations, serve())
	}
	slices.Sort(durations)
	b.ReportMetric(float64(durations[len(durations)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(durations[len(durations)*99/100].Microseconds()), "p99-µs")
}
