//go:build js

package app

import (
	"syscall/js"
	"time"
)

// processCPU returns the CPU time (user and system) node's process has
// used, and false in a browser, which has no process.
func processCPU() (time.Duration, bool) {
	p := js.Global().Get("process")
	if p.IsUndefined() {
		return 0, false
	}
	u := p.Call("cpuUsage") // microseconds
	return time.Duration(u.Get("user").Float()+u.Get("system").Float()) * time.Microsecond, true
}
