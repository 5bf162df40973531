package cost

import (
	"math"
	"strings"
	"testing"

	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/gpuprofiles"
	"pipeplan/modelprofiles"
)

// moeEvaluator returns the evaluator of Qwen3 235B-A22B (128 experts, top 8)
// at s = 4096 on H100 servers of 8 with t = 2 and the given ep over the
// t·d ranks (etp 1: ep does not divide d).
func moeEvaluator(t *testing.T, ep, gpus int) *evaluator {
	t.Helper()
	tr, c := h100MoE(t, "qwen3-235b-a22b", gpus/8)
	ex := plan.Execution{TP: 2, PP: 1, DP: gpus / 2, EP: ep, MicrobatchSize: 1, GlobalBatch: gpus / 2, SequenceParallel: true, FlashAttention: true}
	e, err := newEvaluator(tr, c, WithDefaults(ex), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// h100MoE returns the model preset id at s = 4096 and the given number
// of H100 servers of 8 (the GPU's default network).
func h100MoE(t *testing.T, id string, servers int) (model.Transformer, hw.Cluster) {
	t.Helper()
	tr, _, err := modelprofiles.Transformer(id)
	if err != nil {
		t.Fatal(err)
	}
	tr.Seq = 4096
	g, err := gpuprofiles.ByID("nvidia-h100-sxm5-80gb")
	if err != nil {
		t.Fatal(err)
	}
	c, err := hw.NewCluster(g, 8, servers, 0)
	if err != nil {
		t.Fatal(err)
	}
	return tr, c
}

// TestExpertAllToAllHierarchical: inside a server the all-to-all runs at
// NVLink bandwidth; across servers the copies for the rank's own server
// go over NVLink while the others go over the network, so with ep 32 over
// 4 servers of 8 (etp 1) the network carries 24 of each 32 copies, not 31.
func TestExpertAllToAllHierarchical(t *testing.T) {
	in := moeEvaluator(t, 8, 8)
	bytes := float64(in.tr.MoE.TopK) * in.epTokens() * float64(in.tr.Hidden) * in.w
	eff, lat := in.comm.BandwidthEfficiency, in.comm.LatencySeconds
	if got, want := in.epSeconds(), 4*(7.0/8*bytes/(in.intraBW*eff)+7*lat); math.Abs(got-want) > 1e-9*want {
		t.Errorf("ep 8 in one server: %v s, want %v s at NVLink bandwidth", got, want)
	}
	across := moeEvaluator(t, 32, 32)
	if got, want := across.epSeconds(), 4*(24.0/32*bytes/(across.epBW*eff)+31*lat); math.Abs(got-want) > 1e-9*want {
		t.Errorf("ep 32 over 4 servers: %v s, want %v s (24/32 of the copies over the network)", got, want)
	}
}

// TestMoELocalWork: the router and permutation are charged, in proportion
// to the tokens, and recomputed with full recomputation.
func TestMoELocalWork(t *testing.T) {
	e := moeEvaluator(t, 8, 8)
	fwd, total := e.moeLocalSeconds()
	if !(fwd > 0 && total > 2.5*fwd && total < 3.5*fwd) {
		t.Errorf("router and permutation: forward %v s, total %v s; want the backward about twice the forward", fwd, total)
	}
	e.cfg.MicrobatchSize = 2
	fwd2, _ := e.moeLocalSeconds()
	if math.Abs(fwd2/fwd-2) > 0.2 {
		t.Errorf("twice the tokens: %v s, once %v s", fwd2, fwd)
	}
}

// TestServerHitProbabilityBruteForce checks serverHitProbability against
// enumeration: every choice of the token's groups (all equally likely),
// then of its k experts among them, the E experts spread evenly over n
// servers; the share of choices reaching each server, averaged over the
// servers. Without a group limit, with groups nested in servers, servers
// in groups, and neither (servers of 3 experts, groups of 4).
func TestServerHitProbabilityBruteForce(t *testing.T) {
	for _, c := range []struct{ experts, topk, servers, groups, groupTopK int }{
		{8, 2, 4, 0, 0}, {12, 3, 3, 0, 0}, {16, 4, 2, 0, 0}, {10, 5, 5, 0, 0}, {6, 1, 3, 0, 0},
		{8, 2, 4, 4, 2}, {12, 3, 3, 6, 3}, {12, 2, 6, 3, 2}, {12, 3, 4, 3, 2}, {16, 4, 2, 8, 4}, {16, 3, 8, 4, 1},
	} {
		groups, chosen := c.groups, c.groupTopK
		if groups == 0 {
			groups, chosen = 1, 1
		}
		per, size := c.experts/c.servers, c.experts/groups
		var want float64
		var subsets func(n, k, from int, pick []int, visit func([]int))
		subsets = func(n, k, from int, pick []int, visit func([]int)) {
			if len(pick) == k {
				visit(pick)
				return
			}
			for x := from; x < n; x++ {
				subsets(n, k, x+1, append(pick, x), visit)
			}
		}
		for server := range c.servers {
			var hits, all float64
			subsets(groups, chosen, 0, nil, func(gs []int) {
				var pool []int
				for _, g := range gs {
					for e := g * size; e < (g+1)*size; e++ {
						pool = append(pool, e)
					}
				}
				var h, a float64
				subsets(len(pool), c.topk, 0, nil, func(es []int) {
					a++
					for _, i := range es {
						if pool[i]/per == server {
							h++
							return
						}
					}
				})
				hits, all = hits+h/a, all+1 // each group choice equally likely
			})
			want += hits / all / float64(c.servers)
		}
		m := model.MoE{Experts: c.experts, TopK: c.topk, Groups: c.groups, GroupTopK: c.groupTopK}
		if got := serverHitProbability(m, c.servers); math.Abs(got-want) > 1e-12 {
			t.Errorf("E=%d k=%d n=%d groups %d/%d: %v, enumeration gives %v", c.experts, c.topk, c.servers, c.groupTopK, c.groups, got, want)
		}
	}
	// DeepSeek-V3 over 8 servers (ep 64), a group a server: a token
	// reaches at most 4 (the report's node-limited routing), on average
	// fewer, where without the limit it reaches 5.3.
	free := model.MoE{Experts: 256, TopK: 8}
	limited := free
	limited.Groups, limited.GroupTopK = 8, 4
	if reach, all := 8*serverHitProbability(limited, 8), 8*serverHitProbability(free, 8); !(reach <= 4 && reach > 3 && all > 5.2 && all < 5.3) {
		t.Errorf("DeepSeek-V3 over 8 servers: a token reaches %.3f servers with the group limit, %.3f without", reach, all)
	}
}

// TestDeepEPDispatcher: DeepEP sends a token once per other server that
// holds one of its experts (Qwen3 235B: 128 experts, top 8, ep 32 over 4
// servers: 3 × 0.90 = 2.7 network copies per token, not 6), so across
// servers it is faster than the alltoall dispatcher; inside one server the
// fabric carries the same 7/8 of the copies either way.
func TestDeepEPDispatcher(t *testing.T) {
	across := moeEvaluator(t, 32, 32)
	token := across.epTokens() * float64(across.tr.Hidden) * across.w
	eff, lat := across.comm.BandwidthEfficiency, across.comm.LatencySeconds
	all := across.epSeconds()
	across.cfg.EPDispatcher = EPDeepEP
	hit := serverHitProbability(model.MoE{Experts: 128, TopK: 8}, 4)
	if got, want := across.epSeconds(), 4*(3*hit*token/(across.epBW*eff)+31*lat); math.Abs(got-want) > 1e-9*want || !(got < all/2) {
		t.Errorf("DeepEP over 4 servers: %v s, want %v s (%.2f network copies per token; alltoall %v s)", got, want, 3*hit, all)
	}
	in := moeEvaluator(t, 8, 8)
	all = in.epSeconds()
	in.cfg.EPDispatcher = EPDeepEP
	if got := in.epSeconds(); math.Abs(got-all) > 1e-9*all {
		t.Errorf("DeepEP inside a server: %v s, alltoall %v s; want equal", got, all)
	}
}

// TestEPOverlap: with the expert all-to-all overlapped, a MoE layer's
// exchange stays exposed where it exceeds the layer's compute, and of the
// rest the share DefaultEPOverlapExposed (all of it hidden at 0); an
// unknown dispatcher is an error naming the field.
func TestEPOverlap(t *testing.T) {
	e := moeEvaluator(t, 32, 32)
	last := e.tr.Layers - 1
	plain := e.layerSeconds(last)
	e.cfg.Overlap.EPComm = true
	for _, f := range []float64{DefaultEPOverlapExposed, 0} {
		e.epExposed = f
		over := e.layerSeconds(last)
		want := math.Max(0, plain.ep-plain.compute) + f*math.Min(plain.ep, plain.compute)
		if math.Abs(over.ep-want) > 1e-12 || over.compute != plain.compute {
			t.Errorf("exposed share %.2f: overlapped exchange %v s (compute %v s), want %v s (compute %v s)", f, over.ep, over.compute, want, plain.compute)
		}
	}
	ex := WithDefaults(e.cfg)
	ex.EPDispatcher = "nccl"
	if err := Validate(e.tr, e.c, ex); err == nil || !strings.Contains(err.Error(), "execution.ep_dispatcher") {
		t.Errorf("dispatcher %q: got %v, want an error naming execution.ep_dispatcher", ex.EPDispatcher, err)
	}
}

// TestExpertGEMMsPerExpert: a routed-expert GEMM is costed as its E/ep
// local experts, each at the efficiency of its own share of the tokens
// (the grouped GEMM's per-expert shapes), not as one GEMM of their total:
// at the same FLOPs per GPU, twice the local experts take longer, by
// exactly the curve's verdict on GEMMs of half the size.
func TestExpertGEMMsPerExpert(t *testing.T) {
	e8, e32 := moeEvaluator(t, 8, 32), moeEvaluator(t, 32, 32) // 16 and 4 local experts
	experts := 0
	for _, g := range e8.tr.ForwardGEMMs(1, 0) {
		if !g.Expert {
			continue
		}
		experts++
		per := g.FLOPs / float64(e8.cfg.TP)
		want16 := 16 * e8.curve.Seconds(per/16, e8.peak)
		want4 := 4 * e32.curve.Seconds(per/4, e32.peak)
		got16, got4 := e8.gemmSeconds(g), e32.gemmSeconds(g)
		if math.Abs(got16-want16) > 1e-9*want16 || math.Abs(got4-want4) > 1e-9*want4 {
			t.Errorf("%s: %v s with 16 local experts, %v s with 4; want %v and %v", g.Name, got16, got4, want16, want4)
		}
		if !(got16 > got4) || e8.curve.Seconds(per, e8.peak) >= got4 {
			t.Errorf("%s: 16 experts %v s, 4 experts %v s, one GEMM %v s: smaller GEMMs must be slower", g.Name, got16, got4, e8.curve.Seconds(per, e8.peak))
		}
	}
	if experts != 2 {
		t.Errorf("%d routed-expert GEMMs in a Qwen3 layer, want 2 (up and down)", experts)
	}
}

// TestExpertGradientReductionOwnGroup: Qwen3-30B-A3B (48 MoE layers of 128
// experts, h 2048, expert FFN 768, SwiGLU: 3·h·768 parameters an expert)
// on two H100 servers at t 8, p 2, d 1, ep 2 (etp 1). The attention's
// data-parallel group has one rank, but the experts' (Megatron-Core's
// expert data parallel size t·cp·d/(etp·ep) = 4) has four, 2 ranks apart
// inside a server: each stage's 24 layers × 64 local experts are
// all-reduced over 4 GPUs at NVLink bandwidth (reduce-scattered and
// gathered with the distributed optimizer), and nothing else is reduced
// (untied embeddings, d 1).
func TestExpertGradientReductionOwnGroup(t *testing.T) {
	tr, c := h100MoE(t, "qwen3-30b-a3b", 2)
	params := 24.0 * 64 * 3 * 2048 * 768 // one stage's local experts
	nvlink := c.Levels[0].BandwidthBytesPerSec
	for _, zero := range []int{0, 1} {
		ex := plan.Execution{TP: 8, PP: 2, DP: 1, EP: 2, ZeRO: zero, MicrobatchSize: 1, GlobalBatch: 8, SequenceParallel: true, FlashAttention: true}
		e, err := newEvaluator(tr, c, WithDefaults(ex), Options{})
		if err != nil {
			t.Fatal(err)
		}
		eff, lat := e.comm.BandwidthEfficiency, e.comm.LatencySeconds
		grads := params * e.gradBytes
		wantReduce, wantGather := 2*3.0/4*grads/(nvlink*eff)+6*lat, 0.0 // ring all-reduce over 4
		if zero == 1 {
			wantReduce = 3.0/4*grads/(nvlink*eff) + 3*lat      // reduce-scatter
			wantGather = 3.0/4*params*e.w/(nvlink*eff) + 3*lat // all-gather of the weights
		}
		for i := range 2 {
			reduce, embedding, gather := e.dataParallelSeconds(i)
			if math.Abs(reduce-wantReduce) > 1e-9*wantReduce || embedding != 0 || math.Abs(gather-wantGather) > 1e-9*math.Max(wantGather, 1e-12) {
				t.Errorf("ZeRO-%d stage %d: reduce %v s, embedding %v s, gather %v s; want %v, 0, %v", zero, i, reduce, embedding, gather, wantReduce, wantGather)
			}
		}
		pr, err := Predict(tr, c, ex, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !(pr.Time.DataParallelSeconds > 0 && !math.IsInf(pr.IterationSeconds, 0) && !math.IsNaN(pr.IterationSeconds)) {
			t.Errorf("ZeRO-%d: step %v s, exposed data parallel %v s; want finite, > 0", zero, pr.IterationSeconds, pr.Time.DataParallelSeconds)
		}
	}
}

// TestInterleavedExpertLayersCost: on one pipeline stage, where the order
// of the layers changes nothing, a model whose expert layers are every
// other one (Llama 4 Maverick's interleaving) is predicted exactly as the
// same model with as many expert layers in one run after its dense ones,
// and between the all-dense and all-expert models; on two stages each
// holds half of each kind, so its step is no slower than the contiguous
// model's, whose second stage holds every expert layer.
func TestInterleavedExpertLayersCost(t *testing.T) {
	tr, c := h100MoE(t, "qwen3-30b-a3b", 1)
	tr.Layers = 12
	interleaved, contiguous, dense, allMoE := tr, tr, tr, tr
	moe := *tr.MoE
	im, cm := moe, moe
	im.Every, cm.FirstDense = 2, 6
	interleaved.MoE, contiguous.MoE, dense.MoE = &im, &cm, nil
	if interleaved.MoELayers() != 6 || contiguous.MoELayers() != 6 {
		t.Fatalf("expert layers %d and %d, want 6 each", interleaved.MoELayers(), contiguous.MoELayers())
	}
	predict := func(tr model.Transformer, pp int) Prediction {
		ep := 8 / pp
		if tr.MoE == nil {
			ep = 1
		}
		ex := WithDefaults(plan.Execution{TP: 1, PP: pp, DP: 8 / pp, EP: ep, MicrobatchSize: 1, GlobalBatch: 64, FlashAttention: true})
		p, err := Predict(tr, c, ex, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	i1, c1 := predict(interleaved, 1), predict(contiguous, 1)
	if math.Abs(i1.IterationSeconds-c1.IterationSeconds) > 1e-12*c1.IterationSeconds || i1.Memory.PeakBytes != c1.Memory.PeakBytes {
		t.Errorf("one stage: interleaved %v s, %v B; contiguous %v s, %v B", i1.IterationSeconds, i1.Memory.PeakBytes, c1.IterationSeconds, c1.Memory.PeakBytes)
	}
	if d, a := predict(dense, 1).IterationSeconds, predict(allMoE, 1).IterationSeconds; !(min(d, a) < i1.IterationSeconds && i1.IterationSeconds < max(d, a)) {
		t.Errorf("one stage: interleaved %v s not between all dense %v s and all experts %v s", i1.IterationSeconds, d, a)
	}
	if i2, c2 := predict(interleaved, 2), predict(contiguous, 2); i2.IterationSeconds > c2.IterationSeconds {
		t.Errorf("two stages: interleaved %v s, contiguous %v s", i2.IterationSeconds, c2.IterationSeconds)
	}
}

// TestDeepEPGroupLimit: DeepSeek-V3 (its preset routes each token within
// 4 of 8 expert groups) over 8 servers (ep 64) under DeepEP sends
// 7 × serverHitProbability network copies a token, fewer than without
// the limit; the alltoall dispatcher sends every copy either way.
func TestDeepEPGroupLimit(t *testing.T) {
	tr, c := h100MoE(t, "deepseek-v3", 8)
	if m := tr.MoE; m.Groups != 8 || m.GroupTopK != 4 {
		t.Fatalf("deepseek-v3 preset: groups %d, group top-k %d; want 8 and 4", m.Groups, m.GroupTopK)
	}
	free := tr
	moe := *tr.MoE
	moe.Groups, moe.GroupTopK = 0, 0
	free.MoE = &moe
	seconds := func(tr model.Transformer, dispatcher string) (float64, *evaluator) {
		ex := plan.Execution{TP: 1, PP: 1, DP: 64, EP: 64, EPDispatcher: dispatcher, MicrobatchSize: 1, GlobalBatch: 64, FlashAttention: true}
		e, err := newEvaluator(tr, c, WithDefaults(ex), Options{})
		if err != nil {
			t.Fatal(err)
		}
		return e.epSeconds(), e
	}
	limited, e := seconds(tr, EPDeepEP)
	unlimited, _ := seconds(free, EPDeepEP)
	token := e.epTokens() * float64(tr.Hidden) * e.w
	want := 4 * (7*serverHitProbability(*tr.MoE, 8)*token/(e.epBW*e.comm.BandwidthEfficiency) + 63*e.comm.LatencySeconds)
	if math.Abs(limited-want) > 1e-9*want || !(limited < 0.8*unlimited) {
		t.Errorf("DeepEP: %v s with the group limit (want %v s), %v s without", limited, want, unlimited)
	}
	all, _ := seconds(tr, EPAllToAll)
	allFree, _ := seconds(free, EPAllToAll)
	if all != allFree {
		t.Errorf("alltoall: %v s with the group limit, %v s without; want equal", all, allFree)
	}
}
