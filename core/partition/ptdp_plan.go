package partition

import (
	"context"
	"fmt"

	"pipeplan/core/cost"
	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/plan"
)

// ptdpPlanner is the PTD-P search (dissertation §4.3) as a Planner: the
// configurations that fit, fastest first, then for each (t, p, v,
// recompute) the smallest microbatch size that does not fit, the smallest
// footprint first (Fits false). When none fits it returns those with the
// error SearchPTDP gives.
type ptdpPlanner struct{}

func (ptdpPlanner) Name() string { return plan.PlannerPTDP }

// Plan searches the problem's transformer on the system's cluster with
// Fixed, AllowCrossNodeTP and Cost as PTDPOptions; a system memory limit
// other than 0 replaces the GPU's capacity.
func (pl ptdpPlanner) Plan(ctx context.Context, p Problem, progress Progress) ([]Candidate, error) {
	if p.Transformer == nil {
		return nil, fmt.Errorf("%s: plans a transformer spec; the problem has none", pl.Name())
	}
	tr, c := *p.Transformer, p.System.Cluster()
	if p.System.MemoryBytes > 0 {
		c.GPU.MemoryBytes = p.System.MemoryBytes
	}
	opt := PTDPOptions{Fixed: p.Fixed, AllowCrossNodeTP: p.AllowCrossNodeTP, Cost: p.Cost}
	res, err := SearchPTDP(ctx, tr, c, opt, progress)
	var cands []Candidate
	for _, group := range [][]PTDPCandidate{res.Candidates, res.Infeasible} {
		for _, pc := range group {
			cand := ptdpCandidate(tr, c, pc.Config, pc.Prediction)
			cand.Fits, cand.Reason = pc.Fits, pc.Reason
			cands = append(cands, cand)
		}
	}
	return cands, err
}

// ptdpCandidate is configuration cfg of transformer tr on cluster c with
// its prediction pr: the p·Chunks() model chunks in model order (chunk k on
// pipeline device k mod p, or in a V schedule.KindInfo.ChunkDevice; layers
// split by cost.ExecutionLayers, as cost.Predict assumes), the schedule (1F1B, interleaved when
// v > 1, unless cfg names one), and the predictions, with every stage's
// peak memory when pr has them. The bubble fraction is the idle share of
// the step, bubble time over iteration time.
func ptdpCandidate(tr model.Transformer, c hw.Cluster, cfg plan.Execution, pr cost.Prediction) Candidate {
	ex := cost.WithDefaults(cfg)
	stages := make([]plan.Stage, ex.PP*ex.Chunks())
	first := 0
	for k, n := range cost.ExecutionLayers(tr, ex) {
		stages[k] = plan.Stage{FirstLayer: first, LastLayer: first + n - 1, Replicas: 1}
		first += n
	}
	var peaks []float64
	for _, m := range pr.StageMemory {
		peaks = append(peaks, m.PeakBytes)
	}
	spec := tr
	return Candidate{
		Planner:      plan.PlannerPTDP,
		Execution:    ex,
		Microbatches: pr.Microbatches,
		Stages:       stages,
		Predictions: plan.Predictions{
			IterationSeconds: pr.IterationSeconds,
			SamplesPerSecond: pr.SamplesPerSec,
			TokensPerSecond:  pr.TokensPerSec,
			TFLOPSPerGPU:     pr.TFLOPSPerGPU,
			MFU:              pr.MFU,
			BubbleFraction:   pr.Time.BubbleSeconds / pr.IterationSeconds,
			PeakBytesPerGPU:  pr.Memory.PeakBytes,
			StagePeakBytes:   peaks,
		},
		Fits:    pr.Memory.Fits(),
		PTDP:    &pr,
		model:   plan.Model{Name: tr.Name, NumLayers: tr.Layers, Transformer: &spec},
		cluster: SystemOf(c).PlanCluster(),
	}
}

// PTDPPlan turns configuration cfg of transformer tr on cluster c into the
// exported run plan (see ptdpCandidate), predicting it with cost.Predict
// for every stage's peak memory.
func PTDPPlan(tr model.Transformer, c hw.Cluster, cfg plan.Execution, opt cost.Options) (*plan.Plan, error) {
	pr, err := cost.Predict(tr, c, cfg, opt)
	if err != nil {
		return nil, err
	}
	return ptdpCandidate(tr, c, cfg, pr).RunPlan()
}
