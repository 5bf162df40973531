//go:build !unix

package main

import "os/exec"

// ownProcessGroup leaves cmd as it is: without process groups, cancelling
// kills torchrun only.
func ownProcessGroup(cmd *exec.Cmd) {}
