package app

import (
	"context"
	"fmt"

	"pipeplan/app/request"
	"pipeplan/core/gavel"
	"pipeplan/gpuprofiles"
)

// SimulateTrace draws a synthetic trace of the Cluster page's size and
// arrival rate (Gavel's generator, §5.7.1) and simulates it round by round
// (§5.7) on the page's job-types cluster under its policy, placement-
// sensitive (§5.3.1) when the page says so, with space sharing (§5.3.1)
// under the "_packed" policies. The trace's jobs are of Gavel's job types,
// or of the jobs listed on the page (listedTrace). progress, if not nil,
// gets the jobs completed and the trace size; yield, if not nil, is called
// before every allocation so a caller sharing one thread with a UI
// (WebAssembly in a page) can let it run.
func SimulateTrace(ctx context.Context, in request.Cluster, progress func(done, total int), yield func()) (*gavel.SimResult, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	if in.Workload != request.WorkloadJobTypes {
		return nil, fmt.Errorf("cluster.workload: simulation runs on the job-types cluster (V100/P100/K80), got %q", in.Workload)
	}
	policy, err := gavel.PolicyByName(in.Policy)
	if err != nil {
		return nil, fmt.Errorf("cluster.policy: %w", err)
	}
	if !in.GavelTypes() {
		return nil, fmt.Errorf("cluster.worker_types: the simulator draws Gavel's measured job types, so it runs on Gavel's GPU types %v only, got %v", request.WorkerTypes(request.WorkloadJobTypes), in.Types())
	}
	perServer, err := in.GPUsPerServer()
	if err != nil {
		return nil, err
	}
	spec := gavel.ClusterSpec{WorkerTypes: in.Types(), NumWorkers: in.GPUs, GPUsPerServer: perServer}
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("cluster.gpus: %w", err)
	}
	prices, err := gpuprofiles.DefaultPriceList().ForWorkerTypes(spec.WorkerTypes)
	if err != nil {
		return nil, err
	}
	var jobs []gavel.Job
	var table *gavel.ThroughputTable // nil: Gavel's
	if in.TraceWorkload == request.TraceListedJobs {
		jobs, table, err = listedTrace(ctx, in)
	} else {
		jobs, err = gavel.GenerateTrace(gavel.TraceConfig{NumJobs: in.TraceJobs, JobsPerHour: in.TraceJobsPerHour, MultiGPU: true})
	}
	if err != nil {
		return nil, err
	}
	if yield != nil {
		policy = yieldingPolicy{Policy: policy, yield: yield}
	}
	return gavel.Simulate(ctx, gavel.SimConfig{Cluster: spec, Policy: policy, Jobs: jobs, Throughputs: table, Progress: progress,
		PlacementSensitive: in.PlacementSensitive, SpaceSharing: gavel.SpaceSharing(in.Policy), PricePerHour: prices})
}

// listedTrace draws a trace whose jobs are the page's listed jobs, each one
// uniformly at random with its type, scale factor and priority weight,
// arriving and lasting as §5.7.1 says (gavel.TraceConfig.Templates). It
// returns the table to simulate it with: Gavel's, plus each planned job as
// an extra job type (gavel.ThroughputTable.WithJobTypes) at the planner's
// throughputs the allocation uses (instance, unconsolidated); planned jobs
// never share GPUs.
func listedTrace(ctx context.Context, in request.Cluster) ([]gavel.Job, *gavel.ThroughputTable, error) {
	inst, _, _, err := instance(ctx, in)
	if err != nil {
		return nil, nil, err
	}
	spread, _, err := unconsolidated(ctx, in, inst)
	if err != nil {
		return nil, nil, err
	}
	var planned []gavel.ExtraJobType
	templates := make([]gavel.Job, len(inst.Jobs))
	for m, job := range inst.Jobs {
		templates[m] = gavel.Job{JobType: job.JobType, ScaleFactor: job.ScaleFactor, PriorityWeight: in.Jobs[m].Weight}
		if in.Jobs[m].Planned != nil {
			// Unique per listed job: two planned jobs may share a label.
			templates[m].JobType = fmt.Sprintf("%s (job %d)", job.JobType, m)
			e := gavel.ExtraJobType{Model: templates[m].JobType, ScaleFactor: job.ScaleFactor, Isolated: byWorkerType(inst.WorkerTypes, inst.Throughputs[m])}
			if job.ScaleFactor > 1 {
				e.Unconsolidated = byWorkerType(inst.WorkerTypes, spread[m])
			}
			planned = append(planned, e)
		}
	}
	table, err := gavel.DefaultThroughputs().WithJobTypes(planned)
	if err != nil {
		return nil, nil, fmt.Errorf("cluster.jobs: %w", err)
	}
	jobs, err := gavel.GenerateTrace(gavel.TraceConfig{NumJobs: in.TraceJobs, JobsPerHour: in.TraceJobsPerHour,
		Templates: templates, Throughputs: table, ReferenceWorkerType: gavel.DefaultReferenceWorkerType})
	if err != nil {
		return nil, nil, err
	}
	return jobs, table, nil
}

// byWorkerType maps a row of per-type values to the worker types.
func byWorkerType(types []string, row []float64) map[string]float64 {
	out := make(map[string]float64, len(types))
	for k, wt := range types {
		out[wt] = row[k]
	}
	return out
}

// yieldingPolicy calls yield before each allocation of the policy it wraps.
type yieldingPolicy struct {
	gavel.Policy
	yield func()
}

// Allocate yields, then allocates with the wrapped policy.
func (p yieldingPolicy) Allocate(ctx context.Context, inst *gavel.Instance) (*gavel.Allocation, error) {
	p.yield()
	return p.Policy.Allocate(ctx, inst)
}
