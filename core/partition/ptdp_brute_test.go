package partition

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"testing"

	"pipeplan/core/cost"
	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/gpuprofiles"
	"pipeplan/modelprofiles"
)

// bruteForcePTDP is the search done the plain way: every configuration of
// opt's space, none skipped (not even past a chain's first one that does
// not fit), each predicted afresh by EvaluatePTDPZeRO (cost.Predict, no
// shared work), the fitting ones sorted by time with sort.SliceStable.
// For each chain it also returns its first configuration that does not fit.
func bruteForcePTDP(t *testing.T, tr model.Transformer, c hw.Cluster, opt PTDPOptions) (fit, firstMisfits []PTDPCandidate) {
	t.Helper()
	for _, tp := range opt.degreePairs(tr, c) {
		for chain := range opt.chains(tr, c.GPUs(), tp[0], tp[1]) {
			misfit := false
			for _, cfg := range chain {
				cand, _, err := EvaluatePTDPZeRO(tr, c, cfg, opt)
				if err != nil {
					t.Fatal(err)
				}
				if cand.Fits && opt.Fixed.Recompute == "" {
					cand.Config, cand.Prediction = fewestRecomputedBrute(t, tr, c, cand.Config, cand.Prediction, opt)
				}
				cand.Prediction.StageMemory = nil
				switch {
				case cand.Fits:
					fit = append(fit, cand)
				case !misfit:
					firstMisfits = append(firstMisfits, cand)
					misfit = true
				}
			}
		}
	}
	sort.SliceStable(fit, func(i, j int) bool { return fit[i].Prediction.IterationSeconds < fit[j].Prediction.IterationSeconds })
	return fit, firstMisfits
}

// fewestRecomputedBrute is the search's choice of how many layers of each
// chunk recompute, the plain way: for ex, a fitting execution that
// recomputes every layer, each count from 1 up to one under the largest
// chunk's layers in turn, predicted afresh, the first that fits — at ex's
// ZeRO stage and, where opt searches the stage (with data parallelism), at
// each higher one, the fastest of them kept (the lowest stage of equal
// times); ex and pr unchanged when none is faster, when ex fits without
// recomputation (with the ZeRO stage opt searches or fixes:
// EvaluatePTDPZeRO), or when ex is not such an execution. It also checks
// the bound the search prunes with: recomputing no layer at all is no
// faster than MinRecomputeSpeedup of recomputing every one.
func fewestRecomputedBrute(t *testing.T, tr model.Transformer, c hw.Cluster, ex plan.Execution, pr cost.Prediction, opt PTDPOptions) (plan.Execution, cost.Prediction) {
	t.Helper()
	if ex.Recompute != model.RecomputeFull || ex.RecomputeLayers != 0 {
		return ex, pr
	}
	plain := ex
	plain.Recompute = model.RecomputeNone
	if same, err := cost.Predict(tr, c, plain, opt.Cost); err != nil {
		t.Fatal(err)
	} else if same.IterationSeconds < MinRecomputeSpeedup*pr.IterationSeconds {
		t.Errorf("%+v: %.4g s without recomputation, under %.2f of full recomputation's %.4g s (MinRecomputeSpeedup)", plain, same.IterationSeconds, MinRecomputeSpeedup, pr.IterationSeconds)
	}
	plain.ZeRO = opt.Fixed.ZeRO
	none, _, err := EvaluatePTDPZeRO(tr, c, plain, opt)
	if err != nil {
		t.Fatal(err)
	}
	if none.Fits {
		return ex, pr
	}
	last := ex.ZeRO
	if opt.SearchZeRO && ex.DP*max(ex.CP, 1) > 1 {
		last = ZeROFSDP
	}
	bestEx, bestPr := ex, pr
	largest := slices.Max(cost.SplitLayers(tr, ex.PP*max(ex.Interleave, 1)))
	for z := ex.ZeRO; z <= last; z++ {
		for n := 1; n < largest; n++ {
			x := ex
			x.ZeRO, x.RecomputeLayers = z, n
			got, err := cost.Predict(tr, c, x, opt.Cost)
			if err != nil {
				t.Fatal(err)
			}
			if got.Memory.Fits() {
				if got.IterationSeconds < bestPr.IterationSeconds {
					bestEx, bestPr = x, got
				}
				break
			}
		}
	}
	return bestEx, bestPr
}

