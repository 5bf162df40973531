package cost

import (
	"math"
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/plan"
)

// TestUnfusedAttentionTraffic checks the unfused attention core's time
// against its kernels listed one by one (Megatron-LM's CoreAttention with
// FusedScaleMaskSoftmax and dropout): bytes moved per s×s score in 16-bit,
// forward and backward. With the batched GEMMs' FLOPs free the core takes
// that traffic at the achievable bandwidth; with them slow, the GEMMs'
// own time replaces the traffic they carry.
func TestUnfusedAttentionTraffic(t *testing.T) {
	fwdKernels := map[string]float64{
		"QKᵀ writes the scores":             2,
		"softmax reads the scores":          2,
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
		"softmax backward reads the gradient": 2,
		"softmax backward reads its output":   2,
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

// TestRingBandwidthUsesEveryInterface checks the bandwidth of a
// data-parallel ring on DGX A100 nodes (8 GPUs on NVSwitch at 300 GB/s,
// one 25 GB/s HDR interface per GPU): a group with k GPUs in each server
// crosses the network on k interfaces, so it gets k × 25 GB/s, at most
// the server's fabric; a group inside one server gets the fabric.
func TestRingBandwidthUsesEveryInterface(t *testing.T) {
	c := dgxA100(t, 256)
	nic, fabric := c.Levels[1].BandwidthBytesPerSec, c.Levels[0].BandwidthBytesPerSec
	for _, tc := range []struct {
		size, stride int
		want         float64
	}{
		{32, 1, math.Min(8*nic, fabric)}, // t 1: eight of the group's GPUs in each server
		{32, 2, 4 * nic},
		{32, 4, 2 * nic},
		{32, 8, nic}, // t 8: one per server
		{8, 1, fabric},
		{4, 2, fabric},
		{1, 1, 0},
	} {
		if got := ringBandwidth(c, tc.size, tc.stride); math.Abs(got-tc.want) > 1e-9*tc.want {
			t.Errorf("%d GPUs %d apart: %.3g B/s, want %.3g", tc.size, tc.stride, got, tc.want)
		}
	}
}
