package proc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// rssInterval is how often a server's resident memory is sampled.
const rssInterval = 100 * time.Millisecond

// RSSSampler records the peak VmRSS of a process until stopped.
type RSSSampler struct {
	done chan struct{}
	peak chan int64
}

// SampleRSS starts sampling the VmRSS of process pid every 100 ms.
func SampleRSS(pid int) *RSSSampler {
	s := &RSSSampler{done: make(chan struct{}), peak: make(chan int64, 1)}
	go s.loop(pid)
	return s
}

func (s *RSSSampler) loop(pid int) {
	ticker := time.NewTicker(rssInterval)
	defer ticker.Stop()
	var peak int64
	sample := func() {
		if rss, err := StatusBytes(pid, "VmRSS"); err == nil {
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

// Stop ends the sampling and returns the peak in bytes; 0 where there is no
// /proc.
func (s *RSSSampler) Stop() int64 {
	close(s.done)
	return <-s.peak
}

// StatusBytes reads a memory field ("VmRSS", "VmHWM") of /proc/PID/status,
// in bytes.
func StatusBytes(pid int, field string) (int64, error) {
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
