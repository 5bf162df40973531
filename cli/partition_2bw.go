package cli

import (
	"fmt"
	"io"

	"pipeplan/core/hw"
	"pipeplan/core/partition"
	"pipeplan/core/plan"
)

// twoBWFlags are the partition command's flags the 2bw branch reads.
type twoBWFlags struct {
	batch      int
	exportPlan string
	asJSON     bool
}

// twoBWOutput is the --json form of "partition --algorithm 2bw".
type twoBWOutput struct {
	Model     string     `json:"model"`
	Algorithm string     `json:"algorithm"`
	Layers    int        `json:"layers"`
	Levels    []hw.Level `json:"levels"`
	BatchSize int        `json:"batch_size"`
	// Best is the highest-throughput configuration; Candidates the best of
	// every (d, p, execution), highest throughput first.
	Best       twoBWRow   `json:"best"`
	Candidates []twoBWRow `json:"candidates"`
}

// twoBWRow is one configuration of the 2BW planner as the command prints it.
type twoBWRow struct {
	DataParallel         int                      `json:"dp"`
	Stages               int                      `json:"pp"`
	Microbatch           int                      `json:"microbatch"`
	Execution            partition.TwoBWExecution `json:"execution"`
	Microbatches         int                      `json:"microbatches"`
	GradientAccumulation int                      `json:"gradient_accumulation"`
	FirstBlocks          []int                    `json:"first_blocks"`
	SecondsPerMicrobatch float64                  `json:"seconds_per_microbatch"`
	SamplesPerSecond     float64                  `json:"samples_per_second"`
	MemoryBytes          float64                  `json:"memory_bytes"`
	IntraServerAllReduce bool                     `json:"intra_server_all_reduce"`
}

func twoBWRowOf(c partition.Candidate) twoBWRow {
	r := twoBWRow{DataParallel: c.Execution.DP, Stages: c.Execution.PP, Microbatch: c.Execution.MicrobatchSize,
		Execution: c.TwoBW.Execution, Microbatches: c.Microbatches, GradientAccumulation: c.TwoBW.GradientAccumulation,
		SecondsPerMicrobatch: c.Predictions.BottleneckSeconds, SamplesPerSecond: c.Predictions.SamplesPerSecond,
		MemoryBytes: c.Predictions.PeakBytesPerGPU, IntraServerAllReduce: c.TwoBW.IntraServerAllReduce}
	for _, s := range c.Stages {
		r.FirstBlocks = append(r.FirstBlocks, s.FirstLayer)
	}
	return r
}

// runTwoBW is the 2bw branch of the partition command: PipeDream-2BW's
// planner (§3.3.2) on the model's layer chain, with the innermost level as
// the server (see partition.System for the bandwidths).
func runTwoBW(stdout io.Writer, in *partitionInput, problem partition.Problem, f twoBWFlags) error {
	gpus := problem.System.GPUs()
	problem.Fixed.GlobalBatch = f.batch
	if f.batch == 0 {
		problem.Fixed.GlobalBatch = max(in.linear.MicrobatchSize, 1) * gpus
	}
	cands, err := planWith(plan.PlannerTwoBW, problem)
	if err != nil {
		return err
	}
	if f.exportPlan != "" {
		if err := exportPlanFile(f.exportPlan, cands[0]); err != nil {
			return err
		}
	}
	out := twoBWOutput{Model: in.name, Algorithm: plan.PlannerTwoBW, Layers: len(in.linear.Layers), Levels: problem.System.Levels,
		BatchSize: problem.Fixed.GlobalBatch, Best: twoBWRowOf(cands[0])}
	for _, c := range cands {
		out.Candidates = append(out.Candidates, twoBWRowOf(c))
	}
	if f.asJSON {
		return writeJSON(stdout, out)
	}
	fmt.Fprintf(stdout, "model %s: %d layers, %d GPUs, global batch %d (PipeDream-2BW planner)\n", out.Model, out.Layers, gpus, out.BatchSize)
	tw := newTable(stdout)
	fmt.Fprintln(tw, "DP\tPP\tEXECUTION\tMICROBATCH\tMICROBATCHES\tSAMPLES/s\tMEMORY/GPU GB\tSTAGE STARTS")
	for _, c := range out.Candidates {
		fmt.Fprintf(tw, "%d\t%d\t%s\t%d\t%d\t%.4g\t%.2f\t%v\n", c.DataParallel, c.Stages, c.Execution, c.Microbatch,
			c.Microbatches, c.SamplesPerSecond, c.MemoryBytes/1e9, c.FirstBlocks)
	}
	return tw.Flush()
}
