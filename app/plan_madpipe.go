package app

import (
	"context"
	"fmt"

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

// MaxMadPipeLayerGPUs bounds MadPipe's problem, layers × GPUs: its DP's
// work and memory grow faster than either (ResNet-101's 346 layers take
// seconds and ~100 MB on 16 GPUs, minutes and gigabytes on 128), so a link
// or an /api request could otherwise ask for more than a tab can give.
const MaxMadPipeLayerGPUs = 5600

// planMadPipe runs MadPipe (madpipe-2020, Algorithm 1: binary search on the
// period over MadPipe-DP, then 1F1B* scheduling) on the problem's chain
// over all of its GPUs, pairwise at the slowest link they cross.
func planMadPipe(ctx context.Context, problem partition.Problem, res Result, progress func(float64)) (Result, error) {
	layers, gpus := len(problem.Profile.Layers), problem.System.GPUs()
	if layers*gpus > MaxMadPipeLayerGPUs {
		return Result{}, fmt.Errorf("plan.nodes: MadPipe takes at most %d layers × GPUs, got %d layers × %d GPUs: plan %s on at most %d GPUs with MadPipe, or choose PipeDream or 2BW",
			MaxMadPipeLayerGPUs, layers, gpus, problem.Profile.Name, MaxMadPipeLayerGPUs/layers)
	}
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
