package cost

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
	"testing"

	"pipeplan/gpuprofiles"
)

// groupedGEMM is one measurement of testdata/grouped_gemm_h100.json.
type groupedGEMM struct {
	ID              string             `json:"id"`
	GPU             string             `json:"gpu"`
	Precision       string             `json:"precision"`
	Experts         int                `json:"experts"`
	TokensPerExpert int                `json:"tokens_per_expert"`
	K               int                `json:"k"`
	N               int                `json:"n"`
	TFLOPS          map[string]float64 `json:"tflops"`
	Source          string             `json:"source"`
}

// expertGEMMsPerMicrobatch is how many GEMMs one local expert runs per MoE
// layer and microbatch: its two linear layers forward, and for each the
// input and the weight gradient backward.
const expertGEMMsPerMicrobatch = 6

// TestSmallExpertGEMMs checks DefaultExpertSeconds against published
// grouped-GEMM measurements on H100: small per-expert GEMMs run well below
// what the FLOP-only efficiency curve gives them (at least 2× slower, the
// effect the per-expert time stands for), and the measured shortfall per
// GEMM, times the GEMMs a local expert runs per layer and microbatch, stays
// below DefaultExpertSeconds: the fitted time is not smaller than the part
// of it the GPU alone measurably loses (the rest is taken to be the host's
// per-expert work, package doc).
func TestSmallExpertGEMMs(t *testing.T) {
	data, err := os.ReadFile("testdata/grouped_gemm_h100.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Runs []groupedGEMM `json:"runs"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Runs) == 0 {
		t.Fatal("no grouped-GEMM measurements")
	}
	for _, r := range file.Runs {
		g, err := gpuprofiles.ByID(r.GPU)
		if err != nil {
			t.Fatal(err)
		}
		curve, err := DefaultEfficiency(g, r.Precision)
		if err != nil {
			t.Fatal(err)
		}
		peak, err := g.Peak(r.Precision)
		if err != nil {
			t.Fatal(err)
		}
		per := 2 * float64(r.TokensPerExpert) * float64(r.K) * float64(r.N)
		model := curve.Seconds(per, peak)
		for _, backend := range slices.Sorted(maps.Keys(r.TFLOPS)) {
			tflops := r.TFLOPS[backend]
			measured := per / (tflops * 1e12)
			short := measured - model
			t.Logf("%s, %s: measured %.1f µs per expert GEMM (%.1f TFLOP/s), the curve %.1f µs (%.0f TFLOP/s): %.1f µs short, ×%d = %.0f µs per expert and microbatch (DefaultExpertSeconds %.0f µs)",
				r.ID, backend, 1e6*measured, tflops, 1e6*model, per/model/1e12, 1e6*short, expertGEMMsPerMicrobatch, 1e6*short*expertGEMMsPerMicrobatch, 1e6*DefaultExpertSeconds)
			if measured < 2*model {
				t.Errorf("%s, %s: measured %.1f µs per expert GEMM, less than twice the curve's %.1f µs (%s)", r.ID, backend, 1e6*measured, 1e6*model, r.Source)
			}
			if short*expertGEMMsPerMicrobatch > DefaultExpertSeconds {
				t.Errorf("%s, %s: the GPU alone loses %.0f µs per expert and microbatch, more than DefaultExpertSeconds %.0f µs (%s)", r.ID, backend, 1e6*short*expertGEMMsPerMicrobatch, 1e6*DefaultExpertSeconds, r.Source)
			}
		}
	}
}
