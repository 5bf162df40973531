// Command runner executes an exported pipeplan plan on local devices through
// PyTorch distributed (torchrun, gloo on CPU, nccl on CUDA) and reports the
// measured step time, throughput, peak memory and per-stage times against
// the plan's predictions; `runner profile` measures a model's layers and the
// device's GEMMs for the planner, `runner export` writes launch artifacts.
//
// Usage:
//
//	go run ./runner [flags] plan.json
//	go run ./runner profile [flags] (--model PRESET | plan.json)
//	go run ./runner export --format FORMAT plan.json
//
// See runner/README.md for the flags and the worker protocol.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"pipeplan/core/plan"
	"pipeplan/internal/atomicfile"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "export" {
		if err := runExport(os.Args[2:], os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "runner:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := withSignals(context.Background())
	var err error
	if len(os.Args) > 1 && os.Args[1] == "profile" {
		err = runProfile(ctx, os.Args[2:], os.Stdout, os.Stderr)
	} else {
		err = run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	}
	var sig signalError
	if errors.As(context.Cause(ctx), &sig) {
		fmt.Fprintln(os.Stderr, "runner: stopped:", err)
		os.Exit(sig.exitCode())
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "runner:", err)
		os.Exit(1)
	}
}

// options are the runner's parsed flags.
type options struct {
	planPath  string
	device    string
	python    string
	scaleDown bool
	schedule  string
	// verticalSync runs a pipedream schedule with vertical sync (§2.4.3).
	verticalSync bool
	steps        int
	warmup       int
	maxProcs     int
	check        bool
	keep         bool
	timeout      time.Duration
	// timeline is where to write the predicted and measured timelines (SVG).
	timeline string
	// nnodes, nodeRank and the rdzv* fields place this runner's ranks in a
	// multi-node run (torchrun's rendezvous); see newNodeSpec.
	nnodes, nodeRank                  int
	rdzvEndpoint, rdzvID, rdzvBackend string
}

// run parses the flags, executes the plan and prints the report.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("runner", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: go run ./runner [flags] plan.json\n       go run ./runner profile [flags] (--model PRESET | plan.json)\n       go run ./runner export --format FORMAT plan.json")
		fs.PrintDefaults()
	}
	var o options
	fs.StringVar(&o.device, "device", "cpu", "where ranks run: cpu (one process per rank, gloo) or cuda (one GPU per rank, nccl)")
	fs.StringVar(&o.python, "python", "", "python interpreter with torch (default: the first of python3 on PATH and /usr/bin/python3 that imports torch)")
	fs.BoolVar(&o.scaleDown, "scale-down", false, "keep the stages but run 1 replica each with at most 2 layers and small dimensions: a functional run whose timing is NOT comparable to the prediction")
	fs.StringVar(&o.schedule, "schedule", "", "run the plan's stages with this schedule ("+supportedList()+") instead of the plan's own, e.g. for a pipedream or 2bw plan; timing is then NOT comparable to the prediction")
	fs.BoolVar(&o.verticalSync, "vertical-sync", false, "run a pipedream schedule with vertical sync: every stage uses the weight version the input stage used (dissertation §2.4.3)")
	fs.IntVar(&o.steps, "steps", 5, "measured training steps")
	fs.IntVar(&o.warmup, "warmup", 1, "unmeasured steps before them")
	fs.IntVar(&o.maxProcs, "max-procs", 16, "with --device cpu, the most rank processes to start")
	fs.BoolVar(&o.check, "check", false, "also train the same model unpipelined in one process and compare the losses (a synchronous schedule must match)")
	fs.BoolVar(&o.keep, "keep", false, "keep the run directory (run.json, schedule.csv, worker.py, results) and print its path")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "stop the workers (kill their process group) after this long")
	fs.StringVar(&o.timeline, "timeline", "", "write the predicted and measured timelines, drawn one above the other, to this SVG file (with --keep also timeline.svg in the run directory)")
	fs.IntVar(&o.nnodes, "nnodes", 1, "nodes the run spans; each runs this runner with its --node-rank, the same plan and flags, and meets the others at --rdzv-endpoint")
	fs.IntVar(&o.nodeRank, "node-rank", 0, "this node's rank, 0 to --nnodes-1 (torchrun's --node_rank)")
	fs.StringVar(&o.rdzvEndpoint, "rdzv-endpoint", "", "host:port of the rendezvous, the same on every node (torchrun's --rdzv_endpoint); required with --nnodes > 1")
	fs.StringVar(&o.rdzvID, "rdzv-id", "pipeplan", "the run's id at the rendezvous, the same on every node (torchrun's --rdzv_id)")
	fs.StringVar(&o.rdzvBackend, "rdzv-backend", "c10d", "torchrun's --rdzv_backend: "+strings.Join(rdzvBackends, ", "))
	asJSON := fs.Bool("json", false, "print the report as JSON")
	outPath := fs.String("out", "", "also write the JSON report to this file (atomically)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return fmt.Errorf("want exactly one plan file, got %d arguments", fs.NArg())
	}
	o.planPath = fs.Arg(0)
	switch {
	case o.device != "cpu" && o.device != "cuda":
		return fmt.Errorf("--device: must be cpu or cuda, got %q", o.device)
	case o.steps < 1:
		return fmt.Errorf("--steps: must be >= 1, got %d", o.steps)
	case o.warmup < 0:
		return fmt.Errorf("--warmup: must be >= 0, got %d", o.warmup)
	case o.timeout <= 0:
		return fmt.Errorf("--timeout: must be positive, got %v", o.timeout)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, o.timeout, fmt.Errorf("--timeout %v elapsed", o.timeout))
	defer cancel()
	rep, err := execute(ctx, o, stderr)
	if rep != nil {
		if *outPath != "" {
			data, jerr := json.MarshalIndent(rep, "", "  ")
			if jerr != nil {
				return jerr
			}
			if werr := atomicfile.WriteFile(*outPath, append(data, '\n')); werr != nil {
				return werr
			}
		}
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			if jerr := enc.Encode(rep); jerr != nil {
				return jerr
			}
		} else if terr := rep.writeTable(stdout); terr != nil {
			return terr
		}
	}
	return err
}

