//go:build !linux

package proc

import "os/exec"

// killWithParent does nothing off Linux: children are only stopped by the
// benchmark's own clean-up.
func killWithParent(*exec.Cmd) {}
