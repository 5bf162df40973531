package cost

import (
	"fmt"
	"math"
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/plan"
)

// partialRecomputeCase is a 16-layer GPT on 8 H100s with d = 1 (no
// data-parallel reduction to hide behind the backward), p pipeline stages
// of v chunks each, and a function predicting it with recomputation r of
// n layers a chunk.
func partialRecomputeCase(t *testing.T, p, v int) (model.Transformer, plan.Execution, func(r model.Recompute, n int) Prediction) {
	t.Helper()
	tr := gpt(16, 4096, 32)
	c := servers(t, "nvidia-h100-sxm5-80gb", 8)
	ex := plan.Execution{TP: 8 / p, PP: p, DP: 1, Interleave: v, MicrobatchSize: 1, GlobalBatch: 16,
		SequenceParallel: true, FlashAttention: true, Overlap: plan.Overlap{TPComm: true}}
	pred, err := NewPredictor(tr, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tr, ex, func(r model.Recompute, n int) Prediction {
		t.Helper()
		x := ex
		x.Recompute, x.RecomputeLayers = r, n
		pr, err := pred.Predict(x)
		if err != nil {
			t.Fatal(err)
		}
		return pr
	}
}

// TestPartialRecomputeInterpolates checks recomputing N of each chunk's
// layers (plan.Execution.RecomputeLayers) against the two ends, predicted
// apart: on one stage of 16 layers the step time is none's plus N/16 of
// what full recomputation adds (each recomputed layer reruns its forward
// and repeats its forward collectives), the hardware FLOPs likewise; the
// stashed activations fall by what one layer drops under recomputation
// (model.Transformer.LayerActivationBytes without and with it, computed
// apart) for each layer more, and N = 16 is full recomputation exactly.
// With one microbatch in flight, recomputing one layer saves nothing.
func TestPartialRecomputeInterpolates(t *testing.T) {
	tr, ex, at := partialRecomputeCase(t, 1, 1)
	none, full := at(model.RecomputeNone, 0), at(model.RecomputeFull, 0)
	opts := model.ActivationOptions{TP: ex.TP, SequenceParallel: true, FlashAttention: true}
	kept := tr.LayerActivationBytes(ex.MicrobatchSize, opts)
	opts.Recompute = model.RecomputeFull
	dropped := kept - tr.LayerActivationBytes(ex.MicrobatchSize, opts)
	prev := 0.0
	for n := 1; n <= tr.Layers; n++ {
		pr := at(model.RecomputeFull, n)
		share := float64(n) / float64(tr.Layers)
		wantTime := none.IterationSeconds + share*(full.IterationSeconds-none.IterationSeconds)
		if math.Abs(pr.IterationSeconds/wantTime-1) > 1e-9 {
			t.Errorf("%d of 16 layers recomputing: %.6f s, want none's plus %d/16 of full's extra, %.6f s", n, pr.IterationSeconds, n, wantTime)
		}
		wantFLOPs := none.FLOPsPerIteration + share*(full.FLOPsPerIteration-none.FLOPsPerIteration)
		if math.Abs(pr.FLOPsPerIteration/wantFLOPs-1) > 1e-9 || pr.ModelFLOPsPerIteration != none.ModelFLOPsPerIteration {
			t.Errorf("%d layers: hardware FLOPs %.6g, want %.6g; model FLOPs %.6g, want none's %.6g", n, pr.FLOPsPerIteration, wantFLOPs, pr.ModelFLOPsPerIteration, none.ModelFLOPsPerIteration)
		}
		act := pr.Memory.ActivationBytes
		if n > 1 && math.Abs((prev-act)/dropped-1) > 1e-9 {
			t.Errorf("%d layers: activations %.4g B, %.4g B below %d layers', want one layer's dropped %.4g B", n, act, prev-act, n-1, dropped)
		}
		prev = act
	}
	if got := at(model.RecomputeFull, tr.Layers); got.IterationSeconds != full.IterationSeconds || got.Memory.PeakBytes != full.Memory.PeakBytes {
		t.Errorf("all 16 layers: %v s and %v B, full recomputation %v s and %v B", got.IterationSeconds, got.Memory.PeakBytes, full.IterationSeconds, full.Memory.PeakBytes)
	}
	// One microbatch in flight: the one recomputed layer's activations
	// are rebuilt whole before its backward, so recomputing it saves
	// nothing at the peak; two save one layer's.
	if one, two := at(model.RecomputeFull, 1).Memory.PeakBytes, at(model.RecomputeFull, 2).Memory.PeakBytes; one != none.Memory.PeakBytes || math.Abs((none.Memory.PeakBytes-two)/dropped-1) > 1e-9 {
		t.Errorf("peak %.6g B recomputing one layer, %.6g B two, %.6g B none: want one = none, two one layer's %.4g B below", one, two, none.Memory.PeakBytes, dropped)
	}
}

// TestPartialRecomputePerChunk checks that N counts per model chunk, as
// Megatron-LM's block method does: on 2 stages of 2 chunks (4 layers
// each), N = 1 recomputes 2 of a device's 8 layers, so the step adds a
// quarter of what full recomputation adds; N past a chunk's layers
// recomputes all of them.
func TestPartialRecomputePerChunk(t *testing.T) {
	_, _, at := partialRecomputeCase(t, 2, 2)
	none, full := at(model.RecomputeNone, 0), at(model.RecomputeFull, 0)
	one := at(model.RecomputeFull, 1)
	want := none.IterationSeconds + (full.IterationSeconds-none.IterationSeconds)/4
	if math.Abs(one.IterationSeconds/want-1) > 1e-9 {
		t.Errorf("1 layer a chunk: %.6f s, want a quarter of full's extra over none, %.6f s", one.IterationSeconds, want)
	}
	if past := at(model.RecomputeFull, 9); past.IterationSeconds != full.IterationSeconds || past.Memory.PeakBytes != full.Memory.PeakBytes {
		t.Errorf("9 layers a chunk of 4: %v s, %v B; want full recomputation's %v s, %v B", past.IterationSeconds, past.Memory.PeakBytes, full.IterationSeconds, full.Memory.PeakBytes)
	}
}

// TestRecomputeLayersValidation checks that bad recompute_layers values are
// refused naming the field.
func TestRecomputeLayersValidation(t *testing.T) {
	tr, ex, _ := partialRecomputeCase(t, 1, 1)
	cluster := servers(t, "nvidia-h100-sxm5-80gb", 8)
	for _, c := range []struct {
		r    model.Recompute
		n    int
		want string
	}{
		{model.RecomputeSelective, 2, `execution.recompute_layers: 2 layers a chunk recompute only with recompute "full", got recompute "selective"`},
		{model.RecomputeFull, -1, "execution.recompute_layers: must be 0 (every layer) to 32768, got -1"},
		{model.RecomputeFull, 17, "execution.recompute_layers: must be at most the 16 layers, got 17"},
	} {
		x := ex
		x.Recompute, x.RecomputeLayers = c.r, c.n
		if _, err := Predict(tr, cluster, x, Options{}); err == nil || err.Error() != c.want {
			t.Errorf("recompute %s, %d layers: error %v, want %q", c.r, c.n, err, c.want)
		}
	}
}

// TestFewestRecomputeLayers checks the bisection against trying every
// count in turn, on executions from 1 to 8 stages, interleaved or not, at
// microbatches from 1 to 8 on a 32-layer 13B GPT at 8K tokens: the fewest
// layers of a chunk whose recomputation fits, or no count where the
// execution fits without recomputation or only recomputing whole chunks.
func TestFewestRecomputeLayers(t *testing.T) {
	tr := gpt(32, 5120, 40)
	tr.Seq = 8192
	c := servers(t, "nvidia-h100-sxm5-80gb", 8)
	pred, err := NewPredictor(tr, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	found, checked := 0, 0
	for _, p := range []int{1, 2, 4, 8} {
		for _, v := range []int{1, 2} {
			for _, b := range []int{1, 2, 4, 8} {
				ex := plan.Execution{TP: 8 / p, PP: p, DP: 1, Interleave: v, MicrobatchSize: b, GlobalBatch: 64,
					Recompute: model.RecomputeFull, SequenceParallel: true, FlashAttention: true}
				if p == 1 && v > 1 {
					continue
				}
				got, pr, ok, err := pred.FewestRecomputeLayers(ex)
				if err != nil {
					t.Fatal(err)
				}
				chunk := (tr.Layers + p*v - 1) / (p * v)
				fitsWith := func(r model.Recompute, n int) bool {
					x := ex
					x.Recompute, x.RecomputeLayers = r, n
					pr, err := pred.Predict(x)
					if err != nil {
						t.Fatal(err)
					}
					return pr.Memory.Fits()
				}
				want := 0 // the fewest that fit; 0: none needed, or none below a chunk fits
				for n := 1; n < chunk && !fitsWith(model.RecomputeNone, 0); n++ {
					if fitsWith(model.RecomputeFull, n) {
						want = n
						break
					}
				}
				checked++
				if ok != (want > 0) || (ok && got.RecomputeLayers != want) {
					t.Errorf("p %d v %d b %d: fewest %d (ok %v), trying each gives %d", p, v, b, got.RecomputeLayers, ok, want)
				}
				if ok {
					found++
					want, err := pred.PredictPeak(got)
					if err != nil {
						t.Fatal(err)
					}
					if fmt.Sprintf("%+v", pr) != fmt.Sprintf("%+v", want) {
						t.Errorf("p %d v %d b %d: prediction of the fewest\n%+v\nPredictPeak's\n%+v", p, v, b, pr, want)
					}
				}
				t.Logf("p %d v %d b %d: fewest %d of %d (ok %v)", p, v, b, got.RecomputeLayers, chunk, ok)
			}
		}
	}
	if found < 3 || found == checked {
		t.Errorf("%d of %d executions fit recomputing some layers: the comparison needs both outcomes", found, checked)
	}
}
