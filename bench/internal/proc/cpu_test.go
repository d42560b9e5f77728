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
	if burn(400*time.Millisecond) == 0 {
		t.Fatal("the busy loop never ran")
	}
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

func TestParseStat(t *testing.T) {
	t.Parallel()
	// A command name with spaces and a parenthesis; utime 250, stime 50.
	stat := "4242 (hitch (x) serve) S 1 4242 1 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 9 0 100 0 0"
	if ticks, comm, err := ParseProcessStat(stat); err != nil || ticks != 300 || comm != "hitch (x) serve" {
		t.Errorf("ParseProcessStat = %d, %q, %v; want 300, \"hitch (x) serve\"", ticks, comm, err)
	}
	// user 100, nice 20, system 30, idle 5000 and iowait 700 (not busy),
	// irq 1, softirq 2, steal 47; guest times after them are left out.
	machine := "cpu  100 20 30 5000 700 1 2 47 9 9\ncpu0 50 10 15 2500 350 0 1 23 0 0\n"
	if busy, total, err := ParseMachineStat(machine); err != nil || busy != 200 || total != 5900 {
		t.Errorf("ParseMachineStat = %d, %d, %v; want 200, 5900", busy, total, err)
	}
	for _, bad := range []string{"4242 hitch S 1", "4242 (hitch) S 1 2 3", "4242 (hitch) S 1 1 1 1 1 1 1 1 1 1 1 -5 50"} {
		if _, _, err := ParseProcessStat(bad); err == nil {
			t.Errorf("ParseProcessStat(%q) succeeded", bad)
		}
	}
	for _, bad := range []string{"intr 1 2 3\n", "cpu 1 2 3\n", "cpu 1 2 x 4 5 6 7 8\n"} {
		if _, _, err := ParseMachineStat(bad); err == nil {
			t.Errorf("ParseMachineStat(%q) succeeded", bad)
		}
	}
}
