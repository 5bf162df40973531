package cli

import (
	"fmt"
	"io"

	"pipeplan/core/hw"
	"pipeplan/core/partition"
	"pipeplan/core/plan"
)

// madPipeOutput is the --json form of "partition --algorithm madpipe".
type madPipeOutput struct {
	Model     string     `json:"model"`
	Algorithm string     `json:"algorithm"`
	Layers    int        `json:"layers"`
	Levels    []hw.Level `json:"levels"`
	// GPUs is the number of workers; BandwidthBytesPerSec the link MadPipe
	// assumes between every pair of them (the slowest level's).
	GPUs                 int                  `json:"gpus"`
	BandwidthBytesPerSec float64              `json:"bandwidth_bytes_per_sec"`
	MemoryBytes          float64              `json:"memory_bytes"`
	Stages               []madPipeStageOutput `json:"stages"`
	// BottleneckSeconds is the period of the valid schedule (time per minibatch).
	BottleneckSeconds float64 `json:"bottleneck_seconds"`
	// NOAM is the most minibatches any stage keeps in flight in the schedule.
	NOAM int `json:"noam"`
	*partition.MadPipeResult
}

// madPipeStageOutput is a MadPipe stage with PipeDream's replicas field (always 1).
type madPipeStageOutput struct {
	partition.MadPipeStage
	Replicas int `json:"replicas"`
}

// runMadPipe is the madpipe branch of the partition command: MadPipe on the
// model's layer chain (a PipeDream graph is linearized by Graph.Chain).
func runMadPipe(stdout io.Writer, in *partitionInput, problem partition.Problem, exportPlan string, asJSON bool) error {
	if exportPlan != "" {
		return fmt.Errorf("--export-plan: not supported for madpipe yet (a plan has no way to put several stages on one GPU)")
	}
	memory := problem.System.MemoryBytes
	if !(memory > 0) {
		return fmt.Errorf("--memory-bytes: madpipe needs the memory per GPU, got %v", memory)
	}
	cands, err := planWith(plan.PlannerMadPipe, problem)
	if err != nil {
		return err
	}
	chain, r := &in.linear, cands[0].MadPipe
	gpus, bw, levels := problem.System.GPUs(), problem.System.PairBandwidthBytesPerSec(), problem.System.Levels
	out := madPipeOutput{Model: in.name, Algorithm: "madpipe", Layers: len(chain.Layers), Levels: levels, GPUs: gpus,
		BandwidthBytesPerSec: bw, MemoryBytes: memory, BottleneckSeconds: r.PeriodSeconds, MadPipeResult: r}
	for _, s := range r.Stages {
		out.Stages = append(out.Stages, madPipeStageOutput{MadPipeStage: s, Replicas: 1})
		out.NOAM = max(out.NOAM, s.Activations)
	}
	if asJSON {
		return writeJSON(stdout, out)
	}
	fmt.Fprintf(stdout, "model %s: %d layers, %d GPUs of %.3g GB at %.3g GB/s (MadPipe)\n", out.Model, out.Layers, gpus, memory/1e9, bw/1e9)
	fmt.Fprintf(stdout, "period %.6g s per minibatch (allocation load %.6g s, target period %.6g s), NOAM %d\n",
		r.PeriodSeconds, r.AllocationPeriodSeconds, r.TargetPeriodSeconds, out.NOAM)
	tw := newTable(stdout)
	fmt.Fprintln(tw, "STAGE\tLAYERS\tGPU\tSPECIAL\tCOMPUTE s\tACTIVATIONS\tGPU MEMORY GB")
	for i, s := range r.Stages {
		fmt.Fprintf(tw, "%d\t%d-%d\t%d\t%v\t%.6g\t%d\t%.2f\n", i, s.FirstLayer, s.LastLayer, s.Processor, s.Special,
			s.ComputeSeconds, s.Activations, r.Processors[s.Processor].MemoryBytes/1e9)
	}
	return tw.Flush()
}
