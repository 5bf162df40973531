package partition

import (
	"context"

	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
)

// madPipeNoExport says why a MadPipe candidate has no run plan.
const madPipeNoExport = "MadPipe puts several stages on its special GPU; the run-plan schema has one GPU per stage, so MadPipe results cannot be exported yet"

// madPipePlanner is MadPipe (madpipe-2020) as a Planner: one candidate,
// the allocation of the best valid 1F1B* schedule found.
type madPipePlanner struct{}

func (madPipePlanner) Name() string { return plan.PlannerMadPipe }

// Plan partitions the problem's layer chain over all the system's GPUs,
// pairwise at System.PairBandwidthBytesPerSec, within its memory per GPU
// (which MadPipe needs).
func (pl madPipePlanner) Plan(ctx context.Context, p Problem, progress Progress) ([]Candidate, error) {
	prof, err := p.needProfile(pl.Name())
	if err != nil {
		return nil, err
	}
	if err := p.System.Validate(); err != nil {
		return nil, err
	}
	r, err := MadPipe(ctx, prof, p.System.GPUs(), p.System.PairBandwidthBytesPerSec(), p.System.MemoryBytes, progress)
	if err != nil {
		return nil, err
	}
	mb := prof.MicrobatchSize
	c := Candidate{
		Planner: plan.PlannerMadPipe,
		Execution: plan.Execution{TP: 1, PP: len(r.Stages), DP: 1, Interleave: 1, CP: 1, EP: 1,
			MicrobatchSize: mb, GlobalBatch: mb, Recompute: model.RecomputeNone, Schedule: schedule.OneFOneBStar},
		Microbatches: 1,
		Fits:         true,
		NoExport:     madPipeNoExport,
		MadPipe:      r,
		Predictions: plan.Predictions{IterationSeconds: r.PeriodSeconds, SamplesPerSecond: float64(mb) / r.PeriodSeconds,
			BottleneckSeconds: r.PeriodSeconds},
		model: profilePlanModel(prof), cluster: p.System.PlanCluster(),
	}
	for _, s := range r.Stages {
		c.Stages = append(c.Stages, plan.Stage{FirstLayer: s.FirstLayer, LastLayer: s.LastLayer, Replicas: 1})
		c.Predictions.StagePeakBytes = append(c.Predictions.StagePeakBytes, r.Processors[s.Processor].MemoryBytes)
	}
	for _, q := range r.Processors {
		c.Predictions.PeakBytesPerGPU = max(c.Predictions.PeakBytesPerGPU, q.MemoryBytes)
	}
	return []Candidate{c}, nil
}
