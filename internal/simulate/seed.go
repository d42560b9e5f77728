// Package simulate generates the merchant data of Hitch's development
// simulator: orders and subscriptions that look like what a real merchant
// account reports, and later updates of those orders.
//
// Everything is deterministic: the same account (and the same now) always
// gives the same history, so a simulated account can be observed again and
// compared; docs/simulator.md is the contract.
// Money is computed in integer cents and every generated order keeps the
// price invariants of transaction.Price.
package simulate

import (
	"crypto/sha256"
	"encoding/binary"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
)

// Seed identifies one simulator call: the same Seed always yields the same data.
type Seed struct {
	// ClientID, ExternalUserID and MerchantID name the account.
	ClientID, ExternalUserID string
	MerchantID               int64
	// Call numbers the simulator's calls for the account. A history
	// belongs to the account and ignores it; updates draw from it.
	Call int64
}

// The purposes a generator is drawn for. Each gets its own stream, so that
// adding a draw to one never changes the data of another.
const (
	purposePerson        = "person"
	purposeAccount       = "account"
	purposeOrders        = "orders"
	purposeUpdate        = "update"
	purposeSubscriptions = "subscriptions"
	purposeHistory       = "history"
)

// newRand returns a PCG generator determined by parts. Each part is length
// prefixed before hashing, so ("ab", "c") and ("a", "bc") differ.
func newRand(parts ...string) *rand.Rand {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	sum := h.Sum(nil)
	return rand.New(rand.NewPCG(binary.BigEndian.Uint64(sum[:8]), binary.BigEndian.Uint64(sum[8:16])))
}

// personRand draws the user behind the seed: the same person (name, home,
// cards) at every merchant.
func personRand(s Seed) *rand.Rand {
	return newRand(purposePerson, s.ClientID, s.ExternalUserID)
}

// accountRand draws what belongs to the user's account at one merchant and
// stays the same on every call: wallet ids, loyalty tier, plans.
func accountRand(s Seed, purpose string) *rand.Rand {
	return newRand(purpose, s.ClientID, s.ExternalUserID, strconv.FormatInt(s.MerchantID, 10))
}

// callRand draws what is new on each call.
func callRand(s Seed, purpose string, extra ...string) *rand.Rand {
	parts := append([]string{purpose, s.ClientID, s.ExternalUserID,
		strconv.FormatInt(s.MerchantID, 10), strconv.FormatInt(s.Call, 10)}, extra...)
	return newRand(parts...)
}

// stableHash is a cheap hash for choices that must follow from a name alone,
// such as a product's SKU or the seller of a product.
func stableHash(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// pick returns a uniformly chosen element of xs, which must not be empty.
func pick[T any](r *rand.Rand, xs []T) T {
	return xs[r.IntN(len(xs))]
}

// chance reports true with probability p.
func chance(r *rand.Rand, p float64) bool {
	return r.Float64() < p
}

// between returns a uniform integer in [lo, hi]; hi <= lo gives lo.
func between(r *rand.Rand, lo, hi int64) int64 {
	if hi <= lo {
		return lo
	}
	return lo + r.Int64N(hi-lo+1)
}

// choice is a value with a relative weight.
type choice[T any] struct {
	v T
	w int
}

// pickWeighted returns one value of cs with probability proportional to its
// weight; cs must have a positive total weight.
func pickWeighted[T any](r *rand.Rand, cs []choice[T]) T {
	total := 0
	for _, c := range cs {
		total += c.w
	}
	n := r.IntN(total)
	for _, c := range cs {
		if n < c.w {
			return c.v
		}
		n -= c.w
	}
	return cs[len(cs)-1].v
}

const (
	digits   = "0123456789"
	upperNum = "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789"
	base62   = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// randString returns n characters drawn from alphabet.
func randString(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// hashString returns n characters of alphabet determined by h.
func hashString(h uint64, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[h%uint64(len(alphabet))]
		h /= uint64(len(alphabet))
		if h == 0 {
			h = stableHash(string(b[:i+1]))
		}
	}
	return string(b)
}
