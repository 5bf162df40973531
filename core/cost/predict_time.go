package cost

import (
	"math"

	"pipeplan/core/model"
	"pipeplan/core/plan"
)

// DefaultBucketParams is the size of one gradient-reduction bucket in
// parameters (Megatron-LM's DDP default, 40M): with overlap at least one
// bucket's reduction stays exposed after the backward pass.
const DefaultBucketParams = 40e6

// TPOverlapChunks is how many pieces Transformer Engine's tensor-parallel
// overlap splits a GEMM and its collective into: one piece's communication
// stays exposed even when the GEMMs are longer than the communication.
const TPOverlapChunks = 4

// FP8CastBytesPerValue is the memory traffic per value of Transformer
// Engine's cast of an FP8 GEMM operand (transformer_engine's fused
// cast-transpose: the bf16 value read, 2 bytes, and written twice in FP8,
// row-wise for this GEMM and column-wise for the backward GEMM that reads
// it transposed, 1 byte each). Each linear GEMM casts its activation input
// forward and its output's gradient backward; the weights' casts, once per
// step and cached over the microbatches, are costed with the optimizer
// step (optimizerSeconds).
const FP8CastBytesPerValue = 4

// layerTime is one layer's time per microbatch on one GPU.
type layerTime struct {
	compute float64 // forward, backward and recomputation
	fwd     float64 // the forward pass alone (what a recomputation redoes)
	wgrad   float64 // the weight-gradient GEMMs of the backward (a zero-bubble schedule's W)
	tp      float64 // exposed tensor-parallel communication
	cp      float64 // exposed context-parallel K/V exchange
	ep      float64 // expert-parallel all-to-all
}

// gemmSeconds returns the time of one forward GEMM kind on one GPU: its
// FLOPs split over the t tensor-parallel and cp context-parallel ranks (the
// attention core at the bf16 rate when training in FP8, and with flash
// attention at the fused kernels' measured forward rate where the GPU has
// one, FusedAttentionFLOPS); a routed-expert GEMM runs as the E/ep local
// experts, each on its share of the tokens, at the efficiency of that size
// (in FP8, FP8ExpertGEMMFraction of it).
func (e *evaluator) gemmSeconds(g model.GEMM) float64 {
	per := g.FLOPs / float64(e.cfg.TP*e.cfg.CP)
	if g.Attention {
		if e.cfg.FlashAttention {
			per /= 2 // causal masking: flash attention skips the masked blocks
			if e.attnFwd > 0 {
				return per / e.attnFwd
			}
		}
		return e.wideCurve.Seconds(per, e.wide)
	}
	if !g.Expert {
		_, column := columnParallelBlock[g.Name]
		return e.curve.Seconds(per, e.peak) * e.gemmWaveSlowdown(g.Shapes, column)
	}
	local := float64(g.Instances / e.cfg.EP)
	return local * e.curve.Seconds(per/local, e.peak) / e.expertGEMMRate
}

// FP8ExpertGEMMFraction is the share of the FP8 curve's rate at which the
// routed experts' GEMMs run when training in FP8, their casts costed
// apart as every FP8 GEMM's (FP8CastBytesPerValue). With the experts at
// the curve's rate the model put MoE runs' FP8 speed-up over BF16 8–16 %
// above the published one, on H100 more than dense runs' (the package
// doc, "Mixture of experts in FP8", says which runs and what was checked;
// what the fraction stands for is not identified). Fitted by least
// squares of the relative throughput on the five DGX Cloud benchmarking
// H100 MoE FP8 rows (Grok-1 314B, Llama 4 Maverick;
// TestFP8ExpertGEMMFractionFit), every other published MoE FP8 run held
// out.
const FP8ExpertGEMMFraction = 0.81

// layerWork is a layer's forward work per microbatch on one GPU before
// the execution's recomputation, overlaps and communication: its GEMMs
// (dense), the attention core, the column-parallel GEMMs of the attention
// and MLP blocks, Transformer Engine's FP8 casts forward and backward, and
// the memory-bound kernels, all of them and the attention core's.
type layerWork struct {
	dense, core, castFwd, castBwd float64
	attnDense                     float64 // the attention block's share of dense
	column                        [2]float64
	memSec, coreMemSec            float64
	// The shares of dense that selective recomputation's modules rerun
	// (selectiveSeconds): a dense layer's MLP GEMMs, the shared experts',
	// multi-latent attention's up-projections.
	mlp, shared, mlaUp float64
}

// workKey is what a layer's work (layerWork) depends on besides the model
// and the cluster: the layer's kind (layerKind), the microbatch and how
// tensor, context and expert parallelism, sequence parallelism, flash
// attention and the attention kernels split and run it.
type workKey struct {
	kind, b, tp, cp, ep int
	sp, flash           bool
	kernel              string
}

// layerWork returns layer i's work (layerWork).
func (e *evaluator) layerWork(i int) layerWork {
	var w layerWork
	b := e.cfg.MicrobatchSize
	for _, g := range e.tr.ForwardGEMMs(b, i) {
		if g.Attention {
			w.core += e.gemmSeconds(g)
		} else {
			sec := e.gemmSeconds(g)
			w.dense += sec
			if blk, ok := columnParallelBlock[g.Name]; ok {
				w.column[blk] += sec
			}
			if attentionBlockGEMMs[g.Name] {
				w.attnDense += sec
			}
			switch g.Name {
			case "mlp-up", "mlp-down":
				w.mlp += sec
			case "shared-up", "shared-down":
				w.shared += sec
			case "q", "kv":
				w.mlaUp += sec * e.tr.MLAUpProjectionFLOPs(b, g.Name) / g.FLOPs
			}
			w.castFwd += g.Inputs()
			w.castBwd += g.Outputs()
		}
	}
	if e.tr.TrainingPrecision() == model.FP8 {
		// Transformer Engine's casts to FP8, memory-bound, on this GPU's
		// 1/(t·cp) share of each operand.
		per := FP8CastBytesPerValue / float64(e.cfg.TP*e.cfg.CP) / e.memBW
		w.castFwd, w.castBwd = w.castFwd*per, w.castBwd*per
	} else {
		w.castFwd, w.castBwd = 0, 0
	}
	// Memory-bound kernels move ElementwiseTrafficPerActivationByte bytes per stored byte.
	noRec := e.actOpts
	noRec.Recompute, noRec.Modules = model.RecomputeNone, 0 // sel below: the attention core's bytes
	all := e.tr.LayerActivationBytesAt(b, i, noRec)
	sel := noRec
	sel.Recompute = model.RecomputeSelective
	coreBytes := all - e.tr.LayerActivationBytesAt(b, i, sel)
	w.memSec = ElementwiseTrafficPerActivationByte * all / e.memBW
	w.coreMemSec = ElementwiseTrafficPerActivationByte * coreBytes / e.memBW
	return w
}

