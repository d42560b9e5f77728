package proc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of /proc's CPU times: Linux fixes it at 100 for
// user space whatever the kernel's own tick.
const userHZ = 100

// CPUGroups names the processes whose CPU time a phase reports: processes
// the benchmark knows by PID (itself, a server it started), and processes
// it knows only by command name (a database server's backends).
type CPUGroups struct {
	PIDs  map[string]int
	Comms map[string]string
}

// CPUSample is the CPU time used until a moment, in /proc's ticks:
// machine-wide, and by each group's processes alive then.
type CPUSample struct {
	at          time.Time
	busy, total int64
	// procs is each group's ticks by PID, so that a process that starts
	// between two samples counts from its start.
	procs map[string]map[int]int64
}

// Sample reads the CPU time used so far. It is empty where there is no
// /proc, and Since then reports nothing.
func (g CPUGroups) Sample() CPUSample {
	s := CPUSample{at: time.Now(), procs: map[string]map[int]int64{}}
	var err error
	if s.busy, s.total, err = machineTicks(); err != nil {
		return CPUSample{}
	}
	for name, pid := range g.PIDs {
		if t, _, err := processTicks(pid); err == nil {
			s.procs[name] = map[int]int64{pid: t}
		}
	}
	if len(g.Comms) == 0 {
		return s
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return s
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		t, comm, err := processTicks(pid)
		if err != nil {
			continue
		}
		for name, want := range g.Comms {
			if comm == want {
				if s.procs[name] == nil {
					s.procs[name] = map[int]int64{}
				}
				s.procs[name][pid] = t
			}
		}
	}
	return s
}

// CPUUse is the CPU time used between two samples.
type CPUUse struct {
	Seconds float64 `json:"seconds"`
	// BusyPercent is the share of all the machine's CPUs that was busy.
	BusyPercent float64 `json:"busy_percent"`
	// GroupSeconds is the CPU time of each group; OtherSeconds the rest of
	// the busy time: other processes, and those that exited in between.
	GroupSeconds map[string]float64 `json:"group_seconds"`
	OtherSeconds float64            `json:"other_seconds"`
}

// Since is the CPU time used from earlier to s; zero when either has no
// reading. Times are in ticks of 10 ms, so a short window is coarse.
func (s CPUSample) Since(earlier CPUSample) CPUUse {
	if s.total == 0 || earlier.total == 0 {
		return CPUUse{}
	}
	u := CPUUse{Seconds: s.at.Sub(earlier.at).Seconds(), GroupSeconds: map[string]float64{}}
	if s.total > earlier.total { // else less than a tick went by
		u.BusyPercent = 100 * float64(s.busy-earlier.busy) / float64(s.total-earlier.total)
	}
	var grouped int64
	for name, procs := range s.procs {
		var ticks int64
		for pid, t := range procs {
			ticks += t - earlier.procs[name][pid] // 0 for a process started since
		}
		grouped += ticks
		u.GroupSeconds[name] = float64(ticks) / userHZ
	}
	u.OtherSeconds = max(float64(s.busy-earlier.busy-grouped)/userHZ, 0)
	return u
}

// PerOp is each group's CPU time for one of n operations, in µs, "other"
// included.
func (u CPUUse) PerOp(n int) map[string]float64 {
	if n <= 0 || u.GroupSeconds == nil {
		return nil
	}
	per := make(map[string]float64, len(u.GroupSeconds)+1)
	for name, s := range u.GroupSeconds {
		per[name] = 1e6 * s / float64(n)
	}
	per["other"] = 1e6 * u.OtherSeconds / float64(n)
	return per
}

// machineTicks reads the busy and total ticks of all CPUs from /proc/stat
// (iowait counts as idle).
func machineTicks() (busy, total int64, err error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	line, _, _ := bytes.Cut(data, []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) < 6 || fields[0] != "cpu" {
		return 0, 0, fmt.Errorf("proc: unexpected /proc/stat: %.40q", line)
	}
	for i, f := range fields[1:] {
		if i >= 8 { // guest times are within user and nice
			break
		}
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("proc: /proc/stat: %w", err)
		}
		total += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy, total, nil
}

// processTicks reads a process's user and system ticks, all its threads
// together, and its command name, from /proc/PID/stat.
func processTicks(pid int) (ticks int64, comm string, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, "", err
	}
	// The command name is in parentheses and may hold spaces or ')'.
	open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return 0, "", fmt.Errorf("proc: unexpected /proc/%d/stat", pid)
	}
	fields := strings.Fields(string(data[end+1:]))
	// After the name: state is field 3, utime 14 and stime 15.
	if len(fields) < 13 {
		return 0, "", fmt.Errorf("proc: short /proc/%d/stat", pid)
	}
	for _, f := range fields[11:13] {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, "", fmt.Errorf("proc: /proc/%d/stat: %w", pid, err)
		}
		ticks += v
	}
	return ticks, string(data[open+1 : end]), nil
}
