package ratelimit

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkAllowFull measures Allow on a limiter holding maxBuckets keys
// that are all in use (none has refilled), each call a new key: the case
// of a client rotating addresses while the limiter is full.
func BenchmarkAllowFull(b *testing.B) {
	now := time.Unix(1_700_000_000, 0)
	l := New(1, 2, func() time.Time { return now })
	for i := range maxBuckets {
		l.Allow("k" + strconv.Itoa(i))
	}
	var n atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.Allow("n" + strconv.FormatInt(n.Add(1), 10))
		}
	})
}

// BenchmarkAllowHot measures Allow on a few keys used again and again.
func BenchmarkAllowHot(b *testing.B) {
	l := New(1e9, 1e9, time.Now)
	var n atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		key := "k" + strconv.FormatInt(n.Add(1), 10)
		for pb.Next() {
			l.Allow(key)
		}
	})
}
