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

// TestPlanNVLinkDomainNote: a GB200 plan on nodes of 8 GPUs, where its
// NVLink domain joins 72, says so and how to cost the domain; on nodes of
// 64, or on one node, or on an H100, whose domain is its server, it does
// not.
func TestPlanNVLinkDomainNote(t *testing.T) {
	for _, c := range []struct {
		gpu            string
		nodes, perNode int
		note           bool
	}{
		{"nvidia-gb200-gpu", 8, 8, true},
		{"nvidia-gb200-gpu", 1, 64, false},
		{"nvidia-gb200-gpu", 1, 8, false},
		{"nvidia-h100-sxm5-80gb", 8, 8, false},
	} {
		in := request.Default().Plan
		in.Model, in.GPU, in.Nodes, in.GPUsPerNode, in.GlobalBatch = "llama3-8b", c.gpu, c.nodes, c.perNode, 64
		in.TP, in.PP, in.Microbatch, in.Interleave, in.Recompute = 1, 1, 1, 1, "full"
		res, err := Plan(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		want := "joins up to 72 GPUs in one NVLink domain, but this plan costs nodes of 8 GPUs"
		if got := strings.Contains(res.Note, want); got != c.note {
			t.Errorf("%s, %d nodes of %d: note %q; want it to say %q: %v", c.gpu, c.nodes, c.perNode, res.Note, want, c.note)
		}
	}
}