// layerSeconds returns layer i's time per microbatch on one GPU.
func (e *evaluator) layerSeconds(i int) layerTime { return e.layerTime(i, e.layerWork(i)) }

// layerTime returns layer i's time per microbatch on one GPU given its
// work (layerWork).
func (e *evaluator) layerTime(i int, w layerWork) layerTime {
	dense, core, castFwd, castBwd, column := w.dense, w.core, w.castFwd, w.castBwd, w.column
	memSec, coreMemSec := w.memSec, w.coreMemSec

	// Backward: two GEMMs (input and weight gradients) per forward GEMM;
	// flash attention's backward also recomputes the scores (2.5× forward's
	// FLOPs, Dao 2023 §3.1), at the fused backward kernel's own measured
	// rate where the GPU has one.
	bwdCore := 2.5 * core
	if e.attnBwd > 0 {
		bwdCore *= e.attnFwd / e.attnBwd
	}
	if !e.cfg.FlashAttention {
		// The unfused core's kernels, each bound by its FLOPs or by its
		// traffic over the s×s scores, replace the GEMM time and the
		// scores' share of the elementwise traffic.
		memSec -= coreMemSec
		core, bwdCore = e.unfusedAttentionSeconds(core)
		coreMemSec = 0
	}
	var lt layerTime
	lt.fwd = dense + core + memSec + castFwd
	lt.compute = lt.fwd + 2*(dense+memSec) + bwdCore + castBwd
	lt.wgrad = dense // one weight-gradient GEMM per forward GEMM, as long
	switch e.cfg.Recompute {
	case model.RecomputeFull:
		lt.compute += lt.fwd
	case model.RecomputeSelective:
		lt.compute += e.selectiveSeconds(i, w, core+coreMemSec)
	}
	// The blocks whose collectives run over the tensor-parallel group,
	// and the GEMMs that can hide them.
	blocks, hide := column[:], dense
	if !e.mlpOnTPGrid(i) {
		blocks, hide = column[:1], w.attnDense
	}
	lt.tp = float64(len(blocks)) / 2 * TensorParallelAllReduces(e.cfg.Recompute == model.RecomputeFull) * e.tpAllReduceSeconds()
	if e.reruns(model.ModuleMLP) && !e.tr.IsMoELayer(i) && e.cfg.TP > 1 {
		// The rerun MLP repeats its forward collective: the all-gather
		// before its first GEMM with sequence parallelism, else the
		// all-reduce after its second.
		rerun := e.tpAllReduceSeconds()
		if e.cfg.SequenceParallel {
			rerun /= 2 // an all-gather, half an all-reduce
		}
		lt.tp += rerun
	}
	switch {
	case e.cfg.TP == 1:
	case e.cfg.Overlap.TPComm:
		lt.tp = math.Max(lt.tp-3*hide, lt.tp/TPOverlapChunks)
	case e.cfg.Overlap.TPBackward:
		lt.tp = e.tpBackwardOverlapped(blocks)
	}
	lt.cp = e.cpSeconds(core, bwdCore)
	if e.tr.IsMoELayer(i) {
		lt.ep = e.epSeconds() + e.etpSeconds()
		fwd, total := e.moeLocalSeconds()
		x := e.expertOverheadSeconds()
		fwd, total = fwd+x/3, total+x
		lt.compute += total
		if e.cfg.Recompute == model.RecomputeFull || e.reruns(model.ModuleMoE) {
			lt.compute += fwd
		}
		if e.reruns(model.ModuleMoE) {
			lt.ep *= 1.5 // the rerun block dispatches and combines its tokens again
		}
		lt.fwd += fwd
		if e.cfg.Overlap.EPComm {
			// One microbatch's exchanges run while another's forward or
			// backward computes (the 1F1B steady state Megatron-Core's EP
			// overlap pairs, arXiv 2603.07685; DualPipe's paired F&B): what
			// exceeds the layer's compute stays exposed, and of what it
			// could hide the share DefaultEPOverlapExposed.
			lt.ep -= math.Min(lt.ep, lt.compute) * (1 - e.epExposed)
		}
	}
	return lt
}

// reruns reports whether selective recomputation reruns module m.
func (e *evaluator) reruns(m model.RecomputeModule) bool {
	return e.cfg.Recompute == model.RecomputeSelective && e.actOpts.Modules.Has(m)
}

// selectiveSeconds returns what selective recomputation adds to layer i's
// compute per microbatch, given its work w and the attention core's
// forward time coreSec: the forward of each module it reruns — the core;
// the norms, the routed experts' activation function and, with a dense
// MLP, its elementwise kernels, at ElementwiseTrafficPerActivationByte
// per activation byte they rebuild; a dense MLP's, the shared experts'
// and MLA's up-projection GEMMs. The routed experts of a rerun MoE block
// and its token exchange are added with the layer's expert time
// (layerTime), as full recomputation's are.
func (e *evaluator) selectiveSeconds(i int, w layerWork, coreSec float64) float64 {
	var sec float64
	rebuilt := func(m model.RecomputeModule) float64 {
		o := e.actOpts
		o.Modules = 1 << m
		kept := e.tr.LayerActivationBytesAt(e.cfg.MicrobatchSize, i, o)
		o.Recompute = model.RecomputeNone
		return ElementwiseTrafficPerActivationByte * (e.tr.LayerActivationBytesAt(e.cfg.MicrobatchSize, i, o) - kept) / e.memBW
	}
	moe := e.tr.IsMoELayer(i)
	if e.reruns(model.ModuleCoreAttn) {
		sec += coreSec
	}
	if e.reruns(model.ModuleLayerNorm) {
		sec += rebuilt(model.ModuleLayerNorm)
	}
	if e.reruns(model.ModuleMLAUpProj) {
		sec += w.mlaUp
	}
	switch {
	case !moe && e.reruns(model.ModuleMLP):
		sec += w.mlp + rebuilt(model.ModuleMLP)
	case moe && e.reruns(model.ModuleMoE):
		sec += w.shared
	case moe:
		if e.reruns(model.ModuleMoEAct) {
			sec += rebuilt(model.ModuleMoEAct)
		}
		if e.reruns(model.ModuleSharedExperts) {
			sec += w.shared
		}
	}
	return sec
}

