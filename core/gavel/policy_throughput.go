package gavel

import "context"

func init() {
	registerPolicy(PolicyInfo{Name: "max_sum_throughput_perf", Title: "Maximum total throughput",
		Section: "§6.4.1", Objective: "maximize Σ_m throughput(m, X)",
		HeterogeneityAware: true}, staticPolicy(func(ctx context.Context, inst *Instance) (*Allocation, error) {
		return maxSumThroughput(ctx, inst, false)
	}))
	registerPolicy(PolicyInfo{Name: "max_sum_throughput_packed", Title: "Maximum total throughput with space sharing",
		Section: "§6.4.1, §5.3.1", Objective: "maximize Σ_m throughput(m, X), co-located pairs counted",
		HeterogeneityAware: true, SpaceSharing: true}, staticPolicy(func(ctx context.Context, inst *Instance) (*Allocation, error) {
		return maxSumThroughput(ctx, inst, true)
	}))
}

// maxSumThroughput solves Maximize_X sum_m throughput(m, X) (§6.4.1); the
// objective is the total in steps/s.
func maxSumThroughput(ctx context.Context, inst *Instance, packed bool) (*Allocation, error) {
	a := newAllocLP(inst, inst.Throughputs, packed)
	for m := range inst.Jobs {
		idx, val := a.throughput(m, 1)
		for k, v := range idx {
			a.prob.Objective[v] += val[k]
		}
	}
	sol, err := a.solve(ctx)
	if err != nil {
		return nil, err
	}
	al := a.allocation(sol, 1)
	for _, eff := range effectiveThroughputs(inst, inst.Throughputs, al) {
		al.Objective += eff
	}
	return al, nil
}
