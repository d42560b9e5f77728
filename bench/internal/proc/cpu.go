package proc

import (
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

// ProcessCPU is the user and system CPU time process pid has used, all
// its threads together, from /proc/PID/stat (so Linux only).
func ProcessCPU(pid int) (time.Duration, error) {
	t, _, err := processTicks(pid)
	return ticksDuration(t), err
}

// MachineCPU is the CPU time all the machine's CPUs have spent busy, from
// /proc/stat.
func MachineCPU() (time.Duration, error) {
	busy, _, err := machineTicks()
	return ticksDuration(busy), err
}

func ticksDuration(ticks int64) time.Duration { return time.Duration(ticks) * time.Second / userHZ }

func machineTicks() (busy, total int64, err error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	return ParseMachineStat(string(data))
}

func processTicks(pid int) (ticks int64, comm string, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, "", err
	}
	return ParseProcessStat(string(data))
}

// ParseMachineStat reads the first line of /proc/stat, "cpu user nice
// system idle iowait irq softirq steal …": the ticks all CPUs spent busy
// (all but idle and iowait; guest time is already in user), and in all.
func ParseMachineStat(stat string) (busy, total int64, err error) {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, fmt.Errorf("proc: malformed /proc/stat %.80q", line)
	}
	for i, s := range f[1:9] {
		n, err := parseTicks(s)
		if err != nil {
			return 0, 0, fmt.Errorf("proc: malformed /proc/stat %.80q", line)
		}
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total, nil
}

// ParseProcessStat reads a /proc/PID/stat line: utime plus stime (fields
// 14 and 15, counted after the command name), and the command name, which
// is in parentheses and may hold spaces and parentheses.
func ParseProcessStat(stat string) (ticks int64, comm string, err error) {
	open, end := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return 0, "", fmt.Errorf("proc: malformed /proc/PID/stat %.80q", stat)
	}
	f := strings.Fields(stat[end+1:]) // f[0] is field 3
	if len(f) < 13 {
		return 0, "", fmt.Errorf("proc: malformed /proc/PID/stat %.80q", stat)
	}
	for _, s := range f[11:13] {
		n, err := parseTicks(s)
		if err != nil {
			return 0, "", fmt.Errorf("proc: malformed /proc/PID/stat %.80q", stat)
		}
		ticks += n
	}
	return ticks, stat[open+1 : end], nil
}

// parseTicks reads a count of 1/userHZ s.
func parseTicks(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad tick count %q", s)
	}
	return n, nil
}