// cpSeconds returns the exposed context-parallel communication of one
// layer and microbatch, as plan.Execution.CPComm exchanges K and V; core
// and bwdCore are the attention core's forward and backward time.
//
// p2p (the default) is ring attention (Liu et al. 2023; Megatron-Core's
// context parallelism): cp−1 steps each pass one K/V chunk (b·s/cp tokens'
// K and V on a tensor-parallel rank) to the next rank, hidden behind the
// attention compute of the step before; the backward pass sends K/V and
// their gradients. A recomputed attention's ring is taken as hidden.
func (e *evaluator) cpSeconds(core, bwdCore float64) float64 {
	cp := e.cfg.CP
	if cp == 1 {
		return 0
	}
	switch e.cfg.CPComm {
	case plan.CPCommAllGather:
		return e.cpAllGatherSeconds()
	case plan.CPCommA2A:
		return e.cpAllToAllSeconds()
	}
	chunk := float64(e.cfg.MicrobatchSize) * float64(e.tr.Seq) / float64(cp) * e.kvValuesPerToken() * e.w
	steps := float64(cp - 1)
	step := e.comm.P2PSeconds(chunk, e.cpBW)
	fwd := math.Max(0, steps*(step-core/float64(cp)))
	bwd := math.Max(0, steps*(2*step-bwdCore/float64(cp)))
	return fwd + bwd
}

// kvValuesPerToken returns the K and V values of one token on one
// tensor-parallel rank: 2·kv_heads·head_dim over min(t, kv_heads) (K/V
// heads are replicated, not split, past t = kv_heads); MLA expands its
// latent into a K (qk_nope + qk_rope) and a V (v_head_dim) per head.
func (e *evaluator) kvValuesPerToken() float64 {
	kv := 2 * float64(e.tr.KVHeadCount()*e.tr.HeadSize())
	if m := e.tr.MLA; m != nil {
		kv = float64(e.tr.Heads) * float64(m.QKNopeHeadDim+m.QKRopeHeadDim+m.VHeadDim)
	}
	return kv / float64(min(e.cfg.TP, e.tr.KVHeadCount()))
}

// cpAttentionPasses returns how many times a layer's attention runs its
// forward per microbatch: once, twice when recomputation redoes the
// attention core (full, or selective: Megatron's default recomputed
// module is core_attn).
func (e *evaluator) cpAttentionPasses() float64 {
	if e.cfg.Recompute == model.RecomputeNone {
		return 1
	}
	return 2
}

// cpGatheredBytes returns one layer's K and V for the whole sequence of a
// microbatch on one tensor-parallel rank: what all-gather context
// parallelism gathers, and the size of each of its working buffers.
func (e *evaluator) cpGatheredBytes() float64 {
	return float64(e.cfg.MicrobatchSize) * float64(e.tr.Seq) * e.kvValuesPerToken() * e.w
}

// cpAllGatherSeconds returns all-gather context parallelism's exchange of
// one layer and microbatch, as Transformer Engine's
// AttnFuncWithCPAndKVAllGather runs it (its docstring: "KV all-gather
// between CP ranks is exposed. Refer section 3.3.2 of The Llama 3 Herd of
// Models"): the forward all-gathers the sequence's K and V before
// attending with the local Q chunks; the backward all-gathers them again
// (only the local K/V are saved) and reduce-scatters their gradients.
// Nothing overlaps the attention; a recomputed attention gathers once
// more. The paper (§3.3.2) says as much — "the all-gather communication
// latency is exposed in the critical path" — and adds that with GQA's
// small K and V against the O(S²) attention it is "small", "making the
// all-gather overhead negligible"; it does not describe the backward. Its
// 128K row (cp 16 across servers) spends 6 % of the predicted step here.
func (e *evaluator) cpAllGatherSeconds() float64 {
	gather := e.comm.GatherSeconds(e.cfg.CP, e.cpGatheredBytes(), e.cpBW)
	return (e.cpAttentionPasses() + 2) * gather
}

// cpAllToAllSeconds returns all-to-all (DeepSpeed-Ulysses) context
// parallelism's exchange of one layer and microbatch, as Transformer
// Engine's AttnFuncWithCPAndQKVOA2A runs it: before the attention one
// all-to-all turns each rank's b·s/cp tokens of Q, K and V for all its
// heads into the whole sequence for 1/cp of the heads, after it one turns
// the output back; the backward does the same for the output's gradient
// and for dQ, dK, dV. Each rank keeps 1/cp of what it holds and sends the
// rest; none of it overlaps the attention (Megatron-Bridge's table of
// cp_comm_type). A recomputed attention repeats the forward pair.
func (e *evaluator) cpAllToAllSeconds() float64 {
	q, o := float64(e.tr.Heads*e.tr.HeadSize()), float64(e.tr.Heads*e.tr.HeadSize())
	if m := e.tr.MLA; m != nil {
		q, o = float64(e.tr.Heads*(m.QKNopeHeadDim+m.QKRopeHeadDim)), float64(e.tr.Heads*m.VHeadDim)
	}
	// q and o are values per token over all heads; a tensor-parallel rank
	// holds 1/t of them (t divides the heads and K/V heads: CheckCPComm).
	// tokens is the rank's b·s/cp tokens in bytes per value.
	t := float64(e.cfg.TP)
	tokens := float64(e.cfg.MicrobatchSize) * float64(e.tr.Seq) / float64(e.cfg.CP) * e.w
	pair := e.groupAllToAllSeconds(e.cfg.CP, e.cfg.TP, tokens*(q/t+e.kvValuesPerToken()), e.cpBW) +
		e.groupAllToAllSeconds(e.cfg.CP, e.cfg.TP, tokens*o/t, e.cpBW)
	return (e.cpAttentionPasses() + 1) * pair
}

