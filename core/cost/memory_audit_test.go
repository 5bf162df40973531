package cost

import (
	"math"
	"testing"

	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/gpuprofiles"
	"pipeplan/modelprofiles"
)

// TestLlama405BMetaLayoutMemory audits the memory of Llama 3 405B BF16 at
// the Llama 3 paper's layout (Table 4 row 2: 16,384 H100, t 8, p 16, d 128,
// s 8192, 16 sequences per data-parallel rank; §3.3.2: 126 layers as 16 × 8
// chunks of one layer, the first and last holding only the embedding and
// the output; no activation recomputation) against the arithmetic of
// Megatron-LM's theoretical_memory_usage.py and the paper's sharding.
//
// Stage 0 holds 7 layers and the embedding: P0 = (7·L + V·h)/t parameters
// (L = 3.2B per layer, V·h = 2.1B; P0 = 3.07B per GPU). Mixed precision
// keeps 2 B of bf16 weights, 4 B of fp32 gradients and 12 B of fp32
// master weights and Adam moments per parameter (18 B;
// theoretical_memory_usage.py: 6 + 12/d with the distributed optimizer).
// With Megatron's distributed optimizer (ZeRO-1) that is 2 + 4 + 12/128 =
// 6.09 B × 3.07B = 17.4 GiB of state; the paper's FSDP also shards the
// gradients ("shards the optimizer states and gradients", ZeRO-2): 2 +
// 16/128 = 2.13 B, 6.1 GiB, plus one 40M/t-parameter bucket of fp32
// gradients whole before its reduce-scatter (20 MB). The interleaved schedule with m = 16 = p
// microbatches runs all 16 × 8 chunk forwards before the first backward
// (warm-up 2(p−1) + (v−1)p = 142 ≥ m·v = 128), so stage 0 stashes 16 × 7 =
// 112 layer-microbatches of 0.497 GiB (TestLlama405BLayerStash's tensor
// list) = 55.6 GiB plus the embedding's outputs, and stage 1 (8 layers)
// 128 = 63.6 GiB, the worst. So without recomputation the count is 81.7
// GiB with ZeRO-1 — over 80 GiB even before the 5 GiB reserve, which is
// why full recomputation was chosen before — and 70.0 GiB with the
// paper's ZeRO-2, which fits, as Meta trained it: our count was right, the
// sharding assumed for this run was not.
func TestLlama405BMetaLayoutMemory(t *testing.T) {
	tr, _, err := modelprofiles.Transformer("llama3-405b")
	if err != nil {
		t.Fatal(err)
	}
	tr.Seq = 8192
	g, err := gpuprofiles.ByID("nvidia-h100-sxm5-80gb")
	if err != nil {
		t.Fatal(err)
	}
	c, err := hw.NewCluster(g, 8, 2048, 50e9)
	if err != nil {
		t.Fatal(err)
	}
	const tp, d = 8.0, 128.0
	p0 := (7*tr.LayerParams() + float64(tr.Vocab)*float64(tr.Hidden)) / tp
	layer := 8192 * (4*2*16384/tp + 2*(2*16384+2*1024)/tp + 4*128/tp + 3*2*53248/tp) // TestLlama405BLayerStash
	for _, z := range []struct {
		zero      int
		gradients float64 // bytes per parameter on the GPU
		bucket    float64 // bytes of the bucket being reduced
		fits      bool
	}{{1, 4, 0, false}, {2, 4 / d, 4 * DefaultBucketParams / tp, true}} {
		ex := plan.Execution{TP: 8, PP: 16, DP: 128, Interleave: 8, MicrobatchSize: 1, GlobalBatch: 2048, Recompute: model.RecomputeNone,
			ZeRO: z.zero, Optimizer: string(MixedAdamFP32Grads), SequenceParallel: true, FlashAttention: true}
		pr, err := Predict(tr, c, ex, Options{})
		if err != nil {
			t.Fatal(err)
		}
		m := pr.StageMemory[0]
		for _, part := range []struct {
			name      string
			got, want float64
		}{{"weights", m.WeightBytes, 2 * p0}, {"gradients", m.GradientBytes, z.gradients*p0 + z.bucket}, {"optimizer", m.OptimizerBytes, 12 / d * p0}} {
			if math.Abs(part.got-part.want) > 1e-9*part.want {
				t.Errorf("zero %d: stage 0 %s %.4g bytes, the arithmetic gives %.4g", z.zero, part.name, part.got, part.want)
			}
		}
		if m.ActivationBytes < 112*layer {
			t.Errorf("zero %d: stage 0 activations %.1f GiB < the 112 stashed layer-microbatches' %.1f GiB", z.zero, m.ActivationBytes/(1<<30), 112*layer/(1<<30))
		}
		if pr.Memory.Fits() != z.fits {
			t.Errorf("zero %d: fits = %v with %.1f GiB + %.1f GiB reserve, want %v", z.zero, pr.Memory.Fits(), pr.Memory.PeakBytes/(1<<30), pr.Memory.ReserveBytes/(1<<30), z.fits)
		}
		w := pr.Memory
		t.Logf("zero %d: worst stage %d %.1f GiB (weights %.1f, gradients %.1f, optimizer %.1f, activations %.1f) + %.1f GiB reserve",
			z.zero, w.Stage, w.PeakBytes/(1<<30), w.WeightBytes/(1<<30), w.GradientBytes/(1<<30), w.OptimizerBytes/(1<<30), w.ActivationBytes/(1<<30), w.ReserveBytes/(1<<30))
	}
}

