package modelprofiles

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// roundsTo reports whether x (a count) rounds to the stated figure in
// billions at the stated figure's precision ("8.03" → two decimals).
func roundsTo(x, stated float64) bool {
	return math.Abs(x/1e9-stated/1e9) <= 0.5*unit(stated)+1e-12
}

// within1 reports whether x is less than one unit of the stated figure's
// last digit away from it: publishers round some active counts and
// truncate others (DeepSeek-V3 states 37B for 37.55B, Qwen3 3.3B for 3.35B).
func within1(x, stated float64) bool {
	return math.Abs(x/1e9-stated/1e9) < unit(stated)
}

// unit returns one unit, in billions, of the last digit of a stated
// count: of billions, or of trillions from 1,000B ("1T" is 1,000 ± 500B).
func unit(stated float64) float64 {
	scale := 1.0
	if stated >= 1e12 {
		scale = 1000
	}
	s := strconv.FormatFloat(stated/1e9/scale, 'f', -1, 64)
	dec := 0
	if i := strings.IndexByte(s, '.'); i >= 0 {
		dec = len(s) - i - 1
	}
	return scale * math.Pow(10, -float64(dec))
}

// TestLLMParamsMatchPublished checks every preset's total parameter count
// against the figure its publisher states, at the precision it is stated
// with, and the active count of mixture-of-experts models to within one
// unit of the stated figure's last digit.
func TestLLMParamsMatchPublished(t *testing.T) {
	for _, in := range LLMs() {
		tr, _, err := Transformer(in.ID)
		if err != nil {
			t.Fatal(err)
		}
		got, active := tr.Params(), tr.ActiveParams()
		switch in.Counting {
		case CountingWithMTPWithoutEmbeddings:
			// The publisher's count: the MTP module in (its active part: the
			// layer's active parameters, the projection and norms), the word
			// embedding and output layer out.
			emb := tr.EmbeddingParams()
			got += tr.MTPParams() - emb
			active += float64(tr.MTPLayers)*(tr.MTPLayerParams()-tr.LayerParamsAt(tr.Layers-1)+tr.ActiveLayerParamsAt(tr.Layers-1)) - emb
		case CountingActiveWithoutEmbedding:
			active -= float64(tr.Vocab) * float64(tr.Hidden) // the input embedding
		}
		t.Logf("%-16s %.3fB total (stated %g), %.3fB active (stated %g), as the publisher counts", in.ID, got/1e9, in.PublishedParams/1e9, active/1e9, in.PublishedActiveParams/1e9)
		if !roundsTo(got, in.PublishedParams) {
			t.Errorf("%s: %.3fB parameters, %s states %gB", in.ID, got/1e9, in.ParamsSource, in.PublishedParams/1e9)
		}
		if in.PublishedActiveParams > 0 && !within1(active, in.PublishedActiveParams) {
			t.Errorf("%s: %.3fB active parameters, %s states %gB", in.ID, active/1e9, in.ParamsSource, in.PublishedActiveParams/1e9)
		}
		if in.PublishedActiveParams == 0 && tr.ActiveParams() != tr.Params() {
			t.Errorf("%s: dense model with %g active of %g parameters", in.ID, tr.ActiveParams(), tr.Params())
		}
	}
}

// TestDeepSeekV3MTPParams checks DeepSeek-V3's multi-token prediction
// module against what DeepSeek states: "11.5B unique parameters,
// excluding the shared 0.9B Embedding and 0.9B output Head"
// (deepseek-ai/DeepSeek-V3 README_WEIGHTS.md, commit
// 0b39205aed0d4b1f9a2798e8551e4059c8f94b0c; within 1 %: its parts, MLA
// and 256 experts of 3·7168·2048 and the 2h-to-h projection, come to
// 11.6B), and "The total size of DeepSeek-V3 models on Hugging Face is
// 685B, which includes 671B of the Main Model weights and 14B of the
// Multi-Token Prediction (MTP) Module weights" (README.md, commit
// 06dbd30b096f8e1dd9d4faadd532d52610fb347f): the model, the module and
// the module's stored copies of the embedding and output head, within
// 0.1 %.
func TestDeepSeekV3MTPParams(t *testing.T) {
	tr, _, err := Transformer("deepseek-v3")
	if err != nil {
		t.Fatal(err)
	}
	if tr.MTPLayers != 1 {
		t.Fatalf("deepseek-v3: %d MTP modules, want the config's num_nextn_predict_layers 1", tr.MTPLayers)
	}
	mtp := tr.MTPParams()
	stored := tr.Params() + mtp + 2*float64(tr.Vocab)*float64(tr.Hidden)
	t.Logf("MTP module %.3fB (stated 11.5B), stored total %.3fB (stated 685B)", mtp/1e9, stored/1e9)
	if math.Abs(mtp/11.5e9-1) > 0.01 {
		t.Errorf("MTP module %.3fB, DeepSeek states 11.5B", mtp/1e9)
	}
	if math.Abs(stored/685e9-1) > 0.001 {
		t.Errorf("stored total %.3fB, DeepSeek states 685B", stored/1e9)
	}
}

// TestLLMUnknown names the known presets.
func TestLLMUnknown(t *testing.T) {
	if _, _, err := Transformer("gpt-5"); err == nil || !strings.Contains(err.Error(), "llama3-405b") {
		t.Errorf("unknown preset: got %v, want an error listing the presets", err)
	}
}

// TestLLMFreshCopies checks that a preset's pointers are the caller's own:
// changing them leaves the next call's preset as it was.
func TestLLMFreshCopies(t *testing.T) {
	tr, _, err := Transformer("deepseek-v3")
	if err != nil {
		t.Fatal(err)
	}
	tr.MoE.Experts, tr.MLA.KVLoraRank = 1, 1
	again, _, err := Transformer("deepseek-v3")
	if err != nil {
		t.Fatal(err)
	}
	if again.MoE.Experts == 1 || again.MLA.KVLoraRank == 1 {
		t.Error("changing a returned preset changed the generated data")
	}
}
