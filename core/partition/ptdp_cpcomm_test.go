package partition

import (
	"context"
	"strings"
	"testing"

	"pipeplan/core/plan"
)

// TestSearchPTDPCPComm: with all-to-all context parallelism pinned the
// search tries only the (t, cp) whose t·cp divides Llama 3 405B's 8 K/V
// heads (cp up to 8 at t = 1), and an unknown type is refused naming the
// field.
func TestSearchPTDPCPComm(t *testing.T) {
	tr := llama405B
	tr.Seq = 65536
	fixed := megatronDefaults
	fixed.GlobalBatch, fixed.CPComm = 64, plan.CPCommA2A
	res, err := SearchPTDP(context.Background(), tr, h100Cluster(t, 1024), PTDPOptions{Fixed: fixed}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cps := map[int]bool{}
	for _, c := range append(res.Candidates, res.Infeasible...) {
		cfg := c.Config
		if 8%(cfg.TP*cfg.CP) != 0 {
			t.Fatalf("a2a with t·cp = %d·%d, which does not divide the 8 K/V heads", cfg.TP, cfg.CP)
		}
		cps[cfg.CP] = true
	}
	if !cps[8] || cps[16] {
		t.Errorf("searched cp %v: want up to 8 (t = 1), not 16", cps)
	}
	fixed.CPComm = "ulysses"
	if _, err := SearchPTDP(context.Background(), tr, h100Cluster(t, 1024), PTDPOptions{Fixed: fixed}, nil); err == nil || !strings.Contains(err.Error(), `cp_comm: must be one of`) {
		t.Errorf("cp_comm ulysses: %v", err)
	}
}
