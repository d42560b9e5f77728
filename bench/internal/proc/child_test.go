package proc

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The helper process: this test binary run again by startHelper. It serves
// 200s on the address in PROC_TEST_SERVE until it is signalled, or fails at
// once when PROC_TEST_FAIL is set.
func TestMain(m *testing.M) {
	if msg := os.Getenv("PROC_TEST_FAIL"); msg != "" {
		fmt.Fprintln(os.Stderr, msg)
		os.Exit(3)
	}
	if addr := os.Getenv("PROC_TEST_SERVE"); addr != "" {
		err := http.ListenAndServe(addr, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func startHelper(t *testing.T, env ...string) *Child {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c, err := Start("helper", filepath.Join(t.TempDir(), "helper.log"), append(os.Environ(), env...), self)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

func TestChildServes(t *testing.T) {
	t.Parallel()
	addr, err := FreeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	c := startHelper(t, "PROC_TEST_SERVE="+addr)
	if _, err := c.WaitReady(context.Background(), "http://"+addr+"/"); err != nil {
		t.Fatal(err)
	}
	sampler := SampleRSS(c.PID())
	peak := sampler.Stop()
	hwm, err := StatusBytes(c.PID(), "VmHWM")
	if runtime.GOOS == "linux" && (err != nil || peak <= 0 || hwm <= 0) {
		t.Errorf("peak VmRSS %d, VmHWM %d (%v); want both positive", peak, hwm, err)
	}
	c.Stop()
	select {
	case <-c.Exited():
	default:
		t.Fatal("Stop returned before the process exited")
	}
	c.Stop() // a second Stop does nothing
}

func TestChildExitsBeforeReady(t *testing.T) {
	t.Parallel()
	c := startHelper(t, "PROC_TEST_FAIL=no config here")
	_, err := c.WaitReady(context.Background(), "http://127.0.0.1:1/")
	if err == nil || !strings.Contains(err.Error(), "helper exited before it was ready") || !strings.Contains(err.Error(), "its log ends:\nno config here") {
		t.Errorf("WaitReady error = %v; want the exit and the log's tail", err)
	}
}
