package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// rssInterval is how often a server's resident memory is sampled.
const rssInterval = 100 * time.Millisecond

// rssSampler records the peak VmRSS of a process until stopped.
type rssSampler struct {
	done chan struct{}
	peak chan int64
}

func startRSSSampler(pid int) *rssSampler {
	s := &rssSampler{done: make(chan struct{}), peak: make(chan int64, 1)}
	go s.loop(pid)
	return s
}

func (s *rssSampler) loop(pid int) {
	ticker := time.NewTicker(rssInterval)
	defer ticker.Stop()
	var peak int64
	sample := func() {
		if rss, err := procStatusBytes(pid, "VmRSS"); err == nil {
			peak = max(peak, rss)
		}
	}
	sample()
	for {
		select {
		case <-s.done:
			sample()
			s.peak <- peak
			return
		case <-ticker.C:
			sample()
		}
	}
}

// stop ends the sampling and returns the peak in bytes; 0 where there is no
// /proc.
func (s *rssSampler) stop() int64 {
	close(s.done)
	return <-s.peak
}

// procStatusBytes reads a memory field ("VmRSS", "VmHWM") of
// /proc/PID/status, in bytes.
func procStatusBytes(pid int, field string) (int64, error) {
	path := fmt.Sprintf("/proc/%d/status", pid)
	status, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(status)) {
		value, ok := strings.CutPrefix(line, field+":")
		if !ok {
			continue
		}
		kB, unit, _ := strings.Cut(strings.TrimSpace(value), " ")
		if unit != "kB" {
			return 0, fmt.Errorf("%s: %s in %q, want kB", path, field, unit)
		}
		n, err := strconv.ParseInt(kB, 10, 64)
		return n << 10, err
	}
	return 0, fmt.Errorf("%s: no %s", path, field)
}
