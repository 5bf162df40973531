package cost

import (
	"math"

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
	if e.cfg.ZeRO >= 2 {
		// Sharded gradients: each bucket's gradients are whole on the GPU
		// until their reduce-scatter (exposedDataParallel), one bucket at a
		// time, never more than the whole gradients.
		mem.GradientBytes = math.Min(mem.GradientBytes+e.bucketParams(i)*e.gradBytes, (dense+experts)*e.gradBytes)
	}
	// Stash: inFlight microbatches of one chunk's layers (Korthikanti et al.
	// 2022 §4.3: the first stage holds L(1 + (p−1)/(pv)) layers' worth when
	// interleaved).
	// (A chunk's stash is its share of the device's layers' activations.)
	var stash, work, largest float64
	fp8 := e.tr.TrainingPrecision() == model.FP8
	for k := range e.devWeights[i].layers {
		recomputing, plain := e.layerMix(i, k)
		a := e.kindSize[k]
		stash += recomputing*a.kept + plain*a.full
		// Working set: recomputation rebuilds one layer's dropped
		// activations before its backward pass.
		if recomputing > 0 && e.cfg.Recompute != model.RecomputeNone {
			work = max(work, a.full-a.kept)
		}
	}
	if e.cfg.ZeRO == 3 {
		largest = e.devWeights[i].largestLinear
	}
	act := float64(inFlight)*stash/float64(e.chunks) + work
	cp := float64(e.cfg.CP) // the embedding and output activations split with the sequence
	if i == 0 {
		act += float64(e.firstChunkInFlight(inFlight)) * e.tr.EmbeddingActivationBytes(b, e.actOpts) / cp
	}
	if i == e.outputDevice() {
		act += (e.tr.OutputActivationBytes(b, e.actOpts) + float64(e.tr.MTPLayers)*e.tr.MTPActivationBytes(b, e.actOpts)) / cp
	}
	mem.ActivationBytes = act
	if e.cfg.PP > 1 {
		mem.CommBufferBytes = 2 * e.boundary // one receive buffer per direction
	}
	if e.cfg.ZeRO == 3 {
		// The gathered weights: the layer computing and the one whose
		// all-gather is prefetched behind it are whole at once.
		mem.CommBufferBytes += ZeRO3GatheredLayers * largest * e.w
	}
	if e.cfg.CP > 1 && e.cfg.CPComm == plan.CPCommAllGather {
		// One layer's backward holds the sequence's gathered K and V and
		// their gradients before the reduce-scatter.
		mem.CommBufferBytes += 2 * e.cpGatheredBytes()
	}
	if fp8 {
		linDense, linExperts := e.linearWeights(i)
		copies, linear := float64(FP8WeightCopyBytesPerParam), linDense+linExperts
		if e.cfg.FP8ParamGather {
			// The FP8 weight is the weight (1 byte where bf16 took 2):
			// only its transpose is extra.
			mem.WeightBytes -= (linDense*e.state.Weights + linExperts*e.expertState.Weights) / 2 * float64(versions)
			copies--
		}
		if e.cfg.ZeRO == 3 {
			linear = largest // only the gathered layer's weights are whole, and cast
		}
		mem.FP8WeightBytes = copies * linear
	}
	mem.PeakBytes = mem.WeightBytes + mem.GradientBytes + mem.OptimizerBytes + mem.ActivationBytes + mem.CommBufferBytes + mem.FP8WeightBytes
	return mem
}

// ZeRO3GatheredLayers is how many layers' weights ZeRO-3 holds whole at
// once: the one computing and the next, whose all-gather is prefetched
// behind it ("the next all-gather's output tensor must be allocated while
// the current one is still in use", PyTorch's FSDP notes, "FSDP Prefetch
// Nuances"; FSDP's rate limiter allows no more in flight).
const ZeRO3GatheredLayers = 2

// FP8WeightCopyBytesPerParam is what Transformer Engine keeps per weight
// of a linear layer when training in FP8, besides the bf16 weight: its FP8
// copy (1 byte), cast on the step's first microbatch and cached for the
// others (TE's "FP8 weight caching", is_first_microbatch: user guide,
// Performance Optimizations), and for the backward's input-gradient GEMM
// its transpose (1 byte): on Hopper an FP8 GEMM reads only row-wise, so
// "columnwise tensors need to be physically transposed in memory" (TE
// user guide, Performance Considerations, Handling transposes). Blackwell
// reads FP8 column-wise and with per-tensor scaling needs no transpose,
// but its MXFP8 recipe (Megatron-Bridge's B200 default) keeps a
// column-wise copy with its own block scales, the same byte; the model
// counts 2 bytes on every GPU. The copies are per rank: ZeRO-1 and -2
// shard the optimizer and gradients, not them; under ZeRO-3 only the
// gathered layer's weights are whole, so only its copies exist. With
// plan.Execution.FP8ParamGather the FP8 copy replaces the bf16 weight and
// only the transpose is extra.
const FP8WeightCopyBytesPerParam = 2

// linearParams returns the linear-layer weights of layer l on one GPU
// (model.Transformer.LayerLinearParamsAt): the dense ones split over t,
// the routed experts as weightParams splits them.
func (e *evaluator) linearParams(l int) (dense, experts float64) {
	n := e.memo.linear[l]
	if e.layerKind(l) == 0 {
		return n / float64(e.cfg.TP), 0
	}
	ex := e.memo.experts
	return (n - ex) / float64(e.cfg.TP), ex / float64(e.etp*e.cfg.EP)
}

// firstChunkInFlight returns how many of the first device's inFlight stashed
// chunk-microbatches belong to its first chunk (the one with the
// embedding): the interleaved schedule's forward step k runs chunk
// (k/p) mod v, and the first chunk's backward passes come last, so at the
// peak all of its forward steps among the first inFlight are still
// stashed. In a V at most every microbatch, m, and at most inFlight.
func (e *evaluator) firstChunkInFlight(inFlight int) int {
	if e.kind.VShaped {
		return min(inFlight, e.m)
	}
	p, v := e.cfg.PP, e.chunks
	return inFlight/(p*v)*p + min(inFlight%(p*v), p)
}
