package simulate

import "testing"

// BenchmarkTransactions measures one simulated link: two years of orders, for
// merchants of different categories (grocery baskets are the largest).
func BenchmarkTransactions(b *testing.B) {
	for _, id := range []int64{1, 6, 4, 42, 61} {
		m := merchantByID(b, id)
		seed := seedFor(testSeeds[0], m)
		b.Run(m.Domain, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				recent(seed, m, testNow)
			}
		})
	}
}

func BenchmarkUpdate(b *testing.B) {
	m := merchantByID(b, 1)
	seed := seedFor(testSeeds[0], m)
	txns := recent(seed, m, testNow)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		Update(seed, txns[i%len(txns)], testNow)
		i++
	}
}

func BenchmarkSubscriptions(b *testing.B) {
	m := merchantByID(b, 5)
	seed := seedFor(testSeeds[0], m)
	b.ReportAllocs()
	for b.Loop() {
		Subscriptions(seed, m, testNow)
	}
}

// BenchmarkTenThousand measures the history of the busiest test user, all
// that a link of it generates before storing.
func BenchmarkTenThousand(b *testing.B) {
	m := merchantByID(b, 1)
	seed := Seed{ClientID: "cli_bench", ExternalUserID: UserTenThousand, MerchantID: m.ID}
	b.ReportAllocs()
	for b.Loop() {
		recent(seed, m, testNow)
	}
}
