package app

import (
	"context"

	"pipeplan/core/cost"
	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/partition"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
)

// MadPipeView is what the Plan page shows of a MadPipe partition.
type MadPipeView struct {
	// Stages are the contiguous layer ranges with the GPU each runs on
	// (several may share the one "special" GPU, §4.2).
	Stages []partition.MadPipeStage `json:"stages"`
	// GPUMemoryBytes is each GPU's peak memory in the schedule.
	GPUMemoryBytes []float64 `json:"gpu_memory_bytes"`
	// PeriodSeconds is the 1F1B* schedule's period: the time per minibatch.
	PeriodSeconds float64 `json:"period_seconds"`
	// BandwidthBytesPerSec is the link MadPipe assumes between every pair of GPUs.
	BandwidthBytesPerSec float64 `json:"bandwidth_bytes_per_sec"`
}

// noExportMadPipe says why a MadPipe partition is not exported.
const noExportMadPipe = "MadPipe puts several stages on its special GPU; the run-plan schema has one GPU per stage, so MadPipe results cannot be exported yet (choose PipeDream or 2BW to export)."

// planMadPipe runs MadPipe (madpipe-2020, Algorithm 1: binary search on the
// period over MadPipe-DP, then 1F1B* scheduling) on prof's chain over all
// of c's GPUs, pairwise at the slowest link they cross.
func planMadPipe(ctx context.Context, prof model.Profile, c hw.Cluster, res Result, progress func(float64)) (Result, error) {
	bw := c.GroupBandwidthBytesPerSec(c.GPUs(), 1)
	if bw == 0 { // one GPU: no link crossed; MadPipe still wants a positive one
		bw = c.Levels[0].BandwidthBytesPerSec
	}
	r, err := partition.MadPipe(ctx, prof, c.GPUs(), bw, c.GPU.MemoryBytes, progress)
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		res.Problem = "MadPipe: " + err.Error()
		return res, nil
	}
	view := &MadPipeView{Stages: r.Stages, PeriodSeconds: r.PeriodSeconds, BandwidthBytesPerSec: bw}
	peak := 0.0
	for _, p := range r.Processors {
		view.GPUMemoryBytes = append(view.GPUMemoryBytes, p.MemoryBytes)
		peak = max(peak, p.MemoryBytes)
	}
	mb := prof.MicrobatchSize
	res.Candidates = []Candidate{{
		Planner: "madpipe", Execution: plan.Execution{TP: 1, PP: len(r.Stages), DP: 1, Interleave: 1, CP: 1, EP: 1,
			MicrobatchSize: mb, GlobalBatch: mb, Schedule: schedule.OneFOneBStar, Recompute: model.RecomputeNone},
		IterationSeconds: r.PeriodSeconds, SamplesPerSecond: float64(mb) / r.PeriodSeconds,
		Memory: cost.Memory{PeakBytes: peak, CapacityBytes: c.GPU.MemoryBytes}, Fits: true,
	}}
	res.Feasible, res.Evaluated = 1, 1
	res.MadPipe, res.NoExport = view, noExportMadPipe
	return res, nil
}
