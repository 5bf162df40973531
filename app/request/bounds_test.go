package request

import (
	"strings"
	"testing"

	"pipeplan/core/hw"
)

// The caps that bound the work a request asks for (BENCHMARKS.md, "Worst
// cases"): the worst accepted input stays within the cap's work measure,
// and the first one past it is refused with a message naming the field,
// the value and the limit in formatted numbers.

// TestScheduleTasksBounded: an interleaved schedule at every per-field
// limit (64 stages × 512 microbatches × 8 chunks: 58 MB of JSON) is
// refused; the largest accepted simulates at most MaxScheduleTasks tasks,
// and kinds other than interleaved do not count the chunks they ignore.
func TestScheduleTasksBounded(t *testing.T) {
	worst := Schedule{Kind: "interleaved", Stages: MaxStages, Microbatches: MaxMicrobatches, Chunks: MaxChunks, FwdSeconds: 1, BwdSeconds: 2}
	err := worst.Validate()
	for _, want := range []string{"64 stages × 512 microbatches × 8 chunks is 262,144 tasks", "over the limit of 65,536", "at most 128 here"} {
		if err == nil || Field(err) != "microbatches" || !strings.Contains(err.Error(), want) {
			t.Fatalf("64 × 512 × 8 interleaved: err = %v, want one naming microbatches and %q", err, want)
		}
	}
	worst.Microbatches = 128
	if err := worst.Validate(); err != nil || worst.Tasks() != MaxScheduleTasks {
		t.Errorf("64 × 128 × 8 interleaved: err = %v, tasks %d, want accepted at %d", err, worst.Tasks(), MaxScheduleTasks)
	}
	for _, kind := range []string{"1f1b", "gpipe", "zb-h1", "2bw", "pipedream"} {
		s := Schedule{Kind: kind, Stages: MaxStages, Microbatches: MaxMicrobatches, Chunks: MaxChunks, FwdSeconds: 1, BwdSeconds: 2}
		if err := s.Validate(); err != nil || s.Tasks() != MaxStages*MaxMicrobatches {
			t.Errorf("%s at 64 × 512 (chunks ignored): err = %v, tasks %d", kind, err, s.Tasks())
		}
	}
	// zb-v runs two chunks a device whatever chunks says: at most
	// MaxScheduleTasks at the largest stages and microbatches.
	zbv := Schedule{Kind: "zb-v", Stages: MaxStages, Microbatches: MaxMicrobatches, Chunks: 1, FwdSeconds: 1, BwdSeconds: 2}
	if err := zbv.Validate(); err != nil || zbv.Tasks() != 2*MaxStages*MaxMicrobatches || zbv.Tasks() > MaxScheduleTasks {
		t.Errorf("zb-v at 64 × 512: err = %v, tasks %d, want 2 × 64 × 512 within %d", err, zbv.Tasks(), MaxScheduleTasks)
	}
	if _, err := DecodeSchedule([]byte(`{"kind": "interleaved", "stages": 64, "microbatches": 256, "chunks": 8}`)); err == nil || !strings.Contains(err.Error(), "131,072 tasks") {
		t.Errorf("decoded 64 × 256 × 8: err = %v", err)
	}
}

// TestPipeDreamCostModelLevels: PipeDream's own cost model takes at most
// two levels (GNMT-16 on five levels of 4 GPUs took 27 s of CPU);
// pipeplan's takes MaxLevels.
func TestPipeDreamCostModelLevels(t *testing.T) {
	level := hw.Level{Workers: 4, BandwidthBytesPerSec: 1e10}
	p := Default().Plan
	p.Model, p.CostModel = "pd-gnmt_large", CostModels[1]
	p.Levels = []hw.Level{level, level}
	if err := p.Validate(); err != nil {
		t.Fatalf("two levels: %v", err)
	}
	p.Levels = append(p.Levels, level)
	if err := p.Validate(); err == nil || Field(err) != "plan.levels" || !strings.Contains(err.Error(), "at most 2 levels") || !strings.Contains(err.Error(), "got 3") {
		t.Errorf("three levels, PipeDream's cost model: err = %v, want one naming plan.levels, the limit and the count", err)
	}
	p.CostModel = ""
	p.Levels = []hw.Level{level, level, level, level, level}
	if err := p.Validate(); err != nil {
		t.Errorf("five levels, pipeplan's cost model: %v", err)
	}
}