// TestFP8WeightCopiesMemory checks Transformer Engine's FP8 weight copies
// by hand. A GPT layer's linear weights are QKV 3h²+3h, the projection
// h²+h and the MLP 4h²+4h and 4h²+h: 12h²+9h (its two layer norms, 4h,
// stay bf16). With 24 layers on p = 2 stages and t = 2, stage 0 holds 12
// layers of (12h²+9h)/2 per GPU, and TE keeps 1 byte of FP8 copy and 1 of
// transpose for each, under ZeRO-1 and -2 alike (not sharded); under
// ZeRO-3 only for the one gathered layer. With FP8ParamGather the FP8
// copy is the weight: the bf16 weights shrink by 1 byte per linear weight
// and only the transpose is extra. An MoE layer of E = 8 experts on ep = 2
// holds the attention (4h²+4h, over t) and E/ep experts (2hf+f+h each);
// its router (h·E) stays bf16. BF16 runs keep none.
func TestFP8WeightCopiesMemory(t *testing.T) {
	g, err := gpuprofiles.ByID("nvidia-h100-sxm5-80gb")
	if err != nil {
		t.Fatal(err)
	}
	c, err := hw.NewCluster(g, 8, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	const h, f = 1024.0, 2048.0
	layer := (12*h*h + 9*h) / 2
	stage0 := func(tr model.Transformer, ex plan.Execution) Memory {
		t.Helper()
		pr, err := Predict(tr, c, ex, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return pr.StageMemory[0]
	}
	ex := plan.Execution{TP: 2, PP: 2, DP: 2, MicrobatchSize: 1, GlobalBatch: 8, FlashAttention: true}
	fp8 := gpt(24, 1024, 16)
	fp8.Precision = model.FP8
	bf16 := stage0(gpt(24, 1024, 16), ex)
	if bf16.FP8WeightBytes != 0 {
		t.Errorf("bf16: %g bytes of FP8 copies, want none", bf16.FP8WeightBytes)
	}
	for _, z := range []struct {
		zero   int
		gather bool
		copies float64 // bytes of FP8 copies and transposes by hand
		weight float64 // bf16 weight bytes saved
	}{
		{1, false, 2 * 12 * layer, 0},
		{2, false, 2 * 12 * layer, 0},
		{3, false, 2 * layer, 0},
		{1, true, 12 * layer, 12 * layer},
		{3, true, layer, 12 * layer / 2}, // the sharded weights halve too
	} {
		ex := ex
		ex.ZeRO, ex.FP8ParamGather = z.zero, z.gather
		ex16 := ex
		m, m16 := stage0(fp8, ex), stage0(gpt(24, 1024, 16), ex16)
		if math.Abs(m.FP8WeightBytes-z.copies) > 1e-9*z.copies {
			t.Errorf("ZeRO-%d, fp8_param_gather %v: %.6g bytes of FP8 copies, by hand %.6g", z.zero, z.gather, m.FP8WeightBytes, z.copies)
		}
		if saved := m16.WeightBytes - m.WeightBytes; math.Abs(saved-z.weight) > 1e-9*max(z.weight, 1) {
			t.Errorf("ZeRO-%d, fp8_param_gather %v: weights %.6g bytes under bf16's, by hand %.6g", z.zero, z.gather, saved, z.weight)
		}
		if m.GradientBytes != m16.GradientBytes || m.OptimizerBytes != m16.OptimizerBytes {
			t.Errorf("ZeRO-%d: FP8 changed gradients or optimizer state: %+v vs %+v", z.zero, m, m16)
		}
	}
	moe := gpt(4, 1024, 16)
	moe.Precision, moe.MoE = model.FP8, &model.MoE{Experts: 8, TopK: 2, FFN: 2048}
	m := stage0(moe, plan.Execution{TP: 1, PP: 2, DP: 4, EP: 2, MicrobatchSize: 1, GlobalBatch: 8, FlashAttention: true, ZeRO: 1})
	if want := 2 * 2 * (4*h*h + 4*h + 8.0/2*(2*h*f+f+h)); math.Abs(m.FP8WeightBytes-want) > 1e-9*want {
		t.Errorf("MoE: %.6g bytes of FP8 copies, by hand %.6g", m.FP8WeightBytes, want)
	}
}
