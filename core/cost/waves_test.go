package cost

import (
	"math"
	"math/rand/v2"
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/plan"
)

// waveEfficiencyBrute lays an output of rows × cols out in tiles of tr ×
// tc one by one, deals them to sms multiprocessors a wave at a time and
// returns the useful share of the tile slots the waves occupy; 1 for at
// most one wave.
func waveEfficiencyBrute(rows, cols, tr, tc, sms int) float64 {
	tiles, useful := 0, 0
	for r := 0; r < rows; r += tr {
		for c := 0; c < cols; c += tc {
			tiles++
			useful += min(tr, rows-r) * min(tc, cols-c)
		}
	}
	if tiles <= sms {
		return 1
	}
	waves := 0
	for dealt := 0; dealt < tiles; dealt += sms {
		waves++
	}
	return float64(useful) / float64(waves*sms*tr*tc)
}

// TestWaveEfficiencyBruteForce checks waveEfficiency against tiles laid
// out and dealt one by one, the better of the two orientations, on random
// outputs and the edges of a wave (108 and 109 tiles of 256×128).
func TestWaveEfficiencyBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(rows, cols int) {
		want := math.Max(waveEfficiencyBrute(rows, cols, 256, 128, A100SMs), waveEfficiencyBrute(rows, cols, 128, 256, A100SMs))
		if got := waveEfficiency(float64(rows), float64(cols), A100SMs); math.Abs(got-want) > 1e-12 {
			t.Errorf("%d × %d: %.6f, tile by tile %.6f", rows, cols, got, want)
		}
	}
	for range 300 {
		check(1+rng.IntN(40000), 1+rng.IntN(30000))
	}
	check(108*256, 128)
	check(109*256, 128)
	if got := waveEfficiency(109*256, 128, A100SMs); math.Abs(got-109.0/216) > 1e-12 {
		t.Errorf("109 tiles in two waves of 108: %.4f, want 109/216", got)
	}
}

// TestWaveSlowdownKorthikanti checks the wave model where it was shown to
// matter (Korthikanti et al. 2022 Table 5 on the A100, t = 8): the dense
// GEMMs of a 22B and a 175B layer (h 6144 and 12288, 230–310 GFLOP per
// GPU) lose more to their last wave than 530B's and 1T's (h 20480 and
// 25600), the step between the two pairs the waves account for; and the
// H100 has no wave model.
func TestWaveSlowdownKorthikanti(t *testing.T) {
	layerSlowdown := func(hidden, b int, gpu string) float64 {
		tr := gpt(8, hidden, hidden/128)
		e, err := newEvaluator(tr, servers(t, gpu, 8), plan.Execution{TP: 8, PP: 1, DP: 1, MicrobatchSize: b, GlobalBatch: b}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var slow, flops float64
		for _, g := range tr.ForwardGEMMs(b, 0) {
			if g.Attention {
				continue
			}
			_, column := columnParallelBlock[g.Name]
			slow += g.FLOPs * e.gemmWaveSlowdown(g.Shapes, column)
			flops += g.FLOPs
		}
		return slow / flops
	}
	a100 := "nvidia-a100-sxm4-80gb"
	small := []float64{layerSlowdown(6144, 4, a100), layerSlowdown(12288, 1, a100)}
	large := []float64{layerSlowdown(20480, 1, a100), layerSlowdown(25600, 1, a100)}
	t.Logf("slowdown by waves: 22B %.3f, 175B %.3f, 530B %.3f, 1T %.3f", small[0], small[1], large[0], large[1])
	for _, s := range small {
		for _, l := range large {
			if s < l+0.04 {
				t.Errorf("22B/175B slowdown %.3f within 4 points of 530B/1T's %.3f", s, l)
			}
		}
	}
	if h := layerSlowdown(12288, 1, "nvidia-h100-sxm5-80gb"); h != 1 {
		t.Errorf("H100 slowdown %v, want none", h)
	}
}

// TestGEMMWaveSlowdownSplits checks how one GPU's share of a GEMM is
// shaped before its waves are counted: context parallelism splits the
// tokens, tensor parallelism the output features of a column-parallel
// layer and the input features of a row-parallel one, and a low-rank
// pair's two products weigh by their FLOPs; a GPU without the wave model
// is never slowed.
func TestGEMMWaveSlowdownSplits(t *testing.T) {
	tr := gpt(8, 4096, 32)
	ev := func(gpu string, tp, cp int) *evaluator {
		tr := tr
		tr.Seq = 4096
		e, err := newEvaluator(tr, servers(t, gpu, 8), plan.Execution{TP: tp, CP: cp, PP: 1, DP: 8 / (tp * cp), MicrobatchSize: 1, GlobalBatch: 8 / (tp * cp)}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	e := ev("nvidia-a100-sxm4-80gb", 2, 2)
	s := model.Shape{Rows: 4096, K: 4096, N: 5000}
	if got, want := e.gemmWaveSlowdown([2]model.Shape{s}, true), waveSlowdown(model.Shape{Rows: 2048, K: 4096, N: 2500}, A100SMs); got != want {
		t.Errorf("column-parallel: %v, want the slowdown of 2048 × 4096 → 2500, %v", got, want)
	}
	if got, want := e.gemmWaveSlowdown([2]model.Shape{s}, false), waveSlowdown(model.Shape{Rows: 2048, K: 2048, N: 5000}, A100SMs); got != want {
		t.Errorf("row-parallel: %v, want the slowdown of 2048 × 2048 → 5000, %v", got, want)
	}
	a, b := model.Shape{Rows: 4096, K: 4096, N: 300}, model.Shape{Rows: 4096, K: 300, N: 9000}
	fa, fb := 2048*4096*150.0, 2048*300*4500.0
	want := (fa*waveSlowdown(model.Shape{Rows: 2048, K: 4096, N: 150}, A100SMs) + fb*waveSlowdown(model.Shape{Rows: 2048, K: 300, N: 4500}, A100SMs)) / (fa + fb)
	if got := e.gemmWaveSlowdown([2]model.Shape{a, b}, true); math.Abs(got-want) > 1e-12*want {
		t.Errorf("low-rank pair: %v, want the FLOP-weighted %v", got, want)
	}
	if got := e.gemmWaveSlowdown([2]model.Shape{s}, true); got <= 1 {
		t.Errorf("a 2048 × 2500 output in 256×128 tiles fills no whole number of waves, yet slowdown %v", got)
	}
	if got := ev("nvidia-h100-sxm5-80gb", 2, 2).gemmWaveSlowdown([2]model.Shape{s}, true); got != 1 {
		t.Errorf("H100: slowdown %v, want 1 (no wave model)", got)
	}
}
