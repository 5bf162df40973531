package engine

import (
	"context"
	"fmt"

	"pipeplan/core/cost"
	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/partition"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
	"pipeplan/modelprofiles"
	"pipeplan/ui/state"
)

// planProfile partitions an embedded PipeDream profile (its layers as a
// chain) with PipeDream's hierarchical DP with stage replication
// (dissertation §2.4.1) on the cluster's levels, the GPU's memory as limit.
func planProfile(ctx context.Context, m ModelPreset, c hw.Cluster, in state.Plan) (Result, error) {
	switch in.Planner {
	case "best", "pipedream":
	default:
		return Result{}, fmt.Errorf("plan.planner: the playground plans layer profiles with PipeDream so far; %q is not wired in (choose \"PipeDream\" or \"Best overall\")", in.Planner)
	}
	g, err := modelprofiles.Graph(m.Profile)
	if err != nil {
		return Result{}, err
	}
	prof := g.Chain()
	prof.Name, prof.MicrobatchSize = m.Name, g.MicrobatchSize
	cuts, err := partition.ChainCuts(prof)
	if err != nil {
		return Result{}, err
	}
	res := Result{Model: m.Name, GPU: c.GPU.Name, GPUs: c.GPUs(), CapacityBytes: c.GPU.MemoryBytes,
		Note: fmt.Sprintf("%s's layer times were measured on a V100 at minibatch %d; they are not rescaled to the %s.", m.Name, prof.MicrobatchSize, c.GPU.Name)}
	pd, err := partition.PipeDream(ctx, cuts, partition.PipeDreamOptions{Levels: c.Levels, MemoryBytes: c.GPU.MemoryBytes}, nil)
	if err != nil {
		res.Problem = err.Error()
		return res, nil
	}
	peak := 0.0
	stages := make([]plan.Stage, len(pd.Stages))
	res.StageMemory = make([]cost.Memory, len(pd.Stages))
	var stagePeak []float64
	for q, s := range pd.Stages {
		stages[q] = plan.Stage{FirstLayer: s.FirstLayer, LastLayer: s.LastLayer, Replicas: s.Replicas}
		res.StageMemory[q] = stageMemory(q, s, c.GPU.MemoryBytes)
		peak = max(peak, s.MemoryBytes)
		stagePeak = append(stagePeak, s.MemoryBytes)
	}
	mb := prof.MicrobatchSize
	cand := Candidate{
		Planner: "pipedream", TP: 1, PP: len(stages), DP: 1, Interleave: 1, Microbatch: mb, Microbatches: pd.NOAM,
		Schedule: string(schedule.PipeDream), Recompute: string(model.RecomputeNone),
		IterationSeconds: pd.BottleneckSeconds, SamplesPerSecond: float64(mb) / pd.BottleneckSeconds,
		Memory: cost.Memory{PeakBytes: peak, CapacityBytes: c.GPU.MemoryBytes}, Fits: true,
	}
	res.Candidates, res.Feasible, res.Evaluated = []Candidate{cand}, 1, 1
	res.Plan = &plan.Plan{
		Version: plan.Version, Planner: "pipedream",
		Model:       plan.Model{Name: m.Name, NumLayers: len(prof.Layers), Profile: &prof},
		Cluster:     plan.Cluster{GPU: c.GPU.ID, Nodes: c.GPUs() / c.GPUsPerNode(), GPUsPerNode: c.GPUsPerNode(), Levels: c.Levels},
		Parallelism: plan.Parallelism{TP: 1, PP: len(stages), DP: 1, Interleave: 1},
		Stages:      stages,
		Schedule:    plan.Schedule{Kind: string(schedule.PipeDream), Microbatches: pd.NOAM, MicrobatchSize: mb, GlobalBatch: mb * stages[0].Replicas},
		Recompute:   string(model.RecomputeNone),
		Predictions: plan.Predictions{IterationSeconds: pd.BottleneckSeconds, SamplesPerSecond: cand.SamplesPerSecond,
			BottleneckSeconds: pd.BottleneckSeconds, PeakBytesPerGPU: peak, StagePeakBytes: stagePeak},
	}
	if err := res.Plan.Validate(); err != nil {
		return Result{}, fmt.Errorf("pipedream plan: %w", err)
	}
	res.TimelineSVG, res.TimelineCaption, err = replicatedTimeline(ctx, pd)
	if err != nil {
		return Result{}, err
	}
	return res, nil
}

// stageMemory splits a PipeDream stage's per-GPU memory as its model counts
// it (§2.3.3, weight stashing): a weight version and an activation stash per
// input in flight, plus one gradient; the rest is optimizer state.
func stageMemory(q int, s partition.PipeDreamStage, capacity float64) cost.Memory {
	in := float64(s.InFlight)
	m := cost.Memory{Stage: q, WeightBytes: in * s.ParameterBytes, ActivationBytes: in * s.ActivationBytes,
		GradientBytes: s.ParameterBytes, PeakBytes: s.MemoryBytes, CapacityBytes: capacity}
	m.OptimizerBytes = max(0, s.MemoryBytes-m.WeightBytes-m.ActivationBytes-m.GradientBytes)
	return m
}

// maxTimelineDevices bounds the GPU rows of a drawn timeline.
const maxTimelineDevices = 64

// replicatedTimeline draws a PipeDream partition as 1F1B-RR (§2.4.2): each
// stage's replicas take inputs round-robin, forward:backward 1:2. Above
// maxTimelineDevices GPUs it only says why there is no drawing.
func replicatedTimeline(ctx context.Context, pd *partition.PipeDreamResult) (string, string, error) {
	if pd.GPUs > maxTimelineDevices {
		return "", fmt.Sprintf("Timeline not drawn: the partition uses %d GPUs (at most %d rows are drawn).", pd.GPUs, maxTimelineDevices), nil
	}
	reps := make([]int, len(pd.Stages))
	costs := schedule.Costs{}
	most := 1
	for q, s := range pd.Stages {
		reps[q] = s.Replicas
		most = max(most, s.Replicas)
		costs.Stages = append(costs.Stages, schedule.StageCost{FwdSeconds: s.ComputeSeconds / 3, BwdSeconds: 2 * s.ComputeSeconds / 3})
	}
	m := min(max(2*pd.NOAM, 2*most, 8), 2*maxTimelineDevices) // every replica gets inputs
	s, err := schedule.Generate(schedule.OneFOneBRR, schedule.Options{Stages: len(pd.Stages), Microbatches: m, Replicas: reps})
	if err != nil {
		return "", "", fmt.Errorf("timeline: %w", err)
	}
	tl, err := schedule.Simulate(ctx, s, costs, nil)
	if err != nil {
		return "", "", fmt.Errorf("timeline: %w", err)
	}
	caption := fmt.Sprintf("1F1B-RR over the stages' replicas (§2.4.2), %d minibatches, each stage's profiled time split forward:backward 1:2", m)
	return string(schedule.RenderSVG(tl, schedule.SVGOptions{WidthPx: 900})), caption, nil
}
