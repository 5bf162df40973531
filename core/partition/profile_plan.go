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
	// One step is the NOAM microbatches in flight: B = NOAM·b, so m = NOAM.
	p.Execution = profileExecution(len(res.Stages), 1, mb, mb*res.NOAM, model.RecomputeNone, schedule.PipeDream)
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
	for i, first := range cfg.FirstBlocks {
		last := len(prof.Layers) - 1
		if i+1 < len(cfg.FirstBlocks) {
			last = cfg.FirstBlocks[i+1] - 1
		}
		p.Stages = append(p.Stages, plan.Stage{FirstLayer: first, LastLayer: last, Replicas: 1})
	}
	p.Execution = profileExecution(cfg.Stages, cfg.DataParallel, cfg.Microbatch, batch, cfg.Recompute(), cfg.ScheduleKind())
	if m := p.Execution.Microbatches(); m != cfg.Microbatches {
		return nil, fmt.Errorf("2bw plan: the configuration runs %d microbatches, but global batch %d / (dp %d × microbatch %d) gives %d", cfg.Microbatches, batch, cfg.DataParallel, cfg.Microbatch, m)
	}
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
		Version: plan.Version,
		Planner: planner,
		Model:   plan.Model{Name: prof.Name, NumLayers: len(prof.Layers), Profile: &prof},
		Cluster: cluster,
	}
}

// profileExecution is the execution of a profile planner's plan: p stages,
// d data-parallel pipelines, microbatches of b samples, B per step; no
// tensor, context or expert parallelism, no interleaving.
func profileExecution(p, d, b, B int, r model.Recompute, kind schedule.Kind) plan.Execution {
	return plan.Execution{TP: 1, PP: p, DP: d, Interleave: 1, CP: 1, EP: 1, MicrobatchSize: b, GlobalBatch: B, Recompute: r, Schedule: kind}
}
