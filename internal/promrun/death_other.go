//go:build !linux

package promrun

import "os/exec"

// setDeathSignal has no portable equivalent outside Linux: Stop (and the
// test's Cleanup) must be relied on.
func setDeathSignal(*exec.Cmd) {}
