// Package proc starts the server processes a benchmark measures, waits for
// them to be ready, samples their memory and stops them.
package proc

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

const (
	// readyTimeout bounds the wait for a server's first 200.
	readyTimeout = 30 * time.Second
	// pollInterval is the pause between readiness probes.
	pollInterval = 2 * time.Millisecond
	// StopTimeout is how long a server gets to exit after SIGTERM before
	// it is killed; servers run in the benchmark's own process get as long
	// to shut down.
	StopTimeout = 5 * time.Second
)

// Child is a server process started by the benchmark. Its stdout and stderr
// go to a log file.
type Child struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	started time.Time
	// exited is closed when the process has exited; waitErr is then set.
	exited   chan struct{}
	waitErr  error
	stopOnce sync.Once
}

// Start starts argv with env, logging to logPath. On Linux the process is
// killed if the benchmark dies without stopping it.
func Start(name, logPath string, env []string, argv ...string) (*Child, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child holds its own descriptor
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	killWithParent(cmd)

	c := &Child{name: name, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	c.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		c.waitErr = cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

// Name is the name the process was started with, for messages.
func (c *Child) Name() string { return c.name }

// PID is the process id.
func (c *Child) PID() int { return c.cmd.Process.Pid }

// LogPath is the file holding the process's stdout and stderr.
func (c *Child) LogPath() string { return c.logPath }

// Exited is closed once the process has exited.
func (c *Child) Exited() <-chan struct{} { return c.exited }

// ExitErr describes the exit of the process, which happened during what
// during says ("under load"), with the end of its log. Call it only once
// Exited is closed.
func (c *Child) ExitErr(during string) error {
	return fmt.Errorf("%s exited %s (%v)%s", c.name, during, c.waitErr, c.LogTail())
}

// Stop asks the process to shut down with SIGTERM, kills it if it has not
// exited within StopTimeout, and waits for it. It is safe to call twice.
func (c *Child) Stop() {
	c.stopOnce.Do(func() {
		select {
		case <-c.exited:
			return
		default:
		}
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.exited:
		case <-time.After(StopTimeout):
			_ = c.cmd.Process.Kill()
			<-c.exited
		}
	})
}

// WaitReady polls url every 2 ms until it answers 200 and returns the time
// from the process start to that answer. It gives up when the process exits,
// ctx ends or 30 s have passed since the start.
func (c *Child) WaitReady(ctx context.Context, url string) (time.Duration, error) {
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	defer client.CloseIdleConnections()
	deadline := c.started.Add(readyTimeout)
	const maxPolls = int(readyTimeout / pollInterval)
	for range maxPolls {
		if answers200(ctx, client, url) {
			return time.Since(c.started), nil
		}
		if time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-c.exited:
			return 0, c.ExitErr("before it was ready")
		case <-time.After(pollInterval):
		}
	}
	return 0, fmt.Errorf("%s not ready after %v%s", c.name, readyTimeout, c.LogTail())
}

func answers200(ctx context.Context, client *http.Client, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// LogTail is the end of the process's log, introduced for an error message;
// empty when the log is.
func (c *Child) LogTail() string {
	const max = 2000
	log, err := os.ReadFile(c.logPath)
	if err != nil || len(bytes.TrimSpace(log)) == 0 {
		return ""
	}
	if len(log) > max {
		log = log[len(log)-max:]
	}
	return "; its log ends:\n" + string(bytes.TrimSpace(log))
}

// FreeLoopbackAddr picks a free port on 127.0.0.1 for a child to listen on.
// Another process could take it before the child does; the child would then
// exit and WaitReady say so.
func FreeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
