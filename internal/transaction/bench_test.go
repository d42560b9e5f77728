package transaction

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hitchdev/hitch/internal/account"
	"github.com/hitchdev/hitch/internal/event"
	"github.com/hitchdev/hitch/internal/merchant"
	"github.com/hitchdev/hitch/internal/store"
	"github.com/hitchdev/hitch/internal/store/storetest"
)

// Benchmarks, on every configured store:
//
//	go test ./internal/transaction -run '^$' -bench . -benchtime 2000x
//
// HITCH_BENCH_HISTORY sets the large account's size (default 1,000,000).

func benchOrder(i int) Transaction {
	return Transaction{
		ExternalID: "ord-" + strconv.Itoa(i), Datetime: time.Unix(1700000000+int64(i), 0).UTC(),
		URL: "https://www.example.com/orders/" + strconv.Itoa(i), OrderStatus: StatusDelivered,
		PaymentMethods: []PaymentMethod{{ExternalID: "pm-1", Type: "CARD", Brand: "VISA", LastFour: "4242", TransactionAmount: "21.60"}},
		Price: Price{SubTotal: "20.00", Total: "21.60", Currency: "USD",
			Adjustments: []Adjustment{{Type: "TAX", Label: "Sales tax", Amount: "1.60"}}},
		Products: []Product{{ExternalID: "sku-1", Name: "Paper towels, 6 rolls", URL: "https://www.example.com/p/1",
			ImageURL: "https://www.example.com/p/1.jpg", Quantity: 2, Eligibility: []string{},
			Price: ProductPrice{SubTotal: "20.00", Total: "20.00", UnitPrice: "10.00"}}},
	}
}

type benchAccount struct {
	svc *Service
	key AccountKey
	id  string
}

// newBenchAccount links an account on st and fills it with n transactions,
// written straight through the store in large transactions (the setup is
// not what is measured).
func newBenchAccount(b *testing.B, st store.Store, n int) *benchAccount {
	b.Helper()
	ctx := context.Background()
	catalog, err := merchant.Load()
	if err != nil {
		b.Fatal(err)
	}
	clientID := "bench-" + uuid.NewString()[:8]
	if _, err := st.ClientInsert(ctx, &store.ClientInsertParams{ID: clientID, Name: "bench", Environment: "development", CreatedAt: time.Now()}); err != nil {
		b.Fatal(err)
	}
	events := &event.Log{}
	accounts := account.NewService(st, catalog, events, "", time.Now)
	a, _, err := accounts.Link(ctx, account.LinkParams{ClientID: clientID, ExternalUserID: "u", MerchantID: 1, Product: "transaction_link"})
	if err != nil {
		b.Fatal(err)
	}
	acc := &benchAccount{svc: NewService(st, events, accounts.EventMerchant, time.Now),
		key: AccountKey{ClientID: clientID, ExternalUserID: "u", MerchantID: 1}, id: a.ID}
	const chunk = 5000
	for start := 0; start < n; start += chunk {
		rows := make([]*store.TransactionRow, 0, chunk)
		for i := start; i < min(start+chunk, n); i++ {
			t := benchOrder(i)
			t.ID = uuid.NewString()
			full, _ := json.Marshal(&t)
			syncDoc, _ := json.Marshal(syncShape(&t))
			sum := sha256.Sum256(full)
			rows = append(rows, &store.TransactionRow{ID: t.ID, ClientID: clientID, AccountID: a.ID, ExternalID: t.ExternalID,
				Position: int64(i + 1), Digest: sum[:], SyncJSON: syncDoc, FullJSON: full, CreatedAt: time.Now(), UpdatedAt: time.Now()})
		}
		err := st.InTx(ctx, func(ex store.Executor) error {
			if _, err := ex.AccountTransactionPositions(ctx, clientID, a.ID, int64(len(rows))); err != nil {
				return err
			}
			return ex.TransactionInsertMany(ctx, rows)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return acc
}

func historySize() int {
	if v, err := strconv.Atoi(os.Getenv("HITCH_BENCH_HISTORY")); err == nil && v >= 1000 {
		return v
	}
	return 1_000_000
}

// BenchmarkSyncPage reads one limit=100 page at the start, middle and end
// of a 1,000-transaction account and of a large one: page latency must not
// grow with history.
func BenchmarkSyncPage(b *testing.B) {
	for _, backend := range storetest.Backends(b) {
		b.Run(backend.Name, func(b *testing.B) {
			st := backend.Open(b)
			for _, size := range []int{1000, historySize()} {
				b.Run(strconv.Itoa(size), func(b *testing.B) {
					acc := newBenchAccount(b, st, size)
					for _, at := range []struct {
						name  string
						after int64
					}{{"start", 0}, {"middle", int64(size / 2)}, {"end", int64(size - 100)}} {
						b.Run(at.name, func(b *testing.B) { benchPage(b, acc, at.after) })
					}
				})
			}
		})
	}
}

func benchPage(b *testing.B, acc *benchAccount, after int64) {
	cursor := ""
	if after > 0 {
		cursor = encodeCursor(acc.id, after)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		p, err := acc.svc.Sync(ctx, acc.key, cursor, 100)
		if err != nil || len(p.Transactions) != 100 {
			b.Fatalf("page: %d transactions, %v", len(p.Transactions), err)
		}
	}
}

// BenchmarkIngest ingests batches of 1,000 new transactions through the
// service (digest lookup, rendering, insert, event) and reports
// transactions per second.
func BenchmarkIngest(b *testing.B) {
	for _, backend := range storetest.Backends(b) {
		b.Run(backend.Name, func(b *testing.B) {
			st := backend.Open(b)
			acc := newBenchAccount(b, st, 0)
			ctx := context.Background()
			next := 0
			start := time.Now()
			for b.Loop() {
				batch := make([]Transaction, 1000)
				for i := range batch {
					batch[i] = benchOrder(next)
					next++
				}
				got, err := acc.svc.IngestTransactions(ctx, acc.key, batch, nil)
				if err != nil || len(got.New) != len(batch) {
					b.Fatalf("ingest: %v", err)
				}
			}
			b.ReportMetric(float64(next)/time.Since(start).Seconds(), "transactions/s")
		})
	}
}
