// Package respcache keeps rendered responses in memory, each under the
// version of the data it was rendered from.
//
// The database stays the authority: a caller reads the current version of
// its data (a counter that every change bumps in the same transaction) and
// asks for the response of that version. A cached response of any other
// version is a miss, so every node of a deployment sees every change made
// through any of them, and nothing needs invalidating.
//
// Since the version is read before the data, a response cached under
// version v reflects v or later: never older data under a newer version.
package respcache

import (
	"container/list"
	"sync"
)

// Cache is a byte-bounded cache of versioned responses, least recently used
// out first. Safe for concurrent use.
type Cache struct {
	mu      sync.Mutex
	max     int64
	size    int64
	entries map[string]*list.Element
	order   list.List // front: most recently used
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
	if !ok {
		return nil, false
	}
	e := el.Value.(*entry)
	if e.version != version {
		return nil, false
	}
	c.order.MoveToFront(el)
	return e.body, true
}

// Put caches body as key's response at version, replacing what key held,
// unless key holds a later version already (a slower request finishing
// after a faster one). The cache keeps body: the caller must not change it
// afterwards. A response larger than an eighth of the cache is not kept.
func (c *Cache) Put(key string, version int64, body []byte) {
	cost := int64(len(key)+len(body)) + overhead
	if cost > c.max/8 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		e := el.Value.(*entry)
		if e.version > version {
			return
		}
		c.size += int64(len(body) - len(e.body))
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
		c.size -= int64(len(e.key)+len(e.body)) + overhead
	}
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
