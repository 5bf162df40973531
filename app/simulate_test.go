package app

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"pipeplan/app/request"
	"pipeplan/core/gavel"
)

// listedCluster is a job-types page listing two of Gavel's jobs that can
// share GPUs, a 2-GPU one, and GPT 1.7B planned on the Plan page (×2).
func listedCluster(t testing.TB) request.Cluster {
	t.Helper()
	p := request.Default().Plan
	p.Model, p.GlobalBatch = "gpt-1.7b", 64
	planned, err := PlannedJob(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	planned.Weight = 2
	in := request.PaperCluster()
	in.Workload, in.GPUs, in.TraceWorkload = request.WorkloadJobTypes, []int{8, 8, 8}, request.TraceListedJobs
	in.Jobs = []request.Job{{Type: "A3C", Scale: 1, Weight: 1}, {Type: "ResNet-18 (batch size 16)", Scale: 1, Weight: 1},
		{Type: "LM (batch size 20)", Scale: 2, Weight: 1}, planned}
	return in
}

// TestListedTraceDrawsListedJobs: a trace of the listed jobs holds only
// them (type, scale factor, weight), every one of them, each sized as
// §5.7.1 says (duration × its throughput on a V100, the planner's for the
// planned job), and the table answers with the allocation's throughputs.
func TestListedTraceDrawsListedJobs(t *testing.T) {
	in := listedCluster(t)
	in.TraceJobs = 40
	jobs, table, err := listedTrace(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	alloc, err := Allocate(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	plannedKey := gavel.JobKey{Model: in.Jobs[3].Type + " (job 3)", ScaleFactor: in.Jobs[3].Scale}
	seen := map[int]int{}
	for _, j := range jobs {
		m := -1
		for i, l := range in.Jobs {
			name := l.Type
			if l.Planned != nil {
				name = plannedKey.Model
			}
			if j.JobType == name && j.ScaleFactor == l.Scale && j.PriorityWeight == l.Weight {
				m = i
			}
		}
		if m < 0 {
			t.Fatalf("job %d is %s ×%d weight %v: not a listed job", j.ID, j.JobType, j.ScaleFactor, j.PriorityWeight)
		}
		seen[m]++
		if want := math.Max(1, math.Round(j.DurationSeconds*alloc.Throughputs[m][0])); j.NumSteps != want {
			t.Errorf("job %d (%s): %v steps, want duration %v s × V100 %v steps/s = %v", j.ID, j.JobType, j.NumSteps, j.DurationSeconds, alloc.Throughputs[m][0], want)
		}
	}
	if len(seen) != len(in.Jobs) {
		t.Errorf("listed jobs drawn %v times, want all %d", seen, len(in.Jobs))
	}
	for k, wt := range alloc.WorkerTypes {
		if got, err := table.Isolated(wt, plannedKey); err != nil || got != alloc.Throughputs[3][k] {
			t.Errorf("%s on %s: table %v (%v), allocation's T %v", plannedKey, wt, got, err, alloc.Throughputs[3][k])
		}
	}
	in.PlacementSensitive = true
	spread, err := Allocate(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for k, wt := range spread.WorkerTypes {
		if got, err := table.Placed(wt, plannedKey, false); err != nil || got != spread.UnconsolidatedThroughputs[3][k] {
			t.Errorf("%s spread on %s: table %v (%v), allocation's %v", plannedKey, wt, got, err, spread.UnconsolidatedThroughputs[3][k])
		}
	}
}

// TestSimulateListedPlannedJobAlone: one planned job alone on V100s
// finishes exactly when the simulator's round arithmetic at the planner's
// V100 throughput says: rounds of int(T·360) steps, then the remainder.
func TestSimulateListedPlannedJobAlone(t *testing.T) {
	in := listedCluster(t)
	in.Jobs, in.GPUs, in.TraceJobs = in.Jobs[3:], []int{8, 0, 0}, 1
	jobs, _, err := listedTrace(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	res, err := SimulateTrace(context.Background(), in, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	alloc, err := Allocate(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	tput, steps := alloc.Throughputs[0][0], jobs[0].NumSteps
	perRound := math.Floor(tput * gavel.DefaultRoundSeconds)
	full := math.Floor(steps / perRound)
	want := full*perRound/tput + (steps-full*perRound)/tput
	if len(res.Jobs) != 1 || math.Abs(res.Jobs[0].JCTSeconds-want) > 1e-9*want || res.Rounds != int(math.Ceil(steps/perRound)) {
		t.Errorf("planned job alone: %+v in %d rounds; want JCT %v s (%v steps at %v steps/s)", res.Jobs, res.Rounds, want, steps, tput)
	}
}

// TestSimulateListedSharingAndPlacement: the listed jobs' trace runs under
// a packed policy, placement-sensitive; no job finishes faster than alone
// on its best GPU type, and an unknown listed type is refused by index.
func TestSimulateListedSharingAndPlacement(t *testing.T) {
	in := listedCluster(t)
	in.TraceJobs, in.Policy, in.PlacementSensitive = 10, "max_min_fairness_packed", true
	res, err := SimulateTrace(context.Background(), in, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	jobs, table, err := listedTrace(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res.JobsCompleted != len(jobs) {
		t.Fatalf("%d of %d jobs completed", res.JobsCompleted, len(jobs))
	}
	for _, o := range res.Jobs {
		best := 0.0
		for _, wt := range request.WorkerTypes(in.Workload) {
			v, _ := table.Isolated(wt, gavel.JobKey{Model: o.JobType, ScaleFactor: o.ScaleFactor})
			best = math.Max(best, v)
		}
		if lb := jobs[o.ID].NumSteps / best; !(o.JCTSeconds >= lb*(1-1e-9)) {
			t.Errorf("job %d (%s) finished in %v s, faster than alone on its best GPU (%v s)", o.ID, o.JobType, o.JCTSeconds, lb)
		}
	}
	in.Jobs[1].Type = "ResNet-19"
	if _, err := SimulateTrace(context.Background(), in, nil, nil); err == nil || !strings.Contains(err.Error(), "cluster.jobs[1]") {
		t.Errorf("unknown listed type: err %v", err)
	}
}

// BenchmarkListedTrace builds a 100-job trace of listedCluster's jobs and
// its table: the planner runs for the planned job (consolidated and
// spread), and Gavel's table is extended twice.
func BenchmarkListedTrace(b *testing.B) {
	in := listedCluster(b)
	in.TraceJobs = 100
	for b.Loop() {
		if _, _, err := listedTrace(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSimulateGavelTraceFields: bad inputs of the CLI's simulation name
// their field (which the CLI turns into its flag), and a small generated
// trace on Gavel's cluster completes its window.
func TestSimulateGavelTraceFields(t *testing.T) {
	ok := GavelTrace{Cluster: "2:2:2", GPUsPerServer: DefaultGPUsPerServer, Policy: "fifo", NumJobs: 6, JobsPerHour: 2,
		RoundSeconds: DefaultRoundSeconds}
	res, err := SimulateGavelTrace(context.Background(), ok)
	if err != nil || res.NumJobs != 6 || res.JobsCompleted != 6 || res.Jobs != nil {
		t.Fatalf("got %+v, %v; want 6 jobs completed, no per-job outcomes", res, err)
	}
	for field, edit := range map[string]func(*GavelTrace){
		"policy":     func(g *GavelTrace) { g.Policy = "nope" },
		"cluster":    func(g *GavelTrace) { g.Cluster = "2:2" },
		"price_list": func(g *GavelTrace) { g.PriceList = "nope" },
		"models":     func(g *GavelTrace) { g.Models = []string{"GPT"} },
		"trace":      func(g *GavelTrace) { g.Trace = []byte("not a trace\n") },
	} {
		in := ok
		edit(&in)
		var fe *request.FieldError
		if _, err := SimulateGavelTrace(context.Background(), in); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: got %v, want a field error naming it", field, err)
		}
	}
}

// TestSimulateTraceWorkLimit: 2,048 jobs arriving at 1,000 an hour on the
// default 32 GPUs pile up (they ran over 148 s of CPU under LAS before
// the limit): the simulation stops at request.MaxSimulationWork with an
// error naming the trace's size and the limit, formatted.
func TestSimulateTraceWorkLimit(t *testing.T) {
	in := request.DefaultCluster()
	in.TraceJobs, in.TraceJobsPerHour = request.MaxTraceJobs, request.MaxJobsPerHour
	_, err := SimulateTrace(context.Background(), in, nil, nil)
	var fe *request.FieldError
	if !errors.As(err, &fe) || fe.Field != "cluster.trace_jobs" {
		t.Fatalf("err = %v, want a cluster.trace_jobs error", err)
	}
	for _, want := range []string{"2,048 jobs", "1,000 an hour", "32 GPUs", "100,000"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %q, want it to say %q", err, want)
		}
	}
}
