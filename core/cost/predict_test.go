package cost

import (
	"math"
	"slices"
	"strings"
	"testing"

	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
	"pipeplan/gpuprofiles"
)

// TestPredictBubbleMatchesFormula checks that, for a balanced pipeline (no
// tensor parallelism, a nearly negligible output layer), the predicted
// fill/drain time over the ideal pipelined time is the schedule's
// (1/v)(p−1)/m. With one vocabulary entry the output layer still runs its
// final norm's memory-bound passes (logitSeconds), about 0.2 % of the last
// stage's time at p = 16, v = 3, which moves the ratio by as much there.
func TestPredictBubbleMatchesFormula(t *testing.T) {
	tr := model.Transformer{Layers: 48, Hidden: 4096, Heads: 32, Seq: 2048, Vocab: 1}
	c := dgxA100(t, 64)
	for _, k := range []struct{ p, v, B int }{{4, 1, 64}, {8, 1, 128}, {8, 2, 128}, {8, 3, 64}, {16, 3, 256}} {
		cfg := plan.Execution{TP: 1, PP: k.p, DP: 64 / k.p, MicrobatchSize: 1, GlobalBatch: k.B, Interleave: k.v}
		pr, err := Predict(tr, c, cfg, Options{})
		if err != nil {
			t.Fatalf("%+v: %v", k, err)
		}
		ideal := pr.Time.ComputeSeconds + pr.Time.TensorParallelSeconds + pr.Time.PipelineP2PSeconds
		got := pr.Time.BubbleSeconds / ideal
		if math.Abs(got-pr.BubbleFraction) > 3e-3*pr.BubbleFraction {
			t.Errorf("p=%d v=%d m=%d: bubble/ideal = %.5f, (1/v)(p−1)/m = %.5f", k.p, k.v, pr.Microbatches, got, pr.BubbleFraction)
		}
	}
}

// TestPredictStageMemory checks the stash and weight-version accounting of
// each schedule on a GPT with evenly split layers.
func TestPredictStageMemory(t *testing.T) {
	tr := gpt(32, 4096, 32)
	c := dgxA100(t, 32)
	base := plan.Execution{TP: 2, PP: 8, DP: 2, MicrobatchSize: 2, GlobalBatch: 64, SequenceParallel: true}
	layer := tr.LayerActivationBytes(2, model.ActivationOptions{TP: 2, SequenceParallel: true})
	emb := tr.EmbeddingActivationBytes(2, model.ActivationOptions{TP: 2, SequenceParallel: true})
	predict := func(mut func(*plan.Execution)) Prediction {
		cfg := base
		mut(&cfg)
		pr, err := Predict(tr, c, cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return pr
	}
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9*want {
			t.Errorf("%s: %g, want %g", name, got, want)
		}
	}
	// 1F1B: stage 0 holds p microbatches of its L/p layers = L layers' worth
	// (Korthikanti et al. 2022 §4.3), stage i holds p−i.
	f := predict(func(*plan.Execution) {})
	near("1f1b stage 0 activations", f.StageMemory[0].ActivationBytes, 32*layer+8*emb)
	near("1f1b stage 3 activations", f.StageMemory[3].ActivationBytes, 5*4*layer)
	// GPipe: all m = 16 microbatches.
	g := predict(func(c *plan.Execution) { c.Schedule = schedule.GPipe })
	near("gpipe stage 3 activations", g.StageMemory[3].ActivationBytes, 16*4*layer)
	// Interleaved, v = 2: the first stage holds L(1 + (p−1)/(pv)) layers (§4.2.3).
	iv := predict(func(c *plan.Execution) { c.Interleave = 2 })
	// Rank 0 stashes 2(p−1) + (v−1)p + 1 = 23 chunk-microbatches; 15 of them
	// (microbatches 0–7 and 8–14) are of chunk 0, which holds the embedding.
	near("interleaved stage 0 activations", iv.StageMemory[0].ActivationBytes, 32*(1+7.0/16)*layer+15*emb)
	// 2BW keeps two weight versions; PipeDream p−i.
	b := predict(func(c *plan.Execution) { c.Schedule = schedule.TwoBW; c.MicrobatchSize = 1; c.GlobalBatch = 16 })
	near("2bw weights", b.StageMemory[3].WeightBytes, 2*f.StageMemory[3].WeightBytes)
	if _, err := Predict(tr, c, plan.Execution{TP: 2, PP: 8, DP: 2, MicrobatchSize: 2, GlobalBatch: 16, Schedule: schedule.TwoBW}, Options{}); err == nil {
		t.Error("2bw with m = 4 < p = 8: no error")
	}
	pd := predict(func(c *plan.Execution) { c.Schedule = schedule.PipeDream })
	near("pipedream stage 3 weights", pd.StageMemory[3].WeightBytes, 5*f.StageMemory[3].WeightBytes)
	// Mixed-precision Adam: 2 + 2 + 12 B/param; fp32 gradients: 18; ZeRO-1 shards the 12.
	params := 4 * tr.LayerParams() / 2
	near("weights", f.StageMemory[3].WeightBytes, 2*params)
	near("model state", f.StageMemory[3].WeightBytes+f.StageMemory[3].GradientBytes+f.StageMemory[3].OptimizerBytes, 16*params)
	f18 := predict(func(c *plan.Execution) { c.Optimizer = string(MixedAdamFP32Grads) })
	near("model state, fp32 grads", f18.StageMemory[3].WeightBytes+f18.StageMemory[3].GradientBytes+f18.StageMemory[3].OptimizerBytes, 18*params)
	z1 := predict(func(c *plan.Execution) { c.ZeRO = 1 })
	near("ZeRO-1 optimizer state", z1.StageMemory[3].OptimizerBytes, 12*params/2)
	// The most loaded GPU is reported.
	for _, s := range f.StageMemory {
		if s.PeakBytes > f.Memory.PeakBytes {
			t.Errorf("stage %d peak %g exceeds the reported most loaded %g", s.Stage, s.PeakBytes, f.Memory.PeakBytes)
		}
	}
}

