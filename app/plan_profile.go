package app

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"pipeplan/app/request"
	"pipeplan/core/cost"
	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/partition"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
	"pipeplan/modelprofiles"
)

// profileDetail is what the Plan page shows for one profile candidate: the
// run plan, per-stage memory when the planner models it, and a timeline.
type profileDetail struct {
	plan            *plan.Plan
	stageMemory     []cost.Memory
	timelineSVG     string
	timelineCaption string
}

// planProfile plans an embedded PipeDream profile (its layers as a chain)
// with PipeDream's hierarchical DP with stage replication (dissertation
// §2.4.1) and PipeDream-2BW's planner (§3.3.2, Algorithm 1), or the one the
// request names, the GPU's memory as the limit; candidates are ranked by
// predicted throughput.
func planProfile(ctx context.Context, m ModelPreset, c hw.Cluster, in request.Plan, progress func(float64)) (Result, error) {
	g, err := modelprofiles.Graph(m.Profile)
	if err != nil {
		return Result{}, err
	}
	prof := g.Chain()
	prof.Name, prof.MicrobatchSize = m.Name, g.MicrobatchSize
	res, err := planChain(ctx, prof, c, in, progress)
	res.Note = fmt.Sprintf("%s's layer times were measured on a V100 at minibatch %d; they are not rescaled to the %s.", m.Name, prof.MicrobatchSize, c.GPU.Name)
	return res, err
}

// PlanProfile plans a layer profile the user uploaded (see
// ParseUploadedProfile) on the request's cluster; the request's model is
// ignored. progress, if not nil, receives the fraction done of a slow
// planner (MadPipe).
func PlanProfile(ctx context.Context, prof model.Profile, in request.Plan, progress func(float64)) (Result, error) {
	if err := in.Validate(); err != nil {
		return Result{}, err
	}
	c, err := clusterFor(in)
	if err != nil {
		return Result{}, err
	}
	return planChain(ctx, prof, c, in, progress)
}

// planChain plans a layer chain with the profile planners: PipeDream and
// 2BW ("best" ranks both), or MadPipe alone (it takes up to seconds).
func planChain(ctx context.Context, prof model.Profile, c hw.Cluster, in request.Plan, progress func(float64)) (Result, error) {
	res := Result{Model: prof.Name, GPU: c.GPU.Name, GPUs: c.GPUs(), CapacityBytes: c.GPU.MemoryBytes}
	switch in.Planner {
	case "best", "pipedream", "2bw":
	case "madpipe":
		return planMadPipe(ctx, prof, c, res, progress)
	default:
		return Result{}, fmt.Errorf("plan.planner: the playground plans layer profiles with PipeDream, 2BW and MadPipe; %q is not wired in", in.Planner)
	}
	var cands []Candidate
	var details []func(context.Context) (profileDetail, error)
	var problems []string
	if in.Planner != "2bw" {
		cand, detail, err := pipeDreamCandidate(ctx, prof, c)
		if err != nil {
			problems = append(problems, "PipeDream: "+err.Error())
		} else {
			cands, details = append(cands, cand), append(details, detail)
		}
	}
	if in.Planner != "pipedream" {
		tc, td, err := twoBWCandidates(ctx, prof, c, in.GlobalBatch)
		if err != nil {
			problems = append(problems, "2BW: "+err.Error())
		}
		cands, details = append(cands, tc...), append(details, td...)
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if len(cands) == 0 {
		res.Problem = strings.Join(problems, "; ")
		return res, nil
	}
	order := make([]int, len(cands))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return cands[order[a]].SamplesPerSecond > cands[order[b]].SamplesPerSecond })
	res.Feasible, res.Evaluated = len(cands), len(cands)
	for _, k := range order[:min(len(order), MaxShownCandidates)] {
		res.Candidates = append(res.Candidates, cands[k])
	}
	res.Selected = min(max(in.Selected, 0), len(res.Candidates)-1)
	d, err := details[order[res.Selected]](ctx)
	if err != nil {
		return Result{}, err
	}
	if err := d.plan.Validate(); err != nil {
		return Result{}, fmt.Errorf("%s plan: %w", d.plan.Planner, err)
	}
	res.Plan, res.StageMemory, res.TimelineSVG, res.TimelineCaption = d.plan, d.stageMemory, d.timelineSVG, d.timelineCaption
	return res, nil
}

// planCluster is c as a run plan describes it.
func planCluster(c hw.Cluster) plan.Cluster {
	return plan.Cluster{GPU: c.GPU.ID, Nodes: c.GPUs() / c.GPUsPerNode(), GPUsPerNode: c.GPUsPerNode(), Levels: c.Levels}
}

