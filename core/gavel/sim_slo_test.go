package gavel

import (
	"context"
	"testing"
)

// TestSimulateSLOFallback: on a cluster too small for the trace's SLOs,
// min_cost_slo_perf no longer stops the simulation (RelaxSLOs); every job
// completes and the missed deadlines are counted.
func TestSimulateSLOFallback(t *testing.T) {
	jobs, err := GenerateTrace(TraceConfig{NumJobs: 30, JobsPerHour: 20, Seed: 1, SLOs: true})
	if err != nil {
		t.Fatal(err)
	}
	p, err := PolicyByName("min_cost_slo_perf")
	if err != nil {
		t.Fatal(err)
	}
	cluster := ClusterSpec{WorkerTypes: []string{"k80", "p100", "v100"}, NumWorkers: []int{1, 1, 1}}
	// Gavel's GCP on-demand prices of 2020 (gpuprofiles/cloud.json).
	res, err := Simulate(context.Background(), SimConfig{Cluster: cluster, Policy: p, Jobs: jobs, PricePerHour: []float64{0.45, 1.46, 2.48}})
	if err != nil {
		t.Fatal(err)
	}
	if res.JobsCompleted != 30 || res.JobsWithSLO != 30 || res.SLOViolations == 0 {
		t.Errorf("completed %d, SLO violations %d of %d; want 30 and some violations", res.JobsCompleted, res.SLOViolations, res.JobsWithSLO)
	}
}
