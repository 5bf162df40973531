package cli

import (
	"os"
	"path/filepath"
	"testing"

	"pipeplan/core/plan"
)

// TestPartition2BWCommand runs the 2BW planner on VGG-16 over 4×4 GPUs and
// exports the best configuration as a plan that uses every GPU.
func TestPartition2BWCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "plan.json")
	v := partitionJSON(t, "--model", "vgg16", "--algorithm", "2bw", "--level-sizes", "4,4",
		"--level-bandwidths", "16e9,1.25e9", "--memory-bytes", "16e9", "--batch", "1024", "--export-plan", out)
	cands := v["candidates"].([]any)
	if len(cands) == 0 || v["batch_size"].(float64) != 1024 {
		t.Fatalf("2bw: %d candidates at batch %v, want some at 1024", len(cands), v["batch_size"])
	}
	best := v["best"].(map[string]any)
	prev := best["samples_per_second"].(float64)
	for i, c := range cands {
		c := c.(map[string]any)
		if got := c["dp"].(float64) * c["pp"].(float64); got != 16 {
			t.Errorf("candidate %d uses %v GPUs, want 16", i, got)
		}
		if s := c["samples_per_second"].(float64); s > prev {
			t.Errorf("candidate %d (%v samples/s) ranks below a slower one (%v)", i, s, prev)
		}
		prev = c["samples_per_second"].(float64)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if p.Planner != "2bw" || p.Execution.PP*p.Execution.DP != 16 || p.Execution.GlobalBatch != 1024 {
		t.Errorf("exported plan %s %+v batch %d, want 2bw on 16 GPUs at batch 1024", p.Planner, p.Execution, p.Execution.GlobalBatch)
	}
}
