package cost

import (
	"math"
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/plan"
)

// TestUnfusedAttentionTraffic checks the unfused attention core's time
// against its kernels listed one by one (Megatron-LM's CoreAttention with
// its fused causal softmax and dropout): bytes moved per s×s score in 16-bit,
// forward and backward. With the batched GEMMs' FLOPs free the core takes
// that traffic at the achievable bandwidth; with them slow, the GEMMs'
// own time replaces the traffic they carry.
func TestUnfusedAttentionTraffic(t *testing.T) {
	fwdKernels := map[string]float64{
		"QKᵀ writes the scores":             2,
		"softmax reads the lower triangle":  1,
		"softmax writes the probabilities":  2,
		"dropout reads the probabilities":   2,
		"dropout writes its output":         2,
		"dropout writes its mask":           1,
		"attention over V reads the output": 2,
	}
	bwdKernels := map[string]float64{
		"dO·Vᵀ writes dP":                     2,
		"dV reads the dropout output":         2,
		"dropout backward reads dP":           2,
		"dropout backward reads the mask":     1,
		"dropout backward writes":             2,
		"softmax backward reads the gradient": 1, // the lower triangle
		"softmax backward reads its output":   1, // the lower triangle
		"softmax backward writes dS":          2,
		"dQ reads dS":                         2,
		"dK reads dS":                         2,
	}
	const gemmCarried = 2 // of the forward's (and half the backward's) bytes, moved by a GEMM: QKᵀ, AV; dP, dV, dQ, dK
	sum := func(m map[string]float64) (s float64) {
		for _, b := range m {
			s += b
		}
		return s
	}
	// 22B of Korthikanti et al. 2022: t 8, microbatch 4, 64 heads, s 2048.
	tr := model.Transformer{Layers: 48, Hidden: 6144, Heads: 64, Seq: 2048, Vocab: 51200, Precision: model.FP16}
	e, err := newEvaluator(tr, dgxA100(t, 8), plan.Execution{TP: 8, PP: 1, DP: 1, MicrobatchSize: 4, GlobalBatch: 4}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	scores := 4.0 * 64 * 2048 * 2048 / 8
	fwd, bwd := e.unfusedAttentionSeconds(0)
	if want := sum(fwdKernels) * scores / e.memBW; math.Abs(fwd/want-1) > 1e-9 {
		t.Errorf("forward without GEMM time: %.3g s, want %.3g s (%.0f B per score)", fwd, want, sum(fwdKernels))
	}
	if want := sum(bwdKernels) * scores / e.memBW; math.Abs(bwd/want-1) > 1e-9 {
		t.Errorf("backward without GEMM time: %.3g s, want %.3g s (%.0f B per score)", bwd, want, sum(bwdKernels))
	}
	const slow = 10.0 // seconds: far beyond any traffic
	fwd, bwd = e.unfusedAttentionSeconds(slow)
	if want := slow + (sum(fwdKernels)-2*gemmCarried)*scores/e.memBW; math.Abs(fwd/want-1) > 1e-9 {
		t.Errorf("forward with slow GEMMs: %.6g s, want %.6g s", fwd, want)
	}
	if want := 2*slow + (sum(bwdKernels)-4*gemmCarried)*scores/e.memBW; math.Abs(bwd/want-1) > 1e-9 {
		t.Errorf("backward with slow GEMMs: %.6g s, want %.6g s", bwd, want)
	}
	// Without dropout its two passes go: 5 B forward and backward.
	tr.NoDropout = true
	if e, err = newEvaluator(tr, dgxA100(t, 8), plan.Execution{TP: 8, PP: 1, DP: 1, MicrobatchSize: 4, GlobalBatch: 4}, Options{}); err != nil {
		t.Fatal(err)
	}
	fwd, bwd = e.unfusedAttentionSeconds(0)
	if want := (sum(fwdKernels) - 5) * scores / e.memBW; math.Abs(fwd/want-1) > 1e-9 {
		t.Errorf("forward without dropout: %.3g s, want %.3g s", fwd, want)
	}
	if want := (sum(bwdKernels) - 5) * scores / e.memBW; math.Abs(bwd/want-1) > 1e-9 {
		t.Errorf("backward without dropout: %.3g s, want %.3g s", bwd, want)
	}
}

// TestTPBackwardOverlap counts one layer's tensor-parallel collectives per
// microbatch as Megatron-LM 2022 issues them (megatron/mpu/layers.py) and
// checks which stay exposed with plan.Overlap.TPBackward: all of them when
// the column-parallel GEMMs take no time, only the forward's (and, with
// sequence parallelism, the row-parallel layers' backward all-gathers)
// when those GEMMs outlast every collective. Times are in units of one
// b·s·h all-reduce (two all-gathers or reduce-scatters).
func TestTPBackwardOverlap(t *testing.T) {
	tr := model.Transformer{Layers: 48, Hidden: 6144, Heads: 64, Seq: 2048, Vocab: 51200, Precision: model.FP16}
	for _, tc := range []struct {
		name              string
		sp                bool
		rc                model.Recompute
		exposed, overlaid float64 // all-reduces exposed with no GEMM time, and with long GEMMs
	}{
		// forward: g all-reduces after attention and MLP (2); backward: f
		// all-reduces of the QKV and MLP-up input gradients (2), each
		// behind its weight-gradient GEMM.
		{"tensor parallel", false, model.RecomputeNone, 2 + 2, 2},
		// full recomputation repeats the forward's two.
		{"tensor parallel, full recomputation", false, model.RecomputeFull, 4 + 2, 4},
		// forward: 2 all-gathers + 2 reduce-scatters; backward: 2
		// all-gathers of the row-parallel output gradients (exposed), 2
		// re-gathers of the saved input shards (behind the input-gradient
		// GEMMs) and 2 reduce-scatters (behind the weight-gradient GEMMs).
		{"sequence parallel", true, model.RecomputeSelective, (4 + 2 + 4) / 2.0, (4 + 2) / 2.0},
	} {
		e, err := newEvaluator(tr, dgxA100(t, 8), plan.Execution{TP: 8, PP: 1, DP: 1, MicrobatchSize: 4, GlobalBatch: 4,
			SequenceParallel: tc.sp, Recompute: tc.rc, Overlap: plan.Overlap{TPBackward: true}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		ar := e.tpAllReduceSeconds()
		if got := e.tpBackwardOverlapped([]float64{0, 0}); math.Abs(got/ar-tc.exposed) > 1e-9 {
			t.Errorf("%s, no GEMM time: %.3f all-reduces exposed, want %.1f", tc.name, got/ar, tc.exposed)
		}
		if got := e.tpBackwardOverlapped([]float64{1, 1}); math.Abs(got/ar-tc.overlaid) > 1e-9 {
			t.Errorf("%s, long GEMMs: %.3f all-reduces exposed, want %.1f", tc.name, got/ar, tc.overlaid)
		}
		// The evaluator's layer time takes the QKV and MLP-up GEMMs as the
		// windows: at this size they outlast the collectives.
		if got := e.kindTime[0].tp; math.Abs(got/ar-tc.overlaid) > 1e-9 {
			t.Errorf("%s: layer's exposed TP time %.3f all-reduces, want %.1f", tc.name, got/ar, tc.overlaid)
		}
	}
}

// TestUnfusedGradAccumulation checks the 2021 runs' accumulation pass: per
// microbatch, each of a device's parameters has its new 16-bit gradient
// read and its accumulated gradient read and written (2 + 2 + 2 bytes
// with 16-bit gradients, 2 + 4 + 4 with fp32 ones) at the achievable
// bandwidth, m times per iteration on a single stage.
func TestUnfusedGradAccumulation(t *testing.T) {
	tr := gpt(24, 2304, 24)
	for _, tc := range []struct {
		optimizer Optimizer
		bytes     float64
	}{{MixedAdam, 6}, {MixedAdamFP32Grads, 10}} {
		ex := plan.Execution{TP: 1, PP: 1, DP: 8, MicrobatchSize: 1, GlobalBatch: 128, Recompute: model.RecomputeFull, Optimizer: string(tc.optimizer)}
		fused, err := Predict(tr, dgxA100(t, 8), ex, Options{})
		if err != nil {
			t.Fatal(err)
		}
		ex.UnfusedGradAccumulation = true
		e, err := newEvaluator(tr, dgxA100(t, 8), ex, Options{})
		if err != nil {
			t.Fatal(err)
		}
		unfused := e.predict(false)
		dense, experts := e.weightParams(0)
		want := float64(e.m) * (dense + experts) * tc.bytes / e.memBW
		if got := unfused.IterationSeconds - fused.IterationSeconds; math.Abs(got/want-1) > 1e-9 {
			t.Errorf("%s: the accumulation pass adds %.4g s, want %.4g s (%d microbatches × %.3g parameters × %.0f B)", tc.optimizer, got, want, e.m, dense+experts, tc.bytes)
		}
	}
}
