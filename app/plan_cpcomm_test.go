package app

import (
	"context"
	"strings"
	"testing"

	"pipeplan/app/request"
	"pipeplan/core/plan"
)

// TestPlanCPComm: the request's cp_comm reaches the execution the Plan
// page shows and its breakdown. Llama 3 8B at 64K with cp 8 in one H100
// server: the all-gather of K and V is not overlapped, so more of it is
// exposed than of the ring, which hides behind the attention; left empty,
// the type is searched: the execution and the exported plan name the
// fastest of the three pinned ones; a2a with t·cp beyond the 8 K/V heads is refused naming the
// field.
func TestPlanCPComm(t *testing.T) {
	run := func(comm string, tp, cp, nodes int) (Result, error) {
		in := request.Default().Plan
		in.Model, in.GPU, in.Seq, in.Nodes, in.GlobalBatch = "llama3-8b", "nvidia-h100-sxm5-80gb", 65536, nodes, 8
		in.TP, in.PP, in.CP, in.Microbatch, in.Interleave, in.Recompute, in.CPComm = tp, 1, cp, 1, 1, "full", comm
		return Plan(context.Background(), in)
	}
	ring, err := run(plan.CPCommP2P, 1, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	gather, err := run(plan.CPCommAllGather, 1, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(ring.Candidates) != 1 || len(gather.Candidates) != 1 {
		t.Fatalf("candidates: ring %d, all-gather %d (%s %s)", len(ring.Candidates), len(gather.Candidates), ring.Problem, gather.Problem)
	}
	r, g := ring.Candidates[0], gather.Candidates[0]
	if g.Execution.CPComm != plan.CPCommAllGather || r.Execution.CPComm != plan.CPCommP2P {
		t.Errorf("executions' cp_comm: ring %q, all-gather %q", r.Execution.CPComm, g.Execution.CPComm)
	}
	if !(g.Breakdown.ContextParallelSeconds > r.Breakdown.ContextParallelSeconds) {
		t.Errorf("exposed CP comm: all-gather %v s, ring %v s; want the all-gather's larger", g.Breakdown.ContextParallelSeconds, r.Breakdown.ContextParallelSeconds)
	}
	a2a, err := run(plan.CPCommA2A, 1, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	searched, err := run("", 1, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	best := r
	for _, c := range []Candidate{g, a2a.Candidates[0]} {
		if c.IterationSeconds < best.IterationSeconds {
			best = c
		}
	}
	if s := searched.Candidates[0]; s.Execution.CPComm != best.Execution.CPComm || s.IterationSeconds != best.IterationSeconds {
		t.Errorf("searched cp_comm: %q in %v s; the fastest pinned is %q in %v s", s.Execution.CPComm, s.IterationSeconds, best.Execution.CPComm, best.IterationSeconds)
	}
	// The exported plan names the chosen type (the runner's Megatron-LM
	// export turns it into --cp-comm-type: TestExportCPComm).
	if searched.Plan == nil || searched.Plan.Execution.CPComm != best.Execution.CPComm {
		t.Errorf("exported plan's cp_comm: %+v, want %q", searched.Plan, best.Execution.CPComm)
	}
	if _, err := run(plan.CPCommA2A, 2, 8, 2); err == nil || !strings.Contains(err.Error(), "cp_comm: a2a needs the 32 attention heads and 8 K/V heads") {
		t.Errorf("a2a with t·cp = 16: %v", err)
	}
}
