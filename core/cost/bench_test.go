package cost

import (
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/plan"
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
