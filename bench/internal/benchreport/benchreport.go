// Package benchreport holds what the benchmark reports state the same way:
// the machine, the command line, durations and sizes, the notes on what
// Hitch logged, and the JSON file.
package benchreport

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/hitchdev/hitch/bench/internal/hitch"
)

// Machine describes where the run happened.
type Machine struct {
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	CPUs      int    `json:"cpus"`
	CPUModel  string `json:"cpu_model"`
	GoVersion string `json:"go_version"`
}

// ThisMachine describes the machine the benchmark runs on.
func ThisMachine() Machine {
	return Machine{
		OS:        runtime.GOOS,
		Arch:      runtime.GOARCH,
		CPUs:      runtime.NumCPU(),
		CPUModel:  cpuModel(),
		GoVersion: runtime.Version(),
	}
}

// cpuModel is the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for line := range strings.Lines(string(info)) {
		key, value, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return "unknown CPU"
}

// LoadAvg is the first three fields of /proc/loadavg, the 1, 5 and 15 minute
// load averages; "unknown" where there is none.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// CommandLine is how the benchmark was started, quoted for a shell, with
// database passwords hidden so that reports can be shared. A binary built
// by `go run` shows as goRun, such as "go run ./bench/accounts".
func CommandLine(goRun string) string {
	prog := os.Args[0]
	if strings.Contains(prog, string(os.PathSeparator)+"go-build") {
		prog = goRun
	}
	parts := []string{prog}
	for _, arg := range os.Args[1:] {
		parts = append(parts, shellQuote(redactPassword(arg)))
	}
	return strings.Join(parts, " ")
}

// redactPassword hides the password of a database URL argument.
func redactPassword(arg string) string {
	prefix, rawURL := "", arg
	if name, value, ok := strings.Cut(arg, "="); ok && strings.HasPrefix(name, "-") {
		prefix, rawURL = name+"=", value
	}
	if !hitch.IsPostgresURL(rawURL) {
		return arg
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return prefix + "<unparsable URL>"
	}
	return prefix + u.Redacted()
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Ms is d in milliseconds, the unit of every latency in the reports.
func Ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// FmtMs prints milliseconds with two decimals below 100 ms, none above.
func FmtMs(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f ms", v)
	}
	return fmt.Sprintf("%.2f ms", v)
}

// FmtMiB prints bytes in MiB; "n/a" for 0, which is what memory reads as
// where there is no /proc.
func FmtMiB(b int64) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}

// LogNotes is one note per Hitch process that logged at warn or above, as
// hitch.Launcher.WarnLogs returns them, in name order.
func LogNotes(warnLogs map[string][]string) []string {
	names := make([]string, 0, len(warnLogs))
	for name := range warnLogs {
		names = append(names, name)
	}
	sort.Strings(names)
	var notes []string
	for _, name := range names {
		lines := warnLogs[name]
		notes = append(notes, fmt.Sprintf("%s logged %d lines at warn or above; first: %.300s", name, len(lines), lines[0]))
	}
	return notes
}

// WriteJSON writes v, indented, to path.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
