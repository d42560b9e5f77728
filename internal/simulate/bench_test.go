package simulate

import "testing"

// BenchmarkTransactions measures one simulated link: 205 orders, for
// merchants of different categories (grocery baskets are the largest).
func BenchmarkTransactions(b *testing.B) {
	for _, id := range []int64{1, 6, 4, 42, 61} {
		m := merchantByID(b, id)
		seed := seedFor(testSeeds[0], m)
		b.Run(m.Domain, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Transactions(seed, m, perCall, testNow)
			}
		})
	}
}

func BenchmarkUpdate(b *testing.B) {
	m := merchantByID(b, 1)
	seed := seedFor(testSeeds[0], m)
	txns := Transactions(seed, m, perCall, testNow)
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
