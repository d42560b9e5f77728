package main

import (
	"time"

	"github.com/hitchdev/hitch/bench/internal/proc"
)

// cpuReader reads a CPU time that only grows: a process's or the machine's.
type cpuReader func() (time.Duration, error)

// processCPU reads the user plus system CPU time process pid has used
// (Linux only).
func processCPU(pid int) cpuReader {
	return func() (time.Duration, error) { return proc.ProcessCPU(pid) }
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
