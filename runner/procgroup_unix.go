//go:build unix

package main

import (
	"context"
	"errors"
	"os/exec"
	"syscall"
)

// ownProcessGroup starts cmd in a new process group. When ctx ends,
// onStop sees the group before it is signalled, then the group gets the
// signal the runner received (SIGINT, SIGTERM), so torchrun can stop its
// workers, or SIGKILL on a timeout; cmd.WaitDelay bounds the wait after
// that, and killGroup ends whatever is left.
func ownProcessGroup(ctx context.Context, cmd *exec.Cmd, onStop func(pgid int)) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		onStop(cmd.Process.Pid)
		sig := syscall.SIGKILL
		var se signalError
		if errors.As(context.Cause(ctx), &se) {
			if s, ok := se.sig.(syscall.Signal); ok {
				sig = s
			}
		}
		return syscall.Kill(-cmd.Process.Pid, sig)
	}
	becomeSubreaper()
}

// killGroup kills every process left in cmd's process group (workers that
// outlived torchrun) and, where the runner is their subreaper, waits for
// them: no worker outlives launch.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	pgid := cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGKILL) // ESRCH: none left
	reapGroup(pgid)
}
