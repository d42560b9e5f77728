package queue

import (
	"context"
	"database/sql"
	"testing"

	"github.com/riverqueue/river"

	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

type benchArgs struct {
	ClientID string `json:"client_id"`
	EventID  string `json:"event_id"`
}

func (benchArgs) Kind() string { return "bench_insert" }

// BenchmarkInsertTx inserts one job per store transaction, as a change
// that causes one webhook delivery does, with the insert each store uses
// and, on SQLite, with the insert that reads the new row back:
//
//	go test ./internal/queue -run '^$' -bench InsertTx -benchtime 5000x
func BenchmarkInsertTx(b *testing.B) {
	for _, backend := range storetest.Backends(b) {
		b.Run(backend.Name, func(b *testing.B) {
			st := backend.Open(b)
			if err := Migrate(context.Background(), st); err != nil {
				b.Fatal(err)
			}
			q, err := New(st, Config{})
			if err != nil {
				b.Fatal(err)
			}
			sq, ok := q.c.(*riverClient[*sql.Tx])
			if !ok {
				benchmarkInsertTx(b, st, q)
				return
			}
			b.Run("no-returning", func(b *testing.B) { benchmarkInsertTx(b, st, q) })
			sq.noReturning = false
			b.Run("returning", func(b *testing.B) { benchmarkInsertTx(b, st, q) })
		})
	}
}

func benchmarkInsertTx(b *testing.B, st store.Store, q *Queue) {
	ctx := context.Background()
	params := []river.InsertManyParams{{Args: benchArgs{ClientID: "cli_bench", EventID: "evt_0123456789abcdef"},
		InsertOpts: &river.InsertOpts{Queue: QueueWebhooks}}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := st.InTx(ctx, func(ex store.Executor) error { return q.InsertTx(ctx, ex, params) }); err != nil {
			b.Fatal(err)
		}
	}
}
