// Package ratelimit is a token bucket per key (a client, a connector, an
// IP address), kept in this node's memory.
package ratelimit

import (
	"math"
	"sync"
	"time"
)

// Limiter is a token bucket per key, on this node. It is safe for
// concurrent use.
type Limiter struct {
	rate  float64
	burst float64
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

// New returns a Limiter that refills rate tokens a second up to burst.
func New(rate float64, burst int, now func() time.Time) *Limiter {
	return &Limiter{rate: rate, burst: float64(burst), now: now, buckets: map[string]*bucket{}}
}

// maxBuckets bounds the limiter's memory; past it, full buckets (keys idle
// long enough to refill) are forgotten.
const maxBuckets = 100_000

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
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= maxBuckets {
			l.prune(now)
		}
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[key] = b
	}
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

// prune forgets buckets that have refilled.
func (l *Limiter) prune(now time.Time) {
	for k, b := range l.buckets {
		if b.tokens+now.Sub(b.last).Seconds()*l.rate >= l.burst {
			delete(l.buckets, k)
		}
	}
}
