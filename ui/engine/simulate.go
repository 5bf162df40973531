package engine

import (
	"context"
	"fmt"

	"pipeplan/core/gavel"
	"pipeplan/ui/state"
)

// SimulateTrace draws a synthetic trace of the Cluster page's size and
// arrival rate (Gavel's generator, §5.7.1) and simulates it round by round
// (§5.7) on the page's job-types cluster under its policy, placement-
// sensitive (§5.3.1) when the page says so, with space sharing (§5.3.1)
// under the "_packed" policies. progress, if not nil, gets the
// jobs completed and the trace size; yield, if not nil, is called before
// every allocation so a caller sharing one thread with a UI (WebAssembly
// in a page) can let it run.
func SimulateTrace(ctx context.Context, in state.Cluster, progress func(done, total int), yield func()) (*gavel.SimResult, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	if in.Workload != state.WorkloadJobTypes {
		return nil, fmt.Errorf("cluster.workload: simulation runs on the job-types cluster (V100/P100/K80), got %q", in.Workload)
	}
	policy, err := gavel.PolicyByName(in.Policy)
	if err != nil {
		return nil, fmt.Errorf("cluster.policy: %w", err)
	}
	jobs, err := gavel.GenerateTrace(gavel.TraceConfig{NumJobs: in.TraceJobs, JobsPerHour: in.TraceJobsPerHour, MultiGPU: true})
	if err != nil {
		return nil, err
	}
	spec := gavel.ClusterSpec{WorkerTypes: state.WorkerTypes(in.Workload), NumWorkers: in.GPUs}
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("cluster.gpus: %w", err)
	}
	if yield != nil {
		policy = yieldingPolicy{Policy: policy, yield: yield}
	}
	return gavel.Simulate(ctx, gavel.SimConfig{Cluster: spec, Policy: policy, Jobs: jobs, Progress: progress,
		PlacementSensitive: in.PlacementSensitive, SpaceSharing: gavel.SpaceSharing(in.Policy)})
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
