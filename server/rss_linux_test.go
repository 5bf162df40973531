package server

import (
	"os"
	"syscall"
)

// maxRSSBytes is the peak resident memory of an exited process.
func maxRSSBytes(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss << 10 // KiB on Linux
	}
	return 0
}
