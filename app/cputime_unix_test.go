//go:build unix

package app

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user and system) the process has used,
// and whether it could be read: on a shared, loaded machine it measures
// the work where wall time does not.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
