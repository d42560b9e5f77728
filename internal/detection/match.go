package detection

import (
	"hash/maphash"
	"math/bits"
	"slices"
	"unicode/utf8"

	"github.com/hitchdev/hitch/internal/merchant"
)

// Matcher resolves free-text merchant names, such as the names developers
// search detected accounts by, to catalog merchants. Names are compared by
// their merchant.NameKey, exactly or within Tolerance edits. A Matcher is
// read-only once built and safe for concurrent use.
type Matcher struct {
	keys  []catalogKey
	exact map[string]int32 // key → index in keys

	// deletions is the fuzzy index: for every key, the hashes of the strings
	// left by deleting up to its Tolerance runes from it, each packed as
	// hash bits above the key's index in keys (idxBits wide), sorted. Two
	// keys within distance d share a string at most d deletions from each,
	// so a query only looks up its own deletions (SymSpell). Hashes instead
	// of strings keep 10,000 merchants' index to about 8 MiB.
	deletions []uint64
	idxBits   uint
	seed      maphash.Seed
}

// catalogKey is one distinct NameKey of the catalog's names and aliases.
type catalogKey struct {
	key        string
	runes      int
	merchantID int64
	shared     bool // names or aliases of two merchants have this key
}

// NewMatcher indexes the names and aliases of merchants for Resolve.
func NewMatcher(merchants []*merchant.Merchant) *Matcher {
	m := &Matcher{exact: make(map[string]int32), seed: maphash.MakeSeed()}
	for _, mer := range merchants {
		for _, text := range slices.Concat([]string{mer.Name}, mer.Aliases) {
			key := merchant.NameKey(text)
			if key == "" {
				continue
			}
			if i, ok := m.exact[key]; ok {
				// Aliases often repeat the name's key ("Amazon.com, Inc.").
				if m.keys[i].merchantID != mer.ID {
					m.keys[i].shared = true
				}
				continue
			}
			m.exact[key] = int32(len(m.keys))
			m.keys = append(m.keys, catalogKey{key: key, runes: utf8.RuneCountInString(key), merchantID: mer.ID})
		}
	}

	m.idxBits = uint(bits.Len(uint(len(m.keys))))
	total := 0
	for _, k := range m.keys {
		total += deletionCount(k.runes, Tolerance(k.runes))
	}
	m.deletions = make([]uint64, 0, total)
	var scratch deleter
	for i, k := range m.keys {
		scratch.each(k.key, Tolerance(k.runes), func(s []byte) {
			m.deletions = append(m.deletions, m.pack(maphash.Bytes(m.seed, s))|uint64(i))
		})
	}
	slices.Sort(m.deletions)
	// A key with a doubled rune ("grammarly" less either "m") yields some
	// deletions twice.
	m.deletions = slices.Compact(m.deletions)
	return m
}

// pack keeps the hash bits that leave room for a key index below them.
func (m *Matcher) pack(h uint64) uint64 {
	return h >> m.idxBits << m.idxBits
}

// Resolve returns the id of the catalog merchant name stands for: the one
// with a name or alias of the same NameKey, else the one whose name or alias
// key is closest to name's within Tolerance of the shorter key. It reports
// false when there is none, when name has no letters or digits, and when
// two merchants are equally close (including sharing the key), since a
// guess between two merchants is worse than no answer.
func (m *Matcher) Resolve(name string) (merchantID int64, ok bool) {
	return m.resolveKey(merchant.NameKey(name))
}

// resolveKey is Resolve for a name already reduced to its key.
func (m *Matcher) resolveKey(key string) (int64, bool) {
	if key == "" {
		return 0, false
	}
	if i, ok := m.exact[key]; ok {
		k := m.keys[i]
		if k.shared {
			return 0, false
		}
		return k.merchantID, true
	}

	n := utf8.RuneCountInString(key)
	t := Tolerance(n)
	if t == 0 || len(m.keys) == 0 {
		return 0, false
	}
	best, bestID, tie := t+1, int64(0), false
	var seen []int32 // candidates are few: a slice beats a map
	mask := uint64(1)<<m.idxBits - 1
	var scratch deleter
	scratch.each(key, t, func(s []byte) {
		lo := m.pack(maphash.Bytes(m.seed, s))
		at, _ := slices.BinarySearch(m.deletions, lo)
		for ; at < len(m.deletions) && m.deletions[at]&^mask == lo; at++ {
			i := int32(m.deletions[at] & mask)
			if slices.Contains(seen, i) {
				continue
			}
			seen = append(seen, i)
			k := &m.keys[i]
			tol := Tolerance(min(n, k.runes))
			if tol == 0 || abs(n-k.runes) > tol {
				continue
			}
			d := Distance(key, k.key, tol)
			switch {
			case d > tol || d > best: // too far, or farther than the best
			case d < best:
				best, bestID, tie = d, k.merchantID, k.shared
			case k.merchantID != bestID || k.shared:
				tie = true
			}
		}
	})
	if best > t || tie {
		return 0, false
	}
	return bestID, true
}

