package cli

import (
	"bytes"
	"strings"
	"testing"
)

// bert48Args describe BERT-48 on 8 p3.16xlarge servers for the 2BW planner.
var bert48Args = []string{"transformer", "--planner", "2bw", "--layers", "48", "--hidden", "1024", "--heads", "16", "--seq", "128",
	"--vocab", "30522", "--gpu", "nvidia-v100-sxm2-16gb", "--precision", "fp16", "--gpus", "64", "--inter-node-bandwidth", "3.90625e8",
	"--batch", "1024"}

// TestTransformerTwoBW checks the 2BW planner through the CLI: JSON
// candidates with their 2BW execution, the fixed depth honoured, the
// table's note naming the execution, and the flags it cannot honour named.
func TestTransformerTwoBW(t *testing.T) {
	c := first(t, transformerJSON(t, append(bert48Args, "--pp", "8", "--microbatch", "1", "--recompute", "full")...))
	e := c["execution"].(map[string]any)
	if c["planner"] != "2bw" || e["pp"] != 8.0 || e["dp"] != 8.0 || e["microbatch_size"] != 1.0 || c["two_bw"].(map[string]any)["execution"] != "2bw-recompute" {
		t.Errorf("candidate %v", c)
	}
	var out bytes.Buffer
	if err := Run(append(append([]string{}, bert48Args...), "--top", "1"), &out); err != nil || !strings.Contains(out.String(), "fits, 2bw") {
		t.Errorf("table: %v\n%s", err, out.String())
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tp", "2"}, "--tp (plan.tp): the 2BW planner runs tensor-parallel size 1"},
		{[]string{"--schedule", "gpipe"}, "--schedule (plan.schedule):"},
		{[]string{"--pp", "64"}, "--pp (plan.pp): the 2BW planner needs pp to divide the 64 GPUs and at most one stage per layer (48 layers), got 64"},
		{[]string{"--planner", "3bw"}, "--planner (plan.planner): must be one of"},
	} {
		err := Run(append(append([]string{}, bert48Args...), tc.args...), &out)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: want error containing %q, got %v", tc.args, tc.want, err)
		}
	}
	if err := Run(append(append([]string{}, gpt3Args...), "--schedule", "zigzag"), &out); err == nil || !strings.Contains(err.Error(), "--schedule (plan.schedule): must be one of") {
		t.Errorf("--schedule zigzag: %v", err)
	}
}
