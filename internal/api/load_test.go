package api

import (
	"sync"
	"testing"
	"time"
)

// The API is busy while requests begin with one other in flight per CPU,
// and for busyMemory after; requests one at a time never make it busy.
func TestLoadBusy(t *testing.T) {
	t.Parallel()
	l := NewLoad()
	var started sync.WaitGroup
	release := make(chan struct{})
	serve := func() {
		defer l.begin()()
		started.Done()
		<-release
	}

	for range 100 {
		started.Add(1)
		go close(release) // each request ends at once
		serve()
		release = make(chan struct{})
	}
	if l.Busy() {
		t.Fatal("requests one at a time made the API busy")
	}

	n := int(l.threshold) + 1
	started.Add(n)
	var done sync.WaitGroup
	for range n {
		done.Go(serve)
	}
	started.Wait()
	if !l.Busy() {
		t.Fatalf("%d requests in flight at once did not make the API busy", n)
	}
	close(release)
	done.Wait()
	if !l.Busy() {
		t.Fatal("the API stopped being busy as soon as its requests ended")
	}
	time.Sleep(busyMemory + 20*time.Millisecond)
	if l.Busy() {
		t.Fatalf("the API is still busy %v after its last requests", busyMemory+20*time.Millisecond)
	}
}
