package cost

import (
	"math"
	"testing"

	"pipeplan/core/model"
	"pipeplan/gpuprofiles"
)

// fp8ExpertRow is a published mixture-of-experts run in FP8.
type fp8ExpertRow struct {
	run PublishedRun
	tr  model.Transformer
}

// fp8ExpertRows returns the published MoE runs in FP8 and the BF16 runs
// of the same models, the rows TestFP8ExpertGEMMFractionFit reads.
func fp8ExpertRows(t *testing.T) (fp8, bf16 []fp8ExpertRow) {
	t.Helper()
	for _, r := range loadPublishedRuns(t) {
		tr := runTransformer(t, r)
		if tr.MoE == nil {
			continue
		}
		switch r.Precision {
		case string(model.FP8):
			fp8 = append(fp8, fp8ExpertRow{r, tr})
		case string(model.BF16):
			bf16 = append(bf16, fp8ExpertRow{r, tr})
		}
	}
	return fp8, bf16
}

// errorAt returns the row's throughput error with the routed experts'
// FP8 GEMMs at fraction f of the curve's rate.
func (r fp8ExpertRow) errorAt(t *testing.T, f float64) float64 {
	t.Helper()
	g, err := gpuprofiles.ByID(r.run.GPU)
	if err != nil {
		t.Fatal(err)
	}
	cmp, err := comparePublishedWith(r.run, r.tr, g, Options{FP8ExpertGEMMFraction: &f})
	if err != nil {
		t.Fatal(err)
	}
	return cmp.Error
}

// sameConfiguration reports whether two published runs differ in nothing
// but their precision and published throughput: one system, the same
// degrees, batch and sequence.
func sameConfiguration(a, b PublishedRun) bool {
	return a.GPU == b.GPU && a.GPUs == b.GPUs && a.Model == b.Model && a.Seq == b.Seq &&
		a.TP == b.TP && a.CP == b.CP && a.PP == b.PP && a.VP == b.VP && a.EP == b.EP && a.ETP == b.ETP &&
		a.FSDP == b.FSDP && a.Microbatch == b.Microbatch && a.GlobalBatch == b.GlobalBatch &&
		a.SourceName == b.SourceName
}

// TestFP8ExpertGEMMFractionFit refits FP8ExpertGEMMFraction on the rows
// marked as fitting it (the five DGX Cloud benchmarking H100 MoE FP8 rows:
// Grok-1 314B under a 2024 NeMo container and NeMo 25.04, Llama 4
// Maverick) by least squares of the relative throughput errors on a 0.01
// grid and checks the constant is that fit. On the held-out asserted MoE
// FP8 runs (Blackwell, Megatron-Bridge, NeMo; none fitted for any
// constant) the mean absolute error must fall against the experts at the
// curve's rate; and on the held-out pairs — the same configuration
// published in FP8 and in BF16, whose ratio cancels everything but what
// FP8 changes — the predicted FP8 speed-up must come closer to the
// published one on average.
func TestFP8ExpertGEMMFractionFit(t *testing.T) {
	fp8, bf16 := fp8ExpertRows(t)
	var fit, held []fp8ExpertRow
	for _, r := range fp8 {
		switch {
		case r.run.Fits == "FP8ExpertGEMMFraction":
			fit = append(fit, r)
		case r.run.Set == "held_out" && !notAsserted[r.run.ID]:
			held = append(held, r)
		}
	}
	if len(fit) < 5 || len(held) < 20 {
		t.Fatalf("%d fit and %d held-out MoE FP8 rows, want at least 5 and 20", len(fit), len(held))
	}
	best := leastSquaresOnGrid(fit, 100, 0.01, func(r fp8ExpertRow, f float64) float64 {
		if f == 0 {
			return math.Inf(1)
		}
		return r.errorAt(t, f)
	})
	t.Logf("fit on %d rows: the routed experts' FP8 GEMMs at %.2f of the curve's rate (FP8ExpertGEMMFraction %.2f)", len(fit), best, FP8ExpertGEMMFraction)
	if math.Abs(best-FP8ExpertGEMMFraction) > 0.005 {
		t.Errorf("FP8ExpertGEMMFraction = %.2f, the fit gives %.2f", FP8ExpertGEMMFraction, best)
	}
	for _, r := range fit {
		t.Logf("fit      %-46s %+6.1f %% -> %+6.1f %%", r.run.ID, 100*r.errorAt(t, 1), 100*r.errorAt(t, FP8ExpertGEMMFraction))
	}

	var before, after float64
	for _, r := range held {
		b, a := r.errorAt(t, 1), r.errorAt(t, FP8ExpertGEMMFraction)
		before, after = before+math.Abs(b), after+math.Abs(a)
		t.Logf("held out %-46s %+6.1f %% -> %+6.1f %%", r.run.ID, 100*b, 100*a)
	}
	n := float64(len(held))
	t.Logf("held out, %d rows: mean absolute error %.1f %% with the experts at the curve's rate, %.1f %% at %.2f of it", len(held), 100*before/n, 100*after/n, FP8ExpertGEMMFraction)
	if after >= before {
		t.Errorf("held out: mean absolute error %.1f %% at %.2f, not below %.1f %% at the curve's rate", 100*after/n, FP8ExpertGEMMFraction, 100*before/n)
	}

	var pairs int
	var gapBefore, gapAfter float64
	for _, f := range held {
		for _, b := range bf16 {
			if !sameConfiguration(f.run, b.run) {
				continue
			}
			// The predicted FP8-over-BF16 speed-up over the published one.
			eb := b.errorAt(t, 1) // BF16 runs do not read the fraction
			gb, ga := (1+f.errorAt(t, 1))/(1+eb)-1, (1+f.errorAt(t, FP8ExpertGEMMFraction))/(1+eb)-1
			t.Logf("pair %-46s / %s: predicted FP8 speed-up over the published %+5.1f %% -> %+5.1f %%", f.run.ID, b.run.ID, 100*gb, 100*ga)
			pairs++
			gapBefore, gapAfter = gapBefore+math.Abs(gb), gapAfter+math.Abs(ga)
		}
	}
	if pairs < 5 {
		t.Fatalf("%d held-out FP8/BF16 pairs of one configuration, want at least 5", pairs)
	}
	t.Logf("%d held-out pairs: the predicted FP8 speed-up off the published by %.1f %% on average, %.1f %% at %.2f", pairs, 100*gapBefore/float64(pairs), 100*gapAfter/float64(pairs), FP8ExpertGEMMFraction)
	if gapAfter >= gapBefore {
		t.Errorf("held-out pairs: the FP8 speed-up is off by %.1f %% on average at %.2f, not closer than %.1f %% at the curve's rate", 100*gapAfter/float64(pairs), FP8ExpertGEMMFraction, 100*gapBefore/float64(pairs))
	}
}
