package proc

import (
	"os/exec"
	"syscall"
)

// killWithParent has Linux kill the child if the benchmark dies without
// cleaning up (SIGKILL, a crash), so no server is left on a loopback port.
func killWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
