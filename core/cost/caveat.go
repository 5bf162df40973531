package cost

import "fmt"

// localExpertsSlowdown bounds how much slower than predicted the published
// H100 runs of a mixture-of-experts model with its expert exchange inside
// one server ran (published_test.go, TestLocalExpertsCaveat): from 1.10×
// (Qwen3 235B-A22B BF16, ep 8, Megatron-FSDP, microbatch 4) to 2.74×
// (Qwen3 30B-A3B FP8, ep 8, Megatron-Bridge 26.02).
const localExpertsSlowdown = 2.8

// localExpertsCaveat is Prediction.Caveat where localExperts holds. What
// the model leaves out there is documented in the package doc ("Mixture of
// experts inside one server").
var localExpertsCaveat = fmt.Sprintf("mixture of experts with the expert exchange inside one server: "+
	"published H100 runs of this kind ran up to %.1f× slower than predicted (the dropless dispatcher's host "+
	"synchronization and the expert path's kernel launches are not modelled); take the throughput as optimistic", localExpertsSlowdown)

// localExperts reports whether the model has MoE layers whose token
// exchange never leaves the cluster's innermost level (a server, or an
// NVLink domain): ep 1, or an ep group that hw.Cluster.GroupLevel places
// on level 0.
func (e *evaluator) localExperts() bool {
	return e.tr.MoE != nil && e.c.GroupLevel(e.cfg.EP, e.etp) <= 0
}
