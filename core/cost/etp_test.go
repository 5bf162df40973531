package cost

import (
	"math"
	"strings"
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/plan"
)

// etpEvaluator returns the evaluator of Qwen3 235B-A22B (no shared
// experts) on 4 H100 servers of 8 with t = 4, ep = 8 and the given etp,
// the tensor-parallel overlaps as given.
func etpEvaluator(t *testing.T, etp int, overlap plan.Overlap) *evaluator {
	t.Helper()
	tr, c := h100MoE(t, "qwen3-235b-a22b", 4)
	ex := plan.Execution{TP: 4, PP: 1, DP: 8, EP: 8, ETP: etp, MicrobatchSize: 1, GlobalBatch: 8, SequenceParallel: true, FlashAttention: true, Overlap: overlap}
	e, err := newEvaluator(tr, c, WithDefaults(ex), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestExpertTensorParallelGrid: splitting each expert over etp ranks
// divides a GPU's expert weights by etp and its experts' data-parallel
// group by etp too, and strides the ep group etp ranks apart, so ep 8 at
// etp 4 spans the four servers where at etp 1 it stays in one.
func TestExpertTensorParallelGrid(t *testing.T) {
	one, four := etpEvaluator(t, 0, plan.Overlap{}), etpEvaluator(t, 4, plan.Overlap{})
	if one.etp != 1 || one.edp != 4 || four.etp != 4 || four.edp != 1 {
		t.Fatalf("grid: etp 1 → (%d, edp %d), etp 4 → (%d, edp %d); want (1, 4) and (4, 1) over t·d = 32 ranks with ep 8", one.etp, one.edp, four.etp, four.edp)
	}
	_, x1 := one.weightParams(0)
	_, x4 := four.weightParams(0)
	if math.Abs(x1/x4-4) > 1e-9 {
		t.Errorf("expert weights per GPU: etp 1 %.4g, etp 4 %.4g; want a ratio of 4", x1, x4)
	}
	if in, across := one.c.GroupGPUsPerNode(8, one.etp), four.c.GroupGPUsPerNode(8, four.etp); in != 8 || across != 2 {
		t.Errorf("ep 8 ranks in one server: %d at etp 1 (want 8), %d at etp 4 (want 2: ranks 4 apart)", in, across)
	}
	if one.etpSeconds() != 0 {
		t.Errorf("etp 1: an expert-tensor-parallel exchange of %v s, want none", one.etpSeconds())
	}
}

// TestExpertTensorParallelExchange: with etp = t the expert layer's
// exchange over the etp ranks moves topk times the dense MLP block's
// tensor-parallel traffic (the routed copies, not the tokens): four
// collectives of topk·b·s/cp·h values where the dense block has an
// all-gather and a reduce-scatter of b·s/cp·h each way. Without the
// latency term the ratio is topk exactly.
func TestExpertTensorParallelExchange(t *testing.T) {
	e := etpEvaluator(t, 4, plan.Overlap{})
	e.comm.LatencySeconds = 0
	k := float64(e.tr.MoE.TopK)
	dense := 2 * e.tpAllReduceSeconds() // the MLP block's AG + RS, forward and backward
	if got := e.etpSeconds(); math.Abs(got/dense-k) > 1e-9 {
		t.Errorf("etp exchange %.4g s = %.4f × the dense MLP block's %.4g s, want topk = %v", got, got/dense, dense, k)
	}
}

// TestExpertLayerTensorParallelCollectives: an expert layer off the
// tensor-parallel grid (ep > 1) issues the attention block's collectives
// only — half a dense layer's, with nothing overlapped — unless it has
// shared experts, which split over t like a dense MLP; with the experts
// on the grid (ep 1, etp t) it issues a dense layer's.
func TestExpertLayerTensorParallelCollectives(t *testing.T) {
	tr, c := h100MoE(t, "qwen3-235b-a22b", 4)
	run := func(tr model.Transformer, ep int) *evaluator {
		t.Helper()
		tr.MoE.FirstDense = 1 // layer 0 dense, the rest experts
		ex := plan.Execution{TP: 4, PP: 1, DP: 8, EP: ep, MicrobatchSize: 1, GlobalBatch: 8, SequenceParallel: true, FlashAttention: true}
		e, err := newEvaluator(tr, c, WithDefaults(ex), Options{})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	for _, tc := range []struct {
		name   string
		shared int
		ep     int
		want   float64 // the expert layer's exposed TP time over the dense layer's
	}{
		{"ep 8, no shared experts", 0, 8, 0.5},
		{"ep 8, a shared expert", 1, 8, 1},
		{"ep 1 (experts split over t)", 0, 1, 1},
	} {
		m := *tr.MoE
		m.SharedExperts = tc.shared
		tt := tr
		tt.MoE = &m
		e := run(tt, tc.ep)
		if got := e.kindTime[1].tp / e.kindTime[0].tp; math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: expert layer's TP time %.4g s, %.3f × the dense layer's %.4g s, want %.1f×", tc.name, e.kindTime[1].tp, got, e.kindTime[0].tp, tc.want)
		}
	}
}

// TestExpertTPValidation: ETP is checked against the model and the
// ranks, each error naming the field.
func TestExpertTPValidation(t *testing.T) {
	tr, c := h100MoE(t, "qwen3-235b-a22b", 4)
	dense, _ := h100MoE(t, "qwen3-235b-a22b", 4)
	dense.MoE = nil
	base := plan.Execution{TP: 4, PP: 1, DP: 8, EP: 8, MicrobatchSize: 1, GlobalBatch: 8}
	for _, tc := range []struct {
		name string
		tr   model.Transformer
		etp  int
		want string
	}{
		{"dense", dense, 2, "execution.etp: expert tensor parallelism needs a mixture-of-experts model, got 2"},
		{"ffn", tr, 5, "execution.etp: must divide each expert's inner size 1536, got 5"},
		{"ranks", tr, 8, "execution.etp: expert tensor parallelism 8 × expert parallelism 8 = 64 must divide tp × cp × dp = 32 ranks"},
		{"negative", tr, -1, "execution.etp: must be 0 (the default) to 32768, got -1"},
	} {
		ex := base
		ex.ETP = tc.etp
		if tc.tr.MoE == nil {
			ex.EP = 1
		}
		err := Validate(tc.tr, c, ex)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
	ok := base
	ok.ETP = 4
	if err := Validate(tr, c, ok); err != nil {
		t.Errorf("etp 4 × ep 8 on t·d = 32 ranks: %v", err)
	}
}
