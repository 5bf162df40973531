package cost

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/gpuprofiles"
	"pipeplan/modelprofiles"
)

// publishedRun is one run of testdata/published_runs.json.
type publishedRun struct {
	ID              string  `json:"id"`
	Model           string  `json:"model"`
	GPU             string  `json:"gpu"`
	GPUs            int     `json:"gpus"`
	GPUsPerNode     int     `json:"gpus_per_node"`
	InterNodeGbit   float64 `json:"inter_node_gbit_per_gpu"`
	TP, CP, PP, DP  int
	Seq             int     `json:"seq"`
	GlobalBatch     int     `json:"global_batch_derived"`
	PublishedTFLOPS float64 `json:"published_model_tflops_per_gpu"`
	Set             string  `json:"set"`
	Source          string  `json:"source"`
}

// loadPublishedRuns reads testdata/published_runs.json.
func loadPublishedRuns(t *testing.T) []publishedRun {
	t.Helper()
	data, err := os.ReadFile("testdata/published_runs.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Runs []publishedRun `json:"runs"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	return f.Runs
}

// predictPublished predicts a run with its published degrees and batch and
// what Megatron-LM recommends on H100 for the rest (bf16, flash attention,
// sequence parallelism, the distributed optimizer with fp32 gradients,
// overlapped gradient reduce, parameter gather and TP communication,
// microbatch 1), searching only what the source does not give: the
// interleaving v and the recomputation. It returns the fastest
// configuration that fits in memory.
func predictPublished(t *testing.T, r publishedRun) (Prediction, plan.Execution) {
	t.Helper()
	tr, _, err := modelprofiles.Transformer(r.Model)
	if err != nil {
		t.Fatal(err)
	}
	tr.Seq = r.Seq
	g, err := gpuprofiles.ByID(r.GPU)
	if err != nil {
		t.Fatal(err)
	}
	c, err := hw.NewCluster(g, r.GPUsPerNode, r.GPUs/r.GPUsPerNode, r.InterNodeGbit*1e9/8)
	if err != nil {
		t.Fatal(err)
	}
	var best Prediction
	var bestEx plan.Execution
	for v := 1; v*r.PP <= tr.Layers && v <= 8; v++ {
		for _, rc := range []model.Recompute{model.RecomputeNone, model.RecomputeSelective, model.RecomputeFull} {
			ex := plan.Execution{TP: r.TP, PP: r.PP, DP: r.DP, CP: r.CP, EP: 1, Interleave: v, MicrobatchSize: 1, GlobalBatch: r.GlobalBatch,
				Recompute: rc, ZeRO: 1, Optimizer: string(MixedAdamFP32Grads), SequenceParallel: true, FlashAttention: true,
				Overlap: plan.Overlap{GradReduce: true, ParamGather: true, TPComm: true}}
			pr, err := Predict(tr, c, ex, Options{})
			if err != nil {
				continue // e.g. the interleaved schedule needs m a multiple of p
			}
			if pr.Memory.Fits() && pr.IterationSeconds > 0 && (best.IterationSeconds == 0 || pr.IterationSeconds < best.IterationSeconds) {
				best, bestEx = pr, ex
			}
		}
	}
	if best.IterationSeconds == 0 {
		t.Fatalf("%s: no configuration with the published degrees fits in memory", r.ID)
	}
	return best, bestEx
}

// TestPublishedRunsHeldOut predicts every published run of
// testdata/published_runs.json (all held out: no constant was fitted to
// them), requires a configuration with the published degrees to fit in
// memory, and bounds the error in model TFLOP/s per GPU by 15 % — not the
// 10 % the project aims for; the errors are listed in RESULTS.md. Runs at
// s > 16K are only reported: there the attention core dominates the FLOP
// count, and whether the source counts it causal (half) or full, as
// Megatron-LM's formula does, is not stated, which alone moves the figure
// by about 40 % at 128K.
func TestPublishedRunsHeldOut(t *testing.T) {
	for _, r := range loadPublishedRuns(t) {
		pr, ex := predictPublished(t, r)
		rel := pr.ModelTFLOPSPerGPU/r.PublishedTFLOPS - 1
		t.Logf("%-28s (%s) v=%d %-9s: predicted %.0f model TFLOP/s, published %.0f: %+.1f%%; peak %.1f GiB",
			r.ID, r.Set, ex.Interleave, ex.Recompute, pr.ModelTFLOPSPerGPU, r.PublishedTFLOPS, 100*rel, pr.Memory.PeakBytes/(1<<30))
		if r.Seq <= 16384 && math.Abs(rel) > 0.15 {
			t.Errorf("%s: predicted %.0f model TFLOP/s is %+.1f%% from the published %.0f (%s)", r.ID, pr.ModelTFLOPSPerGPU, 100*rel, r.PublishedTFLOPS, r.Source)
		}
	}
}
