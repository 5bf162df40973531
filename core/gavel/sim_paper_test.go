package gavel

import (
	"context"
	"testing"
)

// simulateLAS runs one of the LAS policies on a generated continuous trace.
func simulateLAS(tb testing.TB, policy string, cluster ClusterSpec, trace TraceConfig, from, to int) *SimResult {
	tb.Helper()
	p, err := PolicyByName(policy)
	if err != nil {
		tb.Skipf("policy %s not available: %v", policy, err)
	}
	jobs, err := GenerateTrace(trace)
	if err != nil {
		tb.Fatal(err)
	}
	res, err := Simulate(context.Background(), SimConfig{Cluster: cluster, Policy: p, Jobs: jobs, WindowFrom: from, WindowTo: to})
	if err != nil {
		tb.Fatal(err)
	}
	return res
}

// TestHeterogeneityAwareLASBeatsAgnostic checks the direction of Figure 5.9
// (§5.7.3) on a reduced run fast enough for CI: on a 6:6:6 cluster at the
// paper's high load scaled to its size (5.6 jobs/hr × 18/108), the
// heterogeneity-aware LAS policy gives a lower average JCT of steady-state
// jobs than the heterogeneity-agnostic one, with better finish-time fairness.
func TestHeterogeneityAwareLASBeatsAgnostic(t *testing.T) {
	cluster := ClusterSpec{WorkerTypes: []string{"k80", "p100", "v100"}, NumWorkers: []int{6, 6, 6}}
	trace := TraceConfig{NumJobs: 160, JobsPerHour: 5.6 * 18 / 108, Seed: 1}
	aware := simulateLAS(t, "max_min_fairness_perf", cluster, trace, 60, 120)
	agnostic := simulateLAS(t, "max_min_fairness", cluster, trace, 60, 120)
	t.Logf("avg JCT aware %.1f h, agnostic %.1f h (%.2fx); avg FTF %.2f vs %.2f",
		aware.AvgJCTSeconds/3600, agnostic.AvgJCTSeconds/3600, agnostic.AvgJCTSeconds/aware.AvgJCTSeconds, aware.AvgFTF, agnostic.AvgFTF)
	if !(aware.AvgJCTSeconds < agnostic.AvgJCTSeconds) {
		t.Errorf("aware LAS avg JCT %.1f h, not below agnostic %.1f h", aware.AvgJCTSeconds/3600, agnostic.AvgJCTSeconds/3600)
	}
	if !(aware.AvgFTF < agnostic.AvgFTF) {
		t.Errorf("aware LAS avg FTF %.2f, not below agnostic %.2f", aware.AvgFTF, agnostic.AvgFTF)
	}
}

// BenchmarkSimulate2000LAS is the target: a 2,000-job continuous
// trace (5.6 jobs/hr) on 36:36:36 under heterogeneity-aware LAS, run to the
// last completion.
func BenchmarkSimulate2000LAS(b *testing.B) {
	cluster := ClusterSpec{WorkerTypes: []string{"k80", "p100", "v100"}, NumWorkers: []int{36, 36, 36}}
	for b.Loop() {
		simulateLAS(b, "max_min_fairness_perf", cluster, TraceConfig{NumJobs: 2000, JobsPerHour: 5.6, Seed: 0}, 0, 0)
	}
}
