package app

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"pipeplan/app/request"
	"pipeplan/core/cost"
	"pipeplan/core/plan"
	"pipeplan/gpuprofiles"
)

// TestPlanCustomMoEMatchesPublishedCounts gives Mixtral 8x7B by its
// dimensions as custom-model fields (Mistral AI's config.json: 32 layers,
// h 4096, 32 heads, 8 K/V heads, SwiGLU of 14336, untied embeddings, vocab
// 32000, 8 experts, top 2) and checks the published parameter counts:
// 46.7 B total, 12.9 B active (Mistral AI, "Mixtral of experts", 2023-12-11,
// https://mistral.ai/news/mixtral-of-experts). The custom model keeps GPT's
// learned positions, LayerNorm and biases (about 17 M parameters more than
// Mixtral's RoPE/RMSNorm, 0.04 %), within the 0.5 % asked here.
func TestPlanCustomMoEMatchesPublishedCounts(t *testing.T) {
	in := request.Default().Plan
	in.Model, in.Seq, in.Nodes = "custom", 4096, 8
	in.TP, in.PP, in.EP, in.Microbatch, in.Interleave, in.Recompute = 2, 4, 8, 1, 1, "full" // one configuration: a search is not the point
	in.Custom = request.CustomModel{Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, FFN: 14336, GatedFFN: true,
		UntiedEmbeddings: true, Vocab: 32000, Experts: 8, TopK: 2}
	res, err := Plan(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"params", res.Params, 46.7e9}, {"active params", res.ActiveParams, 12.9e9}} {
		if math.Abs(c.got-c.want) > 0.005*c.want {
			t.Errorf("%s = %.4g, want %.4g (published)", c.name, c.got, c.want)
		}
	}
	tr := res.Transformer
	if tr.KVHeads != 8 || !tr.GatedFFN || !tr.UntiedEmbeddings || tr.MoE == nil || tr.MoE.Experts != 8 || tr.MoE.TopK != 2 {
		t.Errorf("transformer %+v (moe %+v)", tr, tr.MoE)
	}
	if len(res.Candidates) == 0 || res.Candidates[0].HardwareTFLOPSPerGPU != res.Candidates[0].TFLOPSPerGPU {
		t.Errorf("candidates %d, hardware TFLOP/s differs from tflops_per_gpu", len(res.Candidates))
	}
}

