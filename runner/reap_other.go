//go:build unix && !linux

package main

// becomeSubreaper does nothing: only Linux has child subreapers.
func becomeSubreaper() {}

// reapGroup does nothing: orphaned workers were reparented to init, which
// reaps them once killGroup's SIGKILL lands.
func reapGroup(pgid int) {}