// groupAllToAllSeconds returns the time of an all-to-all in which each of
// the n ranks of a group (ranks stride apart, at the group's level
// bandwidth groupBW) holds bytes and sends 1/n of them to every other rank:
// the parts for ranks in its own server over the server's fabric, the
// others over the group's level, both at once (the slower sets the time).
func (e *evaluator) groupAllToAllSeconds(n, stride int, bytes, groupBW float64) float64 {
	inServer := e.c.GroupGPUsPerNode(n, stride)
	share := bytes / float64(n) / e.comm.BandwidthEfficiency
	fabric := float64(inServer-1) * share / e.intraBW
	network := float64(n-inServer) * share / groupBW
	return math.Max(fabric, network) + float64(n-1)*e.comm.LatencySeconds
}

// epTokens returns the tokens one GPU routes per MoE layer and
// microbatch: its b·s/cp tokens, split over t (Megatron-Core runs MoE
// layers on the sequence-parallel shard; etp = 1).
func (e *evaluator) epTokens() float64 {
	return float64(e.cfg.MicrobatchSize) * float64(e.tr.Seq) / float64(e.cfg.CP*e.cfg.TP)
}

// The expert-parallel dispatchers plan.Execution.EPDispatcher names.
const (
	// EPAllToAll is Megatron-Core's alltoall token dispatcher (the default).
	EPAllToAll = "alltoall"
	// EPDeepEP is its flex dispatcher with DeepEP or HybridEP.
	EPDeepEP = "deepep"
)

// epSeconds returns one MoE layer's token exchange per microbatch: a
// dispatch and a combine forward and again backward, each moving a GPU's
// topk routed copies of its tokens (h values each). The copies for the
// other GPUs of its server cross the server's fabric. When the ep group
// spans servers, the alltoall dispatcher sends each copy for another
// server over the network, (ep − local)/ep of them; DeepEP sends a token
// once to each other server that holds one of its experts and forwards it
// there over the server's fabric (DeepEP's normal kernels; DeepSeek-V3
// report §3.2.2), serverHitProbability of the other servers per token —
// fewer where the router limits each token to some groups of experts
// (model.MoE.Groups).
// Fabric and network run at the same time: the slower sets the time.
func (e *evaluator) epSeconds() float64 {
	ep := e.cfg.EP
	if ep == 1 {
		return 0
	}
	k := float64(e.tr.MoE.TopK)
	token := e.epTokens() * float64(e.tr.Hidden) * e.w // one copy of this GPU's tokens
	local := e.c.GroupGPUsPerNode(ep, e.etp)           // ep ranks in one server (those of the innermost level)
	eff := e.comm.BandwidthEfficiency
	var intra, inter float64
	if e.cfg.EPDispatcher == EPDeepEP {
		intra = k * float64(local-1) / float64(local) * token / (e.intraBW * eff)
		if servers := ep / local; servers > 1 {
			inter = float64(servers-1) * e.memo.serverHit(*e.tr.MoE, servers) * token / (e.epBW * eff)
		}
	} else {
		intra = k * float64(local-1) / float64(ep) * token / (e.intraBW * eff)
		inter = k * float64(ep-local) / float64(ep) * token / (e.epBW * eff)
	}
	return 4 * (math.Max(intra, inter) + float64(ep-1)*e.comm.LatencySeconds)
}

// etpSeconds returns one MoE layer's expert-tensor-parallel exchange per
// microbatch where etp > 1 ranks split each routed expert off the
// tensor-parallel grid (expertsOnTPGrid false): Megatron-Core's
// dispatcher all-gathers, over the etp group, the routed copies each of
// its ranks received (gather_from_sequence_parallel_region on the expert
// tensor-parallel group), and reduce-scatters the experts' outputs before
// the combine; the backward does both again for the gradients. Each
// collective's full buffer is the group's etp·topk copies of a GPU's
// tokens, h values each. Like the all-to-all it belongs to the token
// exchange (layerTime adds it to the layer's ep time).
func (e *evaluator) etpSeconds() float64 {
	if e.etp == 1 || e.expertsOnTPGrid() {
		return 0
	}
	full := float64(e.etp) * float64(e.tr.MoE.TopK) * e.epTokens() * float64(e.tr.Hidden) * e.w
	return 4 * e.comm.GatherSeconds(e.etp, full, e.etpBW)
}

// mlpOnTPGrid reports whether layer i's MLP block issues the
// tensor-parallel group's collectives: a dense MLP does, and so does a
// mixture of experts whose routed experts split over the tensor-parallel
// ranks like one (expertsOnTPGrid) or that has shared experts, which
// Megatron-Core splits so (SharedExpertMLP). Otherwise the block runs on
// each rank's sequence-parallel shard and its tokens move with the
// dispatcher alone (epSeconds, etpSeconds).
func (e *evaluator) mlpOnTPGrid(i int) bool {
	return !e.tr.IsMoELayer(i) || e.expertsOnTPGrid() || e.tr.MoE.SharedExperts > 0
}

// serverHitProbability returns the probability that a token's topk routed
// experts include one on a given server, averaged over the servers: the E
// experts spread evenly and in order over them (as Megatron-Core lays
// them out over the expert-parallel ranks), under balanced routing (as
// the published benchmarks force). Without a group limit the k experts
// are drawn from all E: 1 − C(E−E/n, k)/C(E, k). With one
// (model.MoE.Groups), the token's GroupTopK groups are drawn evenly from
// the Groups contiguous groups, then its k experts from those groups'
// P = GroupTopK·E/Groups: 1 − E[C(P−X, k)/C(P, k)], X the server's experts
// among the chosen groups (DeepSeek-V3 with a group a server: each token
// reaches at most 4 of 8 servers).
func serverHitProbability(m model.MoE, servers int) float64 {
	groups, chosen := m.Groups, m.GroupTopK
	if groups == 0 {
		groups, chosen = 1, 1
	}
	per, size := m.Experts/servers, m.Experts/groups
	pool, k := chosen*size, m.TopK
	lchoose := func(n, r int) float64 {
		a, _ := math.Lgamma(float64(n + 1))
		b, _ := math.Lgamma(float64(r + 1))
		c, _ := math.Lgamma(float64(n - r + 1))
		return a - b - c
	}
	// missing is C(P−x, k)/C(P, k): none of the token's k experts among x
	// of the pool's P.
	missing := func(x int) float64 {
		if pool-x < k {
			return 0
		}
		return math.Exp(lchoose(pool-x, k) - lchoose(pool, k))
	}
	var hit float64
	for s := range servers {
		// The groups the server's experts [first, last) overlap: whole ones
		// and at most two cut at its ends.
		first, last := s*per, (s+1)*per
		var whole int
		var cut []int
		for g := first / size; g*size < last; g++ {
			if n := min(last, (g+1)*size) - max(first, g*size); n == size {
				whole++
			} else {
				cut = append(cut, n)
			}
		}
		overlap := whole + len(cut)
		// Over the chosen groups among those overlapping (jw whole, a
		// subset of the cut ones), each with the other chosen − j drawn
		// from the groups not overlapping.
		var missed float64
		for subset := range 1 << len(cut) {
			jc, x := 0, 0
			for i, n := range cut {
				if subset>>i&1 == 1 {
					jc, x = jc+1, x+n
				}
			}
			for jw := 0; jw <= whole && jw+jc <= chosen; jw++ {
				if j := jw + jc; chosen-j <= groups-overlap {
					w := math.Exp(lchoose(whole, jw) + lchoose(groups-overlap, chosen-j) - lchoose(groups, chosen))
					missed += w * missing(x+jw*size)
				}
			}
		}
		hit += 1 - missed
	}
	return hit / float64(servers)
}

