package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"pipeplan/core/launch"
	"pipeplan/core/plan"
)

// runExport is `runner export --format F plan.json`: it prints the plan as
// the named engine's launch artifact (core/launch), or an error naming the
// plan field an engine cannot express.
func runExport(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("runner export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "", "artifact to print: "+strings.Join(launch.Formats, ", "))
	image := fs.String("image", launch.DefaultImage, "container image of the k8s PyTorchJob (with Megatron-LM installed)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: go run ./runner export --format "+strings.Join(launch.Formats, "|")+" plan.json")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return fmt.Errorf("export: want exactly one plan file, got %d arguments", fs.NArg())
	}
	data, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	p, err := plan.Parse(data)
	if err != nil {
		return err
	}
	if err := checkConsistency(p); err != nil {
		return err
	}
	out, err := launch.Artifact(*format, p, *image)
	if err != nil {
		return err
	}
	_, err = io.WriteString(stdout, out)
	return err
}