// TestPredictRecomputeOrdering checks that recomputation trades time for
// memory in the expected order and that sequence parallelism saves memory.
func TestPredictRecomputeOrdering(t *testing.T) {
	tr := gpt(40, 6144, 48)
	c := dgxA100(t, 64)
	run := func(r model.Recompute, sp bool) Prediction {
		pr, err := Predict(tr, c, plan.Execution{TP: 8, PP: 4, DP: 2, MicrobatchSize: 1, GlobalBatch: 64, Recompute: r, SequenceParallel: sp}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return pr
	}
	none, sel, full := run(model.RecomputeNone, false), run(model.RecomputeSelective, false), run(model.RecomputeFull, false)
	if !(none.IterationSeconds < sel.IterationSeconds && sel.IterationSeconds < full.IterationSeconds) {
		t.Errorf("iteration seconds none %.3f, selective %.3f, full %.3f: want increasing", none.IterationSeconds, sel.IterationSeconds, full.IterationSeconds)
	}
	if !(none.Memory.ActivationBytes > sel.Memory.ActivationBytes && sel.Memory.ActivationBytes > full.Memory.ActivationBytes) {
		t.Errorf("activations none %g, selective %g, full %g: want decreasing", none.Memory.ActivationBytes, sel.Memory.ActivationBytes, full.Memory.ActivationBytes)
	}
	if sp := run(model.RecomputeSelective, true); sp.Memory.ActivationBytes >= sel.Memory.ActivationBytes {
		t.Errorf("sequence parallelism: %g activation bytes, without %g", sp.Memory.ActivationBytes, sel.Memory.ActivationBytes)
	}
	// MFU counts model FLOPs only: the same for all three, so it falls with recomputation.
	if !(none.MFU > full.MFU) || none.ModelFLOPsPerIteration != full.ModelFLOPsPerIteration {
		t.Errorf("MFU none %.3f full %.3f, model FLOPs %g vs %g", none.MFU, full.MFU, none.ModelFLOPsPerIteration, full.ModelFLOPsPerIteration)
	}
	z3, err := Predict(tr, c, plan.Execution{TP: 8, PP: 4, DP: 2, MicrobatchSize: 1, GlobalBatch: 64, ZeRO: 3}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range []Prediction{none, sel, full, z3} {
		b := pr.Time
		if sum := b.ComputeSeconds + b.TensorParallelSeconds + b.PipelineP2PSeconds + b.ZeRO3GatherSeconds + b.BubbleSeconds + b.DataParallelSeconds + b.OptimizerSeconds; math.Abs(sum-pr.IterationSeconds) > 1e-9*sum {
			t.Errorf("time breakdown sums to %g, iteration %g", sum, pr.IterationSeconds)
		}
		if want := float64(64*2048) / pr.IterationSeconds; math.Abs(pr.TokensPerSec-want) > 1e-9*want {
			t.Errorf("tokens/s %g, want B·s/iteration = %g", pr.TokensPerSec, want)
		}
	}
}

// TestZeRO3GathersWeightsOnlyPerMicrobatch: ZeRO-1 and -2 gather the
// updated weights once after the step; stage 3 keeps them sharded and
// gathers them before each forward and backward instead, so its exposed
// data-parallel time (overlaps off) is the gradient reduce-scatters alone:
// ZeRO-2's minus one all-gather of the weights.
func TestZeRO3GathersWeightsOnlyPerMicrobatch(t *testing.T) {
	tr := gpt(40, 6144, 48)
	c := dgxA100(t, 64)
	dp := func(zero int) (Prediction, float64) {
		pr, err := Predict(tr, c, plan.Execution{TP: 8, PP: 4, DP: 2, MicrobatchSize: 1, GlobalBatch: 64, ZeRO: zero}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return pr, pr.Time.DataParallelSeconds
	}
	_, two := dp(2)
	z3, three := dp(3)
	if z3.Time.ZeRO3GatherSeconds <= 0 {
		t.Fatalf("ZeRO-3 charges no per-microbatch gathers: %+v", z3.Time)
	}
	if !(three > 0 && three < two) {
		t.Fatalf("exposed data-parallel time: ZeRO-3 %g s, ZeRO-2 %g s; want 0 < ZeRO-3 < ZeRO-2", three, two)
	}
	// The gradients are at least as wide as the weights, and there are
	// m = 32 reduce-scatters to one all-gather: ZeRO-2's time is at most
	// 33/32 of ZeRO-3's.
	if r := two / three; r > 33.0/32+1e-12 {
		t.Errorf("ZeRO-2 / ZeRO-3 data-parallel time = %.4f, want at most 33/32", r)
	}
}

// TestZeRO3HoldsTwoGatheredLayers: under ZeRO-3 a GPU holds its shard of
// the weights plus two whole layers (the one computing and the prefetched
// next, ZeRO3GatheredLayers), each layer's linear weights split over t in
// 16-bit: GPT's 12h² per layer by hand (its biases, 9h, within 0.1 %).
func TestZeRO3HoldsTwoGatheredLayers(t *testing.T) {
	tr := gpt(40, 6144, 48)
	c := dgxA100(t, 64)
	pr, err := Predict(tr, c, plan.Execution{TP: 8, PP: 4, DP: 2, MicrobatchSize: 1, GlobalBatch: 64, ZeRO: 3}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := float64(tr.Hidden)
	want := 2 * 2 * 12 * h * h / 8          // two layers, 2 bytes, split over t = 8
	want += 2 * 1 * float64(tr.Seq) * h * 2 // the pipeline's two receive buffers, b·s·h in 16-bit
	if len(pr.StageMemory) != 4 {
		t.Fatalf("%d stages' memory, want 4", len(pr.StageMemory))
	}
	for _, m := range pr.StageMemory {
		if got := m.CommBufferBytes; math.Abs(got-want) > 1e-3*want {
			t.Errorf("stage %d: communication buffers %.6g B, want two gathered layers and the p2p buffers %.6g B", m.Stage, got, want)
		}
	}
}

// TestZeRO2ReduceScattersEveryMicrobatch checks ZeRO-2's gradient
// reduce-scatter by hand on one stage of a 0.39B GPT, replicated on two
// servers of one A100 over a 1 GB/s network: its P parameters' 2-byte
// gradients cross the network in a ring of two, (2−1)/2·2P bytes at 0.8 of
// 1 GB/s plus one 2 µs step, X seconds. Without overlap ZeRO-2 pays m = 8
// of them (one per microbatch) and the weights' all-gather after the step,
// the same X: 9X; ZeRO-1 one and the gather, 2X. The network is so slow
// that every reduction outlasts the compute it overlaps, so overlap hides
// exactly that compute: for ZeRO-2, each of the 7 earlier reduce-scatters a
// whole microbatch's forward and backward, the last one the backward and
// the gather the forward — all the step's compute; for ZeRO-1 one
// microbatch's.
func TestZeRO2ReduceScattersEveryMicrobatch(t *testing.T) {
	tr := gpt(24, 1024, 16)
	g, err := gpuprofiles.ByID("nvidia-a100-sxm4-80gb")
	if err != nil {
		t.Fatal(err)
	}
	c, err := hw.NewCluster(g, 1, 2, 1e9)
	if err != nil {
		t.Fatal(err)
	}
	const m = 8
	P := tr.Params()
	X := 0.5*2*P/(0.8*1e9) + 2e-6
	for _, z := range []struct {
		zero int
		want float64 // exposed data-parallel seconds without overlap
		hide float64 // what overlap hides, in microbatches' compute
	}{{1, 2 * X, 1}, {2, (m + 1) * X, m}} {
		var dp [2]float64
		var compute float64
		for k, overlap := range []bool{false, true} {
			pr, err := Predict(tr, c, plan.Execution{TP: 1, PP: 1, DP: 2, MicrobatchSize: 1, GlobalBatch: 2 * m, ZeRO: z.zero,
				Overlap: plan.Overlap{GradReduce: overlap, ParamGather: overlap}}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			dp[k], compute = pr.Time.DataParallelSeconds, pr.Time.ComputeSeconds
		}
		if math.Abs(dp[0]-z.want) > 1e-9*z.want {
			t.Errorf("ZeRO-%d without overlap: %.6g s exposed, by hand %.6g s (X = %.6g s)", z.zero, dp[0], z.want, X)
		}
		if hidden, want := dp[0]-dp[1], z.hide*compute/m; math.Abs(hidden-want) > 1e-9*want {
			t.Errorf("ZeRO-%d: overlap hides %.6g s, want %g microbatches' compute = %.6g s", z.zero, hidden, z.hide, want)
		}
	}
}

func TestPredictErrors(t *testing.T) {
	tr := gpt(32, 4096, 32)
	c := dgxA100(t, 32)
	ok := plan.Execution{TP: 2, PP: 4, DP: 4, MicrobatchSize: 1, GlobalBatch: 64, Interleave: 1}
	cases := []struct {
		mut  func(*plan.Execution)
		want string
	}{
		{func(c *plan.Execution) { c.DP = 2 }, "tp·pp·cp·dp must equal the cluster's 32 GPUs"},
		{func(c *plan.Execution) { c.TP = 0 }, "execution.tp: must be >= 1, got 0"},
		{func(c *plan.Execution) { c.GlobalBatch = 30 }, "execution.global_batch: must be a multiple of dp·microbatch_size = 4·1"},
		{func(c *plan.Execution) { c.Interleave = 2; c.GlobalBatch = 24 }, "multiple of pp"},
		{func(c *plan.Execution) { c.Interleave = 2; c.Schedule = schedule.GPipe }, "execution.schedule"},
		{func(c *plan.Execution) { c.Recompute = "some" }, "execution.recompute"},
		{func(c *plan.Execution) { c.Optimizer = "lion" }, "execution.optimizer"},
		{func(c *plan.Execution) { c.ZeRO = 4 }, "execution.zero"},
		{func(c *plan.Execution) { c.Schedule = "zigzag" }, "execution.schedule"},
		{func(c *plan.Execution) { c.PP, c.DP, c.Interleave = 32, 1, 2; c.TP = 1; c.GlobalBatch = 64 }, "execution.pp: pp × 2 chunks per device must be <="},
		{func(c *plan.Execution) { c.CP = 2 }, "tp·pp·cp·dp must equal the cluster's 32 GPUs, got 2·4·2·4"},
		{func(c *plan.Execution) { c.EP = 4 }, "execution.ep: expert parallelism needs a mixture-of-experts model, got 4"},
		{func(c *plan.Execution) { c.CP = 3; c.DP = 1 }, "execution.cp: the sequence"},
		{func(c *plan.Execution) { c.CP = -1 }, "execution.cp: must be >= 1, got -1"},
	}
	for _, k := range cases {
		cfg := ok
		k.mut(&cfg)
		_, err := Predict(tr, c, cfg, Options{})
		if err == nil || !strings.Contains(err.Error(), k.want) {
			t.Errorf("%+v: error %v, want one containing %q", cfg, err, k.want)
		}
	}
	bad := []struct {
		opt  Options
		want string
	}{
		{Options{Efficiency: &EfficiencyCurve{}}, "efficiency.points"},
		{Options{Comm: &Comm{BandwidthEfficiency: 2}}, "options.comm.bandwidth_efficiency"},
		{Options{MemoryBandwidthEfficiency: -1}, "options.memory_bandwidth_efficiency"},
		{Options{ReserveBytes: 1e15}, "options.reserve_bytes"},
		{Options{ExpertSeconds: new(-1e-3)}, "options.expert_seconds: must be in [0, 1), got -0.001"},
	}
	for _, k := range bad {
		if _, err := Predict(tr, c, ok, k.opt); err == nil || !strings.Contains(err.Error(), k.want) {
			t.Errorf("%+v: error %v, want one containing %q", k.opt, err, k.want)
		}
	}
	odd := model.Transformer{Layers: 8, Hidden: 3072, Heads: 24, Seq: 2048, Vocab: 51200}
	if _, err := Predict(odd, c, plan.Execution{TP: 16, PP: 2, DP: 1, MicrobatchSize: 1, GlobalBatch: 8}, Options{}); err == nil || !strings.Contains(err.Error(), "execution.tp: must divide the 24 attention heads") {
		t.Errorf("tp=16 with 24 heads: error %v", err)
	}
	fp8 := tr
	fp8.Precision = model.FP8
	if _, err := Predict(fp8, c, ok, Options{}); err == nil || !strings.Contains(err.Error(), "fp8") {
		t.Errorf("fp8 on A100: error %v, want one naming fp8", err)
	}
}

// FuzzPredict checks that no combination of dimensions and degrees panics
// or yields a NaN/negative prediction.
func FuzzPredict(f *testing.F) {
	f.Add(32, 4096, 32, 2048, 51200, 2, 4, 4, 1, 64, 1, uint8(2), true, 0, uint8(0))
	f.Add(1, 8, 1, 1, 1, 1, 1, 32, 1, 32, 1, uint8(0), false, 3, uint8(1))
	f.Add(128, 25600, 160, 2048, 51200, 8, 4, 1, 1, 8, 2, uint8(1), true, 1, uint8(3))
	f.Add(32, 4096, 32, 2048, 51200, 2, 4, 4, 1, 64, 1, uint8(0), false, 0, uint8(4))
	f.Add(32, 4096, 32, 2048, 51200, 2, 4, 4, 1, 64, 1, uint8(2), true, 1, uint8(8)) // zb-v
	f.Add(32, 4096, 32, 2048, 51200, 2, 4, 4, 1, 64, 1, uint8(2), true, 1, uint8(9)) // dualpipe-v
	c := dgxA100(f, 32)
	recs := []model.Recompute{model.RecomputeNone, model.RecomputeSelective, model.RecomputeFull}
	scheds := append([]schedule.Kind{""}, schedule.Kinds...) // "", gpipe, 1f1b, interleaved, 2bw, pipedream, …
	f.Fuzz(func(t *testing.T, l, h, a, s, V, tp, pp, dp, b, B, v int, rec uint8, sp bool, zero int, sched uint8) {
		tr := model.Transformer{Layers: l, Hidden: h, Heads: a, Seq: s, Vocab: V}
		cfg := plan.Execution{TP: tp, PP: pp, DP: dp, MicrobatchSize: b, GlobalBatch: B, Interleave: v,
			Recompute: recs[int(rec)%3], SequenceParallel: sp, ScatterGather: sp, ZeRO: zero, Schedule: scheds[int(sched)%len(scheds)]}
		pr, err := Predict(tr, c, cfg, Options{})
		if err != nil {
			return
		}
		for name, x := range map[string]float64{"iteration": pr.IterationSeconds, "tflops": pr.TFLOPSPerGPU,
			"mfu": pr.MFU, "peak": pr.Memory.PeakBytes, "bubble": pr.BubbleFraction, "activations": pr.Memory.ActivationBytes} {
			if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
				t.Fatalf("%+v %+v: %s = %v", tr, cfg, name, x)
			}
		}
		if pr.IterationSeconds <= 0 {
			t.Fatalf("%+v %+v: iteration %v s", tr, cfg, pr.IterationSeconds)
		}
	})
}

// TestChunkLayers: the chunks hold every layer, differ by at most one, and
// the shorter ones sit at both ends, the first first; 126 Llama 3 layers
// on 16 stages give the first and last 7 and the others 8 (Llama 3 paper
// §3.3.2).
func TestChunkLayers(t *testing.T) {
	for l := 1; l <= 60; l++ {
		for chunks := 1; chunks <= l && chunks <= 32; chunks++ {
			got := ChunkLayers(l, chunks)
			total, lo, hi := 0, l, 0
			for _, n := range got {
				total += n
				lo, hi = min(lo, n), max(hi, n)
			}
			if total != l || hi-lo > 1 || lo < 1 {
				t.Fatalf("l=%d, %d chunks: %v", l, chunks, got)
			}
			// Shorter chunks form a prefix and a suffix, the prefix at least as long.
			pre, suf := 0, 0
			for pre < chunks && got[pre] == lo && lo < hi {
				pre++
			}
			for suf < chunks && got[chunks-1-suf] == lo && lo < hi {
				suf++
			}
			if short := chunks*hi - l; lo < hi && (pre+suf != short || pre < suf || pre > suf+1) {
				t.Errorf("l=%d, %d chunks: %v, want the %d shorter ones at both ends", l, chunks, got, short)
			}
		}
	}
	want := []int{7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7}
	if got := ChunkLayers(126, 16); !slices.Equal(got, want) {
		t.Errorf("Llama 3 405B on 16 stages: %v, want %v", got, want)
	}
}
