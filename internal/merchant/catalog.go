package merchant

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// catalogJSON is the seeded catalog. Ids in it are a contract: never reuse
// or renumber one.
//
//go:embed catalog.json
var catalogJSON []byte

// Catalog is the parsed, validated merchant catalog. It is read-only and
// safe for concurrent use; every method returns copies.
type Catalog struct {
	byID       map[int64]*entry
	ordered    []*entry // by id
	byName     []*entry // by name (case-insensitive), then id
	categories []string // sorted, distinct
}

// entry is a merchant with the normalised forms of its name and aliases,
// computed once so that List does not normalise the catalog on every call.
type entry struct {
	merchant Merchant
	keys     []string
}

// Load parses and validates the embedded catalog.
func Load() (*Catalog, error) {
	return parse(catalogJSON)
}

// parse decodes a catalog document (a JSON array of merchants) and builds
// the catalog from it.
func parse(data []byte) (*Catalog, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var merchants []Merchant
	if err := dec.Decode(&merchants); err != nil {
		return nil, fmt.Errorf("merchant: parse catalog: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("merchant: parse catalog: unexpected data after the merchant list")
	}
	return build(merchants)
}

// build validates merchants, reporting all bad entries at once, and indexes
// them. It keeps merchants' slices, so callers pass ones nobody else holds.
func build(merchants []Merchant) (*Catalog, error) {
	if len(merchants) == 0 {
		return nil, errors.New("merchant: catalog: no merchants")
	}

	c := &Catalog{byID: make(map[int64]*entry, len(merchants))}
	// owners maps every normalised name and alias to the merchant using it,
	// so that detection can never match one statement name to two merchants.
	type owner struct {
		index int
		id    int64
		text  string
	}
	owners := make(map[string]owner)
	// nameOwners does the same for NameKey, which folds more ("Acme" and
	// "Acme, Inc." are one key): two merchants sharing one could never be
	// told apart by name.
	nameOwners := make(map[string]owner)
	firstIndex := make(map[int64]int, len(merchants)) // id → entry index
	var errs []error
	for i := range merchants {
		m := &merchants[i]
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("merchant: catalog entry %d (id %d, %q): %s",
				i, m.ID, m.Name, fmt.Sprintf(format, args...)))
		}
		if m.Aliases == nil {
			m.Aliases = []string{} // encodes as [], not null
		}

		if m.ID <= 0 {
			bad("id must be positive")
		} else if first, dup := firstIndex[m.ID]; dup {
			bad("duplicate id %d (also entry %d)", m.ID, first)
		} else {
			firstIndex[m.ID] = i
		}
		if !knownCategory(m.Category) {
			bad("unknown category %q", m.Category)
		}
		if len(m.Products) == 0 {
			bad("no products")
		}
		for j, p := range m.Products {
			if !knownProduct(p) {
				bad("unknown product %q", p)
			} else if slices.Contains(m.Products[:j], p) {
				bad("duplicate product %q", p)
			}
		}
		if !validDomain(m.Domain) {
			bad("invalid domain %q", m.Domain)
		}
		if !validColor(m.Color) {
			bad("invalid color %q, want #RRGGBB", m.Color)
		}

		e := &entry{merchant: *m}
		for j, text := range slices.Concat([]string{m.Name}, m.Aliases) {
			what := "alias"
			if j == 0 {
				what = "name"
			}
			key := normalize(text)
			switch o, taken := owners[key]; {
			case key == "":
				bad("%s %q has no letters or digits", what, text)
			case taken && o.index == i:
				bad("%s %q repeats %q", what, text, o.text)
			case taken:
				bad("%s %q is the same as %q of id %d", what, text, o.text, o.id)
			default:
				owners[key] = owner{index: i, id: m.ID, text: text}
				e.keys = append(e.keys, key)
			}
			if nk := NameKey(text); nk != "" {
				if o, taken := nameOwners[nk]; taken && o.index != i {
					bad("%s %q matches %q of id %d by name", what, text, o.text, o.id)
				} else if !taken {
					nameOwners[nk] = owner{index: i, id: m.ID, text: text}
				}
			}
		}
		c.byID[m.ID] = e
		c.ordered = append(c.ordered, e)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	slices.SortFunc(c.ordered, func(a, b *entry) int {
		return cmp.Compare(a.merchant.ID, b.merchant.ID)
	})
	c.byName = slices.Clone(c.ordered)
	slices.SortFunc(c.byName, func(a, b *entry) int {
		return cmp.Or(
			strings.Compare(strings.ToLower(a.merchant.Name), strings.ToLower(b.merchant.Name)),
			cmp.Compare(a.merchant.ID, b.merchant.ID))
	})
	for _, e := range c.ordered {
		if !slices.Contains(c.categories, e.merchant.Category) {
			c.categories = append(c.categories, e.merchant.Category)
		}
	}
	slices.Sort(c.categories)
	return c, nil
}

