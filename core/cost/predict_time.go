package cost

import (
	"pipeplan/core/model"
)

// layerSeconds returns one transformer layer's compute and tensor-parallel
// communication time per microbatch on one GPU (forward, backward and the
// recomputation the config asks for).
func (e *evaluator) layerSeconds() (compute, tpComm float64) {
	// The layer's GEMMs, each split t ways (§4.2.3), at their own efficiency.
	t := float64(e.cfg.TP)
	dense, core := e.tr.LayerFwdGEMMs(e.cfg.MicrobatchSize)
	var denseSec float64
	for _, x := range dense {
		denseSec += e.curve.Seconds(x/t, e.peak)
	}
	coreSec := 2 * e.curve.Seconds(core/t, e.peak)
	// Memory-bound kernels move ElementwiseTrafficPerActivationByte bytes per stored byte.
	noRec := e.actOpts
	noRec.Recompute = model.RecomputeNone
	all := e.tr.LayerActivationBytes(e.cfg.MicrobatchSize, noRec)
	sel := noRec
	sel.Recompute = model.RecomputeSelective
	coreBytes := all - e.tr.LayerActivationBytes(e.cfg.MicrobatchSize, sel)
	memSec := ElementwiseTrafficPerActivationByte * all / e.memBW
	coreMemSec := ElementwiseTrafficPerActivationByte * coreBytes / e.memBW

	fwd := denseSec + coreSec + memSec
	compute = 3 * fwd // backward: two GEMMs (input and weight gradients) per forward GEMM
	switch e.cfg.Recompute {
	case model.RecomputeFull:
		compute += fwd
	case model.RecomputeSelective:
		compute += coreSec + coreMemSec
	}
	tpComm = TensorParallelAllReduces(e.cfg.Recompute == model.RecomputeFull) * e.tpAllReduceSeconds()
	return compute, tpComm
}

// tpAllReduceSeconds returns the time of one tensor-parallel all-reduce of a
// b·s·h activation; with sequence parallelism it is an all-gather plus a
// reduce-scatter of the same volume (Korthikanti et al. 2022 §4.2.2).
func (e *evaluator) tpAllReduceSeconds() float64 {
	t := e.cfg.TP
	full := float64(e.cfg.MicrobatchSize) * float64(e.tr.Seq) * float64(e.tr.Hidden) * e.w
	if e.cfg.SequenceParallel {
		return 2 * e.comm.GatherSeconds(t, full, e.tpBW)
	}
	return e.comm.AllReduceSeconds(t, full, e.tpBW)
}

// logitSeconds returns the output layer's compute per microbatch on the last
// stage: 2bshV/t forward, twice that backward (§4.5.1).
func (e *evaluator) logitSeconds() float64 {
	fwd := e.tr.LogitFwdFLOPs(e.cfg.MicrobatchSize) / float64(e.cfg.TP)
	return 3 * e.curve.Seconds(fwd, e.peak)
}

// p2pSeconds returns the point-to-point time per microbatch on one device:
// v chunks each receive an activation forward and a gradient backward
// (§4.2.2: interleaving multiplies communication by v), with scatter/gather
// (§4.4.1) when enabled.
func (e *evaluator) p2pSeconds() float64 {
	if e.cfg.PP == 1 {
		return 0
	}
	one := e.comm.P2PSeconds(e.boundary, e.ppBW)
	if !e.cfg.SequenceParallel {
		one = e.comm.ScatterGatherSeconds(e.boundary, e.cfg.TP, e.cfg.ScatterGather, e.ppBW, e.intraBW)
	}
	return 2 * float64(e.cfg.Interleave) * one
}

// deviceSeconds returns device i's time per microbatch, split into compute,
// tensor-parallel and point-to-point parts.
func (e *evaluator) deviceSeconds(i int, layerCompute, layerTP float64) (compute, tp, p2p float64) {
	n := float64(e.layersOn(i))
	compute, tp = n*layerCompute, n*layerTP
	if i == 0 {
		tp += e.tpAllReduceSeconds() // vocabulary-parallel embedding (forward)
	}
	if i == e.cfg.PP-1 {
		compute += e.logitSeconds()
		tp += e.tpAllReduceSeconds() // output layer input gradient (backward)
	}
	return compute, tp, e.p2pSeconds()
}

// weightParams returns the parameters device i holds per GPU: its layers and,
// on the first stage, the embeddings; the last stage keeps its own copy of
// the tied word embedding when p > 1 (Megatron-LM).
func (e *evaluator) weightParams(i int) float64 {
	t := float64(e.cfg.TP)
	n := float64(e.layersOn(i)) * e.layerPar / t
	word := float64(e.tr.Vocab) * float64(e.tr.Hidden) / t
	if i == 0 {
		n += word + float64(e.tr.Seq)*float64(e.tr.Hidden)
	}
	if i == e.cfg.PP-1 && e.cfg.PP > 1 {
		n += word
	}
	return n
}

// dataParallelSeconds returns the gradient synchronization after the flush on
// device i: a ring all-reduce of its gradients over the d replicas (§2.4.1),
// reduce-scatter plus all-gather with ZeRO, plus the all-reduce of the tied
// embedding's gradients between the first and last stage.
func (e *evaluator) dataParallelSeconds(i int) float64 {
	params := e.weightParams(i)
	grads := params * e.gradBytes
	var sec float64
	if e.cfg.ZeRO == 0 {
		sec = e.comm.AllReduceSeconds(e.cfg.DP, grads, e.dpBW)
	} else {
		sec = e.comm.GatherSeconds(e.cfg.DP, grads, e.dpBW) + e.comm.GatherSeconds(e.cfg.DP, params*e.w, e.dpBW)
	}
	if e.cfg.PP > 1 && (i == 0 || i == e.cfg.PP-1) {
		word := float64(e.tr.Vocab) * float64(e.tr.Hidden) / float64(e.cfg.TP)
		sec += e.comm.AllReduceSeconds(2, word*e.gradBytes, e.embBW)
	}
	return sec
}

// zero3Seconds returns ZeRO-3's per-microbatch weight all-gathers (forward
// and backward) on device i; 0 below stage 3.
func (e *evaluator) zero3Seconds(i int) float64 {
	if e.cfg.ZeRO < 3 {
		return 0
	}
	return 2 * e.comm.GatherSeconds(e.cfg.DP, e.weightParams(i)*e.w, e.dpBW)
}

// optimizerSeconds returns the optimizer step on device i: memory-bound, it
// reads and writes every byte of weights, gradients and state once.
func (e *evaluator) optimizerSeconds(i int) float64 {
	return 2 * e.weightParams(i) * e.state.Total() / e.memBW
}
