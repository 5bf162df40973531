package engine

import (
	"context"
	"math"
	"strings"
	"testing"

	"pipeplan/ui/state"
)

// TestAllocatePaperExample checks the §5.4.1 allocation the page shows.
func TestAllocatePaperExample(t *testing.T) {
	res, err := Allocate(context.Background(), state.DefaultCluster())
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{0.45, 0}, {0.45, 0.09}, {0.09, 0.91}}
	for m := range want {
		for j := range want[m] {
			if math.Abs(res.X[m][j]-want[m][j]) > 0.006 {
				t.Fatalf("X = %v, paper %v", res.X, want)
			}
		}
	}
	if res.BaselinePolicy != "max_min_fairness" {
		t.Errorf("baseline = %s", res.BaselinePolicy)
	}
	// Max-min fairness over throughputs normalized to each job's V100
	// rate: the aware policy lifts the slowest job above the agnostic one.
	minNorm := func(eff []float64) float64 {
		lo := math.Inf(1)
		for m, e := range eff {
			lo = math.Min(lo, e/res.Throughputs[m][0])
		}
		return lo
	}
	if a, b := minNorm(res.Effective), minNorm(res.Baseline); a <= b {
		t.Errorf("aware min normalized throughput %v, agnostic %v: want aware higher", a, b)
	}
}

func TestAllocateJobTypes(t *testing.T) {
	in := state.DefaultCluster()
	in.Workload, in.GPUs = state.WorkloadJobTypes, []int{2, 2, 2}
	res, err := Allocate(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.X) != len(in.Jobs) || len(res.WorkerTypes) != 3 {
		t.Fatalf("allocation %v for %d jobs", res.X, len(in.Jobs))
	}
	in.Jobs[0].Type = "No Such Model"
	if _, err := Allocate(context.Background(), in); err == nil || !strings.Contains(err.Error(), "cluster.jobs[0]") {
		t.Errorf("unknown job type: err = %v", err)
	}
	in = state.DefaultCluster()
	in.Policy = "nope"
	if _, err := Allocate(context.Background(), in); err == nil || !strings.Contains(err.Error(), "cluster.policy") {
		t.Errorf("unknown policy: err = %v", err)
	}
}

func TestSimulateTraceCompletesAndCancels(t *testing.T) {
	in := state.DefaultCluster()
	in.Workload, in.GPUs, in.TraceJobs = state.WorkloadJobTypes, []int{8, 8, 8}, 12
	last, yields := 0, 0
	res, err := SimulateTrace(context.Background(), in, func(done, total int) {
		if total != 12 || done < last {
			t.Fatalf("progress %d/%d after %d", done, total, last)
		}
		last = done
	}, func() { yields++ })
	if err != nil {
		t.Fatal(err)
	}
	if res.JobsCompleted != 12 || last != 12 || !(res.AvgJCTSeconds > 0) || yields == 0 {
		t.Errorf("completed %d, progress %d, avg JCT %v, %d yields", res.JobsCompleted, last, res.AvgJCTSeconds, yields)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := SimulateTrace(ctx, in, nil, nil); err == nil {
		t.Errorf("a cancelled simulation must return an error")
	}
	if _, err := SimulateTrace(context.Background(), state.DefaultCluster(), nil, nil); err == nil || !strings.Contains(err.Error(), "cluster.workload") {
		t.Errorf("paper workload: err = %v", err)
	}
}

func TestAllocateJSONPaperExample(t *testing.T) {
	inst := `{"worker_types": ["v100", "k80"], "num_workers": [1, 1],
		"jobs": [{"id": 0, "scale_factor": 1}, {"id": 1, "scale_factor": 1}, {"id": 2, "scale_factor": 1}],
		"throughputs": [[40, 10], [12, 4], [100, 50]]}`
	out, err := AllocateJSON(context.Background(), []byte(inst), "max_min_fairness_perf")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"allocation":[[0.45`) {
		t.Errorf("allocation JSON %s does not start with the paper's 0.45", out)
	}
	if _, err := AllocateJSON(context.Background(), []byte(inst), "nope"); err == nil || !strings.Contains(err.Error(), "policy") {
		t.Errorf("unknown policy: err = %v", err)
	}
}
