// Package respcache keeps rendered responses in memory, each under the
// version of the data it was rendered from.
//
// The database stays the authority: a caller reads the current version of
// its data (a value that every change replaces, in the same transaction)
// and asks for the response of that version. A cached response of any other
// version is a miss, so every node of a deployment sees every change made
// through any of them, and nothing needs invalidating. Versions are only
// compared for equality.
//
// Since the version is read before the data, a response cached under
// version v reflects v or later: never older data under a newer version.
package respcache

import (
	"container/list"
	"sync"
	"sync/atomic"
)

// Cache is a byte-bounded cache of versioned responses, least recently used
// out first. Safe for concurrent use.
type Cache struct {
	mu      sync.Mutex
	max     int64
	size    int64
	entries map[string]*list.Element
	order   list.List // front: most recently used

	hits, misses atomic.Int64
}

type entry struct {
	key     string
	version int64
	body    []byte
}

// overhead approximates what an entry costs beside its key and body.
const overhead = 96

// New returns a cache holding at most maxBytes of responses and keys.
func New(maxBytes int64) *Cache {
	return &Cache{max: maxBytes, entries: map[string]*list.Element{}}
}

// Get returns the response cached for key at version, if any. The caller
// must not change it.
func (c *Cache) Get(key string, version int64) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok || el.Value.(*entry).version != version {
		c.misses.Add(1)
		return nil, false
	}
	c.order.MoveToFront(el)
	c.hits.Add(1)
	return el.Value.(*entry).body, true
}

// Stats returns how many Gets were answered and how many were not.
func (c *Cache) Stats() (hits, misses int64) { return c.hits.Load(), c.misses.Load() }

// Put caches body as key's response at version, replacing what key held.
// The cache keeps body: the caller must not change it afterwards. A
// response costing more than an eighth of the cache is not kept.
//
// A slower request may replace a newer response with an older one; the
// next Get then misses and renders it again, which costs time, never
// correctness.
func (c *Cache) Put(key string, version int64, body []byte) {
	cost := costOf(key, body)
	if cost > c.max/8 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		e := el.Value.(*entry)
		c.size += cost - costOf(e.key, e.body)
		e.version, e.body = version, body
		c.order.MoveToFront(el)
	} else {
		c.entries[key] = c.order.PushFront(&entry{key: key, version: version, body: body})
		c.size += cost
	}
	for c.size > c.max {
		el := c.order.Back()
		e := el.Value.(*entry)
		c.order.Remove(el)
		delete(c.entries, e.key)
		c.size -= costOf(e.key, e.body)
	}
}

// costOf is what an entry holds in memory: its body's whole array, not
// only its length.
func costOf(key string, body []byte) int64 {
	return int64(len(key)+cap(body)) + overhead
}

// Len is the number of cached responses.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Size is the bytes the cached responses are counted for.
func (c *Cache) Size() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size
}
