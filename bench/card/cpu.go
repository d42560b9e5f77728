package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of the CPU times in /proc, fixed at 100 per second for
// user space whatever the kernel's own tick.
const userHZ = 100

// cpuReader reads a CPU time that only grows: a process's or the machine's.
type cpuReader func() (time.Duration, error)

// processCPU reads the user plus system CPU time process pid has used, from
// /proc/PID/stat (so Linux only).
func processCPU(pid int) cpuReader {
	return func() (time.Duration, error) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return 0, err
		}
		return parseProcessStat(string(b))
	}
}

// machineCPU reads the CPU time every CPU of the machine has spent busy,
// from /proc/stat: everything but idle and iowait.
func machineCPU() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	return parseMachineStat(string(b))
}

// parseProcessStat reads utime and stime, fields 14 and 15 of a
// /proc/PID/stat line, counted after the command name, which may hold
// spaces.
func parseProcessStat(stat string) (time.Duration, error) {
	end := strings.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, fmt.Errorf("malformed /proc/PID/stat %.80q", stat)
	}
	f := strings.Fields(stat[end+1:]) // f[0] is field 3
	if len(f) < 13 {
		return 0, fmt.Errorf("malformed /proc/PID/stat %.80q", stat)
	}
	return sumTicks(f[11:13])
}

// parseMachineStat reads the first line of /proc/stat, "cpu user nice
// system idle iowait irq softirq steal …", and adds up all but idle and
// iowait (guest time is already in user).
func parseMachineStat(stat string) (time.Duration, error) {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, fmt.Errorf("malformed /proc/stat %.80q", line)
	}
	busy, err := sumTicks(append(f[1:4:4], f[6:9]...))
	if err != nil {
		return 0, fmt.Errorf("malformed /proc/stat %.80q", line)
	}
	return busy, nil
}

// sumTicks adds up counts of 1/userHZ s.
func sumTicks(fields []string) (time.Duration, error) {
	var ticks int64
	for _, s := range fields {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("bad tick count %q", s)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// cpuMeter measures the CPU time of each of its readers from a moment to
// come, the end of a warm-up, until stopped.
type cpuMeter struct {
	readers []cpuReader
	start   chan []time.Duration
}

// meterCPU starts measuring at at.
func meterCPU(at time.Time, readers ...cpuReader) *cpuMeter {
	m := &cpuMeter{readers: readers, start: make(chan []time.Duration, 1)}
	time.AfterFunc(time.Until(at), func() { m.start <- m.sample() })
	return m
}

// sample reads every reader; -1 where one fails.
func (m *cpuMeter) sample() []time.Duration {
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

// stop returns, for each reader, the CPU seconds used since the start; -1
// where it could not be read. It waits for the start if it has not come.
func (m *cpuMeter) stop() []float64 {
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
