package partition

import (
	"context"
	"math"
	"strings"
	"testing"

	"pipeplan/core/cost"
	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/modelprofiles"
)

// qwen30BOn16 returns Qwen3-30B-A3B at s = 4096, 16 H100s and the
// unpinned search of it with Megatron-LM's defaults.
func qwen30BOn16(t *testing.T) (model.Transformer, hw.Cluster, PTDPResult) {
	t.Helper()
	tr, _, err := modelprofiles.Transformer("qwen3-30b-a3b")
	if err != nil {
		t.Fatal(err)
	}
	tr.Seq = 4096
	c := h100Cluster(t, 16)
	free, err := SearchPTDP(context.Background(), tr, c, PTDPOptions{Fixed: megatronDefaults}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tr, c, free
}

// TestPTDPPinnedEPSkipsHostlessPairs pins ep 8 for Qwen3-30B-A3B (128
// experts) on 16 GPUs: the (t, p) pairs with t·cp·d = 16/p < 8 (p ≥ 4)
// cannot host it and are skipped, not an error; every pair of the
// unpinned search that can host it is still searched with ep 8. Pinning
// p 4 as well leaves no pair, and the error names ep and its value;
// likewise a pinned cp that no searched t·p leaves room for.
func TestPTDPPinnedEPSkipsHostlessPairs(t *testing.T) {
	tr, c, free := qwen30BOn16(t)
	want := map[[2]int]bool{} // the pairs that can host ep 8
	for _, cand := range append(free.Candidates, free.Infeasible...) {
		if x := cand.Config; (x.TP*x.CP*x.DP)%8 == 0 {
			want[[2]int{x.TP, x.PP}] = true
		}
	}
	if len(want) == 0 {
		t.Fatal("the unpinned search tried no pair that hosts ep 8")
	}
	pinned := megatronDefaults
	pinned.EP = 8
	res, err := SearchPTDP(context.Background(), tr, c, PTDPOptions{Fixed: pinned}, nil)
	if err != nil {
		t.Fatalf("pinned ep 8: %v", err)
	}
	got := map[[2]int]bool{}
	for _, cand := range append(res.Candidates, res.Infeasible...) {
		x := cand.Config
		if x.EP != 8 || (x.TP*x.CP*x.DP)%8 != 0 {
			t.Errorf("candidate tp %d cp %d dp %d ep %d: want ep 8 dividing tp·cp·dp", x.TP, x.CP, x.DP, x.EP)
		}
		got[[2]int{x.TP, x.PP}] = true
	}
	for tp := range want {
		if !got[tp] {
			t.Errorf("pinned ep 8 skipped (tp, pp) = %v, which hosts it", tp)
		}
	}
	if len(got) != len(want) {
		t.Errorf("pinned ep 8 searched %d (tp, pp) pairs, want %d", len(got), len(want))
	}

	for _, tc := range []struct {
		name      string
		tp, pp    int
		cp, ep    int
		wantField string
	}{
		{"pp 4 leaves tp·cp·dp 4 for ep 8", 0, 4, 0, 8, "ep: "},
		{"tp 4 leaves 4 GPUs a stage for cp 8", 4, 0, 8, 0, "cp: "},
	} {
		fixed := megatronDefaults
		fixed.TP, fixed.PP, fixed.CP, fixed.EP = tc.tp, tc.pp, tc.cp, tc.ep
		long := tr
		long.Seq = 16384
		_, err := SearchPTDP(context.Background(), long, c, PTDPOptions{Fixed: fixed}, nil)
		if err == nil || !strings.HasPrefix(err.Error(), tc.wantField) || !strings.Contains(err.Error(), "got 8") {
			t.Errorf("%s: error %v, want one naming %q and the value 8", tc.name, err, tc.wantField)
		}
	}
}

// TestPTDPMoEFinite searches Qwen3-30B-A3B on 64 and 16 H100s, ZeRO stage
// searched too: among its candidates are some with d·cp = 1 and ep < t·cp·d,
// whose experts are replicated over an expert data-parallel group that is
// not the (one-rank) data-parallel group. Every candidate's step time and
// every part of its breakdown must be finite (they were +Inf, and NaN with
// ZeRO-3, when the experts' reduction was priced at that one-rank group's
// bandwidth of 0).
func TestPTDPMoEFinite(t *testing.T) {
	tr, _, err := modelprofiles.Transformer("qwen3-30b-a3b")
	if err != nil {
		t.Fatal(err)
	}
	tr.Seq = 4096
	for _, gpus := range []int{16, 64} {
		res, err := SearchPTDP(context.Background(), tr, h100Cluster(t, gpus), PTDPOptions{Fixed: megatronDefaults, SearchZeRO: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		replicated := 0
		for _, cand := range append(res.Candidates, res.Infeasible...) {
			x, pr := cand.Config, cand.Prediction
			if x.DP*x.CP == 1 && x.EP > 1 && x.EP < x.TP {
				replicated++
			}
			for _, part := range append(pr.Time.Parts(), cost.TimePart{Name: "step", Seconds: pr.IterationSeconds}) {
				if math.IsInf(part.Seconds, 0) || math.IsNaN(part.Seconds) {
					t.Errorf("%d GPUs, tp %d pp %d dp %d cp %d ep %d ZeRO-%d: %s %v s", gpus, x.TP, x.PP, x.DP, x.CP, x.EP, x.ZeRO, part.Name, part.Seconds)
				}
			}
		}
		if replicated == 0 {
			t.Errorf("%d GPUs: no candidate with d·cp = 1 and 1 < ep < t: the search no longer covers the case", gpus)
		}
	}
}

// TestPTDPPinnedExpertTP: left 0, etp stays the default in every
// candidate (not searched: it would double the MoE candidates); pinned,
// every candidate has it, and one that no searched t·cp·d can host with
// any ep is an error naming etp and its value.
func TestPTDPPinnedExpertTP(t *testing.T) {
	tr, c, free := qwen30BOn16(t)
	for _, cand := range append(free.Candidates, free.Infeasible...) {
		if x := cand.Config; x.ETP != 0 {
			t.Errorf("unpinned: candidate tp %d ep %d has etp %d, want the default 0", x.TP, x.EP, x.ETP)
		}
	}
	pinned := megatronDefaults
	pinned.TP, pinned.ETP = 2, 2
	res, err := SearchPTDP(context.Background(), tr, c, PTDPOptions{Fixed: pinned}, nil)
	if err != nil {
		t.Fatalf("pinned etp 2: %v", err)
	}
	if len(res.Candidates)+len(res.Infeasible) == 0 {
		t.Fatal("pinned etp 2: no candidate")
	}
	for _, cand := range append(res.Candidates, res.Infeasible...) {
		if x := cand.Config; x.ETP != 2 || (x.TP*x.CP*x.DP)%(2*x.EP) != 0 {
			t.Errorf("pinned etp 2: candidate tp %d cp %d dp %d ep %d etp %d", x.TP, x.CP, x.DP, x.EP, x.ETP)
		}
	}
	bad := megatronDefaults
	bad.PP, bad.ETP = 4, 8 // t·cp·d = 4 ranks a stage
	if _, err := SearchPTDP(context.Background(), tr, c, PTDPOptions{Fixed: bad}, nil); err == nil || !strings.HasPrefix(err.Error(), "etp: ") || !strings.Contains(err.Error(), "got etp 8") {
		t.Errorf("pinned etp 8 with pp 4 on 16 GPUs: error %v, want one naming etp and 8", err)
	}
}
