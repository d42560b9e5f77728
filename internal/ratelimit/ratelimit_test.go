package ratelimit

import (
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