// Get returns the merchant with the given id.
func (c *Catalog) Get(id int64) (*Merchant, bool) {
	e, ok := c.byID[id]
	if !ok {
		return nil, false
	}
	return e.merchant.clone(), true
}

// All returns every merchant, ordered by id.
func (c *Catalog) All() []*Merchant {
	out := make([]*Merchant, 0, len(c.ordered))
	for _, e := range c.ordered {
		out = append(out, e.merchant.clone())
	}
	return out
}

// List returns the merchants that support product (see Merchant.Supports)
// and whose name or an alias contains search, ordered by name
// (case-insensitive) and then id. Matching ignores case, accents, spaces and
// punctuation, so "amzn mktp" finds "AMZN Mktp US"; a search with no letters
// or digits matches every merchant.
func (c *Catalog) List(product, search string) []*Merchant {
	needle := normalize(search)
	out := []*Merchant{}
	for _, e := range c.byName {
		if e.merchant.Supports(product) && e.matches(needle) {
			out = append(out, e.merchant.clone())
		}
	}
	return out
}

// Categories returns the distinct categories of the catalog's merchants,
// sorted.
func (c *Catalog) Categories() []string {
	return slices.Clone(c.categories)
}

// matches reports whether the normalised needle occurs in the merchant's
// name or one of its aliases.
func (e *entry) matches(needle string) bool {
	if needle == "" {
		return true
	}
	for _, k := range e.keys {
		if strings.Contains(k, needle) {
			return true
		}
	}
	return false
}

// normalize reduces s to lower-case letters and digits with accents folded,
// so that "AT&T", "at t" and "ATT" compare equal, as do "Pokémon" and
// "POKEMON".
func normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		r = unicode.ToLower(r)
		if r < utf8.RuneSelf {
			if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' {
				b.WriteByte(byte(r))
			}
			continue
		}
		if f := foldLatin(r); f != "" {
			b.WriteString(f)
		} else if unicode.IsLetter(r) || unicode.IsDigit(r) {
			// Combining marks of decomposed text are neither, so "e" followed
			// by U+0301 folds to "e" as well.
			b.WriteRune(r)
		}
	}
	return b.String()
}

// foldLatin returns the ASCII spelling of a lower-case accented Latin letter,
// or "" for any other rune. It covers Latin-1 and Latin Extended-A, which is
// what brand names and card statements use.
func foldLatin(r rune) string {
	for _, f := range [...]struct{ from, to string }{
		{"àáâãäåāăą", "a"},
		{"æ", "ae"},
		{"çćĉċč", "c"},
		{"ďđð", "d"},
		{"èéêëēĕėęě", "e"},
		{"ĝğġģ", "g"},
		{"ĥħ", "h"},
		{"ìíîïĩīĭįı", "i"},
		{"ĳ", "ij"},
		{"ĵ", "j"},
		{"ķĸ", "k"},
		{"ĺļľŀł", "l"},
		{"ñńņňŉŋ", "n"},
		{"òóôõöøōŏő", "o"},
		{"œ", "oe"},
		{"ŕŗř", "r"},
		{"śŝşšſ", "s"},
		{"ß", "ss"},
		{"ţťŧ", "t"},
		{"þ", "th"},
		{"ùúûüũūŭůűų", "u"},
		{"ŵ", "w"},
		{"ýÿŷ", "y"},
		{"źżž", "z"},
	} {
		if strings.ContainsRune(f.from, r) {
			return f.to
		}
	}
	return ""
}

// validColor reports whether s is a #RRGGBB hex colour.
func validColor(s string) bool {
	if len(s) != 7 || s[0] != '#' {
		return false
	}
	for _, c := range []byte(s[1:]) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// validDomain reports whether s is a lower-case host name of at least two
// labels, such as "amazon.com" or "tv.youtube.com".
func validDomain(s string) bool {
	labels := strings.Split(s, ".")
	if len(labels) < 2 || len(s) > 253 {
		return false
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, c := range []byte(l) {
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
