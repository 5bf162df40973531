package main

import (
	"sync"
	"syscall"
)

var subreaper sync.Once

// becomeSubreaper makes the runner the parent of its orphaned descendants
// (PR_SET_CHILD_SUBREAPER), so workers whose torchrun died are reparented
// to it rather than to init, and reapGroup can wait for them.
func becomeSubreaper() {
	subreaper.Do(func() {
		const prSetChildSubreaper = 36
		_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	})
}

// reapGroup waits for every child of the runner in process group pgid
// (all of them killed) until none is left.
func reapGroup(pgid int) {
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(-pgid, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil { // ECHILD: none left
			return
		}
	}
}
