//go:build !linux

package server

import "os"

// maxRSSBytes is 0 where the peak resident memory is not measured here.
func maxRSSBytes(*os.ProcessState) int64 { return 0 }
