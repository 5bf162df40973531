package app

import (
	"context"
	"fmt"
	"slices"
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

// planProfile plans an embedded PipeDream profile: PipeDream's
// hierarchical DP with stage replication (dissertation §2.4.1) over its
// graph's antichain states, PipeDream-2BW's planner (§3.3.2, Algorithm 1)
// and MadPipe over its layers as a chain, or the one the request names;
// candidates are ranked by predicted throughput.
func planProfile(ctx context.Context, m ModelPreset, c hw.Cluster, in request.Plan, progress func(float64), detailed bool) (Result, error) {
	g, err := modelprofiles.Graph(m.Profile)
	if err != nil {
		return Result{}, err
	}
	var states *model.States
	if in.Planner == "best" || in.Planner == plan.PlannerPipeDream {
		if states, err = g.States(); err != nil {
			return Result{}, &request.FieldError{Field: "plan.model", Msg: fmt.Sprintf("%s: PipeDream partitions a graph's antichain states: %v", m.ID, err)}
		}
	}
	prof := presetChain(m, g)
	res, err := planChain(ctx, prof, states, c, in, progress, detailed)
	res.Note = fmt.Sprintf("%s's layer times were measured on a V100 at minibatch %d; they are not rescaled to the %s.", m.Name, prof.MicrobatchSize, c.GPU.Name)
	return res, err
}

// presetChain is preset m's profile graph g as a layer chain named as the
// preset, at its profiled minibatch size.
func presetChain(m ModelPreset, g *model.Graph) model.Profile {
	prof := g.Chain()
	prof.Name, prof.MicrobatchSize = m.Name, g.MicrobatchSize
	return prof
}

// profilePresetPrefix starts the model id of every embedded PipeDream
// profile: "pd-" + its modelprofiles name.
const profilePresetPrefix = "pd-"

// ProfilePresets are the presets of every embedded PipeDream profile, with
// model id "pd-" + its modelprofiles name; the Plan page offers some of them
// (Models), a request may name any.
func ProfilePresets() []ModelPreset {
	var out []ModelPreset
	for _, in := range modelprofiles.List() {
		out = append(out, ModelPreset{ID: profilePresetPrefix + in.Name, Name: in.Description, Profile: in.Name})
	}
	return out
}

// embeddedProfile is the preset of any embedded PipeDream profile by id.
func embeddedProfile(id string) (ModelPreset, bool) {
	for _, m := range ProfilePresets() {
		if m.ID == id {
			return m, true
		}
	}
	return ModelPreset{}, false
}

// ProfilePresetID is the model id of the embedded PipeDream profile name
// (a modelprofiles name, e.g. "vgg16"), or an error listing them.
func ProfilePresetID(name string) (string, error) {
	if _, ok := embeddedProfile(profilePresetPrefix + name); ok {
		return profilePresetPrefix + name, nil
	}
	var names []string
	for _, m := range ProfilePresets() {
		names = append(names, m.Profile)
	}
	return "", &request.FieldError{Field: "plan.model", Msg: fmt.Sprintf("%q is not an embedded PipeDream profile (have %s)", name, strings.Join(names, ", "))}
}

// PresetProfile is the layer chain of the model preset id, an embedded
// PipeDream profile, as the profile planners see it (its name, profiled
// minibatch size and layers).
func PresetProfile(id string) (model.Profile, error) {
	m, err := modelByID(id)
	if err != nil {
		return model.Profile{}, err
	}
	if m.Profile == "" {
		return model.Profile{}, &request.FieldError{Field: "plan.model", Msg: fmt.Sprintf("%s is a transformer spec, not a measured per-layer profile", m.Name)}
	}
	g, err := modelprofiles.Graph(m.Profile)
	if err != nil {
		return model.Profile{}, err
	}
	return presetChain(m, g), nil
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
	return planChain(ctx, prof, nil, c, in, progress, true)
}

// profilePlanners are the planners "best" ranks on a layer chain, with the
// label a problem of theirs is reported under.
var profilePlanners = []struct{ name, label string }{
	{plan.PlannerPipeDream, "PipeDream"},
	{plan.PlannerTwoBW, "2BW"},
}

// MaxProfileGPUs bounds the cluster the layer-profile planners take: their
// work grows with the GPUs (PipeDream's DP on ResNet-101 over 1,024 GPUs
// takes seconds), and request.MaxGPUs would make a link
// or an /api request ask for tens of minutes. The default cluster fits.
const MaxProfileGPUs = 1024

// planChain plans a layer chain (and the states of its graph, if not nil,
// which PipeDream partitions instead) with the profile planners: PipeDream
// and 2BW ("best" ranks both), or MadPipe alone (it takes up to seconds).
// The stages must fit in the request's memory limit, by default the GPU's.
// The selected candidate's run plan and timeline come when detailed.
func planChain(ctx context.Context, prof model.Profile, states *model.States, c hw.Cluster, in request.Plan, progress func(float64), detailed bool) (Result, error) {
	if n := c.GPUs(); n > MaxProfileGPUs {
		return Result{}, fmt.Errorf("plan.nodes: the layer-profile planners (PipeDream, 2BW, MadPipe) take at most %d GPUs, got %d nodes × %d GPUs = %d",
			MaxProfileGPUs, n/c.GPUsPerNode(), c.GPUsPerNode(), n)
	}
	res := Result{Model: prof.Name, GPU: c.GPU.Name, GPUs: c.GPUs(), CapacityBytes: c.GPU.MemoryBytes}
	system := partition.SystemOf(c)
	system.MemoryBytes = in.MemoryLimit(c.GPU.MemoryBytes)
	problem := partition.Problem{Profile: &prof, States: states, System: system, Fixed: plan.Execution{GlobalBatch: in.GlobalBatch},
		Straight: in.Straight, CostModel: partition.CostModel(in.CostModel)}
	switch in.Planner {
	case "best", plan.PlannerPipeDream, plan.PlannerTwoBW:
	case plan.PlannerMadPipe:
		return planMadPipe(ctx, problem, res, progress)
	default:
		return Result{}, fmt.Errorf("plan.planner: the playground plans layer profiles with PipeDream, 2BW and MadPipe; %q is not wired in", in.Planner)
	}
	var cands []partition.Candidate
	var problems []string
	var planners []string
	for _, pp := range profilePlanners {
		if in.Planner == "best" || in.Planner == pp.name {
			planners = append(planners, pp.name)
		}
	}
	for _, pp := range profilePlanners {
		i := slices.Index(planners, pp.name)
		if i < 0 {
			continue
		}
		pl, err := partition.Lookup(pp.name)
		if err != nil {
			return Result{}, err
		}
		var share func(float64) // this planner's share of the progress
		if progress != nil {
			share = func(f float64) { progress((float64(i) + f) / float64(len(planners))) }
		}
		found, err := pl.Plan(ctx, problem, fraction(share))
		if err != nil {
			problems = append(problems, pp.label+": "+err.Error())
		}
		cands = append(cands, found...)
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if len(cands) == 0 {
		res.Problem = strings.Join(problems, "; ")
		return res, nil
	}
	sort.SliceStable(cands, func(a, b int) bool {
		return cands[a].Predictions.SamplesPerSecond > cands[b].Predictions.SamplesPerSecond
	})
	res.Evaluated = len(cands)
	var shown []partition.Candidate // the candidates listed, in rank order
	for _, cand := range cands {
		row := fromCandidate(cand, c.GPU.MemoryBytes)
		if why := overBatch(cand, in.GlobalBatch); why != "" {
			row.Fits, row.Reason = false, why
			if len(res.Infeasible) < MaxShownInfeasible {
				res.Infeasible = append(res.Infeasible, row)
			}
			continue
		}
		atBatch(&row, in.GlobalBatch)
		res.Feasible++
		if len(shown) < MaxShownCandidates {
			shown = append(shown, cand)
			res.Candidates = append(res.Candidates, row)
		}
	}
	if len(shown) == 0 {
		res.Problem = "no planner's configuration runs the global batch of " + fmt.Sprint(in.GlobalBatch) + " samples: " + res.Infeasible[0].Reason
		return res, nil
	}
	cands = shown
	res.Selected = min(max(in.Selected, 0), len(res.Candidates)-1)
	if !detailed {
		return res, nil
	}
	d, err := profileDetails(ctx, cands[res.Selected], c.GPU.MemoryBytes)
	if err != nil {
		return Result{}, err
	}
	res.Plan, res.StageMemory, res.TimelineSVG, res.TimelineCaption = d.plan, d.stageMemory, d.timelineSVG, d.timelineCaption
	res.PipeDream = cands[res.Selected].PipeDream
	return res, nil
}

// overBatch says why a PipeDream candidate cannot run a step of the global
// batch: each replica of a stage takes its own minibatch and the replicas
// update the weights together (§2.4.1), so a step is at least minibatch ×
// the most replicas of a stage. "" when it can, and for other planners.
func overBatch(c partition.Candidate, globalBatch int) string {
	if c.PipeDream == nil {
		return ""
	}
	most := 1
	for _, s := range c.PipeDream.Stages {
		most = max(most, s.Replicas)
	}
	if n := c.Execution.MicrobatchSize * most; n > globalBatch {
		return fmt.Sprintf("needs a global batch of at least %d (%d replicas of a stage × minibatch %d); the page asks %d", n, most, c.Execution.MicrobatchSize, globalBatch)
	}
	return ""
}

// atBatch states a row at the page's global batch: PipeDream's pipeline
// never flushes, so its step is the time to take globalBatch samples at
// its throughput; the other planners already plan that batch.
func atBatch(row *Candidate, globalBatch int) {
	row.GlobalBatch = globalBatch
	if row.Planner == plan.PlannerPipeDream && row.SamplesPerSecond > 0 {
		row.IterationSeconds = float64(globalBatch) / row.SamplesPerSecond
	}
}

// fromCandidate is a planner's candidate as the candidates table shows it.
func fromCandidate(c partition.Candidate, capacity float64) Candidate {
	e, p := c.Execution, c.Predictions
	return Candidate{
		Planner: c.Planner, Execution: e,
		IterationSeconds: p.IterationSeconds, SamplesPerSecond: p.SamplesPerSecond,
		TFLOPSPerGPU: p.TFLOPSPerGPU, HardwareTFLOPSPerGPU: p.TFLOPSPerGPU, MFU: p.MFU, BubbleFraction: p.BubbleFraction,
		Memory: cost.Memory{PeakBytes: p.PeakBytesPerGPU, CapacityBytes: capacity}, Fits: c.Fits, Reason: c.Reason,
		StageReplicas: stageReplicas(c), GlobalBatch: e.GlobalBatch, TwoBW: c.TwoBW,
	}
}

// stageReplicas lists a PipeDream partition's replicas per stage; nil for
// the other planners.
func stageReplicas(c partition.Candidate) []int {
	if c.PipeDream == nil {
		return nil
	}
	out := make([]int, len(c.PipeDream.Stages))
	for i, s := range c.PipeDream.Stages {
		out[i] = s.Replicas
	}
	return out
}

// profileDetails is the run plan, the per-stage memory (PipeDream's, as its
// model counts it) and the timeline of a profile planner's candidate.
func profileDetails(ctx context.Context, c partition.Candidate, capacity float64) (profileDetail, error) {
	p, err := c.RunPlan()
	if err != nil {
		return profileDetail{}, err
	}
	d := profileDetail{plan: p}
	if pd := c.PipeDream; pd != nil {
		for q, s := range pd.Stages {
			d.stageMemory = append(d.stageMemory, stageMemory(q, s, capacity))
		}
		d.timelineSVG, d.timelineCaption, err = replicatedTimeline(ctx, pd)
		return d, err
	}
	d.timelineSVG, d.timelineCaption, err = uniformTimeline(ctx, c.Execution.Schedule, c.Execution.PP, c.Microbatches,
		c.Predictions.BottleneckSeconds, "the pipeline's predicted time per microbatch at every stage")
	return d, err
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
