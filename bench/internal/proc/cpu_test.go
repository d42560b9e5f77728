package proc

import (
	"os"
	"runtime"
	"testing"
	"time"
)

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

// TestOfCommand: the processes named as this one have used at least the
// CPU time this one had used before they were read.
func TestOfCommand(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("CPU times are read from Linux's /proc")
	}
	// Spin until this process has used some CPU time (a tick is 10 ms).
	var own time.Duration
	for own == 0 {
		var err error
		if own, err = OfProcess(os.Getpid())(); err != nil {
			t.Fatal(err)
		}
	}
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	_, comm, err := ParseProcessStat(string(stat))
	if err != nil {
		t.Fatal(err)
	}
	all, err := OfCommand(comm)()
	if err != nil {
		t.Fatal(err)
	}
	if all < own {
		t.Fatalf("process %s, command %q %s: want process ≤ command", own, comm, all)
	}
	if none, err := OfCommand("no such command here")(); err != nil || none != 0 {
		t.Fatalf("an unknown command used %s, %v; want 0", none, err)
	}
}
