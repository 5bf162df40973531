package main

import (
	"fmt"

	"pipeplan/core/plan"
	"pipeplan/core/schedule"
)

// checkConsistency checks what plan.Validate leaves to the runner, before
// anything starts: the GPUs the execution occupies equal the cluster's
// (tp × dp × the pipeline's stage replicas × cp), the microbatches cover
// the global batch, and a transformer's layers are the plan's layers.
func checkConsistency(p *plan.Plan) error {
	e := p.Execution
	replicas := 0
	for _, s := range p.Stages[:e.PP] {
		replicas += s.Replicas
	}
	if gpus := e.TP * e.DP * replicas * e.CP; gpus != p.Cluster.GPUs() {
		return fmt.Errorf("cluster: %d nodes × %d GPUs = %d, but the plan uses tp %d × dp %d × %d stage replicas × cp %d = %d GPUs",
			p.Cluster.Nodes, p.Cluster.GPUsPerNode, p.Cluster.GPUs(), e.TP, e.DP, replicas, e.CP, gpus)
	}
	// The input stage's replicas take turns on the microbatches (1F1B-RR);
	// with equal replicas this is the data-parallel width. A pipedream plan
	// counts its minibatches in flight (NOAM) as m, which plan.Validate
	// already ties to the global batch; a 1f1b-rr plan's input stage takes
	// the whole global batch (m·b·d) in turns.
	width := e.DP * p.Stages[0].Replicas
	m, b := e.Microbatches(), e.MicrobatchSize
	if want := m * b * width; e.Schedule != schedule.PipeDream && e.Schedule != schedule.OneFOneBRR && e.GlobalBatch != want {
		return fmt.Errorf("execution.global_batch: %d microbatches × microbatch size %d × data parallel %d = %d samples, got %d",
			m, b, width, want, e.GlobalBatch)
	}
	if t := p.Model.Transformer; t != nil && t.Layers != p.Model.NumLayers {
		return fmt.Errorf("model.num_layers: %d, but model.transformer.layers is %d", p.Model.NumLayers, t.Layers)
	}
	return nil
}
