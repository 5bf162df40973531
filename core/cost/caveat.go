package cost

import (
	"fmt"

	"pipeplan/core/model"
)

// fp8ExpertsFastest and fp8ExpertsSlowdown bound the published step time
// of the runs of a mixture-of-experts model trained in FP8 as a multiple of
// the predicted one (published_test.go, TestFP8ExpertsCaveat, over every
// such stored run; RESULTS.md lists them): the slowest is Megatron-Bridge
// 25.11's Qwen3 30B-A3B with ep 8 on 16 H100, the fastest the same model
// and degrees under Megatron-Bridge 26.02.01 (1.77× faster than 26.02's
// run of them).
const (
	fp8ExpertsFastest  = 0.80
	fp8ExpertsSlowdown = 1.8
)

// fp8ExpertsCaveat is Prediction.Caveat where fp8Experts holds. What the
// model leaves out there is documented in the package doc ("Mixture of
// experts: time per local expert").
var fp8ExpertsCaveat = fmt.Sprintf("mixture of experts trained in FP8: published runs of this kind took %.2f× to %.1f× "+
	"the predicted step time, most of them longer (the time per local expert was fitted on BF16 runs, the experts' FP8 GEMM rate "+
	"on five runs of two models; some releases ran the "+
	"small Qwen3 30B-A3B on H100 1.8× slower than later ones, and the share of an overlapped expert exchange left exposed was "+
	"fitted on one model's runs); "+
	"take the throughput as optimistic",
	fp8ExpertsFastest, fp8ExpertsSlowdown)

// fp8Experts reports whether the model has MoE layers and trains in FP8.
func (e *evaluator) fp8Experts() bool {
	return e.tr.MoE != nil && e.tr.TrainingPrecision() == model.FP8
}
