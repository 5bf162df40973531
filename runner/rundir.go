package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"pipeplan/core/schedule"
)

// workerScript is the Python worker every rank runs.
//
//go:embed worker.py
var workerScript []byte

// modelScript is the worker's model (model.py, imported by worker.py).
//
//go:embed model.py
var modelScript []byte

// writeRunDir writes worker.py, model.py, run.json and the schedule in torch's CSV
// form (schedule.csv, for reading or for torch.distributed.pipelining).
func writeRunDir(dir string, c *runConfig) error {
	cfg, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	var csv bytes.Buffer
	if err := schedule.WriteCSV(&csv, c.schedule, true); err != nil {
		return fmt.Errorf("schedule.csv: %w", err)
	}
	for name, data := range map[string][]byte{"worker.py": workerScript, "model.py": modelScript, "run.json": cfg, "schedule.csv": csv.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// probe is worker.py --probe's answer.
type probe struct {
	TorchVersion    string `json:"torch_version"`
	CUDADeviceCount int    `json:"cuda_device_count"`
}

// parseProbe decodes worker.py --probe's output.
func parseProbe(out []byte) (probe, error) {
	var pr probe
	if err := json.Unmarshal(out, &pr); err != nil {
		return probe{}, fmt.Errorf("probe of the CUDA devices: %w (output %q)", err, keepLastBytes(out, 2000))
	}
	if pr.CUDADeviceCount < 0 {
		return probe{}, fmt.Errorf("probe of the CUDA devices: cuda_device_count: must be >= 0, got %d", pr.CUDADeviceCount)
	}
	return pr, nil
}

// checkLimits checks, before any python starts, that a CPU run's rank
// processes on this node are within --max-procs.
func checkLimits(c *runConfig, o options, n nodeSpec) error {
	if need := n.nproc; o.device == "cpu" && need > o.maxProcs {
		return fmt.Errorf("plan needs %d rank processes%s (%s), over --max-procs %d; raise --max-procs or use --scale-down to run 1 replica per stage with tp <= %d and cp <= %d (%d ranks)",
			need, n.share(), c.ranksText(), o.maxProcs, scaleTP, scaleCP, c.Stages*min(c.TP, scaleTP)*min(c.CP, scaleCP))
	}
	return nil
}

// checkDevices checks that this machine has the GPUs a CUDA run needs.
func checkDevices(ctx context.Context, python, dir string, c *runConfig, o options, n nodeSpec) error {
	need := n.nproc
	what := c.ranksText() + n.share()
	if o.device == "cpu" {
		return nil
	}
	cmd := exec.CommandContext(ctx, python, "worker.py", "--probe")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("probe of the CUDA devices (%s worker.py --probe): %w", python, err)
	}
	pr, err := parseProbe(out)
	if err != nil {
		return err
	}
	if need <= pr.CUDADeviceCount {
		return nil
	}
	if c.ScaledDown {
		return fmt.Errorf("even scaled down the plan needs %d GPUs (%s), this machine has %d; use --device cpu", need, what, pr.CUDADeviceCount)
	}
	return fmt.Errorf("plan needs %d GPUs (%s), this machine has %d; use --scale-down to run a smaller replica (1 replica per stage with tp <= %d and cp <= %d, %d GPUs): a functional run whose timing is not comparable to the prediction",
		need, what, pr.CUDADeviceCount, scaleTP, scaleCP, c.Stages*min(c.TP, scaleTP)*min(c.CP, scaleCP))
}

// Loss tolerances of --check: fp32 sums in another order on CPU; GPU
// kernels (TF32, nondeterministic reductions) differ more from the CPU reference.
const (
	cpuLossTolerance  = 1e-4
	cudaLossTolerance = 1e-2
)

// checkAgainstReference trains the unpipelined model (worker.py --reference)
// and compares its losses with the pipelined run's.
func checkAgainstReference(ctx context.Context, python, dir string, c *runConfig, rep *Report) error {
	cmd := exec.CommandContext(ctx, python, "worker.py", "--config", "run.json", "--reference")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("reference run: %w\n%s", err, keepLastBytes(out, 2000))
	}
	data, err := os.ReadFile(filepath.Join(dir, "reference.json"))
	if err != nil {
		return fmt.Errorf("reference run: %w", err)
	}
	if err := parseReference(data, rep); err != nil {
		return err
	}
	tol := cpuLossTolerance
	if c.Device == "cuda" {
		tol = cudaLossTolerance
	}
	if *rep.MaxLossRelDiff > tol {
		return fmt.Errorf("%w: max relative difference %.3g > %g", errMismatch, *rep.MaxLossRelDiff, tol)
	}
	return nil
}

// parseReference decodes worker.py --reference's reference.json and
// compares its losses with the report's.
func parseReference(data []byte, rep *Report) error {
	if len(data) > maxResultBytes {
		return fmt.Errorf("reference.json: %d bytes is over the %d-byte limit", len(data), maxResultBytes)
	}
	var ref struct {
		Losses []float64 `json:"losses"`
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		return fmt.Errorf("reference.json: %w", err)
	}
	return rep.checkReference(ref.Losses)
}

func keepLastBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
