package cost

import (
	"pipeplan/core/model"
	"pipeplan/core/plan"
)

// memory returns the memory of one GPU of pipeline stage i: weights (times
// the versions the schedule keeps), gradients and optimizer state after
// ZeRO sharding, the activation stash at the schedule's peak, and the
// point-to-point buffers.
func (e *evaluator) memory(i int) Memory {
	dense, experts := e.weightParams(i)
	inFlight, versions, _ := e.cfg.Schedule.InFlight(e.cfg.PP, i, e.m, e.cfg.Interleave) // Validate checked the kind and m
	b := e.cfg.MicrobatchSize
	mem := Memory{
		Stage:          i,
		WeightBytes:    (dense*e.state.Weights + experts*e.expertState.Weights) * float64(versions),
		GradientBytes:  dense*e.state.Gradients + experts*e.expertState.Gradients,
		OptimizerBytes: dense*e.state.Optimizer + experts*e.expertState.Optimizer,
		ReserveBytes:   e.reserve,
		CapacityBytes:  e.c.GPU.MemoryBytes,
	}
	// Stash: inFlight microbatches of one chunk's layers (Korthikanti et al.
	// 2022 §4.3: the first stage holds L(1 + (p−1)/(pv)) layers' worth when
	// interleaved).
	// (A chunk's stash is its share of the device's layers' activations.)
	var stash, work float64
	for _, l := range e.layerIndices(i) {
		a := e.kindSize[e.layerKind(l)]
		stash += a.kept
		// Working set: recomputation rebuilds one layer's dropped
		// activations before its backward pass.
		if e.cfg.Recompute != model.RecomputeNone {
			work = max(work, a.full-a.kept)
		}
	}
	act := float64(inFlight)*stash/float64(e.cfg.Interleave) + work
	cp := float64(e.cfg.CP) // the embedding and output activations split with the sequence
	if i == 0 {
		act += float64(firstChunkInFlight(inFlight, e.cfg.PP, e.cfg.Interleave)) * e.tr.EmbeddingActivationBytes(b, e.actOpts) / cp
	}
	if i == e.cfg.PP-1 {
		act += e.tr.OutputActivationBytes(b, e.actOpts) / cp
	}
	mem.ActivationBytes = act
	if e.cfg.PP > 1 {
		mem.CommBufferBytes = 2 * e.boundary // one receive buffer per direction
	}
	if e.cfg.CP > 1 && e.cfg.CPComm == plan.CPCommAllGather {
		// One layer's backward holds the sequence's gathered K and V and
		// their gradients before the reduce-scatter.
		mem.CommBufferBytes += 2 * e.cpGatheredBytes()
	}
	mem.PeakBytes = mem.WeightBytes + mem.GradientBytes + mem.OptimizerBytes + mem.ActivationBytes + mem.CommBufferBytes
	return mem
}

// firstChunkInFlight returns how many of the first device's inFlight stashed
// chunk-microbatches belong to its first chunk (the one with the embedding):
// the interleaved schedule's forward step k runs chunk (k/p) mod v, and the
// first chunk's backward passes come last, so at the peak all of its forward
// steps among the first inFlight are still stashed.
func firstChunkInFlight(inFlight, p, v int) int {
	return inFlight/(p*v)*p + min(inFlight%(p*v), p)
}