// moeLocalSeconds returns one MoE layer's work per microbatch besides the
// expert GEMMs and the all-to-all, forward and backward (Megatron-Core's
// MoE layer: router, token permutation, unpermutation):
//   - the router's h×E GEMM on every token, in bf16 (Transformer Engine
//     does not run it in FP8), with its input and weight gradients, and
//     its softmax and top-k over E fp32 logits (read and written once
//     forward, twice backward);
//   - the permutation, memory-bound at the achievable HBM bandwidth: each
//     token (h values) is read and written as its topk copies before the
//     dispatch, the copies read and combined into one after the combine,
//     and again for the gradients backward.
//
// It returns the forward part and the total.
func (e *evaluator) moeLocalSeconds() (fwd, total float64) {
	tok, h := e.epTokens(), float64(e.tr.Hidden)
	E, k := float64(e.tr.MoE.Experts), float64(e.tr.MoE.TopK)
	router := e.wideCurve.Seconds(2*tok*h*E, e.wide)
	softmax := 2 * tok * E * 4 / e.memBW
	permute := 2 * (1 + k) * tok * h * e.w / e.memBW // permute and unpermute
	fwd = router + softmax + permute
	return fwd, fwd + 2*router + 2*softmax + permute*2
}

// DefaultEPOverlapExposed is the share of the expert exchange that
// Overlap.EPComm could hide behind another microbatch's compute but leaves
// exposed. Fitted on Megatron-Bridge's Qwen3 235B-A22B FP8 runs on 256 H100
// (ep 32, the exchange overlapped; releases 25.11 to 26.04.01) by least
// squares on the relative throughput (TestEPOverlapExposedFit), its
// DeepSeek-V3 runs on GB200 held out; what it stands for is in doc.go
// ("Mixture of experts: the overlapped exchange").
const DefaultEPOverlapExposed = 0.29

// DefaultExpertSeconds is the time each local expert adds to an MoE
// layer per microbatch, forward and backward, besides its GEMMs' FLOPs
// (expertOverheadSeconds). Fitted on the three 3D-parallel Megatron-MoE-ModelZoo
// Qwen3 235B-A22B BF16 rows of testdata/published_runs.json (least squares
// on the relative throughput; TestExpertSecondsFit), the Megatron-Bridge
// rows held out (doc.go, "Mixture of experts: time per local expert").
// They ran on H100 servers; the Blackwell MoE runs, held out, are
// predicted with the same time (RESULTS.md lists their errors).
const DefaultExpertSeconds = 0.309e-3

// expertOverheadSeconds returns the time one MoE layer's local experts add
// per microbatch, forward and backward, besides their GEMMs' FLOPs:
// DefaultExpertSeconds for each of the E/ep experts a GPU holds.
// Transformer Engine's GroupedLinear, Megatron-Core's expert layer, runs
// each local expert as its own cuBLAS GEMMs (forward, input and weight
// gradients) with per-expert host work (splitting the input, allocating
// each expert's outputs: NVIDIA/TransformerEngine issue 1499), and the
// dropless dispatch waits on the host for the token counts in every layer,
// so the host cannot run ahead of the GPU there.
func (e *evaluator) expertOverheadSeconds() float64 {
	return e.expertSec * float64(e.tr.MoE.Experts/e.cfg.EP)
}

// tpAllReduceSeconds returns the time of one tensor-parallel all-reduce of a
// b·(s/cp)·h activation; with sequence parallelism it is an all-gather plus
// a reduce-scatter of the same volume (Korthikanti et al. 2022 §4.2.2).
func (e *evaluator) tpAllReduceSeconds() float64 {
	t := e.cfg.TP
	full := float64(e.cfg.MicrobatchSize) * float64(e.tr.Seq) / float64(e.cfg.CP) * float64(e.tr.Hidden) * e.w
	if e.cfg.SequenceParallel {
		return 2 * e.comm.GatherSeconds(t, full, e.tpBW)
	}
	return e.comm.AllReduceSeconds(t, full, e.tpBW)
}

// logitSeconds returns the output layer's compute per microbatch on the last
// stage: 2bshV/(t·cp) forward, twice that backward (§4.5.1), in bf16 when
// training in FP8; and its memory-bound kernels — the final norm, the
// cross-entropy over the fp32 logits — moving
// ElementwiseTrafficPerActivationByte per byte it stores forward and twice
// that backward, as the layers' do (layerSeconds). Megatron-LM's unfused
// vocab-parallel cross-entropy moves more (the logits cast to fp32, then
// max, shift, exp, sum and normalize, each a pass over them: some 50 bytes
// per logit where this counts 12); Transformer Engine's fused one, fewer.
func (e *evaluator) logitSeconds() float64 {
	cp := float64(e.cfg.CP)
	fwd := e.tr.LogitFwdFLOPs(e.cfg.MicrobatchSize) / (float64(e.cfg.TP) * cp)
	mem := 3 * ElementwiseTrafficPerActivationByte * e.tr.OutputActivationBytes(e.cfg.MicrobatchSize, e.actOpts) / cp / e.memBW
	// Vocabulary-parallel: column-parallel over the vocabulary.
	out := [2]model.Shape{{Rows: float64(e.cfg.MicrobatchSize * e.tr.Seq), K: float64(e.tr.Hidden), N: float64(e.tr.Vocab)}}
	return 3*e.wideCurve.Seconds(fwd, e.wide)*e.gemmWaveSlowdown(out, true) + mem
}

