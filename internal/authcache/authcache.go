// Package authcache remembers credentials verified recently, so that most
// authenticated requests cost no database read. Entries are keyed by a
// SHA-256 of the id and secret: plain secrets are not kept in memory longer
// than the request.
package authcache

import (
	"crypto/sha256"
	"sync"
	"time"
)

// Cache maps verified (id, secret) pairs to what they authenticate, each
// until its expiry. It is safe for concurrent use.
type Cache[T any] struct {
	max int

	mu      sync.Mutex
	entries map[[sha256.Size]byte]entry[T]
}

type entry[T any] struct {
	value   T
	id      string
	expires time.Time
}

// New returns a cache of at most max entries: past it, expired entries are
// dropped and, if that is not enough, the cache starts over.
func New[T any](max int) *Cache[T] {
	return &Cache[T]{max: max, entries: map[[sha256.Size]byte]entry[T]{}}
}

// Get returns what the pair authenticated, if it was verified and has not
// expired at now.
func (c *Cache[T]) Get(id, secret string, now time.Time) (T, bool) {
	k := key(id, secret)
	c.mu.Lock()
	e, ok := c.entries[k]
	c.mu.Unlock()
	if !ok || !now.Before(e.expires) {
		var zero T
		return zero, false
	}
	return e.value, true
}

// Put remembers that the pair authenticates v until expires.
func (c *Cache[T]) Put(id, secret string, v T, expires, now time.Time) {
	k := key(id, secret)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.max {
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= c.max {
			clear(c.entries)
		}
	}
	c.entries[k] = entry[T]{value: v, id: id, expires: expires}
}

// Forget drops every entry of id, so that a revocation in this process
// takes effect at once.
func (c *Cache[T]) Forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.entries {
		if e.id == id {
			delete(c.entries, k)
		}
	}
}

func key(id, secret string) [sha256.Size]byte {
	// Credentials of every valid length fit the stack buffer, so a lookup
	// allocates nothing; anything longer is hashed all the same.
	var buf [384]byte
	b := append(buf[:0], id...)
	b = append(b, 0)
	b = append(b, secret...)
	return sha256.Sum256(b)
}
