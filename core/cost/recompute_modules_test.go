package cost

import (
	"math"
	"strings"
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/modelprofiles"
)

// modulesCase predicts tr on 8 H100s (t 2, d 4, ep as given, microbatch
// 1) with recomputation r and modules list: at fails the test on an
// error, try returns it.
func modulesCase(t *testing.T, tr model.Transformer, ep int) (at func(r model.Recompute, list string) Prediction, try func(r model.Recompute, list string) (Prediction, error)) {
	t.Helper()
	c := servers(t, "nvidia-h100-sxm5-80gb", 8)
	pred, err := NewPredictor(tr, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	try = func(r model.Recompute, list string) (Prediction, error) {
		return pred.Predict(plan.Execution{TP: 2, PP: 1, DP: 4, EP: ep, MicrobatchSize: 1, GlobalBatch: 16,
			Recompute: r, RecomputeModules: list, SequenceParallel: true, FlashAttention: true})
	}
	at = func(r model.Recompute, list string) Prediction {
		t.Helper()
		pr, err := try(r, list)
		if err != nil {
			t.Fatal(err)
		}
		return pr
	}
	return at, try
}

// TestRecomputeModulesDense checks selective recomputation's modules on a
// dense GPT: naming the attention core is the default, exactly; rerunning
// the MLP adds its GEMMs' FLOPs to the hardware count — 16·s·h² per
// sequence and layer for a 4h GeLU MLP, from the dimensions — and costs
// time and saves memory between recomputing nothing and every layer.
func TestRecomputeModulesDense(t *testing.T) {
	tr := gpt(24, 2048, 16)
	at, try := modulesCase(t, tr, 1)
	none, full := at(model.RecomputeNone, ""), at(model.RecomputeFull, "")
	def, core := at(model.RecomputeSelective, ""), at(model.RecomputeSelective, "core_attn")
	if def.IterationSeconds != core.IterationSeconds || def.Memory.PeakBytes != core.Memory.PeakBytes || math.Abs(def.FLOPsPerIteration/core.FLOPsPerIteration-1) > 1e-12 {
		t.Errorf("core_attn named: %v s, %v B, %v FLOPs; the default: %v s, %v B, %v FLOPs", core.IterationSeconds, core.Memory.PeakBytes, core.FLOPsPerIteration, def.IterationSeconds, def.Memory.PeakBytes, def.FLOPsPerIteration)
	}
	mlp := at(model.RecomputeSelective, "mlp")
	s, h := float64(tr.Seq), float64(tr.Hidden)
	if want := 16 * s * h * h * 16 * 24; math.Abs((mlp.FLOPsPerIteration-mlp.ModelFLOPsPerIteration)/want-1) > 1e-9 {
		t.Errorf("rerunning the MLP adds %.6g FLOPs a step, want 16·s·h² × 16 sequences × 24 layers = %.6g", mlp.FLOPsPerIteration-mlp.ModelFLOPsPerIteration, want)
	}
	if !(none.IterationSeconds < mlp.IterationSeconds && mlp.IterationSeconds < full.IterationSeconds) ||
		!(none.Memory.PeakBytes > mlp.Memory.PeakBytes && mlp.Memory.PeakBytes > full.Memory.PeakBytes) {
		t.Errorf("MLP rerun %.4g s, %.4g B; want between none's %.4g s, %.4g B and full's %.4g s, %.4g B",
			mlp.IterationSeconds, mlp.Memory.PeakBytes, none.IterationSeconds, none.Memory.PeakBytes, full.IterationSeconds, full.Memory.PeakBytes)
	}
	for list, want := range map[string]string{
		"moe_act":   "execution.recompute_modules: moe_act needs a mixture-of-experts model",
		"attention": `execution.recompute_modules: "attention" is not one of`,
	} {
		if _, err := try(model.RecomputeSelective, list); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", list, err, want)
		}
	}
	if _, err := try(model.RecomputeFull, "mlp"); err == nil || !strings.HasPrefix(err.Error(), `execution.recompute_modules: "mlp" recompute only with recompute "selective"`) {
		t.Errorf("modules with full recomputation: error %v", err)
	}
}

// TestRecomputeModulesMoE checks them on DeepSeek-V3's layers (MLA,
// routed and shared experts): rerunning the whole MoE block repeats its
// token exchange forward (half again the exchange, the overlap off) and
// its experts' GEMMs; each module costs time and saves memory against
// recomputing nothing, the whole block more than its activation function.
func TestRecomputeModulesMoE(t *testing.T) {
	tr, _, err := modelprofiles.Transformer("deepseek-v3")
	if err != nil {
		t.Fatal(err)
	}
	tr.Layers, tr.Seq, tr.MTPLayers = 8, 4096, 0 // 3 dense, 5 MoE layers
	at, _ := modulesCase(t, tr, 8)
	none := at(model.RecomputeNone, "")
	moe := at(model.RecomputeSelective, "moe")
	if got := moe.Time.ExpertParallelSeconds / none.Time.ExpertParallelSeconds; math.Abs(got-1.5) > 1e-9 {
		t.Errorf("the rerun MoE block's token exchange is %.4f times none's, want 1.5", got)
	}
	for _, list := range []string{"layernorm", "mla_up_proj", "moe_act", "shared_experts", "moe"} {
		pr := at(model.RecomputeSelective, list)
		if !(pr.IterationSeconds > none.IterationSeconds && pr.Memory.PeakBytes < none.Memory.PeakBytes) {
			t.Errorf("%s: %.5g s, %.5g B against none's %.5g s, %.5g B: want slower and smaller", list, pr.IterationSeconds, pr.Memory.PeakBytes, none.IterationSeconds, none.Memory.PeakBytes)
		}
	}
	if act := at(model.RecomputeSelective, "moe_act"); !(moe.Memory.PeakBytes < act.Memory.PeakBytes && moe.IterationSeconds > act.IterationSeconds) {
		t.Errorf("the whole MoE block (%.5g s, %.5g B) against its activation function (%.5g s, %.5g B): want slower and smaller", moe.IterationSeconds, moe.Memory.PeakBytes, act.IterationSeconds, act.Memory.PeakBytes)
	}
}
