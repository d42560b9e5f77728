package storetest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/hitchdev/hitch/internal/event"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// BenchmarkWebhookDeliveriesGet reads deliveries in groups the size the
// loader forms while a backlog drains (about 10) and at its limit (128),
// from 20,000 events to one endpoint:
//
//	go test ./internal/store/storetest -run '^$' -bench WebhookDeliveriesGet
func BenchmarkWebhookDeliveriesGet(b *testing.B) {
	forEachStoreWithEndpoint(b, func(b *testing.B, st store.Store) {
		ctx := context.Background()
		const events = 20_000
		keys := make([]store.WebhookDeliveryKey, events)
		payload := json.RawMessage(`{"event":"UPDATED_TRANSACTIONS_AVAILABLE","session_id":null,"task_id":null,` +
			`"external_user_id":"user-1","merchant":{"id":19,"name":"DoorDash","logo":"https://example.com/doordash.png"},` +
			`"data":{"metadata":{}},"timestamp":1764230400000,"updated":[]}`)
		for lo := 0; lo < events; lo += 1000 {
			err := st.InTx(ctx, func(ex store.Executor) error {
				for i := lo; i < lo+1000; i++ {
					id := event.NewID()
					keys[i] = store.WebhookDeliveryKey{ClientID: "a", EndpointID: "we_1", EventID: id}
					if _, err := ex.EventInsert(ctx, &store.EventInsertParams{ID: id, ClientID: "a", Type: "UPDATED_TRANSACTIONS_AVAILABLE",
						Sequence: int64(i), Payload: payload, CreatedAt: t0.Add(time.Duration(i) * time.Millisecond)}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		for _, group := range []int{10, 128} {
			b.Run(fmt.Sprint(group), func(b *testing.B) {
				i := 0
				for b.Loop() {
					lo := (i * group) % (events - group)
					got, err := st.WebhookDeliveriesGet(ctx, keys[lo:lo+group])
					if err != nil || len(got) != group {
						b.Fatalf("%d deliveries, %v", len(got), err)
					}
					i++
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*group)/1e3, "µs/delivery")
			})
		}
	})
}

// forEachStoreWithEndpoint runs fn on a fresh store of each kind holding
// developer "a" and its endpoint "we_1".
func forEachStoreWithEndpoint(b *testing.B, fn func(b *testing.B, st store.Store)) {
	for _, backend := range []struct {
		name string
		open func(testing.TB) store.Store
	}{{"sqlite", storetest.OpenSQLite}, {"postgres", storetest.OpenPostgres}} {
		b.Run(backend.name, func(b *testing.B) {
			st := backend.open(b)
			ctx := context.Background()
			if _, err := st.ClientInsert(ctx, &store.ClientInsertParams{ID: "a", Name: "A", Environment: "development", CreatedAt: t0}); err != nil {
				b.Fatal(err)
			}
			if err := st.WebhookEndpointInsert(ctx, &store.WebhookEndpoint{ID: "we_1", ClientID: "a", URL: "https://example.com/hooks",
				SecretSealed: make([]byte, 61), Status: store.WebhookEndpointEnabled, CreatedAt: t0, UpdatedAt: t0}); err != nil {
				b.Fatal(err)
			}
			fn(b, st)
		})
	}
}
