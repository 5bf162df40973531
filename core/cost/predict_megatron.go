package cost

import (
	"math"

	"pipeplan/core/model"
)

// This file costs what Megatron-LM's releases did differently inside a
// layer: the attention core without flash attention (2021–2022), the
// asynchronous backward collectives of the column-parallel layers (2022
// on) and the gradient-accumulation pass before its fusion into the
// weight-gradient GEMM (2021).

// unfusedAttentionSeconds returns the forward and backward time of one
// layer's attention core per microbatch on one GPU without flash
// attention, as Megatron-LM ran it (2021–2022: CoreAttention with
// FusedScaleMaskSoftmax), given gemms, the time of its two batched GEMMs
// (QKᵀ and attention over V) at the GEMM efficiency. The s×s scores
// (b·a·(s/cp)·s/t values of w bytes) go through memory between kernels, so
// each kernel takes the longer of its FLOPs and its traffic at the
// achievable HBM bandwidth (a roofline; at head sizes of 96–160 the
// batched GEMMs are bound by writing or reading the scores):
//   - forward: QKᵀ writes the scores; the fused causal softmax reads the
//     lower triangle and writes the whole s×s (zeros above the diagonal);
//     dropout reads the probabilities and writes its output and a 1-byte
//     mask; attention over V reads them;
//   - backward: the gradient of the probabilities is written (dO·Vᵀ) and
//     the dropout output read (dV); dropout's backward reads that gradient
//     and the mask and writes; softmax's backward reads the gradient and
//     its output on the lower triangle and writes the whole s×s; dQ and dK
//     each read the scores' gradient.
//
// The softmax is Megatron-LM's scaled_upper_triang_masked_softmax
// (megatron/fused_kernels/scaled_upper_triang_masked_softmax.h: row i
// loads its first i+1 elements, forward and backward, and stores all);
// the other kernels run over the whole s×s. A model without dropout has
// no dropout pass.
func (e *evaluator) unfusedAttentionSeconds(gemms float64) (fwd, bwd float64) {
	w := e.w
	scores := float64(e.cfg.MicrobatchSize) * float64(e.tr.Heads) * float64(e.tr.Seq) / float64(e.cfg.CP) * float64(e.tr.Seq) / float64(e.cfg.TP)
	bytes := func(perScore float64) float64 { return perScore * scores / e.memBW }
	gemm := math.Max(gemms/2, bytes(w)) // one batched GEMM moving the scores once
	fwd = 2*gemm + bytes(1.5*w)         // QKᵀ, attention over V, softmax
	bwd = 4*gemm + bytes(2*w)           // dP, dV, dQ, dK, softmax's backward
	if !e.tr.NoDropout {
		fwd += bytes(2*w + 1)
		bwd += bytes(2*w + 1)
	}
	return fwd, bwd
}

// columnParallelBlock maps the column-parallel GEMMs of
// model.Transformer.ForwardGEMMs (each block's first linear layers, fed
// by its norm) to their block: 0 attention, 1 MLP.
var columnParallelBlock = map[string]int{"qkv": 0, "q": 0, "kv": 0, "mlp-up": 1, "shared-up": 1}

// attentionBlockGEMMs are the linear GEMMs of model.Transformer.ForwardGEMMs'
// attention block (the attention core aside).
var attentionBlockGEMMs = map[string]bool{"qkv": true, "q": true, "kv": true, "attention-out": true}

// tpBackwardOverlapped returns one layer's exposed tensor-parallel
// communication per microbatch with plan.Overlap.TPBackward, as Megatron-LM
// 2022 runs it (megatron/mpu/layers.py, ColumnParallelLinearWithAsyncAllreduce
// and ColumnParallelLinearWithSequenceParallelism, NVIDIA/Megatron-LM at
// commit 02bb1f5c86fc8c36d4a96a2b7ebcf63d53219369), given the forward time
// of each block's column-parallel GEMMs, one entry per block that issues
// tensor-parallel collectives (both, or the attention block alone in an
// expert layer off the tensor-parallel grid: mlpOnTPGrid); its backward
// runs an input- and a weight-gradient GEMM of the same size:
//   - the forward's collectives stay exposed: an all-reduce per block, or
//     with sequence parallelism an all-gather and a reduce-scatter; full
//     recomputation repeats them;
//   - backward without sequence parallelism: each block's input-gradient
//     all-reduce runs while its weight-gradient GEMM computes;
//   - backward with sequence parallelism: the row-parallel layers'
//     all-gathers of the output gradient stay exposed; each column-parallel
//     layer all-gathers its saved input shard again while its
//     input-gradient GEMM computes and reduce-scatters the input gradient
//     while its weight-gradient GEMM computes.
//
// What a collective's GEMM does not cover stays exposed.
func (e *evaluator) tpBackwardOverlapped(column []float64) float64 {
	blocks := float64(len(column))
	fwd := blocks * e.tpAllReduceSeconds()
	if e.cfg.Recompute == model.RecomputeFull {
		fwd *= 2
	}
	if !e.cfg.SequenceParallel {
		ar := e.tpAllReduceSeconds()
		bwd := 0.0
		for _, w := range column {
			bwd += math.Max(0, ar-w)
		}
		return fwd + bwd
	}
	gather := e.tpAllReduceSeconds() / 2 // one all-gather or reduce-scatter
	bwd := blocks * gather
	for _, w := range column {
		bwd += 2 * math.Max(0, gather-w)
	}
	return fwd + bwd
}

// gradAccumulationSeconds returns device i's unfused gradient accumulation
// per microbatch (plan.Execution.UnfusedGradAccumulation; 0 otherwise):
// each weight-gradient GEMM writes a new w-byte gradient, which a
// memory-bound pass adds to the accumulated one — the new gradient and
// the accumulated one read, the accumulated one written — at the
// achievable HBM bandwidth. With ZeRO-2 and -3 the gradients are
// reduce-scattered every microbatch and only the device's shard is
// accumulated.
func (e *evaluator) gradAccumulationSeconds(i int) float64 {
	if !e.cfg.UnfusedGradAccumulation {
		return 0
	}
	dense, experts := e.weightParams(i)
	if e.cfg.ZeRO >= 2 {
		dense /= float64(e.cfg.DP * e.cfg.CP)
		experts /= float64(e.edp)
	}
	return (dense + experts) * (e.w + 2*e.gradBytes) / e.memBW
}
