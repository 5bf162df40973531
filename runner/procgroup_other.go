//go:build !unix

package main

import (
	"context"
	"os/exec"
)

// ownProcessGroup leaves cmd as it is: without process groups, cancelling
// kills torchrun only.
func ownProcessGroup(ctx context.Context, cmd *exec.Cmd, onStop func(pgid int)) {}

// killGroup does nothing without process groups.
func killGroup(cmd *exec.Cmd) {}
