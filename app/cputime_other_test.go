//go:build !unix

package app

import "time"

// processCPU reports that this platform (js/wasm) has no process CPU time.
func processCPU() (time.Duration, bool) { return 0, false }