// TestSearchPTDPMatchesBruteForce: on small clusters, for dense GPTs, a
// long-context Llama (context parallelism searched), mixture-of-experts
// models (expert parallelism; DeepSeek-V3 with MLA and dense leading
// layers) and the ZeRO stage searched or pinned, SearchPTDP returns
// exactly what the brute force does: the same best configuration and
// time, the same fitting candidates in the same order with the same
// predictions, bit for bit, and the same smallest non-fitting ones. (That
// no chain has a fitting configuration past one that does not fit is
// checked on the way: the search stops each chain there.) Bounded by
// PTDPOptions.Keep, it returns the first of each list and the same counts.
func TestSearchPTDPMatchesBruteForce(t *testing.T) {
	a100, err := gpuprofiles.ByID("nvidia-a100-sxm4-80gb")
	if err != nil {
		t.Fatal(err)
	}
	h100, err := gpuprofiles.ByID("nvidia-h100-sxm5-80gb")
	if err != nil {
		t.Fatal(err)
	}
	preset := func(id string) model.Transformer {
		tr, _, err := modelprofiles.Transformer(id)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	gpt3 := model.Transformer{Name: "GPT-3 175B", Layers: 96, Hidden: 12288, Heads: 96, Seq: 2048, Vocab: 51200}
	gpt13 := model.Transformer{Name: "GPT 1.3B", Layers: 24, Hidden: 2048, Heads: 16, Seq: 2048, Vocab: 51200}
	paper := plan.Execution{ScatterGather: true, FlashAttention: true, Overlap: plan.Overlap{GradReduce: true, ParamGather: true}}
	for _, tc := range []struct {
		tr         model.Transformer
		gpu        hw.GPU
		nodes      int
		batch      int
		searchZeRO bool
	}{
		{gpt13, a100, 4, 512, true},
		{gpt3, a100, 16, 1536, true},
		{gpt3, a100, 8, 256, false},
		{preset("llama3-8b"), h100, 8, 128, true},
		{preset("qwen3-30b-a3b"), h100, 8, 256, true},
		{preset("mixtral-8x7b"), a100, 4, 128, false},
		{preset("deepseek-v3"), h100, 32, 512, true},
	} {
		c, err := hw.NewCluster(tc.gpu, 8, tc.nodes, 0)
		if err != nil {
			t.Fatal(err)
		}
		fixed := paper
		fixed.GlobalBatch = tc.batch
		opt := PTDPOptions{Fixed: fixed, SearchZeRO: tc.searchZeRO}
		name := fmt.Sprintf("%s on %d %s, B=%d, zero searched %v", tc.tr.Name, c.GPUs(), tc.gpu.ID, tc.batch, tc.searchZeRO)
		fit, misfits := bruteForcePTDP(t, tc.tr, c, opt)
		res, err := SearchPTDP(context.Background(), tc.tr, c, opt, nil)
		if len(fit) == 0 {
			t.Errorf("%s: nothing fits; pick a case where something does", name)
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		best, got := fit[0], res.Candidates[0]
		if got.Config != best.Config || got.Prediction.IterationSeconds != best.Prediction.IterationSeconds {
			t.Errorf("%s: best %+v in %v s, brute force %+v in %v s", name, got.Config, got.Prediction.IterationSeconds, best.Config, best.Prediction.IterationSeconds)
		}
		if math.IsNaN(best.Prediction.IterationSeconds) || best.Prediction.IterationSeconds <= 0 {
			t.Errorf("%s: best time %v", name, best.Prediction.IterationSeconds)
		}
		if len(res.Candidates) != len(fit) {
			t.Errorf("%s: %d fitting candidates, brute force %d", name, len(res.Candidates), len(fit))
		}
		for i := range min(len(fit), len(res.Candidates)) {
			if g, w := fmt.Sprintf("%+v", res.Candidates[i]), fmt.Sprintf("%+v", fit[i]); g != w {
				t.Errorf("%s: candidate %d\n%s\nbrute force\n%s", name, i, g, w)
				break
			}
		}
		sortStable(misfits, func(c *PTDPCandidate) float64 { return needBytes(c.Prediction.Memory) })
		if g, w := fmt.Sprintf("%+v", res.Infeasible), fmt.Sprintf("%+v", misfits); g != w {
			t.Errorf("%s: %d non-fitting candidates differ from the brute force's %d", name, len(res.Infeasible), len(misfits))
		}
		if res.Feasible != len(fit) || res.Evaluated != len(fit)+len(misfits) {
			t.Errorf("%s: counts %d feasible of %d evaluated, brute force %d of %d", name, res.Feasible, res.Evaluated, len(fit), len(fit)+len(misfits))
		}
		// Bounded: the first Keep of each list, the same counts.
		for _, keep := range []int{1, 3, len(fit) + len(misfits) + 1} {
			bounded := opt
			bounded.Keep = keep
			got, err := SearchPTDP(context.Background(), tc.tr, c, bounded, nil)
			if err != nil {
				t.Fatalf("%s, keep %d: %v", name, keep, err)
			}
			if g, w := fmt.Sprintf("%+v", got.Candidates), fmt.Sprintf("%+v", fit[:min(keep, len(fit))]); g != w {
				t.Errorf("%s, keep %d: candidates\n%s\nbrute force's first\n%s", name, keep, g, w)
			}
			if g, w := fmt.Sprintf("%+v", got.Infeasible), fmt.Sprintf("%+v", misfits[:min(keep, len(misfits))]); g != w {
				t.Errorf("%s, keep %d: non-fitting\n%s\nbrute force's first\n%s", name, keep, g, w)
			}
			if got.Feasible != res.Feasible || got.Evaluated != res.Evaluated {
				t.Errorf("%s, keep %d: counts %d of %d, unbounded %d of %d", name, keep, got.Feasible, got.Evaluated, res.Feasible, res.Evaluated)
			}
		}
		t.Logf("%s: %d fit, %d chains end unfit; best t=%d p=%d d=%d cp=%d ep=%d b=%d v=%d %s zero %d: %.3f s",
			name, len(fit), len(misfits), best.Config.TP, best.Config.PP, best.Config.DP, best.Config.CP, best.Config.EP,
			best.Config.MicrobatchSize, best.Config.Interleave, best.Config.Recompute, best.Config.ZeRO, best.Prediction.IterationSeconds)
	}
}

// TestSortStableMatchesSliceStable: sortStable's cycle moves give what
// sort.SliceStable gives on the candidates themselves, ties (and NaN keys)
// in their original order.
func TestSortStableMatchesSliceStable(t *testing.T) {
	for n := range 60 {
		cands := make([]PTDPCandidate, n)
		for i := range cands {
			cands[i].Config.TP = i // identity
			cands[i].Prediction.IterationSeconds = float64((i * 7919) % 5)
			if i%11 == 3 {
				cands[i].Prediction.IterationSeconds = math.NaN()
			}
		}
		want := append([]PTDPCandidate(nil), cands...)
		sort.SliceStable(want, func(i, j int) bool { return want[i].Prediction.IterationSeconds < want[j].Prediction.IterationSeconds })
		sortStable(cands, func(c *PTDPCandidate) float64 { return c.Prediction.IterationSeconds })
		for i := range cands {
			if cands[i].Config.TP != want[i].Config.TP {
				t.Fatalf("n=%d: position %d holds candidate %d, sort.SliceStable %d", n, i, cands[i].Config.TP, want[i].Config.TP)
			}
		}
	}
}
