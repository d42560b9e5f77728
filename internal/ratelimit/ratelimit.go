// Package ratelimit is a token bucket per key (a client, a connector, an
// IP address), kept in this node's memory.
package ratelimit

import (
	"hash/maphash"
	"math"
	"sync"
	"time"
)

// Limiter is a token bucket per key, on this node. It is safe for
// concurrent use.
//
// Its memory is bounded: the keys are spread over shards, each a map and a
// least-recently-used list under its own lock, and a shard that is full
// forgets its least recently used key to make room. Every call is O(1):
// no call scans the buckets, so a client sending many new keys cannot hold
// a lock for long, and calls on different shards do not wait for each
// other.
type Limiter struct {
	rate   float64
	burst  float64
	now    func() time.Time
	seed   maphash.Seed
	shards [shardCount]shard
}

type shard struct {
	mu      sync.Mutex
	buckets map[string]*bucket
	// lru is the sentinel of a ring of the shard's buckets, most recently
	// used first.
	lru bucket
}

type bucket struct {
	key        string
	tokens     float64
	last       time.Time
	prev, next *bucket
}

// maxBuckets bounds the limiter's memory (about 150 bytes a key); past it,
// each shard forgets the keys idle the longest.
const (
	maxBuckets      = 100_000
	shardCount      = 64
	bucketsPerShard = maxBuckets / shardCount
)

// New returns a Limiter that refills rate tokens a second up to burst.
func New(rate float64, burst int, now func() time.Time) *Limiter {
	l := &Limiter{rate: rate, burst: float64(burst), now: now, seed: maphash.MakeSeed()}
	for i := range l.shards {
		s := &l.shards[i]
		s.buckets = map[string]*bucket{}
		s.lru.prev, s.lru.next = &s.lru, &s.lru
	}
	return l
}

// Allow takes a token for key, or reports how many seconds until one is
// available.
func (l *Limiter) Allow(key string) (bool, int) {
	return l.take(key, true)
}

// Peek reports whether key has a token, without taking it.
func (l *Limiter) Peek(key string) (bool, int) {
	return l.take(key, false)
}

func (l *Limiter) take(key string, consume bool) (bool, int) {
	now := l.now()
	s := &l.shards[maphash.String(l.seed, key)%shardCount]
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.buckets[key]
	if ok {
		s.unlink(b)
	} else {
		if len(s.buckets) >= bucketsPerShard {
			oldest := s.lru.prev
			s.unlink(oldest)
			delete(s.buckets, oldest.key)
		}
		b = &bucket{key: key, tokens: l.burst, last: now}
		s.buckets[key] = b
	}
	s.pushFront(b)
	b.tokens = math.Min(l.burst, b.tokens+max(0, now.Sub(b.last).Seconds())*l.rate)
	b.last = now
	if b.tokens >= 1 {
		if consume {
			b.tokens--
		}
		return true, 0
	}
	return false, int(math.Ceil((1 - b.tokens) / l.rate))
}

func (s *shard) unlink(b *bucket) {
	b.prev.next, b.next.prev = b.next, b.prev
	b.prev, b.next = nil, nil
}

func (s *shard) pushFront(b *bucket) {
	b.prev, b.next = &s.lru, s.lru.next
	s.lru.next.prev = b
	s.lru.next = b
}
