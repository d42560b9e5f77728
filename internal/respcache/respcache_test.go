package respcache

import (
	"fmt"
	"sync"
	"testing"
)

func TestVersionDecides(t *testing.T) {
	c := New(1 << 20)
	if _, ok := c.Get("k", 0); ok {
		t.Fatal("hit on an empty cache")
	}
	c.Put("k", 3, []byte("three"))
	if b, ok := c.Get("k", 3); !ok || string(b) != "three" {
		t.Fatalf("Get(k, 3) = %q, %v", b, ok)
	}
	for _, v := range []int64{2, 4} {
		if b, ok := c.Get("k", v); ok {
			t.Errorf("Get(k, %d) = %q: a response of another version", v, b)
		}
	}
	c.Put("k", 4, []byte("four"))
	if b, ok := c.Get("k", 4); !ok || string(b) != "four" {
		t.Errorf("Get(k, 4) = %q, %v", b, ok)
	}
	if _, ok := c.Get("k", 3); ok {
		t.Error("the replaced response is still served")
	}
	if hits, misses := c.Stats(); hits != 2 || misses != 4 {
		t.Errorf("Stats = %d hits, %d misses; want 2 and 4", hits, misses)
	}
}

func TestBoundedLeastRecentlyUsedOut(t *testing.T) {
	body := make([]byte, 1000)
	cost := int64(len("k00")+len(body)) + overhead
	c := New(10 * cost)
	for i := range 10 {
		c.Put(fmt.Sprintf("k%02d", i), 1, body)
	}
	if c.Len() != 10 || c.Size() != 10*cost {
		t.Fatalf("Len %d Size %d, want 10 and %d", c.Len(), c.Size(), 10*cost)
	}
	if _, ok := c.Get("k00", 1); !ok { // k00 becomes the most recent
		t.Fatal("k00 missing")
	}
	c.Put("k10", 1, body)
	if _, ok := c.Get("k01", 1); ok {
		t.Error("k01, the least recently used, was kept past the bound")
	}
	for _, k := range []string{"k00", "k02", "k10"} {
		if _, ok := c.Get(k, 1); !ok {
			t.Errorf("%s evicted", k)
		}
	}
	if c.Size() > 10*cost {
		t.Errorf("Size %d over the bound %d", c.Size(), 10*cost)
	}
	c.Put("big", 1, make([]byte, 10*cost/8))
	if _, ok := c.Get("big", 1); ok {
		t.Error("a response over an eighth of the cache was kept")
	}
}

func TestReplaceAccountsSize(t *testing.T) {
	c := New(1 << 20)
	c.Put("k", 1, make([]byte, 100))
	c.Put("k", 2, make([]byte, 300, 1000)) // the whole array is held
	if want := int64(len("k")+1000) + overhead; c.Size() != want || c.Len() != 1 {
		t.Errorf("Size %d Len %d, want %d and 1", c.Size(), c.Len(), want)
	}
}

func TestConcurrent(t *testing.T) {
	c := New(64 << 10)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				k := fmt.Sprintf("k%d", (g*7+i)%50)
				if b, ok := c.Get(k, int64(i%3)); ok && len(b) != i%3*100 { // each version has its own length
					t.Errorf("%s at version %d holds %d bytes", k, i%3, len(b))
					return
				}
				c.Put(k, int64(i%3), make([]byte, i%3*100))
			}
		})
	}
	wg.Wait()
	if c.Size() > 64<<10 {
		t.Errorf("Size %d over the bound", c.Size())
	}
}
