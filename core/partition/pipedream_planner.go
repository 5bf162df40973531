package partition

import (
	"context"
	"fmt"

	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
)

// pipeDreamPlanner is PipeDream's hierarchical DP with stage replication
// (dissertation §2.4.1) as a Planner: one candidate, the optimal partition.
type pipeDreamPlanner struct{}

func (pipeDreamPlanner) Name() string { return plan.PlannerPipeDream }

// Plan partitions the problem's layer chain, or its graph's states, over
// the system's topology with the system's memory as the limit.
func (pl pipeDreamPlanner) Plan(ctx context.Context, p Problem, progress Progress) ([]Candidate, error) {
	prof, err := p.needProfile(pl.Name())
	if err != nil {
		return nil, err
	}
	if err := p.System.Validate(); err != nil {
		return nil, err
	}
	var cuts *Cuts
	if p.States != nil {
		cuts, err = GraphCuts(p.States)
	} else {
		cuts, err = ChainCuts(prof)
	}
	if err != nil {
		return nil, err
	}
	opt := PipeDreamOptions{Levels: p.System.Levels, Straight: p.Straight, MemoryBytes: p.System.MemoryBytes, CostModel: p.CostModel}
	res, err := PipeDream(ctx, cuts, opt, progress)
	if err != nil {
		return nil, err
	}
	c := pipeDreamCandidate(prof.MicrobatchSize, res)
	c.model, c.cluster = profilePlanModel(prof), p.System.PlanCluster()
	if p.States != nil {
		c.model, c.Stages = collapseStates(prof, p.States, cuts, res)
	}
	return []Candidate{c}, nil
}

// pipeDreamCandidate is partition res of a model profiled at microbatch
// size mb: replicated stages under PipeDream's asynchronous 1F1B with
// weight stashing (§2.4), NOAM inputs in flight, and the DP's bottleneck as
// the time per minibatch.
func pipeDreamCandidate(mb int, res *PipeDreamResult) Candidate {
	c := Candidate{
		Planner: plan.PlannerPipeDream,
		Execution: plan.Execution{TP: 1, PP: len(res.Stages), DP: 1, Interleave: 1, CP: 1, EP: 1,
			MicrobatchSize: mb, GlobalBatch: mb * res.Stages[0].Replicas,
			Recompute: model.RecomputeNone, Schedule: schedule.PipeDream},
		Microbatches: res.NOAM,
		Fits:         true,
		PipeDream:    res,
		Predictions: plan.Predictions{IterationSeconds: res.BottleneckSeconds,
			SamplesPerSecond: float64(mb) / res.BottleneckSeconds, BottleneckSeconds: res.BottleneckSeconds},
	}
	for _, s := range res.Stages {
		c.Stages = append(c.Stages, plan.Stage{FirstLayer: s.FirstLayer, LastLayer: s.LastLayer, Replicas: s.Replicas})
		c.Predictions.StagePeakBytes = append(c.Predictions.StagePeakBytes, s.MemoryBytes)
		c.Predictions.PeakBytesPerGPU = max(c.Predictions.PeakBytesPerGPU, s.MemoryBytes)
	}
	return c
}

// collapseStates is a partition of a graph's states as a run plan's model
// and stages: a graph's states are not a chain of layers, so the model has
// one layer per stage, holding the stage's nodes (its forward time from
// the states, the rest backward).
func collapseStates(prof model.Profile, st *model.States, cuts *Cuts, res *PipeDreamResult) (plan.Model, []plan.Stage) {
	chain := model.Profile{Name: prof.Name, MicrobatchSize: prof.MicrobatchSize}
	var stages []plan.Stage
	for q, s := range res.Stages {
		fwd := st.ForwardSeconds[s.LastLayer]
		if s.FirstLayer > 0 {
			fwd -= st.ForwardSeconds[s.FirstLayer-1]
		}
		fwd = min(max(fwd, 0), s.ComputeSeconds)
		chain.Layers = append(chain.Layers, model.Layer{Name: fmt.Sprintf("states %d-%d", s.FirstLayer, s.LastLayer),
			FwdSeconds: fwd, BwdSeconds: s.ComputeSeconds - fwd,
			OutputActivationBytes: cuts.OutputBytes[s.LastLayer], ParameterBytes: s.ParameterBytes})
		stages = append(stages, plan.Stage{FirstLayer: q, LastLayer: q, Replicas: s.Replicas})
	}
	return profilePlanModel(chain), stages
}
