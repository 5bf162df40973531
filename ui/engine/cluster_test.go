package engine

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"pipeplan/core/gavel"
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

// TestAllocatePlacementSensitive: with the flag on, the instance carries
// Gavel's unconsolidated throughputs (a 2-GPU LM job runs at about a
// quarter of its consolidated V100 speed spread over servers), the policy
// splits time into consolidated and unconsolidated shares, and the
// effective throughput is eq. 5.1 over both, computed here by hand.
func TestAllocatePlacementSensitive(t *testing.T) {
	in := state.DefaultCluster()
	in.Workload, in.GPUs, in.PlacementSensitive = state.WorkloadJobTypes, []int{4, 4, 4}, true
	// Gavel measured ResNet-18 (batch size 256) ×2 faster spread than
	// consolidated on V100s (19.7 vs 15.9 steps/s), so the policy uses it.
	in.Jobs = append(in.Jobs, state.Job{Type: "ResNet-18 (batch size 256)", Scale: 2, Weight: 1})
	res, err := Allocate(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	tt := gavel.DefaultThroughputs()
	lm, _ := tt.Isolated("v100_unconsolidated", gavel.JobKey{Model: "LM (batch size 20)", ScaleFactor: 2})
	if got := res.UnconsolidatedThroughputs[3][0]; got != lm || got/res.Throughputs[3][0] > 0.25 {
		t.Errorf("LM ×2 spread on v100: %v (consolidated %v), want Gavel's %v, under a quarter", got, res.Throughputs[3][0], lm)
	}
	if !strings.Contains(res.UnconsolidatedSources[3][0], "v100_unconsolidated") {
		t.Errorf("LM ×2 spread source %q", res.UnconsolidatedSources[3][0])
	}
	for m, row := range res.UnconsolidatedThroughputs[:3] {
		if slices.ContainsFunc(row, func(v float64) bool { return v != 0 }) || res.UnconsolidatedSources[m] != nil {
			t.Errorf("single-GPU job %d has unconsolidated throughputs %v (%q)", m, row, res.UnconsolidatedSources[m])
		}
	}
	if len(res.UnconsolidatedX) != len(in.Jobs) {
		t.Fatalf("unconsolidated allocation %v", res.UnconsolidatedX)
	}
	spread := 0.0
	for m := range in.Jobs {
		want := 0.0
		for j := range res.WorkerTypes {
			want += res.X[m][j]*res.Throughputs[m][j] + res.UnconsolidatedX[m][j]*res.UnconsolidatedThroughputs[m][j]
			spread += res.UnconsolidatedX[m][j]
		}
		if math.Abs(res.Effective[m]-want) > 1e-12*want {
			t.Errorf("job %d: effective %v, by hand %v", m, res.Effective[m], want)
		}
	}
	if !(spread > 0.01) {
		t.Errorf("no unconsolidated time (X %v, unconsolidated %v): the test needs some", res.X, res.UnconsolidatedX)
	}
	// Both shares use the same GPUs.
	for j, n := range in.GPUs {
		used := 0.0
		for m, job := range in.Jobs {
			used += float64(job.Scale) * (res.X[m][j] + res.UnconsolidatedX[m][j])
		}
		if used > float64(n)+1e-6 {
			t.Errorf("%s: %v GPUs used of %d", res.WorkerTypes[j], used, n)
		}
	}
	in.PlacementSensitive = false
	off, err := Allocate(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if off.UnconsolidatedX != nil || off.UnconsolidatedThroughputs != nil {
		t.Errorf("flag off: unconsolidated %v, %v", off.UnconsolidatedThroughputs, off.UnconsolidatedX)
	}
}

// TestSimulateTracePlacementSensitive: the page's flag reaches the
// simulator (the same trace simulated by core/gavel directly with it on).
func TestSimulateTracePlacementSensitive(t *testing.T) {
	in := state.DefaultCluster()
	in.Workload, in.GPUs, in.TraceJobs, in.PlacementSensitive = state.WorkloadJobTypes, []int{8, 8, 8}, 12, true
	got, err := SimulateTrace(context.Background(), in, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := gavel.GenerateTrace(gavel.TraceConfig{NumJobs: 12, JobsPerHour: in.TraceJobsPerHour, MultiGPU: true})
	if err != nil {
		t.Fatal(err)
	}
	policy, _ := gavel.PolicyByName(in.Policy)
	cfg := gavel.SimConfig{Cluster: gavel.ClusterSpec{WorkerTypes: []string{"v100", "p100", "k80"}, NumWorkers: in.GPUs},
		Policy: policy, Jobs: jobs, PlacementSensitive: true}
	want, err := gavel.Simulate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.PlacementSensitive = false
	plain, err := gavel.Simulate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got.AvgJCTSeconds != want.AvgJCTSeconds || got.Rounds != want.Rounds {
		t.Errorf("page simulation: avg JCT %v in %d rounds, core placement-sensitive %v in %d", got.AvgJCTSeconds, got.Rounds, want.AvgJCTSeconds, want.Rounds)
	}
	t.Logf("avg JCT %.4g h placement-sensitive, %.4g h not", want.AvgJCTSeconds/3600, plain.AvgJCTSeconds/3600)
	if want.AvgJCTSeconds == plain.AvgJCTSeconds {
		t.Errorf("placement sensitivity changes nothing on this trace (avg JCT %v): the test cannot tell the flag was passed", plain.AvgJCTSeconds)
	}
}

// BenchmarkAllocatePlacement is the Cluster page's allocation of 16 jobs of
// Gavel's ResNet, Transformer and LM types (half multi-GPU) under max-min
// fairness and its agnostic baseline, without and with placement
// sensitivity (twice the LP's columns, §5.3.1).
func BenchmarkAllocatePlacement(b *testing.B) {
	in := state.DefaultCluster()
	in.Workload, in.GPUs, in.Jobs = state.WorkloadJobTypes, []int{16, 16, 16}, nil
	types := JobTypes()
	for m := range 16 {
		in.Jobs = append(in.Jobs, state.Job{Type: types[(3*m)%19], Scale: []int{1, 2, 1, 4}[m%4], Weight: 1})
	}
	for _, on := range []bool{false, true} {
		in.PlacementSensitive = on
		b.Run(fmt.Sprintf("sensitive=%v", on), func(b *testing.B) {
			for b.Loop() {
				if _, err := Allocate(context.Background(), in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
