package app

import (
	"context"

	"pipeplan/core/partition"
	"pipeplan/core/plan"
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
	// AllocationPeriodSeconds is the load of the busiest GPU or link of the
	// allocation (its period without memory limits), and
	// TargetPeriodSeconds the target period T̂ at which MadPipe-DP
	// estimated memory (Algorithm 1).
	AllocationPeriodSeconds float64 `json:"allocation_period_seconds"`
	TargetPeriodSeconds     float64 `json:"target_period_seconds"`
	// BandwidthBytesPerSec is the link MadPipe assumes between every pair of GPUs.
	BandwidthBytesPerSec float64 `json:"bandwidth_bytes_per_sec"`
}

// planMadPipe runs MadPipe (madpipe-2020, Algorithm 1: binary search on the
// period over MadPipe-DP, then 1F1B* scheduling) on the problem's chain
// over all of its GPUs, pairwise at the slowest link they cross.
func planMadPipe(ctx context.Context, problem partition.Problem, res Result, progress func(float64)) (Result, error) {
	pl, err := partition.Lookup(plan.PlannerMadPipe)
	if err != nil {
		return Result{}, err
	}
	cands, err := pl.Plan(ctx, problem, fraction(progress))
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		res.Problem = "MadPipe: " + err.Error()
		return res, nil
	}
	c := cands[0]
	r := c.MadPipe
	view := &MadPipeView{Stages: r.Stages, PeriodSeconds: r.PeriodSeconds, AllocationPeriodSeconds: r.AllocationPeriodSeconds,
		TargetPeriodSeconds: r.TargetPeriodSeconds, BandwidthBytesPerSec: problem.System.PairBandwidthBytesPerSec()}
	for _, p := range r.Processors {
		view.GPUMemoryBytes = append(view.GPUMemoryBytes, p.MemoryBytes)
	}
	res.Candidates = []Candidate{fromCandidate(c, problem.System.MemoryBytes)}
	res.Feasible, res.Evaluated = 1, 1
	res.MadPipe, res.NoExport = view, c.NoExport+" (choose PipeDream or 2BW to export)."
	return res, nil
}

// fraction turns the fraction-done callback of the application layer into
// a planner's Progress; nil stays nil.
func fraction(progress func(float64)) partition.Progress {
	if progress == nil {
		return nil
	}
	return func(done, total int) { progress(float64(done) / float64(total)) }
}
