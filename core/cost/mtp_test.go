package cost

import (
	"math"
	"slices"
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/plan"
)

// TestSplitLayersMTP: without multi-token prediction SplitLayers is
// ChunkLayers; with it every layer is placed once, the last chunk gives up
// at most MTPChunkLayers of its layers and only to chunks ChunkLayers
// shortened, so no chunk grows past the longest, and DeepSeek-V3's split
// is Megatron-Bridge's (core/launch's TestExportMegatronMTPLayout checks
// the layouts).
func TestSplitLayersMTP(t *testing.T) {
	tr, _ := h100MoE(t, "deepseek-v3", 1)
	if k := MTPChunkLayers(tr); k != 2 {
		t.Errorf("DeepSeek-V3's module amounts to %d layers, want 2 (Megatron-Bridge's layouts)", k)
	}
	dense := tr
	dense.MTPLayers = 0
	for chunks := 1; chunks <= MaxChunks(tr.Layers); chunks++ {
		even := ChunkLayers(tr.Layers, chunks)
		if got := SplitLayers(dense, chunks); !slices.Equal(got, even) {
			t.Fatalf("%d chunks without MTP: %v, ChunkLayers %v", chunks, got, even)
		}
		got := SplitLayers(tr, chunks)
		total, moved := 0, even[len(even)-1]-got[len(got)-1]
		for k, n := range got {
			total += n
			if n > slices.Max(even) || k < len(got)-1 && n < even[k] {
				t.Errorf("%d chunks: %v from %v: chunk %d grew past the longest or lost layers", chunks, got, even, k)
			}
		}
		if total != tr.Layers || moved < 0 || moved > MTPChunkLayers(tr) {
			t.Errorf("%d chunks: %v from %v: %d layers, %d moved", chunks, got, even, total, moved)
		}
	}
}

// TestMTPOnLastStage: DeepSeek-V3's multi-token prediction module is
// costed on the last pipeline device alone: its layer of the last kind,
// its projection and norms and, with untied embeddings over more than one
// stage, a copy of the word embedding there, less the layers the split
// moved off it; its work slows the step and
// adds model FLOPs; no other device changes where the split leaves its
// layers as they were.
func TestMTPOnLastStage(t *testing.T) {
	tr, c := h100MoE(t, "deepseek-v3", 32)
	without := tr
	without.MTPLayers = 0
	ex := plan.Execution{TP: 1, PP: 8, DP: 32, EP: 8, Interleave: 1, MicrobatchSize: 1, GlobalBatch: 512, Recompute: model.RecomputeFull,
		ZeRO: 1, FlashAttention: true, Overlap: plan.Overlap{GradReduce: true, ParamGather: true}}
	with, err := Predict(tr, c, ex, Options{})
	if err != nil {
		t.Fatal(err)
	}
	base, err := Predict(without, c, ex, Options{})
	if err != nil {
		t.Fatal(err)
	}
	split, even := SplitLayers(tr, 8), ChunkLayers(tr.Layers, 8) // 8, 8, 8, …, 5 and 7, 7, 8, …, 7
	last := len(with.StageMemory) - 1
	for i := range last {
		if split[i] == even[i] && with.StageMemory[i] != base.StageMemory[i] {
			t.Errorf("stage %d: memory %+v with MTP, %+v without", i, with.StageMemory[i], base.StageMemory[i])
		}
	}
	e, err := newEvaluator(tr, c, ex, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dense, experts := e.weightParams(last)
	e0, err := newEvaluator(without, c, ex, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dense0, experts0 := e0.weightParams(last)
	h, V := float64(tr.Hidden), float64(tr.Vocab)
	expertsOne := float64(tr.MoE.Experts) * tr.ExpertParams()
	moved := float64(split[last] - even[last]) // the layers it gave up
	layerDense := tr.LayerParamsAt(tr.Layers-1) - expertsOne
	wantDense := tr.MTPParams() - expertsOne + V*h + moved*layerDense // t = 1
	wantExperts := (1 + moved) * expertsOne / float64(ex.EP)
	if math.Abs(dense-dense0-wantDense) > 1 || math.Abs(experts-experts0-wantExperts) > 1 {
		t.Errorf("last stage: %+.4gB dense and %+.4gB expert parameters with MTP, want %+.4gB (module, embedding copy, layers given up) and %+.4gB",
			(dense-dense0)/1e9, (experts-experts0)/1e9, wantDense/1e9, wantExperts/1e9)
	}
	if !(with.IterationSeconds > base.IterationSeconds) || !(with.ModelFLOPsPerIteration > base.ModelFLOPsPerIteration) {
		t.Errorf("with MTP: %.3f s, %.4g model FLOPs, last stage %.1f GiB; without: %.3f s, %.4g, %.1f GiB",
			with.IterationSeconds, with.ModelFLOPsPerIteration, with.StageMemory[last].PeakBytes/(1<<30),
			base.IterationSeconds, base.ModelFLOPsPerIteration, base.StageMemory[last].PeakBytes/(1<<30))
	}
	t.Logf("DeepSeek-V3 t1 p8 d32 ep8: %.3f s with MTP, %.3f s without; last stage %.1f GiB, %.1f GiB",
		with.IterationSeconds, base.IterationSeconds, with.StageMemory[last].PeakBytes/(1<<30), base.StageMemory[last].PeakBytes/(1<<30))
}
