package cost

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
	"pipeplan/gpuprofiles"
	"pipeplan/modelprofiles"
)

// TestPredictorMatchesPredict: one Predictor predicting a thousand random
// executions in a random order — sharing layer costs, layouts and FLOPs
// between them, as a search does — gives each exactly what a fresh Predict
// gives (every field, bit for bit, errors included; PredictPeak all but the
// stages' memory, PredictIfFits the same or, where it does not fit, the
// memory alone), for dense, mixture-of-experts
// (DeepSeek-V3: MLA, leading dense layers) and FP8 models.
func TestPredictorMatchesPredict(t *testing.T) {
	g, err := gpuprofiles.ByID("nvidia-h100-sxm5-80gb")
	if err != nil {
		t.Fatal(err)
	}
	c, err := hw.NewCluster(g, 8, 8, 0)
	if err != nil {
		t.Fatal(err)
	}
	dense, fp8 := gpt(24, 2048, 16), gpt(24, 2048, 16)
	dense.Name, fp8.Name, fp8.Precision = "GPT 1.3B", "GPT 1.3B FP8", model.FP8
	models := []model.Transformer{dense, fp8}
	for _, id := range []string{"deepseek-v3", "qwen3-30b-a3b", "mixtral-8x7b"} {
		tr, _, err := modelprofiles.Transformer(id)
		if err != nil {
			t.Fatal(err)
		}
		models = append(models, tr)
	}
	rng := rand.New(rand.NewPCG(14, 1))
	pick := func(xs ...int) int { return xs[rng.IntN(len(xs))] }
	etpRNG := rand.New(rand.NewPCG(15, 1)) // apart, so that the other draws stay what they were
	recomputeRNG := rand.New(rand.NewPCG(16, 1))
	for _, tr := range models {
		p, err := NewPredictor(tr, c, Options{})
		if err != nil {
			t.Fatal(err)
		}
		// Thirty draws of what layer costs depend on (layerKey), each
		// met again with other pipeline and data-parallel degrees,
		// interleavings, schedules, batches and ZeRO stages; they draw
		// what a layer's work depends on (workKey) from two parts and
		// their variants in one field each, so that layer costs share
		// works and a work missing a field of its key is met.
		var workParts []plan.Execution
		for range 2 {
			w := plan.Execution{TP: pick(2, 4), CP: pick(1, 2), EP: pick(2, 4), MicrobatchSize: pick(1, 2),
				SequenceParallel: rng.IntN(2) == 0, FlashAttention: rng.IntN(2) == 0}
			workParts = append(workParts, w)
			for _, vary := range []func(*plan.Execution){
				func(x *plan.Execution) { x.TP *= 2 }, func(x *plan.Execution) { x.CP = 3 - x.CP }, func(x *plan.Execution) { x.EP *= 2 },
				func(x *plan.Execution) { x.MicrobatchSize++ }, func(x *plan.Execution) { x.SequenceParallel = !x.SequenceParallel },
				func(x *plan.Execution) { x.FlashAttention = !x.FlashAttention },
				func(x *plan.Execution) { x.FlashAttention, x.AttentionKernel = true, plan.AttentionFlash2 },
			} {
				v := w
				vary(&v)
				workParts = append(workParts, v)
			}
		}
		layerParts := make([]plan.Execution, 30)
		for i := range layerParts {
			layerParts[i] = workParts[rng.IntN(len(workParts))]
			layerParts[i].Recompute = []model.Recompute{model.RecomputeNone, model.RecomputeSelective, model.RecomputeFull}[rng.IntN(3)]
			layerParts[i].ScatterGather = rng.IntN(2) == 0
			layerParts[i].Overlap = plan.Overlap{GradReduce: rng.IntN(2) == 0, ParamGather: rng.IntN(2) == 0, TPComm: rng.IntN(2) == 0}
			layerParts[i].CPComm = []string{"", plan.CPCommP2P, plan.CPCommAllGather, plan.CPCommA2A}[rng.IntN(4)]
			layerParts[i].FP8ParamGather = tr.Precision == model.FP8 && rng.IntN(2) == 0
			if layerParts[i].Recompute == model.RecomputeFull && recomputeRNG.IntN(2) == 0 {
				layerParts[i].RecomputeLayers = 1 + recomputeRNG.IntN(4) // some layers of each chunk
			}
			if layerParts[i].Recompute == model.RecomputeSelective && recomputeRNG.IntN(2) == 0 {
				// Modules of selective recomputation the model has.
				var lists []string
				for _, l := range []string{"mlp", "layernorm,core_attn", "moe_act", "moe", "shared_experts,mlp", "mla_up_proj,moe_act"} {
					if s, _ := model.ParseRecomputeModules(l); tr.CheckRecomputeModules(s) == nil {
						lists = append(lists, l)
					}
				}
				layerParts[i].RecomputeModules = lists[recomputeRNG.IntN(len(lists))]
			}
			if tr.MoE == nil {
				layerParts[i].EP = 1
			} else {
				if rng.IntN(4) == 0 {
					layerParts[i].EPDispatcher = EPDeepEP
				}
				layerParts[i].Overlap.EPComm = rng.IntN(2) == 0
				if etpRNG.IntN(3) == 0 {
					layerParts[i].ETP = layerParts[i].TP // each expert split over t
				}
			}
		}
		valid := 0
		for range 1000 {
			ex := layerParts[rng.IntN(len(layerParts))]
			ex.PP, ex.Interleave, ex.ZeRO = pick(1, 2, 4, 8), pick(1, 1, 2, 3), pick(0, 1, 2, 3)
			if rng.IntN(4) == 0 {
				ex.Schedule = schedule.ZBH1
			}
			ex.DP = max(1, c.GPUs()/(ex.TP*ex.PP*ex.CP))
			ex.GlobalBatch = ex.DP * ex.MicrobatchSize * pick(4, 8, 16)
			want, wantErr := Predict(tr, c, ex, Options{})
			var got Prediction
			var gotErr error
			switch rng.IntN(3) {
			case 0:
				got, gotErr = p.Predict(ex)
			case 1:
				got, gotErr = p.PredictPeak(ex)
				want.StageMemory = nil
			default:
				got, gotErr = p.PredictIfFits(ex)
				want.StageMemory = nil
				if !want.Memory.Fits() {
					want = Prediction{Memory: want.Memory}
				}
			}
			if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
				t.Fatalf("%s %+v: error %v, Predict's %v", tr.Name, ex, gotErr, wantErr)
			}
			if wantErr != nil {
				continue
			}
			valid++
			// Compared as printed: %v prints each float exactly (shortest
			// round trip), and NaN equal to itself.
			if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
				t.Fatalf("%s %+v:\nPredictor %+v\nPredict   %+v", tr.Name, ex, got, want)
			}
		}
		if valid < 100 || 2*len(p.layers) > valid || len(p.work) >= len(p.layers) {
			t.Errorf("%s: %d of 1000 random executions valid, %d layer costs, %d layer works: the comparison needs more, and shared ones", tr.Name, valid, len(p.layers), len(p.work))
		}
		t.Logf("%s: %d valid executions, %d layer costs, %d layer works, %d layouts", tr.Name, valid, len(p.layers), len(p.work), len(p.layouts))
	}
}
