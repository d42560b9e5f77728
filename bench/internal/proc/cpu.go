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
