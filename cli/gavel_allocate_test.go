package cli

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pipeplan/app"
)

const (
	paperInstance = "../core/gavel/testdata/instances/paper_example_3job.json"
	sim64         = "../core/gavel/testdata/instances/sim_k80-36_p100-36_v100-36_N64_seed0.json"
)

func TestGavelAllocatePaperExampleJSON(t *testing.T) {
	var out bytes.Buffer
	if err := Run([]string{"gavel", "allocate", "--instance", paperInstance, "--policy", "max_min_fairness_perf", "--json"}, &out); err != nil {
		t.Fatal(err)
	}
	var got app.InstanceAllocation
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	// The exact optimum of §5.4.1: X = [[5/11,0],[5/11,1/11],[1/11,10/11]], min normalized throughput 8/11.
	want := [][]float64{{5.0 / 11, 0}, {5.0 / 11, 1.0 / 11}, {1.0 / 11, 10.0 / 11}}
	if math.Abs(got.Objective-8.0/11) > 1e-9 {
		t.Errorf("objective %v, want 8/11", got.Objective)
	}
	for m := range want {
		for j := range want[m] {
			if math.Abs(got.X[m][j]-want[m][j]) > 1e-9 {
				t.Fatalf("allocation %v, want %v", got.X, want)
			}
		}
	}
	if got.Policy != "max_min_fairness_perf" {
		t.Errorf("policy %q", got.Policy)
	}
}

func TestGavelAllocateTableAndPacked(t *testing.T) {
	var out bytes.Buffer
	pairs := strings.TrimSuffix(sim64, ".json") + ".pairs.json"
	if err := Run([]string{"gavel", "allocate", "--instance", sim64, "--pairs", pairs, "--policy", "max_sum_throughput_packed"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"policy max_sum_throughput_packed: objective", "k80", "ResNet-50 (batch size 128)", "co-located pairs receive time"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

func TestGavelAllocateErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"worker_types":["k80"],"num_workers":[0],"jobs":[],"throughputs":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--policy", "fifo"}, "--instance: required"},
		{[]string{"--instance", paperInstance}, "--policy: required"},
		{[]string{"--instance", paperInstance, "--policy", "nope"}, "unknown policy"},
		{[]string{"--instance", bad, "--policy", "fifo"}, "instance.num_workers: the cluster needs at least one worker, got [0]"},
		{[]string{"--instance", sim64, "--policy", "min_cost_perf"}, "price_per_hour: required"},
		{[]string{"--instance", sim64, "--policy", "min_cost_perf", "--prices", "1,-2,3"}, "price_per_hour[1]: must be > 0"},
		{[]string{"--instance", sim64, "--policy", "min_cost_perf", "--prices", "1,2"}, "price_per_hour: must have 3 entries"},
		{[]string{"--instance", paperInstance, "--policy", "min_total_duration_perf"}, "needs num_steps"},
	} {
		err := Run(append([]string{"gavel", "allocate"}, c.args...), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
}
