package cost

import (
	"fmt"

	"pipeplan/core/model"
)

// fp8ExpertsSlowdown bounds how much slower than predicted the published
// runs of a mixture-of-experts model trained in FP8 ran (published_test.go,
// TestFP8ExpertsCaveat): on Blackwell from 1.00× (Qwen3 30B-A3B, 8 GB200)
// to 1.16× (the same on 8 B200), on H100 from 1.17× (Qwen3 235B-A22B,
// ep 32, Megatron-Bridge 26.02) to 1.80× (Qwen3 30B-A3B, ep 8,
// Megatron-Bridge 25.11).
const fp8ExpertsSlowdown = 1.9

// fp8ExpertsCaveat is Prediction.Caveat where fp8Experts holds. What the
// model leaves out there is documented in the package doc ("Mixture of
// experts: time per local expert").
var fp8ExpertsCaveat = fmt.Sprintf("mixture of experts trained in FP8: published runs of this kind ran up to %.1f× slower "+
	"than predicted (the time per local expert was fitted on BF16 runs; Transformer Engine's per-expert FP8 casts and what "+
	"else slows the small Qwen3 30B-A3B on H100 are not modelled); take the throughput as optimistic", fp8ExpertsSlowdown)

// fp8Experts reports whether the model has MoE layers and trains in FP8.
func (e *evaluator) fp8Experts() bool {
	return e.tr.MoE != nil && e.tr.TrainingPrecision() == model.FP8
}
