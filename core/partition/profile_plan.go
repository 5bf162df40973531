package partition

import (
	"fmt"

	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
)

// SGDMomentumStateBytesPerWeightByte is the gradient and momentum kept per
// weight byte by SGD with momentum, the optimizer of PipeDream's profiled
// models (TwoBWOptions.StateBytesPerWeightByte for them).
const SGDMomentumStateBytesPerWeightByte = 2

// PipeDreamRunPlan turns res, a PipeDream partition of prof's layers, into the
// exported run plan on cluster: replicated stages under PipeDream's
// asynchronous 1F1B with weight stashing (§2.4), NOAM microbatches in
// flight, and the DP's bottleneck as the time per minibatch.
func PipeDreamRunPlan(prof model.Profile, cluster plan.Cluster, res *PipeDreamResult) (*plan.Plan, error) {
	if res == nil || len(res.Stages) == 0 {
		return nil, fmt.Errorf("pipedream plan: the partition has no stages")
	}
	p := profilePlan(prof, cluster, "pipedream")
	peak := 0.0
	for _, s := range res.Stages {
		p.Stages = append(p.Stages, plan.Stage{FirstLayer: s.FirstLayer, LastLayer: s.LastLayer, Replicas: s.Replicas})
		p.Predictions.StagePeakBytes = append(p.Predictions.StagePeakBytes, s.MemoryBytes)
		peak = max(peak, s.MemoryBytes)
	}
	mb := prof.MicrobatchSize
	p.Parallelism = plan.Parallelism{TP: 1, PP: len(res.Stages), DP: 1, Interleave: 1}
	p.Schedule = plan.Schedule{Kind: string(schedule.PipeDream), Microbatches: res.NOAM, MicrobatchSize: mb, GlobalBatch: mb * res.Stages[0].Replicas}
	p.Predictions.IterationSeconds = res.BottleneckSeconds
	p.Predictions.SamplesPerSecond = float64(mb) / res.BottleneckSeconds
	p.Predictions.BottleneckSeconds = res.BottleneckSeconds
	p.Predictions.PeakBytesPerGPU = peak
	return p, p.Validate()
}

// TwoBWRunPlan turns cfg, one configuration of PipeDream-2BW's planner for
// prof at global batch size batch, into the exported run plan on cluster
// (§3.3): cfg.Stages stages, each replicated cfg.DataParallel ways through
// parallelism.dp, under 2BW (or plain gradient accumulation without
// pipelining).
func TwoBWRunPlan(prof model.Profile, cluster plan.Cluster, cfg TwoBWConfig, batch int) (*plan.Plan, error) {
	if len(cfg.FirstBlocks) != cfg.Stages || cfg.Stages < 1 {
		return nil, fmt.Errorf("2bw plan: configuration has %d stages but %d stage starts", cfg.Stages, len(cfg.FirstBlocks))
	}
	if !(cfg.SamplesPerSecond > 0) {
		return nil, fmt.Errorf("2bw plan: samples_per_second must be > 0, got %v", cfg.SamplesPerSecond)
	}
	p := profilePlan(prof, cluster, "2bw")
	p.Recompute = string(cfg.Recompute())
	for i, first := range cfg.FirstBlocks {
		last := len(prof.Layers) - 1
		if i+1 < len(cfg.FirstBlocks) {
			last = cfg.FirstBlocks[i+1] - 1
		}
		p.Stages = append(p.Stages, plan.Stage{FirstLayer: first, LastLayer: last, Replicas: 1})
	}
	p.Parallelism = plan.Parallelism{TP: 1, PP: cfg.Stages, DP: cfg.DataParallel, Interleave: 1}
	p.Schedule = plan.Schedule{Kind: string(cfg.ScheduleKind()), Microbatches: cfg.Microbatches, MicrobatchSize: cfg.Microbatch, GlobalBatch: batch}
	p.Predictions = plan.Predictions{IterationSeconds: float64(batch) / cfg.SamplesPerSecond, SamplesPerSecond: cfg.SamplesPerSecond,
		BottleneckSeconds: cfg.SecondsPerMicrobatch, PeakBytesPerGPU: cfg.MemoryBytes}
	return p, p.Validate()
}

// Recompute is the activation recomputation the configuration's execution uses.
func (c TwoBWConfig) Recompute() model.Recompute {
	if c.Execution == TwoBWPipelinedRecompute {
		return model.RecomputeFull
	}
	return model.RecomputeNone
}

// ScheduleKind is the pipeline schedule of the configuration's execution:
// 2BW when pipelined, else one stage with gradient accumulation (1F1B of
// one stage).
func (c TwoBWConfig) ScheduleKind() schedule.Kind {
	if c.Execution == TwoBWNoPipelining {
		return schedule.OneFOneB
	}
	return schedule.TwoBW
}

// profilePlan is the part of a run plan of prof on cluster that every
// profile planner shares; the planner fills in execution and predictions.
func profilePlan(prof model.Profile, cluster plan.Cluster, planner string) *plan.Plan {
	return &plan.Plan{
		Version:   plan.Version,
		Planner:   planner,
		Model:     plan.Model{Name: prof.Name, NumLayers: len(prof.Layers), Profile: &prof},
		Cluster:   cluster,
		Recompute: string(model.RecomputeNone),
	}
}