// SameName reports whether names a and b denote the same merchant: both
// resolve to the same catalog merchant, or neither resolves and their keys
// are equal or within Tolerance of the shorter one. A name that resolves is
// never the same as one that does not: if b were a spelling of a's
// merchant it would have resolved to it, so b is some other merchant (or
// too close to two to tell). Fuzzy sameness is not transitive.
func (m *Matcher) SameName(a, b string) bool {
	ka, kb := merchant.NameKey(a), merchant.NameKey(b)
	ida, oka := m.resolveKey(ka)
	idb, okb := m.resolveKey(kb)
	if oka || okb {
		return oka && okb && ida == idb
	}
	_, near := keyDistance(ka, kb)
	return near
}

// keyDistance returns the edit distance between two name keys and whether
// it is within Tolerance; an empty key is near nothing.
func keyDistance(ka, kb string) (int, bool) {
	if ka == "" || kb == "" {
		return 0, false
	}
	if ka == kb {
		return 0, true
	}
	t := Tolerance(min(utf8.RuneCountInString(ka), utf8.RuneCountInString(kb)))
	d := Distance(ka, kb, t)
	return d, d <= t
}

// Tolerance is the largest edit distance at which two name keys, the
// shorter of which has n runes, are still the same name: 0 up to 4 runes,
// 1 for 5–8 and 2 for 9 or more. Short keys get none because one edit
// turns a short name into another real one ("Max" and "Mix", "WM" and
// "WFM"); the shorter key decides so that adding letters to a short name
// ("Uber" to "Ubers") is not forgiven.
func Tolerance(n int) int {
	switch {
	case n <= 4:
		return 0
	case n <= 8:
		return 1
	default:
		return 2
	}
}

// Distance returns the optimal string alignment distance between a and b,
// counted in runes: the fewest insertions, deletions, substitutions and
// swaps of two adjacent runes that turn a into b, editing no rune twice. It
// stops early and returns limit+1 once the distance is certain to exceed
// limit; a negative limit counts as 0.
func Distance(a, b string, limit int) int {
	limit = max(limit, 0)
	if a == b {
		return 0
	}
	ra, rb := []rune(a), []rune(b)
	la, lb := len(ra), len(rb)
	over := limit + 1
	if abs(la-lb) > limit {
		return over
	}
	if la == 0 || lb == 0 {
		return la + lb
	}

	// Three rows of the table (two back, for swaps), with only the cells
	// within limit of the diagonal computed: the others are over it anyway.
	var buf [3 * 48]int
	var rows []int
	if 3*(lb+1) <= len(buf) {
		rows = buf[:3*(lb+1)]
	} else {
		rows = make([]int, 3*(lb+1))
	}
	prev2, prev, cur := rows[:lb+1], rows[lb+1:2*(lb+1)], rows[2*(lb+1):]
	for j := range prev {
		prev[j] = min(j, over)
	}
	for i := 1; i <= la; i++ {
		lo, hi := max(1, i-limit), min(lb, i+limit)
		cur[0] = min(i, over)
		if lo > 1 {
			cur[lo-1] = over // read as cur[j-1] by this row's first cell
		}
		rowMin := cur[0]
		for j := lo; j <= hi; j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			v := min(prev[j-1]+cost, prev[j]+1, cur[j-1]+1)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = min(v, over)
			rowMin = min(rowMin, cur[j])
		}
		if hi < lb {
			cur[hi+1] = over // read as prev[j] by the next row's last cell
		}
		// A swap reaches back two rows, but never below a cell of the row
		// between (d[i][j-1] ≤ d[i-1][j-2]+1), so one row over limit is enough.
		if rowMin > limit {
			return over
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[lb]
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// deleter enumerates the strings left by deleting runes from a key, reusing
// its buffers across keys.
type deleter struct {
	key  []byte
	bufs [][]byte // bufs[d] holds the string less d+1 runes
}

// each calls fn with key and every string made by deleting up to t runes
// from it; a string comes more than once when key repeats a rune. fn must
// not keep its argument.
func (d *deleter) each(key string, t int, fn func([]byte)) {
	for len(d.bufs) < t {
		d.bufs = append(d.bufs, nil)
	}
	d.key = append(d.key[:0], key...)
	fn(d.key)
	d.delete(d.key, 0, 0, t, fn)
}

// delete calls fn with s less one rune at or after byte offset from, and
// recurses to delete more; the runes deleted rise, so each set of positions
// comes once.
func (d *deleter) delete(s []byte, from, depth, t int, fn func([]byte)) {
	if depth == t {
		return
	}
	for at := from; at < len(s); {
		_, size := utf8.DecodeRune(s[at:])
		out := append(append(d.bufs[depth][:0], s[:at]...), s[at+size:]...)
		d.bufs[depth] = out
		fn(out)
		d.delete(out, at, depth+1, t, fn)
		at += size
	}
}

// deletionCount is how many strings deleter.each yields for a key of n
// runes and tolerance t: the sum of C(n, k) for k ≤ t.
func deletionCount(n, t int) int {
	total, c := 0, 1
	for k := 0; k <= t && k <= n; k++ {
		total += c
		c = c * (n - k) / (k + 1)
	}
	return total
}
