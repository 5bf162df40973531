// Command pipeplan plans distributed DNN training: it partitions models over
// GPUs, simulates pipeline schedules, schedules jobs on heterogeneous clusters
// (Gavel) and serves the browser playground. The commands are in package cli;
// `pipeplan help` lists them.
package main

import (
	"fmt"
	"os"

	"pipeplan/cli"
)

func main() {
	if err := cli.Run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "pipeplan:", err)
		os.Exit(1)
	}
}