// p2pSeconds returns the point-to-point time per microbatch on device i:
// v chunks each receive an activation forward and a gradient backward
// (§4.2.2: interleaving multiplies communication by v), with scatter/gather
// (§4.4.1) when enabled. Without interleaving the first and last devices
// exchange with one neighbour only, once per microbatch: Megatron-LM's
// 1F1B steady state pairs each forward's send with the next stage's
// gradient (send_forward_recv_backward) and each backward's send with the
// previous stage's next activation (send_backward_recv_forward), each a
// batched isend/irecv it waits on; the last stage skips the first
// (is_pipeline_last_stage), the first stage the second
// (megatron/p2p_communication.py, megatron/schedules.py,
// NVIDIA/Megatron-LM 2021–2022). With interleaving the end devices' other
// chunks have neighbours on both sides, and each is charged, the share
// DefaultP2PExposed of it: Megatron-Core's interleaved schedule overlaps
// its sends with the next chunk's compute (overlap_p2p_comm), the
// non-interleaved one waits on them.
func (e *evaluator) p2pSeconds(i int) float64 {
	if e.cfg.PP == 1 {
		return 0
	}
	one := e.comm.P2PSeconds(e.boundary, e.ppBW)
	if !e.cfg.SequenceParallel {
		one = e.comm.ScatterGatherSeconds(e.boundary, e.cfg.TP, e.cfg.ScatterGather, e.ppBW, e.intraBW)
	}
	if e.kind.VShaped {
		// Each chunk exchanges with the devices on both sides, but at the
		// V's ends: on the first device its two chunks are the model's
		// ends, and on the last the V turns within the device.
		if i == 0 || i == e.cfg.PP-1 {
			return 2 * one * e.p2pExposed
		}
		return 4 * one * e.p2pExposed
	}
	if e.chunks == 1 && (i == 0 || i == e.cfg.PP-1) {
		return one
	}
	return 2 * float64(e.chunks) * one * e.p2pExposed
}

// DefaultP2PExposed is the share of the interleaved schedule's pipeline
// sends left exposed though Megatron-Core overlaps them with compute
// (overlap_p2p_comm, on by default), fitted on the 28 interleaved dense
// H100 rows of NVIDIA's DGX Cloud benchmarking under NeMo 24.12 (GPT-3
// 175B, Llama 3.1 70B and 405B, 64 to 2,304 GPUs; set "fit" in
// testdata/published_runs.json) by least squares of the relative
// throughput errors on a 0.05 grid: all of it. Over the 55 held-out
// interleaved dense H100 rows of the fit's time hiding more did worse
// (mean absolute error 3.7 % exposing all, 3.8 % half, 4.4 % none); with
// the Nemotron-4 340B rows added since (24.09's, −2 to −4 %) the 67 held
// out read 3.8 % all, 3.6 % half, 4.1 % none (TestP2PExposedFit): they
// cannot tell half from all apart, and the fit stands. What the overlap
// hides, something the model does not cost (the sends' kernels sharing
// the SMs, the waits at each chunk's edges) takes back.
const DefaultP2PExposed = 1.0

// stageTime is device i's time per microbatch, split by kind.
type stageTime struct {
	compute, fwd, wgrad, tp, p2p, cp, ep float64
}

// addLayers adds n layers of time lt each.
func (st *stageTime) addLayers(n float64, lt layerTime) {
	if n == 0 {
		return
	}
	st.compute += n * lt.compute
	st.fwd += n * lt.fwd
	st.wgrad += n * lt.wgrad
	st.tp += n * lt.tp
	st.cp += n * lt.cp
	st.ep += n * lt.ep
}

// deviceSeconds returns device i's time per microbatch: its layers (of
// every chunk it holds), the embedding on the first device and the output
// layer on its own (outputDevice).
func (e *evaluator) deviceSeconds(i int) stageTime {
	var st stageTime
	for k := range e.devWeights[i].layers {
		recomputing, plain := e.layerMix(i, k)
		st.addLayers(recomputing, e.kindTime[k])
		if plain > 0 {
			st.addLayers(plain, e.plainLayerTimes()[k])
		}
	}
	e.addEnds(&st, i == 0, i == e.outputDevice())
	st.compute += e.gradAccumulationSeconds(i)
	st.p2p = e.p2pSeconds(i)
	return st
}

// addEnds adds to st the work of the model's ends beyond their layers:
// with the first chunk the embedding, with the last the output layer and
// the multi-token prediction modules' own work (their layers are among
// the chunk's).
func (e *evaluator) addEnds(st *stageTime, first, last bool) {
	if first {
		st.tp += e.tpAllReduceSeconds() // vocabulary-parallel embedding (forward)
	}
	if !last {
		return
	}
	st.compute += e.logitSeconds()
	st.tp += e.tpAllReduceSeconds() // output layer input gradient (backward)
	if n := float64(e.tr.MTPLayers); n > 0 {
		// Besides its layer, each multi-token prediction module's
		// projection forward and backward, its own pass through the
		// output layer, and the vocabulary-parallel embedding of its
		// shifted tokens and its output layer's input gradient.
		proj := 2 * float64(e.cfg.MicrobatchSize) * float64(e.tr.Seq) * 2 * float64(e.tr.Hidden) * float64(e.tr.Hidden) / float64(e.cfg.TP*e.cfg.CP)
		st.compute += n * (3*e.curve.Seconds(proj, e.peak) + e.logitSeconds())
		st.tp += n * 2 * e.tpAllReduceSeconds()
	}
}

// weightParams returns the parameters device i holds per GPU, split into
// those replicated over the d·cp data-parallel ranks and the routed
// experts, of which each expert-parallel rank holds E/ep split etp ways
// (expertGrid): its layers and,
// on the first stage, the embeddings; the last stage holds the output
// layer (its own copy of a tied word embedding when p > 1, Megatron-LM).
func (e *evaluator) weightParams(i int) (dense, experts float64) {
	return e.devWeights[i].dense, e.devWeights[i].experts
}

// linearWeights returns the linear layers' weights among device i's
// weightParams (linearParams summed over its layers): what Transformer
// Engine runs as FP8 GEMMs when training in FP8.
func (e *evaluator) linearWeights(i int) (dense, experts float64) {
	return e.devWeights[i].linDense, e.devWeights[i].linExperts
}

