package cost

import (
	"math"
	"testing"
)

// stepSecondsExposed returns row r's predicted step time with the share f
// of its overlapped expert exchange left exposed.
func (r expertRow) stepSecondsExposed(t *testing.T, f float64) float64 {
	pr, err := Predict(r.tr, r.c, r.ex, Options{EPOverlapExposed: &f})
	if err != nil {
		t.Fatalf("%s: %v", r.run.ID, err)
	}
	return pr.IterationSeconds
}

// fitEPOverlapExposed returns the exposed share, to 0.01 in [0, 1], that
// minimises the sum of the squared relative throughput errors of rows.
func fitEPOverlapExposed(t *testing.T, rows []expertRow) float64 {
	return leastSquaresOnGrid(rows, 100, 0.01, func(r expertRow, f float64) float64 {
		return r.published/r.stepSecondsExposed(t, f) - 1
	})
}

// TestEPOverlapExposedFit refits DefaultEPOverlapExposed on the runs
// marked "fit" that overlap the expert exchange (Megatron-Bridge's Qwen3
// 235B-A22B FP8 on 256 H100, five releases from 25.11 to 26.04.01) and
// checks the constant is that fit; leaving any one out moves the fit by
// at most 0.05 and predicts the one left out within 10 %; over the
// held-out runs with the overlap (DeepSeek-V3 on GB200, another model,
// GPU and dispatcher; the same model in BF16 from Megatron-MoE-ModelZoo)
// the mean error shrinks, each stays within the MoE bound, and the
// exposed share stays under a half: the overlap still hides most of what
// it can. (Megatron-Bridge 26.02's DeepSeek-V3 on GB200 reads +1.0 %
// hiding all and −3.6 % with the fit, with its multi-token prediction
// module, which the table does not confirm; without it +30.9 % and
// +22.8 %.)
func TestEPOverlapExposedFit(t *testing.T) {
	var fit, held []expertRow
	for _, r := range expertRows(t) {
		switch {
		case !r.ex.Overlap.EPComm:
		case r.run.Fits == "DefaultEPOverlapExposed":
			fit = append(fit, r)
		case !notAsserted[r.run.ID]: // a reported run is off for reasons of its own (published.go)
			held = append(held, r)
		}
	}
	if len(fit) < 3 || len(held) < 1 {
		t.Fatalf("%d fit and %d held-out runs with the expert exchange overlapped, want at least 3 and 1", len(fit), len(held))
	}
	f := fitEPOverlapExposed(t, fit)
	t.Logf("fit on %d runs: %.2f of the hideable exchange exposed (DefaultEPOverlapExposed %.2f)", len(fit), f, DefaultEPOverlapExposed)
	if math.Abs(f-DefaultEPOverlapExposed) > 0.005 || f >= 0.5 {
		t.Errorf("DefaultEPOverlapExposed = %.2f, the fit gives %.2f (want it under 0.5)", DefaultEPOverlapExposed, f)
	}
	for i, r := range fit {
		fi := fitEPOverlapExposed(t, append(append([]expertRow{}, fit[:i]...), fit[i+1:]...))
		e := r.published/r.stepSecondsExposed(t, fi) - 1
		t.Logf("fit without %-40s %.2f; its throughput error then %+.1f %% (%+.1f %% hiding all)", r.run.ID, fi, 100*e, 100*(r.published/r.stepSecondsExposed(t, 0)-1))
		if math.Abs(fi-f) > 0.05 || math.Abs(e) > 0.10 {
			t.Errorf("leaving %s out: fit %.2f (all of them: %.2f), its error %+.1f %%", r.run.ID, fi, f, 100*e)
		}
	}
	var meanBefore, meanAfter float64
	for _, r := range held {
		before, after := r.published/r.stepSecondsExposed(t, 0)-1, r.published/r.stepSecondsExposed(t, f)-1
		t.Logf("held out %-40s throughput error %+.1f %% -> %+.1f %%", r.run.ID, 100*before, 100*after)
		meanBefore += math.Abs(before) / float64(len(held))
		meanAfter += math.Abs(after) / float64(len(held))
		if math.Abs(after) > moeBound {
			t.Errorf("%s: with the exposed share %+.1f %% from the published throughput, beyond the MoE bound ±%.0f %%", r.run.ID, 100*after, 100*moeBound)
		}
	}
	t.Logf("held out: mean absolute error %.1f %% hiding all, %.1f %% with the fit", 100*meanBefore, 100*meanAfter)
	if meanAfter >= meanBefore {
		t.Errorf("the exposed share does not bring the held-out runs closer: mean absolute error %.1f %% -> %.1f %%", 100*meanBefore, 100*meanAfter)
	}
}
