package cost

import (
	"math"
	"testing"

	"pipeplan/core/hw"
	"pipeplan/core/plan"
	"pipeplan/gpuprofiles"
	"pipeplan/modelprofiles"
)

// moeEvaluator returns the evaluator of Qwen3 235B-A22B (128 experts, top 8)
// at s = 4096 on H100 servers of 8 with t = 2 and the given ep over the
// t·d ranks (etp 1: ep does not divide d).
func moeEvaluator(t *testing.T, ep, gpus int) *evaluator {
	t.Helper()
	tr, _, err := modelprofiles.Transformer("qwen3-235b-a22b")
	if err != nil {
		t.Fatal(err)
	}
	tr.Seq = 4096
	g, err := gpuprofiles.ByID("nvidia-h100-sxm5-80gb")
	if err != nil {
		t.Fatal(err)
	}
	c, err := hw.NewCluster(g, 8, gpus/8, 0)
	if err != nil {
		t.Fatal(err)
	}
	ex := plan.Execution{TP: 2, PP: 1, DP: gpus / 2, EP: ep, MicrobatchSize: 1, GlobalBatch: gpus / 2, SequenceParallel: true, FlashAttention: true}
	e, err := newEvaluator(tr, c, WithDefaults(ex), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return e
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
