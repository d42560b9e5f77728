package reqlog

import (
	"testing"
	"time"
)

// The writer rests after a batch long enough to keep to cpuShare of a CPU,
// and stops resting when it is told to stop.
func TestWriterRests(t *testing.T) {
	t.Parallel()
	w := NewWriter(nil, nil)
	busy := 2 * time.Millisecond
	want := time.Duration(float64(busy) * (1 - cpuShare) / cpuShare)
	start := time.Now()
	if !w.rest(busy) {
		t.Fatal("rest reported a stop")
	}
	// A timer never fires early; a busy machine only makes it late.
	if took := time.Since(start); took < want {
		t.Errorf("rested %v after %v of work, want at least %v (a share of %.2f)", took, busy, want, cpuShare)
	}
	close(w.stop)
	if w.rest(time.Hour) && cpuShare < 1 {
		t.Error("rest went on after the stop")
	}
}
