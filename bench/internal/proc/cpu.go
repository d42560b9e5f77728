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

// CPUReader reads a CPU time that only grows: a process's, a group's or
// the machine's.
type CPUReader func() (time.Duration, error)

// OfProcess reads the CPU time process pid has used.
func OfProcess(pid int) CPUReader { return func() (time.Duration, error) { return ProcessCPU(pid) } }

// OfCommand reads the CPU time used by every running process whose command
// name is comm (PostgreSQL's backends are all "postgres"). A process that
// exits between two reads takes its time with it: use it for processes
// that live through the measurement, as a pool's backends do.
func OfCommand(comm string) CPUReader {
	return func() (time.Duration, error) {
		entries, err := os.ReadDir("/proc")
		if err != nil {
			return 0, err
		}
		var total int64
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if t, c, err := processTicks(pid); err == nil && c == comm {
				total += t
			}
		}
		return ticksDuration(total), nil
	}
}

// CPUMeter measures the CPU time of each of its readers from a moment to
// come, the end of a warm-up, until stopped.
type CPUMeter struct {
	readers []CPUReader
	start   chan []time.Duration
}

// MeterCPU starts measuring at at.
func MeterCPU(at time.Time, readers ...CPUReader) *CPUMeter {
	m := &CPUMeter{readers: readers, start: make(chan []time.Duration, 1)}
	time.AfterFunc(time.Until(at), func() { m.start <- m.sample() })
	return m
}

// sample reads every reader; -1 where one fails.
func (m *CPUMeter) sample() []time.Duration {
	out := make([]time.Duration, len(m.readers))
	for i, read := range m.readers {
		t, err := read()
		if err != nil {
			t = -1
		}
		out[i] = t
	}
	return out
}

// Stop returns, for each reader, the CPU seconds used since the start; -1
// where it could not be read. It waits for the start if it has not come.
func (m *CPUMeter) Stop() []float64 {
	start := <-m.start
	end := m.sample()
	out := make([]float64, len(m.readers))
	for i := range out {
		out[i] = -1
		if start[i] >= 0 && end[i] >= 0 {
			out[i] = (end[i] - start[i]).Seconds()
		}
	}
	return out
}