// TestPlanCustomSlidingWindow gives a transformer windowed on half its
// layers with attention sinks as custom-model fields: the planned model
// carries them (one sink per head and layer more than without), and at a
// 32K sequence, where the attention core is much of a layer, the same
// configuration steps faster than with every layer attending in full.
func TestPlanCustomSlidingWindow(t *testing.T) {
	plan := func(window, windowed int, sinks bool) Result {
		in := request.Default().Plan
		in.Model, in.Seq, in.Nodes, in.GPU, in.GlobalBatch = "custom", 32768, 2, "nvidia-h100-sxm5-80gb", 16
		in.TP, in.PP, in.Microbatch, in.Interleave, in.Recompute = 8, 2, 1, 1, "full"
		in.Custom = request.CustomModel{Layers: 24, Hidden: 2880, Heads: 64, KVHeads: 8, FFN: 2880, GatedFFN: true, UntiedEmbeddings: true,
			SlidingWindow: window, SlidingLayers: windowed, AttentionSinks: sinks}
		res, err := Plan(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	full, windowed := plan(0, 0, false), plan(128, 12, true)
	if tr := windowed.Transformer; tr.SlidingWindow != 128 || tr.SlidingLayers != 12 || !tr.AttentionSinks {
		t.Errorf("transformer %+v", tr)
	}
	if d := windowed.Params - full.Params; d != 24*64 {
		t.Errorf("sinks add %v parameters, want 24 layers × 64 heads", d)
	}
	if f, w := full.Candidates[0].IterationSeconds, windowed.Candidates[0].IterationSeconds; !(w < 0.9*f) {
		t.Errorf("step %.3f s windowed, %.3f s in full: want the window to save over a tenth at 32K", w, f)
	}
	in := request.Default().Plan
	in.Model, in.Custom = "custom", request.CustomModel{Layers: 4, Hidden: 64, Heads: 4, SlidingWindow: 16}
	if _, err := Plan(context.Background(), in); err == nil || !strings.HasPrefix(err.Error(), "plan.custom.sliding_layers") {
		t.Errorf("a window without windowed layers: %v", err)
	}
}

// evaluateH100 evaluates GPT-3 175B at t=8, p=8, d=16 (1024 H100s) with
// ZeRO 1 and the given overlaps.
func evaluateH100(t *testing.T, set func(*request.Plan)) Candidate {
	t.Helper()
	in := request.Default().Plan
	in.GPU, in.TP, in.PP, in.Microbatch, in.Interleave, in.Recompute = "nvidia-h100-sxm5-80gb", 8, 8, 1, 1, "selective"
	in.ZeRO = new(int)
	*in.ZeRO = 1
	set(&in)
	res, err := Plan(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Mode != "evaluate" || len(res.Candidates) != 1 {
		t.Fatalf("mode %s, %d candidates (%s)", res.Mode, len(res.Candidates), res.Problem)
	}
	return res.Candidates[0]
}

// TestPlanOverlapsReachThePrediction: each overlap choice of the request
// reaches the execution, and turning one off exposes more of its
// communication: a longer step, with the part it hides (data-parallel or
// tensor-parallel) larger, and the rest of the breakdown unchanged.
func TestPlanOverlapsReachThePrediction(t *testing.T) {
	on, off := true, false
	def := evaluateH100(t, func(*request.Plan) {})
	if want := (plan.Overlap{GradReduce: true, ParamGather: true, TPComm: true}); def.Execution.Overlap != want {
		t.Fatalf("H100 default overlap %+v, want %+v (Megatron-LM's README)", def.Execution.Overlap, want)
	}
	for _, c := range []struct {
		name string
		set  func(*request.Plan)
		want plan.Overlap
		part func(Candidate) float64
	}{
		{"overlap_grad_reduce", func(p *request.Plan) { p.OverlapGradReduce = &off }, plan.Overlap{ParamGather: true, TPComm: true},
			func(c Candidate) float64 { return c.Breakdown.DataParallelSeconds }},
		{"overlap_param_gather", func(p *request.Plan) { p.OverlapParamGather = &off }, plan.Overlap{GradReduce: true, TPComm: true},
			func(c Candidate) float64 { return c.Breakdown.DataParallelSeconds }},
		{"tp_comm_overlap", func(p *request.Plan) { p.TPCommOverlap = &off }, plan.Overlap{GradReduce: true, ParamGather: true},
			func(c Candidate) float64 { return c.Breakdown.TensorParallelSeconds }},
	} {
		got := evaluateH100(t, c.set)
		if got.Execution.Overlap != c.want {
			t.Errorf("%s off: overlap %+v, want %+v", c.name, got.Execution.Overlap, c.want)
		}
		if !(got.IterationSeconds > def.IterationSeconds && c.part(got) > c.part(def)) {
			t.Errorf("%s off: step %.6g s (part %.6g s), with it on %.6g s (part %.6g s): want both longer",
				c.name, got.IterationSeconds, c.part(got), def.IterationSeconds, c.part(def))
		}
		if got.Breakdown.ComputeSeconds != def.Breakdown.ComputeSeconds {
			t.Errorf("%s off changed the compute: %v vs %v", c.name, got.Breakdown.ComputeSeconds, def.Breakdown.ComputeSeconds)
		}
	}
	// Explicitly on is the default on H100; on an A100 (no userbuffers
	// overlap by default) asking for it hides tensor-parallel time.
	if got := evaluateH100(t, func(p *request.Plan) { p.TPCommOverlap = &on }); got.IterationSeconds != def.IterationSeconds {
		t.Errorf("tp_comm_overlap on: %v s, default %v s", got.IterationSeconds, def.IterationSeconds)
	}
	a100 := func(p *request.Plan) { p.GPU = "nvidia-a100-sxm4-80gb" }
	plain, with := evaluateH100(t, a100), evaluateH100(t, func(p *request.Plan) { a100(p); p.TPCommOverlap = &on })
	if plain.Execution.Overlap.TPComm || !with.Execution.Overlap.TPComm || !(with.Breakdown.TensorParallelSeconds < plain.Breakdown.TensorParallelSeconds) {
		t.Errorf("A100: default %+v (TP %.4g s), with tp_comm_overlap %+v (TP %.4g s)", plain.Execution.Overlap,
			plain.Breakdown.TensorParallelSeconds, with.Execution.Overlap, with.Breakdown.TensorParallelSeconds)
	}
}

// TestDefaultOverlapByGPU: tensor-parallel overlap by default only on
// Hopper-or-newer GPUs joined by NVLink; the data-parallel overlaps on all.
func TestDefaultOverlapByGPU(t *testing.T) {
	for id, tpComm := range map[string]bool{
		"nvidia-h100-sxm5-80gb": true, "nvidia-h200-sxm-141gb": true, "nvidia-b200-sxm": true,
		"nvidia-a100-sxm4-80gb": false, "nvidia-v100-sxm2-16gb": false, "nvidia-l40s": false, "amd-mi300x": false,
	} {
		g, err := gpuprofiles.ByID(id)
		if err != nil {
			t.Fatal(err)
		}
		if o := DefaultOverlap(g, true); o != (plan.Overlap{GradReduce: true, ParamGather: true, TPComm: tpComm}) {
			t.Errorf("%s: %+v, want TP comm %v", id, o, tpComm)
		}
	}
}

// TestPlanZeROSearchedOrPinned: left out, the ZeRO stage is chosen per
// configuration — the distributed optimizer (1), or ZeRO-2 or FSDP (3)
// where that does not fit with the layers the configuration recomputes —
// and the fastest is at least as fast as the
// best with stage 0, 1 or 3 pinned (pinned stage 2 can be a hair faster
// than the distributed optimizer where its per-microbatch reduce-scatters
// hide: the model steps ZeRO-1's optimizer over whole gradients and
// ZeRO-2's over its shard); pinned, every candidate has it. With every
// degree given and the stage left out, the one configuration gets the
// stage the search would give it.
func TestPlanZeROSearchedOrPinned(t *testing.T) {
	in := request.Default().Plan
	in.Model, in.Nodes, in.GlobalBatch = "gpt-18.4b", 4, 256
	searched, err := Plan(context.Background(), in)
	if err != nil || len(searched.Candidates) == 0 {
		t.Fatalf("%v %s", err, searched.Problem)
	}
	for _, c := range append(searched.Candidates, searched.Infeasible...) {
		x := c.Execution
		want := map[bool]int{true: 0, false: 1}[x.DP*x.CP == 1]
		if x.ZeRO == want {
			continue
		}
		if x.ZeRO != 2 && x.ZeRO != 3 {
			t.Errorf("searched: %+v at ZeRO %d", x, x.ZeRO)
			continue
		}
		// ZeRO-2 or FSDP only where the distributed optimizer does not fit
		// (with the layers the candidate recomputes: a higher stage can
		// leave room for fewer).
		one, z := in, 1
		one.TP, one.PP, one.CP, one.EP, one.Microbatch, one.Interleave, one.Recompute, one.ZeRO = x.TP, x.PP, x.CP, x.EP, x.MicrobatchSize, x.Interleave, string(x.Recompute), &z
		one.RecomputeLayers = x.RecomputeLayers
		res, err := Plan(context.Background(), one)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Candidates) > 0 {
			t.Errorf("searched: %+v got ZeRO %d although ZeRO 1 fits", x, x.ZeRO)
		}
	}
	for _, z := range []int{0, 1, 2, 3} {
		pinned := in
		pinned.ZeRO = &z
		res, err := Plan(context.Background(), pinned)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range res.Candidates {
			if c.Execution.ZeRO != z {
				t.Fatalf("pinned %d: candidate at %d", z, c.Execution.ZeRO)
			}
		}
		if z != 2 && len(res.Candidates) > 0 && res.Candidates[0].IterationSeconds < searched.Candidates[0].IterationSeconds {
			t.Errorf("ZeRO %d pinned: %.6g s beats the search's %.6g s", z, res.Candidates[0].IterationSeconds, searched.Candidates[0].IterationSeconds)
		}
	}
	// GPT-3 175B at t=8, p=2 on 32 GPUs (d=2): 10.9 B parameters per GPU,
	// over 80 GB with the distributed optimizer (6 + 12/2 bytes each), so
	// the configuration gets FSDP (fitting or not).
	in.Model, in.GlobalBatch = "gpt3-175b", 64
	in.TP, in.PP, in.Microbatch, in.Interleave, in.Recompute = 8, 2, 1, 1, "full"
	res, err := Plan(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	all := append(res.Candidates, res.Infeasible...)
	t.Logf("%+v fits %v (%s)", all[0].Execution, all[0].Fits, all[0].Reason)
	if res.Mode != "evaluate" || len(all) != 1 || all[0].Execution.ZeRO != 3 {
		t.Errorf("evaluate with ZeRO searched: mode %s, %d candidates, first %+v (%s)", res.Mode, len(all), all[0].Execution, res.Problem)
	}
}

// TestPlanEPDispatcher: the request's MoE dispatcher and all-to-all
// overlap reach the planned execution and its time. With 16 experts on ep
// 16 over two servers, alltoall sends each token's topk = 2 routed copies
// and half of them cross the network, DeepEP each token once to the other
// server when one of its experts is there (1 − C(8,2)/C(16,2) = 0.77 of
// tokens): DeepEP's all-to-all is shorter; overlapped, it is no longer
// than without.
func TestPlanEPDispatcher(t *testing.T) {
	in := request.Default().Plan
	in.Model, in.Custom = "custom", request.CustomModel{Layers: 8, Hidden: 1024, Heads: 16, Vocab: 32000, Experts: 16, TopK: 2, MoEFFN: 512}
	in.GPU, in.Nodes, in.GlobalBatch, in.Seq = "nvidia-h100-sxm5-80gb", 2, 64, 2048
	in.TP, in.PP, in.EP, in.Microbatch, in.Interleave, in.Recompute = 1, 1, 16, 1, 1, "none"
	ep := map[string]float64{}
	for _, c := range []struct {
		dispatcher string
		overlap    bool
	}{{"", false}, {"alltoall", false}, {"deepep", false}, {"deepep", true}} {
		in.EPDispatcher, in.OverlapEPComm = c.dispatcher, c.overlap
		res, err := Plan(context.Background(), in)
		if err != nil || len(res.Candidates) != 1 {
			t.Fatalf("%+v: %v %s", c, err, res.Problem)
		}
		x := res.Candidates[0]
		if x.Execution.EPDispatcher != c.dispatcher || x.Execution.Overlap.EPComm != c.overlap {
			t.Errorf("%+v: planned %q, overlap %v", c, x.Execution.EPDispatcher, x.Execution.Overlap.EPComm)
		}
		ep[fmt.Sprint(c.dispatcher, c.overlap)] = x.Breakdown.ExpertParallelSeconds
	}
	if ep["false"] != ep["alltoallfalse"] || !(ep["deepepfalse"] > 0 && ep["deepepfalse"] < ep["alltoallfalse"]) || ep["deepeptrue"] > ep["deepepfalse"] {
		t.Errorf("EP all-to-all seconds: %v; want default = alltoall > deepep >= deepep overlapped", ep)
	}
}

// TestPlanFP8ParamGather: the request's fp8_param_gather reaches the
// execution; with it Llama 3 8B in FP8 keeps its linear weights once in
// FP8 (only Transformer Engine's transposes extra), so its FP8 copies
// halve and its weights shrink by as many bytes; in bf16 nothing changes.
func TestPlanFP8ParamGather(t *testing.T) {
	in := request.Default().Plan
	in.Model, in.GPU, in.Nodes, in.GlobalBatch = "llama3-8b", "nvidia-h100-sxm5-80gb", 1, 64
	in.TP, in.PP, in.Microbatch, in.Interleave, in.Recompute = 1, 1, 1, 1, "full"
	stage := func(precision string, gather bool) (plan.Execution, cost.Memory) {
		in.Precision, in.FP8ParamGather = precision, gather
		res, err := Plan(context.Background(), in)
		if err != nil || len(res.Candidates)+len(res.Infeasible) == 0 {
			t.Fatalf("%s %v: %v %s", precision, gather, err, res.Problem)
		}
		return append(res.Candidates, res.Infeasible...)[0].Execution, res.StageMemory[0]
	}
	ex, off := stage("fp8", false)
	exOn, on := stage("fp8", true)
	if ex.FP8ParamGather || !exOn.FP8ParamGather {
		t.Fatalf("fp8_param_gather did not reach the execution: %v, %v", ex.FP8ParamGather, exOn.FP8ParamGather)
	}
	if !(on.FP8WeightBytes > 0) || math.Abs(off.FP8WeightBytes-2*on.FP8WeightBytes) > 1e-9*off.FP8WeightBytes ||
		math.Abs((off.WeightBytes-on.WeightBytes)-on.FP8WeightBytes) > 1e-9*on.FP8WeightBytes {
		t.Errorf("FP8 copies %.4g → %.4g bytes, weights %.4g → %.4g bytes", off.FP8WeightBytes, on.FP8WeightBytes, off.WeightBytes, on.WeightBytes)
	}
	if _, b := stage("bf16", true); b.FP8WeightBytes != 0 {
		t.Errorf("bf16 with fp8_param_gather: %.4g bytes of FP8 copies", b.FP8WeightBytes)
	}
}

// TestPlanMoEPresetFinite plans the qwen3-30b-a3b preset on two H100
// servers with t 8 and ep 2 pinned, the rest searched: the candidates with
// d 1 replicate the experts over an expert data-parallel group of 4 (t·d/ep)
// while the data-parallel group has one rank. Every row the Plan page
// shows, feasible or not, has a finite step time and breakdown (the
// experts' reduction was priced at a one-rank group's bandwidth of 0:
// +Inf rows).
func TestPlanMoEPresetFinite(t *testing.T) {
	in := request.Default().Plan
	in.Model, in.GPU, in.Nodes, in.Seq, in.GlobalBatch = "qwen3-30b-a3b", "nvidia-h100-sxm5-80gb", 2, 4096, 64
	in.TP, in.EP, in.Top = 8, 2, request.MaxTop
	res, err := Plan(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	replicated := 0
	for _, c := range append(res.Candidates, res.Infeasible...) {
		x, b := c.Execution, c.Breakdown
		if b == nil {
			t.Fatalf("tp %d pp %d dp %d: no breakdown", x.TP, x.PP, x.DP)
		}
		if x.DP*x.CP == 1 {
			replicated++
		}
		for _, part := range append(b.Parts(), cost.TimePart{Name: "step", Seconds: c.IterationSeconds}, cost.TimePart{Name: "TFLOP/s", Seconds: c.TFLOPSPerGPU}) {
			if math.IsInf(part.Seconds, 0) || math.IsNaN(part.Seconds) {
				t.Errorf("tp %d pp %d dp %d ep %d ZeRO-%d: %s %v", x.TP, x.PP, x.DP, x.EP, x.ZeRO, part.Name, part.Seconds)
			}
		}
	}
	if replicated == 0 {
		t.Errorf("no row with d·cp = 1 among %d candidates and %d infeasible: the test no longer covers the case", len(res.Candidates), len(res.Infeasible))
	}
}

// TestSequenceParallelByDefault: a request that leaves sequence_parallel
// out plans with it, as Megatron-LM recommends, and with the GPU's
// tensor-parallel overlap; turned off, the same configuration holds more
// activations, and the tensor-parallel overlap is off by default (Megatron-LM's
// --tp-comm-overlap requires sequence parallelism).
func TestSequenceParallelByDefault(t *testing.T) {
	off := false
	def := evaluateH100(t, func(*request.Plan) {})
	without := evaluateH100(t, func(p *request.Plan) { p.SequenceParallel = &off })
	if !def.Execution.SequenceParallel || !def.Execution.Overlap.TPComm {
		t.Errorf("default execution: sequence_parallel %v, tp_comm overlap %v; want both on", def.Execution.SequenceParallel, def.Execution.Overlap.TPComm)
	}
	if without.Execution.SequenceParallel || without.Execution.Overlap.TPComm {
		t.Errorf("sequence_parallel false: execution sequence_parallel %v, tp_comm overlap %v; want both off", without.Execution.SequenceParallel, without.Execution.Overlap.TPComm)
	}
	if !(without.Memory.ActivationBytes > def.Memory.ActivationBytes) {
		t.Errorf("activations %.4g B without sequence parallelism, %.4g B with: want more without", without.Memory.ActivationBytes, def.Memory.ActivationBytes)
	}
	in := request.Default().Plan
	in.GPU, in.SequenceParallel, in.TPCommOverlap = "nvidia-h100-sxm5-80gb", &off, new(bool)
	*in.TPCommOverlap = true
	if _, err := Plan(context.Background(), in); err == nil || !strings.Contains(err.Error(), "plan.tp_comm_overlap") {
		t.Errorf("tp_comm_overlap true without sequence parallelism: got %v, want an error naming plan.tp_comm_overlap", err)
	}
}