// TestPlannedRunsBounded: 64 planned multi-GPU jobs on 8 GPU types asked
// for 1,024 planner runs. Five single-GPU planned jobs on Gavel's three
// types (15 runs) are accepted; making one of them multi-GPU (planned
// again on separate servers: 18 runs) is refused; and a planned job may
// not carry an explicit topology or PipeDream's cost model.
func TestPlannedRunsBounded(t *testing.T) {
	c := DefaultCluster()
	planned := Default().Plan
	planned.Model, planned.Nodes, planned.GPUsPerNode = "gpt-1.7b", 1, 8
	c.Jobs = nil
	for range 5 {
		c.Jobs = append(c.Jobs, Job{Type: "planned: GPT 1.7B", Scale: 1, Weight: 1, Planned: &planned})
	}
	if err := c.Validate(); err != nil || c.PlannedRuns() != 15 {
		t.Fatalf("5 single-GPU planned jobs on 3 types: err = %v, runs %d, want accepted at 15", err, c.PlannedRuns())
	}
	c.Jobs[0].Scale = 8 // planned again on separate servers: 18 runs
	err := c.Validate()
	if err == nil || Field(err) != "cluster.jobs" || !strings.Contains(err.Error(), "18 planner runs") || !strings.Contains(err.Error(), "limit of 16") {
		t.Errorf("18 runs: err = %v, want one naming cluster.jobs, the runs and the limit", err)
	}
	c.Jobs = c.Jobs[1:2]
	bad := planned
	bad.Levels = []hw.Level{{Workers: 8, BandwidthBytesPerSec: 1e10}}
	c.Jobs[0].Planned = &bad
	if err := c.Validate(); err == nil || Field(err) != "cluster.jobs[0].planned.levels" {
		t.Errorf("planned job with levels: err = %v", err)
	}
	bad = planned
	bad.Model, bad.CostModel = "pd-gnmt_large", CostModels[1]
	c.Jobs[0].Planned = &bad
	if err := c.Validate(); err == nil || Field(err) != "cluster.jobs[0].planned.cost_model" {
		t.Errorf("planned job with PipeDream's cost model: err = %v", err)
	}
}

// TestPackedTraceBounded: a space-sharing policy's trace is at most
// MaxPackedTraceJobs jobs (2,048 took 1.9 GB); other policies keep
// MaxTraceJobs.
func TestPackedTraceBounded(t *testing.T) {
	c := DefaultCluster()
	c.Policy, c.TraceJobs = "max_min_fairness_packed", MaxPackedTraceJobs
	if err := c.Validate(); err != nil {
		t.Fatalf("%d jobs packed: %v", MaxPackedTraceJobs, err)
	}
	c.TraceJobs = MaxTraceJobs
	if err := c.Validate(); err == nil || Field(err) != "cluster.trace_jobs" || !strings.Contains(err.Error(), "at most 256 jobs") || !strings.Contains(err.Error(), "got 2,048") {
		t.Errorf("2,048 jobs packed: err = %v, want one naming cluster.trace_jobs, the limit and the value", err)
	}
	c.Policy = "max_min_fairness_perf"
	if err := c.Validate(); err != nil {
		t.Errorf("2,048 jobs, LAS: %v", err)
	}
}

func TestGroup(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 65536: "65,536", 1048576: "1,048,576", -12345: "-12,345"} {
		if got := group(n); got != want {
			t.Errorf("group(%d) = %q, want %q", n, got, want)
		}
	}
}