// gatherBytes returns the bytes of device i's dense and routed-expert
// weights that one all-gather of them moves (the distributed optimizer's
// after the step, ZeRO-3's per layer): e.w per value, and 1 byte per
// linear-layer weight with plan.Execution.FP8ParamGather when training in
// FP8, where Megatron-LM all-gathers the FP8 weights themselves
// (--fp8-param-gather; the embeddings and norms stay 16-bit).
func (e *evaluator) gatherBytes(i int) (dense, experts float64) {
	dense, experts = e.weightParams(i)
	dense, experts = dense*e.w, experts*e.w
	if e.cfg.FP8ParamGather && e.tr.TrainingPrecision() == model.FP8 {
		ld, lx := e.linearWeights(i)
		dense -= ld * (e.w - 1)
		experts -= lx * (e.w - 1)
	}
	return dense, experts
}

// countWeightParams computes weightParams(i) (layOut caches it).
func (e *evaluator) countWeightParams(i int) (dense, experts float64) {
	t := float64(e.cfg.TP)
	for _, l := range e.layerIndices(i) {
		all := e.kindSize[e.layerKind(l)].params
		if e.layerKind(l) == 1 {
			ex := e.memo.experts
			experts += ex / float64(e.etp*e.cfg.EP)
			all -= ex
		}
		dense += all / t
	}
	word := float64(e.tr.Vocab) * float64(e.tr.Hidden) / t
	if i == 0 {
		dense += word
		if e.tr.PositionEmbedding != model.PositionNone {
			dense += float64(e.tr.Seq) * float64(e.tr.Hidden)
		}
	}
	out := e.outputDevice()
	if i == out && (out != 0 || e.tr.UntiedEmbeddings) {
		dense += word
	}
	if n := float64(e.tr.MTPLayers); n > 0 && i == out {
		// The multi-token prediction modules (layOut puts them here): each
		// one's layer, split as the last layer's kind is, its projection
		// and norms; and, where the last device holds no word embedding
		// for them to share (untied, p > 1), a copy of it, which
		// Megatron-Core keeps on the last stage for the shifted tokens.
		last := e.tr.Layers - 1
		all := e.kindSize[e.layerKind(last)].params
		if e.layerKind(last) == 1 {
			experts += n * e.memo.experts / float64(e.etp*e.cfg.EP)
			all -= e.memo.experts
		}
		dense += n * (all + e.tr.MTPLayerParams() - e.tr.LayerParamsAt(last)) / t
		if e.mtpEmbeddingCopy() {
			dense += word
		}
	}
	return dense, experts
}

// mtpEmbeddingCopy reports whether the output layer's device holds a copy
// of the word embedding for the multi-token prediction modules alone: with
// them, untied embeddings and the output layer away from the embedding's
// first device (tied, its output layer is the copy; on the first device,
// the embedding is its own). Like a tied embedding's copy, its gradient is
// all-reduced with the first stage's.
func (e *evaluator) mtpEmbeddingCopy() bool {
	return e.tr.MTPLayers > 0 && e.tr.UntiedEmbeddings && e.outputDevice() != 0
}

// dataParallelSeconds returns device i's gradient synchronization: a ring
// all-reduce of its gradients over the d·cp replicas (§2.4.1; the experts'
// over their own edp ranks, at that group's bandwidth: with ep < t·cp·d
// they are replicated even where d·cp = 1), reduce-scatter plus all-gather with ZeRO, and the tied
// embedding's all-reduce between the first and last stage. It returns the
// gradients' reduction (one; ZeRO-2 and -3 issue it once per microbatch,
// exposedDataParallel), the embedding's and the all-gather separately so
// that each can be overlapped.
func (e *evaluator) dataParallelSeconds(i int) (reduce, embedding, gather float64) {
	dense, experts := e.weightParams(i)
	d, de := e.cfg.DP*e.cfg.CP, e.edp
	if e.cfg.ZeRO == 0 {
		reduce = e.comm.AllReduceSeconds(d, dense*e.gradBytes, e.dpBW) + e.comm.AllReduceSeconds(de, experts*e.gradBytes, e.edpBW)
	} else {
		reduce = e.comm.GatherSeconds(d, dense*e.gradBytes, e.dpBW) + e.comm.GatherSeconds(de, experts*e.gradBytes, e.edpBW)
		if e.cfg.ZeRO < 3 {
			// Sharded optimizer: the updated weights are gathered once
			// after the step. Stage 3 keeps them sharded and gathers them
			// per microbatch instead (zero3Seconds).
			gd, gx := e.gatherBytes(i)
			gather = e.comm.GatherSeconds(d, gd, e.dpBW) + e.comm.GatherSeconds(de, gx, e.edpBW)
		}
	}
	if out := e.outputDevice(); out != 0 && (!e.tr.UntiedEmbeddings || e.mtpEmbeddingCopy()) && (i == 0 || i == out) {
		word := float64(e.tr.Vocab) * float64(e.tr.Hidden) / float64(e.cfg.TP)
		embedding = e.comm.AllReduceSeconds(2, word*e.gradBytes, e.embBW)
	}
	return reduce, embedding, gather
}

// bucketParams returns the parameters of one gradient-reduction bucket on
// device i (DefaultBucketParams over the t tensor-parallel ranks), at most
// the device's own.
func (e *evaluator) bucketParams(i int) float64 {
	dense, experts := e.weightParams(i)
	return math.Min(DefaultBucketParams/float64(e.cfg.TP), dense+experts)
}

