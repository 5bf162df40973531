package engine

import (
	"context"
	"testing"

	"pipeplan/ui/state"
)

func TestPlanDefaultGPT3(t *testing.T) {
	res, err := Plan(context.Background(), state.Default().Plan)
	if err != nil {
		t.Fatal(err)
	}
	if res.Problem != "" || len(res.Candidates) == 0 || res.Plan == nil {
		t.Fatalf("no plan: %+v", res.Problem)
	}
	best := res.Candidates[0]
	t.Logf("best: %+v, %.1f TFLOP/s/GPU", best.Config, best.TFLOPSPerGPU)
	if err := res.Plan.Validate(); err != nil {
		t.Errorf("exported plan invalid: %v", err)
	}
}
