package cost

import (
	"strings"
	"testing"

	"pipeplan/gpuprofiles"
)

// TestLongSequenceAttentionGap reads NeMo's two long-sequence tables
// (performance_long_sequence.md: Llama 2 7B on H100, NeMo 24.03.01, 4K to
// 1M tokens; Llama 3 8B on B200, NeMo 25.04.rc2, 8K to 1M) through the
// attention core. For each row it logs the factor by which the attention
// kernels the run is costed with (AttentionKernelFLOPS: FlashAttention-2
// for the H100 rows, cuDNN 9.18 for the B200's) would have to be slower to
// give the published throughput, everything else of the step as predicted.
// Costed with cuDNN 9.1's kernels the H100 rows read +9 % at 4K to +65 % at
// 1M, the attention core's share of the step growing from 15 % to 97 %,
// and the factor stays 1.5–1.75 at every length, with context parallelism
// or without: the kernels, not the sequence; with FlashAttention-2's it is
// 0.8–1.1. The B200 rows keep a factor of 1.5–2.0 (package doc, "Long
// sequences").
//
// It asserts what the tables can say of the context-parallel model: over
// each table's rows with cp > 1 (cp 2 to 32, all with pp 1) the factor
// varies less than 10 % around its mean and does not rise with cp, as it
// would if the ring's K/V exchange (cpSeconds: hidden behind each step's
// attention) cost time the model does not charge.
func TestLongSequenceAttentionGap(t *testing.T) {
	tables := map[string][]float64{} // prefix → slowdowns of its cp > 1 rows, in the file's order (cp rising)
	for _, r := range loadPublishedRuns(t) {
		prefix := ""
		switch {
		case strings.HasPrefix(r.ID, "nemo2403-llama2-7b-fp8-"):
			prefix = "nemo2403-llama2-7b-fp8"
		case strings.HasPrefix(r.ID, "nemo2504-llama3-8b-fp8-") && strings.Contains(r.ID, "k-"):
			prefix = "nemo2504-llama3-8b-fp8 (B200)"
		default:
			continue
		}
		cmp := comparePublished(t, r)
		pr, ex, tr := cmp.Prediction, cmp.Execution, cmp.Transformer
		g, err := gpuprofiles.ByID(r.GPU)
		if err != nil {
			t.Fatal(err)
		}
		fwd, bwd, ok := AttentionKernelFLOPS(g, float64(r.Seq)/float64(r.CP), r.AttentionKernel)
		if !ok {
			t.Fatalf("%s: no fused-attention rates for %s", r.ID, r.GPU)
		}
		// The attention core's time per step on one GPU of the first stage
		// (pp 1 in every cp > 1 row: all the layers): causal half of its
		// FLOPs over t·cp ranks, forward and 2.5× backward, once per
		// microbatch (the search picks no recomputation in these rows).
		m := float64(r.GlobalBatch / (r.DP * r.Microbatch))
		var attn float64
		for i := 0; i < tr.Layers/r.PP; i++ {
			f := tr.LayerAttentionCoreFwdFLOPs(r.Microbatch, i) / 2 / float64(r.TP*r.CP)
			attn += m * (f/fwd + 2.5*f/bwd)
		}
		step := pr.IterationSeconds
		published := step * (1 + cmp.Error)
		slowdown := (published - (step - attn)) / attn
		t.Logf("%-42s t%d cp%-2d %-6s %-9s error %+6.1f%%: attention core %4.1f%% of the predicted step, exposed cp exchange %.1f%%; reconciled by attention %.2f× slower",
			r.ID, r.TP, r.CP, cmp.Execution.AttentionKernel, ex.Recompute, 100*cmp.Error, 100*attn/step, 100*pr.Time.ContextParallelSeconds/step, slowdown)
		if r.CP > 1 {
			if r.PP != 1 || ex.Recompute != "none" {
				t.Fatalf("%s: pp %d, recompute %q: the attention time above assumes pp 1 and no recomputation", r.ID, r.PP, ex.Recompute)
			}
			tables[prefix] = append(tables[prefix], slowdown)
		}
	}
	if len(tables) != 2 {
		t.Fatalf("want the two NeMo long-sequence tables, got %d", len(tables))
	}
	for name, s := range tables {
		var mean float64
		for _, x := range s {
			mean += x
		}
		mean /= float64(len(s))
		for _, x := range s {
			if x < 0.9*mean || x > 1.1*mean {
				t.Errorf("%s: implied attention slowdowns %.2f over cp 2…32, one %.2f beyond ±10 %% of their mean %.2f", name, s, x, mean)
			}
		}
		if last, first := s[len(s)-1], s[0]; last > first*1.05 {
			t.Errorf("%s: implied attention slowdown rises with cp, %.2f to %.2f: context-parallel time the model does not charge", name, first, last)
		}
	}
}
