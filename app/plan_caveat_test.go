package app

import (
	"context"
	"strings"
	"testing"

	"pipeplan/app/request"
	"pipeplan/gpuprofiles"
)

// TestPlanUncalibratedGPUCaveat: a plan on a GPU on which no published
// training run calibrated the cost model (B200, with stored held-out runs;
// MI300X, with none) says so, naming the GPU, in each candidate's caveat
// and in the note on the chosen plan; on the A100 and H100 it does not.
func TestPlanUncalibratedGPUCaveat(t *testing.T) {
	for _, c := range []struct {
		gpu          string
		uncalibrated bool
		want         string // what the caveat says of the held-out runs
	}{
		{"nvidia-b200-sxm", true, "predictions of its held-out published dense runs were"},
		{"amd-mi300x", true, "rough estimate"},
		{"nvidia-h100-sxm5-80gb", false, ""},
		{"nvidia-a100-sxm4-80gb", false, ""},
	} {
		g, err := gpuprofiles.ByID(c.gpu)
		if err != nil {
			t.Fatal(err)
		}
		in := request.Default().Plan
		in.Model, in.GPU, in.Nodes, in.GlobalBatch = "llama3-8b", c.gpu, 2, 64
		in.TP, in.PP, in.Microbatch, in.Interleave, in.Recompute = 1, 1, 1, 1, "full" // one configuration: a search is not the point
		res, err := Plan(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Candidates) == 0 {
			t.Fatalf("%s: no candidate (%s)", c.gpu, res.Problem)
		}
		caveat := res.Candidates[0].Caveat
		if !c.uncalibrated {
			if caveat != "" || strings.Contains(res.Note, "uncalibrated") {
				t.Errorf("%s: caveat %q, note %q on a calibrated GPU", c.gpu, caveat, res.Note)
			}
			continue
		}
		for _, want := range []string{"uncalibrated GPU: no published training run on the " + g.Name, c.want} {
			if !strings.Contains(caveat, want) {
				t.Errorf("%s: caveat %q lacks %q", c.gpu, caveat, want)
			}
		}
		if !strings.Contains(res.Note, "prediction is uncertain: "+caveat) {
			t.Errorf("%s: note %q lacks the caveat %q", c.gpu, res.Note, caveat)
		}
	}
}
