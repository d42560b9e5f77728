package ratelimit

import (
	"strconv"
	"testing"
	"time"
)

func TestLimiter(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	l := New(2, 3, func() time.Time { return now })
	for i := range 3 {
		if ok, _ := l.Allow("a"); !ok {
			t.Fatalf("request %d of the burst refused", i+1)
		}
	}
	if ok, retry := l.Allow("a"); ok || retry != 1 {
		t.Fatalf("past the burst: %v, retry %d", ok, retry)
	}
	if ok, _ := l.Allow("b"); !ok {
		t.Fatal("another key shares the bucket")
	}
	now = now.Add(500 * time.Millisecond) // one token back at 2/s
	if ok, _ := l.Peek("a"); !ok {
		t.Fatal("no token after refilling")
	}
	if ok, _ := l.Allow("a"); !ok {
		t.Fatal("peek took the token")
	}
	if ok, _ := l.Allow("a"); ok {
		t.Fatal("two tokens after half a second at 2/s")
	}
}

// TestLimiterBounded: past maxBuckets keys the limiter forgets the keys
// idle the longest, not the ones in use: a throttled key that keeps
// asking stays throttled while many other keys come and go.
func TestLimiterBounded(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	l := New(1, 1, func() time.Time { return now })
	l.Allow("busy")
	for i := range 2 * maxBuckets {
		l.Allow("k" + strconv.Itoa(i))
		if i%1000 == 0 {
			if ok, _ := l.Allow("busy"); ok {
				t.Fatalf("after %d other keys, the throttled key got a fresh bucket", i)
			}
		}
	}
	held := 0
	for i := range l.shards {
		s := &l.shards[i]
		held += len(s.buckets)
		n := 0
		for b := s.lru.next; b != &s.lru; b = b.next {
			n++
		}
		if n != len(s.buckets) {
			t.Fatalf("shard %d: %d buckets listed, %d in the map", i, n, len(s.buckets))
		}
	}
	if held > maxBuckets {
		t.Fatalf("%d buckets held, more than %d", held, maxBuckets)
	}
	for i := range l.shards {
		if _, ok := l.shards[i].buckets["k0"]; ok {
			t.Fatal("the key idle the longest was kept")
		}
	}
}
