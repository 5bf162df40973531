package app

import (
	"context"
	"strings"
	"testing"

	"pipeplan/app/request"
)

// bert2BW is BERT-48 on 4 servers of 8 V100s for the 2BW planner.
func bert2BW() request.Plan {
	in := request.Default().Plan
	in.Model, in.Planner = "custom", "2bw"
	in.Custom = request.CustomModel{Layers: 48, Hidden: 1024, Heads: 16, Vocab: 30522}
	in.Seq, in.Precision, in.GPU, in.Nodes, in.GPUsPerNode, in.InterNodeGBps = 128, "fp16", "nvidia-v100-sxm2-16gb", 4, 8, 0.390625
	in.GlobalBatch = 512
	return in
}

// TestPlanTwoBWTransformer checks the 2BW path on a transformer spec: every
// candidate uses all GPUs with TP 1 and says its 2BW execution, the fixed
// depth, microbatch and recomputation are honoured, and the memory fits
// the GPU less the reserve.
func TestPlanTwoBWTransformer(t *testing.T) {
	res, err := Plan(context.Background(), bert2BW())
	if err != nil || len(res.Candidates) == 0 {
		t.Fatalf("%v, %d candidates, problem %q", err, len(res.Candidates), res.Problem)
	}
	for _, c := range res.Candidates {
		e := c.Execution
		if c.Planner != "2bw" || c.TwoBW == nil || e.TP != 1 || e.PP*e.DP != 32 || !(c.SamplesPerSecond > 0) ||
			c.Memory.PeakBytes+c.Memory.ReserveBytes > c.Memory.CapacityBytes {
			t.Errorf("candidate %+v (2bw %+v, memory %+v)", e, c.TwoBW, c.Memory)
		}
	}
	in := bert2BW()
	in.PP, in.Microbatch, in.Recompute = 8, 2, "full"
	res, err = Plan(context.Background(), in)
	if err != nil || len(res.Candidates) != 1 {
		t.Fatalf("fixed (8, 2, full): %v, %d candidates", err, len(res.Candidates))
	}
	if e := res.Candidates[0].Execution; e.PP != 8 || e.MicrobatchSize != 2 || e.Recompute != "full" || res.Candidates[0].TwoBW.Execution.String() != "2bw-recompute" {
		t.Errorf("fixed (8, 2, full): got %+v, %v", e, res.Candidates[0].TwoBW.Execution)
	}
}

// TestPlanTwoBWTransformerBadInput checks that the choices 2BW cannot
// honour are errors naming the field.
func TestPlanTwoBWTransformerBadInput(t *testing.T) {
	for field, set := range map[string]func(*request.Plan){
		"plan.tp":         func(p *request.Plan) { p.TP = 2 },
		"plan.zero":       func(p *request.Plan) { z := 3; p.ZeRO = &z },
		"plan.recompute":  func(p *request.Plan) { p.Recompute = "selective" },
		"plan.schedule":   func(p *request.Plan) { p.Schedule = "gpipe" },
		"plan.pp":         func(p *request.Plan) { p.PP = 64 }, // 64 stages for 48 layers
		"plan.mtp_layers": func(p *request.Plan) { n := 1; p.MTPLayers = &n },
	} {
		in := bert2BW()
		set(&in)
		if _, err := Plan(context.Background(), in); err == nil || !strings.HasPrefix(err.Error(), field+":") {
			t.Errorf("%s: %v", field, err)
		}
	}
	in := bert2BW()
	in.Planner, in.Schedule = "ptdp", "zigzag"
	if _, err := Plan(context.Background(), in); err == nil || !strings.HasPrefix(err.Error(), "plan.schedule:") {
		t.Errorf("schedule zigzag: %v", err)
	}
}
