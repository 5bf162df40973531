package gavel

import "context"

func init() {
	registerPolicy("max_sum_throughput_perf", staticPolicy(func(ctx context.Context, inst *Instance) (*Allocation, error) {
		return maxSumThroughput(ctx, inst, false)
	}))
	registerPolicy("max_sum_throughput_packed", staticPolicy(func(ctx context.Context, inst *Instance) (*Allocation, error) {
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
