package cost

import (
	"strings"
	"testing"

	"pipeplan/core/hw"
	"pipeplan/gpuprofiles"
)

// TestGPUCalibrationCaveat checks Prediction.Calibration against the
// published runs: it is empty exactly on the calibrated GPUs, whose
// stored runs are mostly asserted (TestPublishedRuns) — not counting
// llm-foundry's MPT rows, a 2023 PyTorch FSDP engine stored to test the
// communication model, whose rows are mostly reported for that engine
// (published.go, above notAsserted); elsewhere it names
// the GPU and says no published run on it fitted the model, no run on it
// is a fit run, and the range it states for the run's family
// (heldOutErrors) holds every stored run of that GPU and family and is
// within 10 points of the most extreme of them, so that it cannot go
// stale.
func TestGPUCalibrationCaveat(t *testing.T) {
	calibrated := map[string]bool{}
	for _, c := range calibratedGPUs {
		if _, err := gpuprofiles.ByID(c.id); err != nil {
			t.Errorf("calibratedGPUs: %v", err)
		}
		calibrated[c.id] = true
	}
	type extremes struct{ lo, hi float64 }
	seen := map[gpuFamily]*extremes{}
	runs, asserted := map[string]int{}, map[string]int{}
	for _, r := range loadPublishedRuns(t) {
		cmp := comparePublished(t, r)
		g, err := gpuprofiles.ByID(r.GPU)
		if err != nil {
			t.Fatal(err)
		}
		key := gpuFamily{r.GPU, cmp.Transformer.MoE != nil}
		caveat := cmp.Prediction.Calibration
		if calibrated[r.GPU] {
			if r.SourceName != "MosaicML llm-foundry" {
				runs[r.GPU]++
				if cmp.Bound > 0 {
					asserted[r.GPU]++
				}
			}
			if caveat != "" {
				t.Errorf("%s on the calibrated %s: caveat %q", r.ID, r.GPU, caveat)
			}
			continue
		}
		if !strings.Contains(caveat, "uncalibrated GPU: no published training run on the "+g.Name+" was used to fit") {
			t.Errorf("%s: the caveat %q does not say that nothing was fitted on the %s", r.ID, caveat, g.Name)
		}
		if r.Set == "fit" {
			t.Errorf("%s: a constant was fitted on this run, but its GPU %s is not in calibratedGPUs", r.ID, r.GPU)
		}
		rg, ok := heldOutErrors[key]
		if !ok {
			t.Errorf("%s: heldOutErrors states no range for %+v", r.ID, key)
			continue
		}
		if stated := signedPercent(rg.lo) + " to " + signedPercent(rg.hi); !strings.Contains(caveat, stated) {
			t.Errorf("%s: the caveat %q does not state the range %s", r.ID, caveat, stated)
		}
		if cmp.Error < rg.lo || cmp.Error > rg.hi {
			t.Errorf("%s: error %s, outside the range %s to %s the caveat states for %+v", r.ID, signedPercent(cmp.Error), signedPercent(rg.lo), signedPercent(rg.hi), key)
		}
		if e := seen[key]; e == nil {
			seen[key] = &extremes{cmp.Error, cmp.Error}
		} else {
			e.lo, e.hi = min(e.lo, cmp.Error), max(e.hi, cmp.Error)
		}
	}
	for key, rg := range heldOutErrors {
		e := seen[key]
		if e == nil {
			t.Errorf("heldOutErrors: no stored published run backs the range of %+v", key)
			continue
		}
		if e.lo-rg.lo > 0.10 || rg.hi-e.hi > 0.10 {
			t.Errorf("heldOutErrors: %+v states %s to %s, but its runs span %s to %s: restate it",
				key, signedPercent(rg.lo), signedPercent(rg.hi), signedPercent(e.lo), signedPercent(e.hi))
		}
	}
	for id, n := range runs {
		if 2*asserted[id] <= n {
			t.Errorf("%s is calibrated, but only %d of its %d stored published runs are asserted", id, asserted[id], n)
		}
	}
}

// TestCalibrationCaveatWithoutRuns: a GPU with no stored published run
// (MI300X) and a custom profile carry the caveat without a range; the
// calibrated GPUs carry none; Caveats lists both caveats in order.
func TestCalibrationCaveatWithoutRuns(t *testing.T) {
	mi300x, err := gpuprofiles.ByID("amd-mi300x")
	if err != nil {
		t.Fatal(err)
	}
	custom := hw.GPU{ID: "my-accelerator", MemoryBytes: 64 << 30, PeakFLOPS: map[string]float64{hw.PrecisionBF16: 500e12}, LogicalDevices: 1}
	for _, g := range []hw.GPU{mi300x, custom} {
		for _, moe := range []bool{false, true} {
			got := calibrationCaveat(g, moe)
			name := g.Name
			if name == "" {
				name = g.ID
			}
			for _, want := range []string{"uncalibrated GPU", name, "no published training run", "rough estimate"} {
				if !strings.Contains(got, want) {
					t.Errorf("%s (MoE %v): caveat %q lacks %q", g.ID, moe, got, want)
				}
			}
		}
	}
	for _, c := range calibratedGPUs {
		g, err := gpuprofiles.ByID(c.id)
		if err != nil {
			t.Fatal(err)
		}
		if got := calibrationCaveat(g, false); got != "" {
			t.Errorf("%s: caveat %q on a calibrated GPU", c.id, got)
		}
	}
	pr := Prediction{Caveat: "a", Calibration: "b"}
	if got := pr.Caveats(); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("Caveats() = %q, want [a b]", got)
	}
	if got := (Prediction{Calibration: "b"}).Caveats(); len(got) != 1 || got[0] != "b" {
		t.Errorf("Caveats() = %q, want [b]", got)
	}
}
