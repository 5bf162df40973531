package cli

import (
	"context"
	"fmt"
	"io"
	"math"

	"pipeplan/core/hw"
	"pipeplan/core/partition"
	"pipeplan/core/plan"
	"pipeplan/internal/atomicfile"
)

// twoBWFlags are the partition command's flags the 2bw branch reads.
type twoBWFlags struct {
	memoryBytes float64
	batch       int
	gpu         string
	exportPlan  string
	asJSON      bool
}

// twoBWOutput is the --json form of "partition --algorithm 2bw".
type twoBWOutput struct {
	Model     string     `json:"model"`
	Algorithm string     `json:"algorithm"`
	Layers    int        `json:"layers"`
	Levels    []hw.Level `json:"levels"`
	BatchSize int        `json:"batch_size"`
	partition.TwoBWPlan
}

// runTwoBW is the 2bw branch of the partition command: PipeDream-2BW's
// planner (§3.3.2) on the model's layer chain, with the innermost level as
// the server and the outermost level's bandwidth between servers.
func runTwoBW(stdout io.Writer, in *partitionInput, levels []hw.Level, f twoBWFlags) error {
	gpus := 1
	for _, l := range levels {
		gpus *= l.Workers
	}
	batch := f.batch
	if batch == 0 {
		batch = max(in.linear.MicrobatchSize, 1) * gpus
	}
	memory := f.memoryBytes
	if memory == 0 {
		memory = math.MaxFloat64
	}
	blocks, err := partition.NewProfileBlocks(in.linear)
	if err != nil {
		return err
	}
	opt := partition.TwoBWOptions{
		GPUs: gpus, GPUsPerServer: levels[0].Workers,
		IntraServerBandwidthBytesPerSec: levels[0].BandwidthBytesPerSec,
		InterServerBandwidthBytesPerSec: levels[len(levels)-1].BandwidthBytesPerSec,
		MemoryBytes:                     memory, BatchSize: batch,
		StateBytesPerWeightByte: partition.SGDMomentumStateBytesPerWeightByte,
	}
	res, err := partition.PlanTwoBW(context.Background(), blocks, opt, nil)
	if err != nil {
		return err
	}
	if f.exportPlan != "" {
		cluster := plan.Cluster{GPU: f.gpu, Nodes: gpus / levels[0].Workers, GPUsPerNode: levels[0].Workers, Levels: levels}
		if cluster.GPU == "" {
			cluster.GPU = defaultPlanGPU(in)
		}
		p, err := partition.TwoBWRunPlan(in.linear, cluster, res.Best, batch)
		if err != nil {
			return fmt.Errorf("--export-plan: %w", err)
		}
		data, err := p.Marshal()
		if err != nil {
			return fmt.Errorf("--export-plan: %w", err)
		}
		if err := atomicfile.WriteFile(f.exportPlan, data); err != nil {
			return err
		}
	}
	out := twoBWOutput{Model: in.name, Algorithm: "2bw", Layers: len(in.linear.Layers), Levels: levels, BatchSize: batch, TwoBWPlan: res}
	if f.asJSON {
		return writeJSON(stdout, out)
	}
	fmt.Fprintf(stdout, "model %s: %d layers, %d GPUs, global batch %d (PipeDream-2BW planner)\n", out.Model, out.Layers, gpus, batch)
	tw := newTable(stdout)
	fmt.Fprintln(tw, "DP\tPP\tEXECUTION\tMICROBATCH\tMICROBATCHES\tSAMPLES/s\tMEMORY/GPU GB\tSTAGE STARTS")
	for _, c := range res.Candidates {
		fmt.Fprintf(tw, "%d\t%d\t%s\t%d\t%d\t%.4g\t%.2f\t%v\n", c.DataParallel, c.Stages, c.Execution, c.Microbatch,
			c.Microbatches, c.SamplesPerSecond, c.MemoryBytes/1e9, c.FirstBlocks)
	}
	return tw.Flush()
}
