package authcache

import (
	"fmt"
	"testing"
	"time"
)

func TestCache(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	c := New[string](3)
	c.Put("a", "s1", "A", now.Add(time.Minute), now)
	if v, ok := c.Get("a", "s1", now); !ok || v != "A" {
		t.Fatalf("Get = %q, %v", v, ok)
	}
	if _, ok := c.Get("a", "s2", now); ok {
		t.Fatal("another secret of the same id was accepted")
	}
	if _, ok := c.Get("a\x00s", "1", now); ok {
		t.Fatal("a pair that concatenates the same was accepted")
	}
	if _, ok := c.Get("a", "s1", now.Add(time.Minute)); ok {
		t.Fatal("an expired entry was accepted")
	}
	c.Put("b", "s", "B", now.Add(time.Minute), now)
	c.Forget("a")
	if _, ok := c.Get("a", "s1", now); ok {
		t.Fatal("a forgotten id was accepted")
	}
	if _, ok := c.Get("b", "s", now); !ok {
		t.Fatal("Forget dropped another id")
	}
	for i := range 10 {
		c.Put(fmt.Sprint("id", i), "s", "x", now.Add(time.Minute), now)
		if n := len(c.entries); n > 3 {
			t.Fatalf("%d entries, bound is 3", n)
		}
	}
}
