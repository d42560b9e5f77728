package detection_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hitchdev/hitch/internal/detection"
	"github.com/hitchdev/hitch/internal/merchant"
	"github.com/hitchdev/hitch/internal/merchant/merchanttest"
)

// catalogMatcher returns a Matcher over the real catalog, and the catalog.
func catalogMatcher(t *testing.T) (*detection.Matcher, *merchant.Catalog) {
	t.Helper()
	c, err := merchant.Load()
	if err != nil {
		t.Fatalf("merchant.Load: %v", err)
	}
	return detection.NewMatcher(c.All()), c
}

func TestSameName(t *testing.T) {
	t.Parallel()
	m, _ := catalogMatcher(t)

	tests := []struct {
		a, b string
		want bool
	}{
		// Case, punctuation, accents.
		{"Amazon", "amazon", true},
		{"NETFLIX", "netflix", true},
		{"T-Mobile", "tmobile", true},
		{"Lowe's", "LOWES", true},
		{"AT&T", "ATT", true},
		{"Pokemon Go", "Pokémon GO", true},
		{"POKÉMON GO", "Poke\u0301mon Go", true},
		{"Sirius XM", "SiriusXM", true},
		{"UberEats", "Uber Eats", true},
		// Legal suffixes and web domains.
		{"amazon", "Amazon.com", true},
		{"amazon", "AMAZON.COM, INC.", true},
		{"Amazon.com", "AMAZON.COM, INC.", true},
		{"www.amazon.com", "Amazon", true},
		{"Netflix, Inc.", "netflix.com", true},
		{"Hulu LLC", "Hulu", true},
		{"Canva Pty Ltd", "Canva", true},
		{"Target Corp.", "Target", true},
		{"Best Buy Co., Inc.", "BestBuy.com", true},
		{"Booking.com B.V.", "booking.com", true},
		{"Etsy", "ETSY.COM", true},
		{"Walgreen Co.", "Walgreens", true},
		// "&", "and" and a leading "the".
		{"Crate & Barrel", "Crate and Barrel", true},
		{"CrateAndBarrel.com", "Crate & Barrel", true},
		{"Hims and Hers", "Hims & Hers", true},
		{"AT and T", "AT&T", true},
		{"The Home Depot", "Home Depot", true},
		{"New York Times", "The New York Times", true},
		// Catalog aliases.
		{"AMZN Mktp US", "Amazon", true},
		{"Amazon Prime", "amazon.com", true},
		{"NYTimes.com", "The New York Times", true},
		{"UBER *TRIP HELP.UBER.COM", "Uber", true},
		{"UBER *EATS HELP.UBER.COM", "Uber Eats", true},
		{"HBO Max", "Max", true},
		{"Disney Plus", "Disney+", true},
		{"Wal-Mart Stores", "Walmart", true},
		{"Whole Foods Market", "WFM", true},
		{"Microsoft Office", "Office 365", true},
		{"Niantic, Inc.", "Pokémon GO", true},
		{"Hims", "Hers", true}, // both aliases of Hims & Hers
		{"Domino's Pizza", "Dominos.com", true},
		// Near misses within tolerance.
		{"Netflx", "Netflix", true},
		{"Amazn", "Amazon", true},
		{"Starbuks", "Starbucks", true},
		{"Netfilx", "Netflix", true},
		{"Grammarly", "Gramarly", true},
		{"Chipotel", "Chipotle Mexican Grill", true},
		{"Southern California Edisn", "SCE", true},
		// Merchants not in the catalog.
		{"Patreon, Inc.", "patreon", true},
		{"Patreon", "Pateron", true},
		{"Duolingo", "Duolingo LLC", true}, // in the catalog, as it happens
		{"Calm.com", "Calm", true},
		{"Headspace Inc.", "headspace", true},
		{"Headspace", "Headspcae", true},
		{"MasterClass", "Masterclass.com", true},
		{"Patreon", "Pateron Labs", false},
		{"Headspace", "Headspace Labs", false},
		{"Calm", "Clam", false},
		// Different merchants.
		{"Uber", "Uber Eats", false},
		{"Uber", "UberEats", false},
		{"Uber", "Ubers", false},
		{"Max", "Mix", false},
		{"YouTube TV", "YouTube Premium", false},
		{"Google Fi", "Google One", false},
		{"Walmart", "Target", false},
		{"Apple", "Apple Music", false},
		{"Amazon", "Amazon Music", false},
		{"Lyft", "Lift", false},
		{"WM", "WFM", false},
		{"Delta Air Lines", "United Airlines", false},
		{"Steam", "Strava", false},
		{"Peloton", "Hilton", false},
		{"Comcast", "Costco", false},
		{"Dropbox", "Roblox", false},
		{"Google", "Google One", false},
		// Names with no letters or digits match nothing, not even each other.
		{"", "", false},
		{"&&&", "!!!", false},
		{"Spotify", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.a+"|"+tt.b, func(t *testing.T) {
			t.Parallel()
			if got := m.SameName(tt.a, tt.b); got != tt.want {
				t.Errorf("SameName(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
			if got := m.SameName(tt.b, tt.a); got != tt.want {
				t.Errorf("SameName(%q, %q) = %v, want %v (not symmetric)", tt.b, tt.a, got, tt.want)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	m, _ := catalogMatcher(t)

	tests := []struct {
		name string
		want int64 // 0 for none
	}{
		{"Amazon", 1},
		{"AMAZON.COM, INC.", 1},
		{"amzn mktp us", 1},
		{"Amazn", 1},
		{"Netflx", 4},
		{"Netfilx", 4},
		{"Starbuks", 50},
		{"Uber", 6},
		{"Uber Eats", 7},
		{"UBER EATS INC", 7},
		{"Ubr Eats", 7},
		{"Ubers", 0}, // "uber" is too short to forgive a letter
		{"Pokemon Go", 93},
		{"Poke\u0301mon GO", 93},
		{"Max", 15},
		{"Mix", 0},
		{"WM", 101},
		{"WFM", 43},
		{"Hims & Hers Health", 95},
		{"Washington Post", 85},
		{"Grubhb", 41},
		{"Southern California Edisn", 100},
		{"Patreon", 0},
		{"Apple Music", 0},
		{"", 0},
		{"!!!", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			id, ok := m.Resolve(tt.name)
			if ok != (tt.want != 0) || id != tt.want {
				t.Errorf("Resolve(%q) = %d, %v; want %d", tt.name, id, ok, tt.want)
			}
		})
	}
}

// TestResolveCatalogNames checks that every name and alias in the catalog
// resolves to its own merchant.
func TestResolveCatalogNames(t *testing.T) {
	t.Parallel()
	m, c := catalogMatcher(t)
	for _, mer := range c.All() {
		for _, text := range append([]string{mer.Name}, mer.Aliases...) {
			if id, ok := m.Resolve(text); !ok || id != mer.ID {
				t.Errorf("Resolve(%q) = %d, %v; want %d (%s)", text, id, ok, mer.ID, mer.Name)
			}
		}
	}
}

// TestCatalogKeysApart checks that no name or alias key of one catalog
// merchant is within Tolerance of another's, so that a typo can never land
// between two real merchants. If this fails after a catalog change, rename
// or drop the alias; do not loosen the tolerance.
func TestCatalogKeysApart(t *testing.T) {
	t.Parallel()
	_, c := catalogMatcher(t)
	type owned struct {
		key, text string
		id        int64
	}
	var keys []owned
	for _, mer := range c.All() {
		for _, text := range append([]string{mer.Name}, mer.Aliases...) {
			keys = append(keys, owned{merchant.NameKey(text), text, mer.ID})
		}
	}
	for i, a := range keys {
		for _, b := range keys[i+1:] {
			if a.id == b.id {
				continue
			}
			tol := detection.Tolerance(min(utf8.RuneCountInString(a.key), utf8.RuneCountInString(b.key)))
			if d := detection.Distance(a.key, b.key, tol); d <= tol {
				t.Errorf("%q (id %d) and %q (id %d) have keys %q and %q at distance %d, tolerance %d",
					a.text, a.id, b.text, b.id, a.key, b.key, d, tol)
			}
		}
	}
}

func TestResolveAmbiguous(t *testing.T) {
	t.Parallel()
	mer := func(id int64, name string, aliases ...string) *merchant.Merchant {
		return &merchant.Merchant{ID: id, Name: name, Aliases: aliases}
	}
	m := detection.NewMatcher([]*merchant.Merchant{
		mer(1, "Acme"),
		mer(2, "ACME, Inc."), // the same key as Acme
		mer(3, "Velora"),
		mer(4, "Velona"),
		mer(5, "Kabinex", "Kabinex Store"),
		mer(6, "Kabinet"),
	})
	tests := []struct {
		name string
		want int64
	}{
		{"acme", 0},     // two merchants share the key
		{"Veloxa", 0},   // one edit from Velora and from Velona
		{"Velorra", 3},  // one from Velora, two from Velona
		{"Kabinex", 5},  // exact beats a near miss
		{"Kabinexx", 5}, // one from Kabinex, two from Kabinet
		{"Kabinez", 0},  // one from Kabinex and from Kabinet
		{"Kabinex Stor", 5},
	}
	for _, tt := range tests {
		id, ok := m.Resolve(tt.name)
		if ok != (tt.want != 0) || id != tt.want {
			t.Errorf("Resolve(%q) = %d, %v; want %d", tt.name, id, ok, tt.want)
		}
	}
	if m.SameName("Acme", "ACME LLC") != true {
		t.Error(`SameName("Acme", "ACME LLC") = false: an ambiguous key is still one name`)
	}

	empty := detection.NewMatcher(nil)
	if id, ok := empty.Resolve("Amazon"); ok {
		t.Errorf("empty Matcher resolved Amazon to %d", id)
	}
	if !empty.SameName("Amazon", "Amazn") {
		t.Error(`empty Matcher: SameName("Amazon", "Amazn") = false`)
	}
}

// TestResolveAgreesWithScan checks the deletion index against a scan of
// every key, on typos of a synthetic catalog dense enough to have near
// neighbours and ties.
func TestResolveAgreesWithScan(t *testing.T) {
	t.Parallel()
	generated := merchanttest.Generate(3000)
	ms := make([]*merchant.Merchant, len(generated))
	for i := range generated {
		ms[i] = &generated[i]
	}
	m := detection.NewMatcher(ms)

	type owned struct {
		key string
		id  int64
	}
	var keys []owned
	for _, mer := range ms {
		for _, text := range append([]string{mer.Name}, mer.Aliases...) {
			keys = append(keys, owned{merchant.NameKey(text), mer.ID})
		}
	}
	scan := func(name string) (int64, bool) {
		q := merchant.NameKey(name)
		n := utf8.RuneCountInString(q)
		best, bestID, tie := inf, int64(0), false
		for _, k := range keys {
			d := 0
			if k.key != q {
				tol := detection.Tolerance(min(n, utf8.RuneCountInString(k.key)))
				if d = detection.Distance(q, k.key, tol); d > tol {
					continue
				}
			}
			switch {
			case d < best:
				best, bestID, tie = d, k.id, false
			case d == best && k.id != bestID:
				tie = true
			}
		}
		if best == inf || tie {
			return 0, false
		}
		return bestID, true
	}

	r := rand.New(rand.NewPCG(1, 2))
	const tries = 3000
	resolved := 0
	for i := range tries {
		name := typo(r, ms[r.IntN(len(ms))].Name)
		if i%2 == 1 {
			name = typo(r, name)
		}
		wantID, wantOK := scan(name)
		id, ok := m.Resolve(name)
		if id != wantID || ok != wantOK {
			t.Fatalf("Resolve(%q) = %d, %v; a scan of every key gives %d, %v", name, id, ok, wantID, wantOK)
		}
		if ok {
			resolved++
		}
	}
	t.Logf("%d of %d names with one or two typos resolved", resolved, tries)
}

// inf is more than any distance the tests meet.
const inf = 1 << 30

// typo makes one random edit to s: it deletes, inserts, replaces or swaps
// letters.
func typo(r *rand.Rand, s string) string {
	rs := []rune(s)
	if len(rs) < 2 {
		return s + "x"
	}
	i := r.IntN(len(rs) - 1)
	letter := rune('a' + r.IntN(26))
	switch r.IntN(4) {
	case 0:
		rs = append(rs[:i], rs[i+1:]...)
	case 1:
		rs = append(rs[:i], append([]rune{letter}, rs[i:]...)...)
	case 2:
		rs[i] = letter
	default:
		rs[i], rs[i+1] = rs[i+1], rs[i]
	}
	return string(rs)
}

func TestTolerance(t *testing.T) {
	t.Parallel()
	for n, want := range []int{0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2} {
		if got := detection.Tolerance(n); got != want {
			t.Errorf("Tolerance(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestDistance(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b  string
		limit int
		want  int
	}{
		{"", "", 2, 0},
		{"abc", "abc", 0, 0},
		{"abc", "", 3, 3},
		{"", "abc", 2, 3}, // over the limit: limit+1
		{"ab", "ba", 2, 1},
		{"abcd", "acbd", 2, 1},
		{"netflix", "netfilx", 1, 1},
		{"ca", "abc", 5, 3}, // optimal string alignment edits no rune twice; Damerau–Levenshtein would say 2
		{"kitten", "sitting", 5, 3},
		{"kitten", "sitting", 3, 3},
		{"kitten", "sitting", 2, 3},
		{"kitten", "sitting", 0, 1},
		{"amazon", "amazn", 1, 1},
		{"starbucks", "starbuks", 2, 1},
		{"uber", "ubereats", 3, 4},
		{"uber", "ubereats", 4, 4},
		{"uber", "ubereats", 9, 4},
		{"googlefi", "googleone", 2, 3},
		{"pokémon", "pokemon", 1, 1}, // runes, not bytes
		{"naïve", "naive", 0, 1},
		{"東京", "京東", 1, 1},
		{"abc", "xyz", -1, 1}, // a negative limit counts as 0
		{"abcdefghij", "bacdefghji", 2, 2},
		{"abcdefghij", "bacdefghji", 1, 2},
		{"abcdefghijklmnopqrstuvwxyz", "zyxwvutsrqponmlkjihgfedcba", 3, 4},
		{strings.Repeat("a", 60), strings.Repeat("a", 59) + "b", 2, 1}, // beyond the stack buffer
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s|%s|%d", tt.a, tt.b, tt.limit), func(t *testing.T) {
			t.Parallel()
			if got := detection.Distance(tt.a, tt.b, tt.limit); got != tt.want {
				t.Errorf("Distance(%q, %q, %d) = %d, want %d", tt.a, tt.b, tt.limit, got, tt.want)
			}
			if got := detection.Distance(tt.b, tt.a, tt.limit); got != tt.want {
				t.Errorf("Distance(%q, %q, %d) = %d, want %d (not symmetric)", tt.b, tt.a, tt.limit, got, tt.want)
			}
		})
	}
}

// TestDistanceAgreesWithFullTable checks the banded, early-exit Distance
// against the textbook full table on random strings over a small alphabet,
// where swaps and repeats are common.
func TestDistanceAgreesWithFullTable(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	word := func() string {
		b := make([]rune, r.IntN(12))
		for i := range b {
			b[i] = []rune("abcé")[r.IntN(4)]
		}
		return string(b)
	}
	for range 20000 {
		a, b := word(), word()
		limit := r.IntN(5)
		want := min(fullOSA([]rune(a), []rune(b)), limit+1)
		if got := detection.Distance(a, b, limit); got != want {
			t.Fatalf("Distance(%q, %q, %d) = %d, want %d", a, b, limit, got, want)
		}
	}
}

// fullOSA is the optimal string alignment distance computed over the whole
// table, as textbooks give it.
func fullOSA(a, b []rune) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
