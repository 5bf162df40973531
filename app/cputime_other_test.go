//go:build !unix && !js

package app

import "time"

// processCPU reports that this platform has no process CPU time.
func processCPU() (time.Duration, bool) { return 0, false }
