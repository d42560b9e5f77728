package detection

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/hitchdev/hitch/internal/merchant"
	"github.com/hitchdev/hitch/internal/merchant/merchanttest"
)

// benchCatalogSize is the largest catalog the search endpoint is sized for.
const benchCatalogSize = 10_000

// generated returns n synthetic merchants, checked as the catalog checks
// merchants.
func generated(tb testing.TB, n int) []*merchant.Merchant {
	tb.Helper()
	c, err := merchant.New(merchanttest.Generate(n))
	if err != nil {
		tb.Fatalf("merchant.New(merchanttest.Generate(%d)): %v", n, err)
	}
	return c.All()
}

// TestGenerate checks merchanttest.Generate's promises, which the
// benchmarks below rely on.
func TestGenerate(t *testing.T) {
	t.Parallel()
	ms := generated(t, benchCatalogSize)
	if len(ms) != benchCatalogSize {
		t.Fatalf("got %d merchants, want %d", len(ms), benchCatalogSize)
	}
	owner := map[string]int64{}
	for i, m := range ms {
		if m.ID != int64(i+1) {
			t.Fatalf("merchant %d has id %d", i, m.ID)
		}
		if len(m.Aliases) > 2 {
			t.Errorf("%s has %d aliases, want at most 2", m.Name, len(m.Aliases))
		}
		for _, text := range append([]string{m.Name}, m.Aliases...) {
			key := merchant.NameKey(text)
			if id, ok := owner[key]; ok && id != m.ID {
				t.Errorf("%q of id %d has the key %q of id %d", text, m.ID, key, id)
			}
			owner[key] = m.ID
		}
	}
	again := merchanttest.Generate(100)
	if !slices.EqualFunc(again, ms[:100], func(a merchant.Merchant, b *merchant.Merchant) bool {
		return a.Name == b.Name && a.Color == b.Color && slices.Equal(a.Aliases, b.Aliases)
	}) {
		t.Error("Generate(100) is not the start of Generate(10000)")
	}
}

// searchNames returns 50 names like those of one search request against ms:
// exact names, names with company and web suffixes, typos, and merchants
// missing from the catalog.
func searchNames(ms []*merchant.Merchant) []string {
	r := rand.New(rand.NewPCG(8, 9))
	pick := func() *merchant.Merchant { return ms[r.IntN(len(ms))] }
	var names []string
	for range 12 {
		names = append(names, pick().Name)
	}
	for i := range 12 {
		m := pick()
		if len(m.Aliases) > 0 && i%2 == 0 {
			names = append(names, m.Aliases[r.IntN(len(m.Aliases))])
		} else {
			names = append(names, strings.ToUpper(m.Name)+", INC.")
		}
	}
	for range 14 {
		rs := []rune(pick().Name)
		i := r.IntN(len(rs) - 1)
		if r.IntN(2) == 0 {
			rs = slices.Delete(rs, i, i+1)
		} else {
			rs[i], rs[i+1] = rs[i+1], rs[i]
		}
		names = append(names, string(rs))
	}
	names = append(names, "Patreon, Inc.", "Calm.com", "Headspace", "MasterClass",
		"Nextdoor", "Quizlet Plus", "Bumble", "Hinge", "Tinder Gold", "Squarespace",
		"www.wix.com", "Zzqyx")
	return names
}

// BenchmarkResolve50 resolves one search request's 50 names against a
// 10,000-merchant catalog; ns/op is for all 50.
func BenchmarkResolve50(b *testing.B) {
	m := NewMatcher(generated(b, benchCatalogSize))
	names := searchNames(generated(b, benchCatalogSize))
	if len(names) != 50 {
		b.Fatalf("got %d names, want 50", len(names))
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, name := range names {
			m.Resolve(name)
		}
	}

	resolved := 0
	for _, name := range names {
		if _, ok := m.Resolve(name); ok {
			resolved++
		}
	}
	b.ReportMetric(float64(resolved), "resolved/50")
}

// BenchmarkNewMatcher10k builds the index of a 10,000-merchant catalog and
// reports its size: keys, deletion entries, and the heap it keeps.
func BenchmarkNewMatcher10k(b *testing.B) {
	ms := generated(b, benchCatalogSize)
	b.ReportAllocs()
	for b.Loop() {
		NewMatcher(ms)
	}
	b.StopTimer()

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m := NewMatcher(ms)
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(len(m.keys)), "keys")
	b.ReportMetric(float64(len(m.deletions)), "deletions")
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "retained-MiB")
	runtime.KeepAlive(m)
	runtime.KeepAlive(ms) // else freed before the second count, hiding part of m
}