// pipeDreamCandidate runs PipeDream's DP (§2.4.1) on prof's chain.
func pipeDreamCandidate(ctx context.Context, prof model.Profile, c hw.Cluster) (Candidate, func(context.Context) (profileDetail, error), error) {
	cuts, err := partition.ChainCuts(prof)
	if err != nil {
		return Candidate{}, nil, err
	}
	pd, err := partition.PipeDream(ctx, cuts, partition.PipeDreamOptions{Levels: c.Levels, MemoryBytes: c.GPU.MemoryBytes}, nil)
	if err != nil {
		return Candidate{}, nil, err
	}
	peak := 0.0
	for _, s := range pd.Stages {
		peak = max(peak, s.MemoryBytes)
	}
	mb := prof.MicrobatchSize
	cand := Candidate{
		Planner: "pipedream", Execution: plan.Execution{TP: 1, PP: len(pd.Stages), DP: 1, Interleave: 1, CP: 1, EP: 1,
			MicrobatchSize: mb, GlobalBatch: mb * pd.NOAM, Schedule: schedule.PipeDream, Recompute: model.RecomputeNone},
		IterationSeconds: pd.BottleneckSeconds, SamplesPerSecond: float64(mb) / pd.BottleneckSeconds,
		Memory: cost.Memory{PeakBytes: peak, CapacityBytes: c.GPU.MemoryBytes}, Fits: true,
	}
	detail := func(ctx context.Context) (profileDetail, error) {
		p, err := partition.PipeDreamRunPlan(prof, planCluster(c), pd)
		if err != nil {
			return profileDetail{}, err
		}
		d := profileDetail{plan: p}
		for q, s := range pd.Stages {
			d.stageMemory = append(d.stageMemory, stageMemory(q, s, c.GPU.MemoryBytes))
		}
		d.timelineSVG, d.timelineCaption, err = replicatedTimeline(ctx, pd)
		return d, err
	}
	return cand, detail, nil
}

// twoBWCandidates runs PipeDream-2BW's planner (§3.3.2) on prof's chain:
// the best configuration of every (d, p, execution).
func twoBWCandidates(ctx context.Context, prof model.Profile, c hw.Cluster, batch int) ([]Candidate, []func(context.Context) (profileDetail, error), error) {
	blocks, err := partition.NewProfileBlocks(prof)
	if err != nil {
		return nil, nil, err
	}
	inter := c.Levels[0].BandwidthBytesPerSec
	if len(c.Levels) > 1 {
		inter = c.Levels[1].BandwidthBytesPerSec
	}
	tp, err := partition.PlanTwoBW(ctx, blocks, partition.TwoBWOptions{
		GPUs: c.GPUs(), GPUsPerServer: c.GPUsPerNode(), IntraServerBandwidthBytesPerSec: c.Levels[0].BandwidthBytesPerSec,
		InterServerBandwidthBytesPerSec: inter, MemoryBytes: c.GPU.MemoryBytes, BatchSize: batch,
		StateBytesPerWeightByte: partition.SGDMomentumStateBytesPerWeightByte,
	}, nil)
	if err != nil {
		return nil, nil, err
	}
	var cands []Candidate
	var details []func(context.Context) (profileDetail, error)
	for _, cfg := range tp.Candidates {
		recompute, kind := cfg.Recompute(), cfg.ScheduleKind()
		step := float64(batch) / cfg.SamplesPerSecond
		cand := Candidate{
			Planner: "2bw", Execution: plan.Execution{TP: 1, PP: cfg.Stages, DP: cfg.DataParallel, Interleave: 1, CP: 1, EP: 1,
				MicrobatchSize: cfg.Microbatch, GlobalBatch: batch, Schedule: kind, Recompute: recompute},
			IterationSeconds: step, SamplesPerSecond: cfg.SamplesPerSecond,
			Memory: cost.Memory{PeakBytes: cfg.MemoryBytes, CapacityBytes: c.GPU.MemoryBytes}, Fits: true,
		}
		cands = append(cands, cand)
		details = append(details, func(ctx context.Context) (profileDetail, error) {
			p, err := partition.TwoBWRunPlan(prof, planCluster(c), cfg, batch)
			if err != nil {
				return profileDetail{}, err
			}
			svg, caption, err := uniformTimeline(ctx, kind, cfg.Stages, cfg.Microbatches, cfg.SecondsPerMicrobatch,
				"the pipeline's predicted time per microbatch at every stage")
			return profileDetail{plan: p, timelineSVG: svg, timelineCaption: caption}, err
		})
	}
	return cands, details, nil
}

// stageMemory splits a PipeDream stage's per-GPU memory as its model counts
// it (§2.3.3, weight stashing): a weight version and an activation stash per
// input in flight, plus one gradient; the rest is optimizer request.
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
