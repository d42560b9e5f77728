// Package merchanttest builds synthetic merchant catalogs, larger than the
// seeded one, for tests and benchmarks.
package merchanttest

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/hitchdev/hitch/internal/merchant"
)

// Generate returns n synthetic merchants with ids 1..n that merchant.New
// accepts: invented brand names ("Velora", "Kabinex Foods") whose name keys
// (merchant.NameKey) are pairwise distinct and distinct from every other
// merchant's aliases, 0–2 aliases each, and a valid category, products,
// domain and colour. The same n always gives the same merchants, and a
// smaller n a prefix of them.
func Generate(n int) []merchant.Merchant {
	r := rand.New(rand.NewPCG(6, 7)) // fixed, so Generate(n) is a prefix of Generate(n+1)
	// taken holds every form, as the catalog (letters and digits only) and
	// merchant.NameKey compare them, of every name and alias handed out.
	taken := make(map[string]bool, 4*n)
	out := make([]merchant.Merchant, 0, n)
	for len(out) < n {
		brand := brandWord(r)
		category := categories[r.IntN(len(categories))]
		name := brand
		if r.IntN(2) == 0 {
			s := suffixes[r.IntN(len(suffixes))]
			name, category = brand+" "+s.word, s.category
		}
		aliases := pickAliases(r, name)
		if !claim(taken, name, aliases) {
			continue
		}
		id := int64(len(out) + 1)
		out = append(out, merchant.Merchant{
			ID:           id,
			Name:         name,
			Category:     category,
			Products:     pickProducts(r),
			Aliases:      aliases,
			Domain:       strings.ToLower(strings.ReplaceAll(name, " ", "")) + ".com",
			Color:        fmt.Sprintf("#%06X", r.IntN(1<<24)),
			Subscription: r.IntN(3) == 0,
		})
	}
	return out
}

// claim records name's and aliases' forms in taken, or reports false, and
// records nothing, if another merchant already uses one of them.
func claim(taken map[string]bool, name string, aliases []string) bool {
	var forms []string
	for _, text := range append([]string{name}, aliases...) {
		forms = append(forms, fold(text), merchant.NameKey(text))
	}
	// Each merchant uses its name's key; its aliases may repeat it.
	own := map[string]bool{}
	for _, f := range forms {
		if taken[f] && !own[f] {
			return false
		}
		own[f] = true
	}
	for f := range own {
		taken[f] = true
	}
	return true
}

// fold is the catalog's comparison form of the ASCII text Generate makes:
// lower-case letters and digits only.
func fold(s string) string {
	var b strings.Builder
	for _, c := range []byte(strings.ToLower(s)) {
		if 'a' <= c && c <= 'z' || '0' <= c && c <= '9' {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// brandWord invents a pronounceable capitalised word of 2–3 syllables.
func brandWord(r *rand.Rand) string {
	const (
		onsets = "bdfgklmnprstvz"
		vowels = "aeiou"
		codas  = "nrsx"
	)
	var b strings.Builder
	for range 2 + r.IntN(2) {
		b.WriteByte(onsets[r.IntN(len(onsets))])
		b.WriteByte(vowels[r.IntN(len(vowels))])
		if r.IntN(4) == 0 {
			b.WriteByte(codas[r.IntN(len(codas))])
		}
	}
	w := b.String()
	return strings.ToUpper(w[:1]) + w[1:]
}

// pickAliases returns 0–2 aliases of name: company and web forms, which
// share its key, and storefront forms, which have keys of their own.
func pickAliases(r *rand.Rand, name string) []string {
	forms := []string{"%s, Inc.", "%s.com", "%s LLC", "%s Online", "%s Store"}
	r.Shuffle(len(forms), func(i, j int) { forms[i], forms[j] = forms[j], forms[i] })
	aliases := []string{}
	for _, f := range forms[:r.IntN(3)] {
		if f == "%s.com" {
			aliases = append(aliases, fmt.Sprintf(f, strings.ReplaceAll(name, " ", "")))
		} else {
			aliases = append(aliases, fmt.Sprintf(f, name))
		}
	}
	return aliases
}

// pickProducts returns a non-empty set of the catalog's products.
func pickProducts(r *rand.Rand) []string {
	all := []string{"card_switcher", "transaction_link", "vault"}
	var out []string
	for len(out) == 0 {
		for _, p := range all {
			if r.IntN(2) == 0 {
				out = append(out, p)
			}
		}
	}
	return out
}

// categories are the catalog's categories (merchant.New rejects others).
var categories = []string{
	"shopping", "food_delivery", "streaming", "rides", "travel", "groceries", "telecom",
	"software", "news", "gaming", "pharmacy", "utilities", "fitness", "home",
}

// suffixes are second words of brand names, with the category they suggest.
var suffixes = []struct{ word, category string }{
	{"Market", "groceries"}, {"Foods", "groceries"}, {"Eats", "food_delivery"},
	{"Pizza", "food_delivery"}, {"Coffee", "food_delivery"}, {"TV", "streaming"},
	{"Music", "streaming"}, {"Rides", "rides"}, {"Air", "travel"}, {"Hotels", "travel"},
	{"Mobile", "telecom"}, {"Wireless", "telecom"}, {"Cloud", "software"}, {"Labs", "software"},
	{"News", "news"}, {"Games", "gaming"}, {"Pharmacy", "pharmacy"}, {"Health", "pharmacy"},
	{"Energy", "utilities"}, {"Water", "utilities"}, {"Fitness", "fitness"}, {"Gym", "fitness"},
	{"Home", "home"}, {"Outfitters", "shopping"}, {"Books", "shopping"},
}
