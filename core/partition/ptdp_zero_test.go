package partition

import (
	"testing"

	"pipeplan/core/cost"
	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/modelprofiles"
)

// TestEvaluatePTDPZeROPicksStage checks the searched ZeRO stage against
// each stage predicted alone (cost.Predict). Llama 3 405B at the Llama 3
// paper's 16,384-GPU layout (t 8, p 16, v 8, d 128, no recomputation)
// does not fit with the distributed optimizer (its fp32 gradients whole:
// cost's TestLlama405BMetaLayoutMemory) and fits with ZeRO-2 and -3,
// where FSDP's per-microbatch gathers of 3 B parameters per GPU over the
// network are slower: the search picks ZeRO-2, as Meta ran it. On 1,024
// GPUs (d 8, recomputation full) the distributed optimizer fits and is
// kept: stages 2 and 3 only add communication to it. GPT-3 175B at t 8, p 2, d 2
// fits with none of them and gets ZeRO-3, the smallest.
func TestEvaluatePTDPZeROPicksStage(t *testing.T) {
	llama, _, err := modelprofiles.Transformer("llama3-405b")
	if err != nil {
		t.Fatal(err)
	}
	llama.Seq = 8192
	meta := plan.Execution{TP: 8, PP: 16, DP: 128, Interleave: 8, MicrobatchSize: 1, GlobalBatch: 2048, Recompute: model.RecomputeNone,
		Optimizer: "mixed-adam-fp32-grads", SequenceParallel: true, FlashAttention: true, Overlap: plan.Overlap{GradReduce: true, ParamGather: true}}
	small := meta
	small.DP, small.GlobalBatch, small.Recompute = 8, 128, model.RecomputeFull
	gpt3 := model.Transformer{Layers: 96, Hidden: 12288, Heads: 96, Seq: 2048, Vocab: 51200}
	for _, tc := range []struct {
		name string
		tr   model.Transformer
		gpus int
		ex   plan.Execution
		want int
		fits bool
	}{
		{"llama3-405b, the paper's layout", llama, 16384, meta, 2, true},
		{"llama3-405b, d 8", llama, 1024, small, 1, true},
		{"gpt3-175b, t 8 p 2 d 2", gpt3, 32, plan.Execution{TP: 8, PP: 2, DP: 2, MicrobatchSize: 1, GlobalBatch: 64, Recompute: model.RecomputeFull}, 3, false},
	} {
		c := h100Cluster(t, tc.gpus)
		got, n, err := EvaluatePTDPZeRO(tc.tr, c, tc.ex, PTDPOptions{SearchZeRO: true})
		if err != nil {
			t.Fatal(err)
		}
		var alone [4]cost.Prediction
		for z := 1; z <= 3; z++ {
			ex := tc.ex
			ex.ZeRO = z
			if alone[z], err = cost.Predict(tc.tr, c, ex, cost.Options{}); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: ZeRO-%d %.3f s, %.1f GiB + reserve, fits %v", tc.name, z, alone[z].IterationSeconds, alone[z].Memory.PeakBytes/(1<<30), alone[z].Memory.Fits())
		}
		if got.Config.ZeRO != tc.want || got.Fits != tc.fits || got.Prediction.IterationSeconds != alone[tc.want].IterationSeconds {
			t.Errorf("%s: chose ZeRO-%d (fits %v, %.3f s) after %d predictions, want ZeRO-%d (fits %v)", tc.name, got.Config.ZeRO, got.Fits, got.Prediction.IterationSeconds, n, tc.want, tc.fits)
		}
		// The rule, against the stages predicted alone: the distributed
		// optimizer where it fits, else the faster of 2 and 3 that fits.
		switch fits := func(z int) bool { return alone[z].Memory.Fits() }; {
		case tc.want == 1 && !fits(1),
			tc.want > 1 && fits(1),
			tc.want == 2 && (!fits(2) || fits(3) && alone[3].IterationSeconds < alone[2].IterationSeconds),
			tc.want == 3 && fits(2) && (!fits(3) || alone[2].IterationSeconds <= alone[3].IterationSeconds):
			t.Errorf("%s: ZeRO-%d breaks the rule (the stages alone are in the log)", tc.name, tc.want)
		}
	}
}