// execute validates the plan against the machine, runs it and gathers the
// report; with --check a report is returned along with a mismatch error.
func execute(ctx context.Context, o options, log io.Writer) (*Report, error) {
	data, err := os.ReadFile(o.planPath)
	if err != nil {
		return nil, err
	}
	p, err := plan.Parse(data)
	if err != nil {
		return nil, err
	}
	if err := checkConsistency(p); err != nil {
		return nil, err
	}
	c, err := newRunConfig(p, o)
	if err != nil {
		return nil, err
	}
	node, err := newNodeSpec(o, p, c)
	if err != nil {
		return nil, err
	}
	if err := checkLimits(c, o, node); err != nil {
		return nil, err
	}
	python := o.python
	candidates := defaultPythons
	if python != "" {
		candidates = []string{python}
	}
	if python, err = findPython(ctx, candidates, importsTorch); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pipeplan-run-*")
	if err != nil {
		return nil, err
	}
	if o.keep {
		fmt.Fprintf(log, "runner: run directory %s\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	c.OutDir = dir
	if err := writeRunDir(dir, c); err != nil {
		return nil, err
	}
	if err := checkDevices(ctx, python, dir, c, o, node); err != nil {
		return nil, err
	}
	if err := runTorchrun(ctx, python, dir, node, log); err != nil {
		return nil, err
	}
	results, err := readResults(dir, c, node)
	if err != nil {
		return nil, err
	}
	rep := newReport(p, c, results)
	rep.placeNode(node, len(c.Ranks))
	dev := deviceInfo{Kind: o.device}
	if o.device == "cuda" {
		if dev.Name, err = cudaDeviceName(ctx, python); err != nil {
			return nil, err
		}
	}
	rep.compareDevice(p, dev)
	svg, err := rep.addStages(ctx, p, c, results)
	if err != nil {
		return nil, err
	}
	if err := writeTimeline(rep, svg, o, dir); err != nil {
		return nil, err
	}
	if o.check && rep.hasAllLosses(c) {
		return rep, checkAgainstReference(ctx, python, dir, c, rep)
	}
	return rep, nil
}

// readResults reads and checks the result file of every rank this node
// ran: all of them on one node; on one node of several, the nproc ranks
// the rendezvous gave it (c10d assigns them in its own order).
func readResults(dir string, c *runConfig, n nodeSpec) ([]*rankResult, error) {
	var out []*rankResult
	for _, rk := range c.Ranks {
		data, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("result-rank%d.json", rk.Rank)))
		if errors.Is(err, os.ErrNotExist) && n.nnodes > 1 {
			continue // another node's rank
		}
		if err != nil {
			return nil, fmt.Errorf("rank %d: %w", rk.Rank, err)
		}
		res, err := parseResult(data, rk, c)
		if err != nil {
			return nil, fmt.Errorf("rank %d: %w", rk.Rank, err)
		}
		out = append(out, res)
	}
	if len(out) != n.nproc {
		return nil, fmt.Errorf("this node ran %d ranks but %d wrote a result", n.nproc, len(out))
	}
	return out, nil
}

// writeTimeline writes the timelines' SVG to --timeline and, with --keep,
// into the run directory, and records where in the report.
func writeTimeline(rep *Report, svg []byte, o options, dir string) error {
	if svg == nil {
		return nil
	}
	if o.keep {
		rep.TimelineSVG = filepath.Join(dir, "timeline.svg")
		if err := os.WriteFile(rep.TimelineSVG, svg, 0o644); err != nil {
			return err
		}
	}
	if o.timeline != "" {
		rep.TimelineSVG = o.timeline
		if err := atomicfile.WriteFile(o.timeline, svg); err != nil {
			return fmt.Errorf("--timeline: %w", err)
		}
	}
	return nil
}

// errMismatch marks a run whose losses differ from the unpipelined reference.
var errMismatch = errors.New("pipelined losses differ from the unpipelined reference")
