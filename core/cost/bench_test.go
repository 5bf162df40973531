package cost

import (
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
	"pipeplan/modelprofiles"
)

// BenchmarkPredict1T predicts the 1T-parameter GPT of Table 4.1 on 3072 A100s
// (t=8, p=64, v=2): the inner call of the PTD-P search.
func BenchmarkPredict1T(b *testing.B) {
	tr := gpt(128, 25600, 160)
	c := dgxA100(b, 3072)
	cfg := plan.Execution{TP: 8, PP: 64, DP: 6, MicrobatchSize: 1, GlobalBatch: 3072, Interleave: 2, Recompute: model.RecomputeFull, ScatterGather: true}
	for b.Loop() {
		if _, err := Predict(tr, c, cfg, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPredictZBV predicts Llama 3.1 405B on 16,384 H100s under ZB-V
// (t 4, p 16, cp 8, d 32, m 64): the V's pipeline simulated past its
// steady state (vPipelineSeconds), the schedules kept by the Predictor as a
// search keeps them.
func BenchmarkPredictZBV(b *testing.B) {
	tr, _, err := modelprofiles.Transformer("llama3-405b")
	if err != nil {
		b.Fatal(err)
	}
	pred, err := NewPredictor(tr, servers(b, "nvidia-h100-sxm5-80gb", 16384), Options{})
	if err != nil {
		b.Fatal(err)
	}
	ex := WithDefaults(plan.Execution{TP: 4, PP: 16, CP: 8, DP: 32, MicrobatchSize: 1, GlobalBatch: 2048, SequenceParallel: true,
		FlashAttention: true, Schedule: schedule.ZBV, ZeRO: 1})
	for b.Loop() {
		if _, err := pred.PredictPeak(ex); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkServerHitProbability is the group-limited dispatch's reach
// (serverHitProbability) for DeepSeek-V3 over 8 servers, and at the bounds:
// 16M experts in MaxExpertGroups groups over 2 and 65,536 servers.
func BenchmarkServerHitProbability(b *testing.B) {
	for _, c := range []struct {
		name    string
		m       model.MoE
		servers int
	}{
		{"deepseek-v3", model.MoE{Experts: 256, TopK: 8, Groups: 8, GroupTopK: 4}, 8},
		{"16M-experts-2-servers", model.MoE{Experts: 1 << 24, TopK: 1 << 20, Groups: model.MaxExpertGroups, GroupTopK: 512}, 2},
		{"16M-experts-65536-servers", model.MoE{Experts: 1 << 24, TopK: 8, Groups: model.MaxExpertGroups, GroupTopK: 1}, 65536},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				serverHitProbability(c.m, c.servers)
			}
		})
	}
}