// exposedDataParallel returns what stays exposed of device i's reduction
// and gather: all of it without overlap; with overlap, the reduction runs
// in buckets during the last microbatch's backward (the gather during the
// first microbatch's forward), leaving whatever that compute does not
// hide, and at least one bucket's share. With ZeRO-2 and -3 the gradients
// are sharded, so nothing holds a whole gradient to accumulate into: as
// DeepSpeed's ZeRO-2 and PyTorch FSDP (SHARD_GRAD_OP, FULL_SHARD) do, every
// microbatch's backward reduce-scatters the device's gradients, m
// reduce-scatters per step instead of one. The last is exposed as above;
// each earlier one runs on the communication stream while its backward
// and the device's next slot of the schedule (another microbatch's
// forward and backward, st.compute in all) compute — nothing waits for it
// before the step ends — leaving what exceeds that, and at least one
// bucket's share. (Hidden behind the backward alone, as the last one is,
// Llama 3 405B at the paper's layout would predict 21 % and 19 % under its
// published throughput, where this predicts 6.1 % and 5.3 % under.)
func (e *evaluator) exposedDataParallel(i int, st stageTime) float64 {
	reduce, embedding, gather := e.dataParallelSeconds(i)
	dense, experts := e.weightParams(i)
	bucket := e.bucketParams(i) / math.Max(dense+experts, 1)
	// exposed is what stays of a reduction r started with a window of
	// compute still to run.
	exposed := func(r, window float64) float64 {
		if e.cfg.Overlap.GradReduce {
			return math.Max(r-window, r*bucket)
		}
		return r
	}
	// The link time ZeRO-3's prefetched weight gathers take from each
	// pass: they run on the same NICs, so a reduce-scatter is hidden only
	// by the compute they leave free (zero3Seconds).
	var gathers float64
	if e.cfg.Overlap.ParamGather {
		gathers = e.zero3GatherSeconds(i)
	}
	bwd := st.compute - st.fwd
	out := exposed(reduce+embedding, max(0, bwd-gathers)) // the last microbatch's, with the embedding's all-reduce
	if e.cfg.ZeRO >= 2 {
		out += float64(e.m-1) * exposed(reduce, max(0, st.compute-2*gathers))
	}
	if e.cfg.Overlap.ParamGather {
		gather = math.Max(gather-st.fwd, gather*bucket)
	}
	return out + gather
}

// zero3GatherSeconds returns the link time of one pass's ZeRO-3 weight
// all-gathers on device i, every layer's (0 below stage 3).
func (e *evaluator) zero3GatherSeconds(i int) float64 {
	if e.cfg.ZeRO < 3 {
		return 0
	}
	dense, experts := e.gatherBytes(i)
	return e.comm.GatherSeconds(e.cfg.DP*e.cfg.CP, dense, e.dpBW) + e.comm.GatherSeconds(e.edp, experts, e.edpBW)
}

// zero3Seconds returns what stays exposed of ZeRO-3's per-microbatch weight
// all-gathers on device i (forward, and again backward; 0 below stage 3),
// given its time per microbatch. Without Overlap.ParamGather all of it;
// with it, each layer's gather is prefetched while the layer before
// computes (PyTorch FSDP's forward and backward prefetch, Zhao et al.
// 2023 §4; Megatron-FSDP likewise), so of each pass's gathers what exceeds
// that pass's compute stays exposed — the forward's gathers cannot wait
// for the backward's time — and at least its first layer's gather.
func (e *evaluator) zero3Seconds(i int, st stageTime) float64 {
	g := e.zero3GatherSeconds(i)
	if g == 0 {
		return 0
	}
	if !e.cfg.Overlap.ParamGather {
		return 2 * g
	}
	l := e.devWeights[i].layers // its layers and multi-token prediction modules
	first := g / max(1, l[0]+l[1])
	return math.Max(g-st.fwd, first) + math.Max(g-(st.compute-st.fwd), first)
}

// optimizerSeconds returns device i's work on its weights once per step,
// memory-bound at the achievable HBM bandwidth:
//   - the optimizer step reads and writes every byte of weights, gradients
//     and optimizer state of the parameters the rank updates (Adam's fp32
//     master weights, moments and gradient in, master and moments out, the
//     16-bit weight written from the master; the gradient norm reads the
//     gradients): all of them without ZeRO, and with ZeRO ≥ 1 only the
//     rank's 1/(d·cp) shard (the experts' 1/edp), as Megatron-LM's
//     distributed optimizer steps its shard of the main parameters before
//     the updated weights are all-gathered (dataParallelSeconds);
//   - in fp16, unscaling the gradients the rank steps before the step
//     (read and written once more: loss scaling's
//     torch._amp_foreach_non_finite_check_and_unscale_, which Megatron-LM's
//     MixedPrecisionOptimizer._unscale_main_grads_and_check_for_nan runs
//     over the fp32 main gradients whenever a grad scaler exists — with
//     --fp16 always, with --bf16 never — and PyTorch AMP's GradScaler.unscale_
//     likewise);
//   - zeroing the gradient buffers for the next step (Megatron-LM's
//     zero_grad_buffer: the whole fp32 buffer on every rank, unless ZeRO-2
//     or -3 shards it);
//   - without Overlap.GradReduce and ZeRO-2/3, averaging the gradients
//     before their reduction: Megatron-LM's DistributedDataParallel as it
//     ran from 2020 until Megatron-Core's overlapped buckets
//     (megatron/model/distributed.py, allreduce_gradients) divides the
//     whole contiguous gradient buffer by d in place before all-reducing
//     it, every step and on every rank, d = 1 included (read and written
//     once more);
//   - when training in FP8, the linear layers' FP8 weights for the step:
//     without plan.Execution.FP8ParamGather Transformer Engine
//     cast-transposes each bf16 weight on the step's first microbatch
//     (FP8CastBytesPerValue per weight; cached for the others); with it the
//     step writes the FP8 weight itself (its byte is in the first item) and
//     only the transpose is made from the gathered weight (read and written,
//     2 bytes; TE's post_all_gather_processing on Hopper). Under ZeRO-3
//     each microbatch gathers the weights anew and casts or transposes
//     the gathered layer again; that repetition is not charged (a lower
//     bound).
func (e *evaluator) optimizerSeconds(i int) float64 {
	dense, experts := e.weightParams(i)
	shard, expertShard := 1.0, 1.0
	if e.cfg.ZeRO >= 1 {
		shard, expertShard = float64(e.cfg.DP*e.cfg.CP), float64(e.edp)
	}
	stepped := dense/shard + experts/expertShard
	step := 2 * e.perParam.Total() * stepped
	if e.tr.TrainingPrecision() == model.FP16 {
		step += 2 * e.perParam.Gradients * stepped
	}
	zero := dense*e.state.Gradients + experts*e.expertState.Gradients
	if !e.cfg.Overlap.GradReduce && e.cfg.ZeRO <= 1 {
		step += 2 * zero // the buffer divided by d
	}
	var cast float64
	if e.tr.TrainingPrecision() == model.FP8 {
		ld, lx := e.linearWeights(i)
		per := float64(FP8CastBytesPerValue)
		if e.cfg.FP8ParamGather {
			per = 2
		}
		cast = per * (ld + lx)
	}
	return (step + zero + cast) / e.memBW
}
