package proc

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// burn keeps one CPU busy for d.
func burn(d time.Duration) int {
	n := 0
	for end := time.Now().Add(d); time.Now().Before(end); {
		n++
	}
	return n
}

func TestCPUUse(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("CPU times are read from Linux's /proc")
	}
	comm, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	groups := CPUGroups{
		PIDs:  map[string]int{"self": os.Getpid(), "gone": 1 << 30},
		Comms: map[string]string{"by name": strings.TrimSpace(string(comm)), "nobody": "no such command"},
	}
	before := groups.Sample()
	burn(400 * time.Millisecond)
	u := groups.Sample().Since(before)

	if u.Seconds < 0.4 || u.BusyPercent <= 0 || u.BusyPercent > 100 {
		t.Fatalf("window %.3f s, busy %.1f%%: want ≥ 0.4 s and a busy share in (0, 100]", u.Seconds, u.BusyPercent)
	}
	// Ticks are 10 ms; the loop ran 400 ms on one CPU.
	for _, g := range []string{"self", "by name"} {
		if s := u.GroupSeconds[g]; s < 0.3 || s > u.Seconds*float64(runtime.NumCPU())+0.02 {
			t.Errorf("group %q used %.2f s of CPU in %.2f s, want about 0.4", g, s, u.Seconds)
		}
	}
	for _, g := range []string{"gone", "nobody"} {
		if s, ok := u.GroupSeconds[g]; ok {
			t.Errorf("group %q with no process reported %.2f s", g, s)
		}
	}

	per := u.PerOp(4)
	if got, want := per["self"], 1e6*u.GroupSeconds["self"]/4; got != want {
		t.Errorf("PerOp(4)[self] = %.0f µs, want %.0f", got, want)
	}
	if _, ok := per["other"]; !ok {
		t.Error("PerOp has no \"other\"")
	}
	if (CPUUse{}).PerOp(4) != nil || u.PerOp(0) != nil {
		t.Error("PerOp of nothing should be nil")
	}
	if z := (CPUSample{}).Since(before); z.Seconds != 0 || z.GroupSeconds != nil {
		t.Errorf("Since from a sample without /proc = %+v, want zero", z)
	}
}
