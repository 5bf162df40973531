package partition

import (
	"fmt"

	"pipeplan/core/cost"
	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/plan"
)

// PTDPPlan turns configuration cfg of transformer tr on cluster c into the
// exported run plan (with the cost model's defaults filled in): p·v model chunks in model order (chunk k on pipeline
// device k mod p, layers split evenly with the remainder on the first
// chunks, as cost.Predict assumes), the schedule, and the predictions with
// every stage's peak memory. The bubble fraction exported is the idle
// share of the step, bubble time over iteration time.
func PTDPPlan(tr model.Transformer, c hw.Cluster, cfg plan.Execution, opt cost.Options) (*plan.Plan, error) {
	pr, err := cost.Predict(tr, c, cfg, opt)
	if err != nil {
		return nil, err
	}
	ex := cost.WithDefaults(cfg)
	chunks := ex.PP * ex.Interleave
	stages := make([]plan.Stage, chunks)
	first := 0
	for k := range stages {
		n := tr.Layers / chunks
		if k < tr.Layers%chunks {
			n++
		}
		stages[k] = plan.Stage{FirstLayer: first, LastLayer: first + n - 1, Replicas: 1}
		first += n
	}
	peaks := make([]float64, len(pr.StageMemory))
	for i, m := range pr.StageMemory {
		peaks[i] = m.PeakBytes
	}
	spec := tr
	p := &plan.Plan{
		Version:   plan.Version,
		Planner:   "ptdp",
		Model:     plan.Model{Name: tr.Name, NumLayers: tr.Layers, Transformer: &spec},
		Cluster:   plan.Cluster{GPU: c.GPU.ID, Nodes: c.GPUs() / c.GPUsPerNode(), GPUsPerNode: c.GPUsPerNode(), Levels: c.Levels},
		Execution: ex,
		Stages:    stages,
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
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("ptdp plan: %w", err)
	}
	return p, nil
}
