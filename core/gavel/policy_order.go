package gavel

import (
	"context"
	"sort"

	"pipeplan/core/lp"
)

func init() {
	registerPolicy(PolicyInfo{Name: "fifo", Title: "FIFO, heterogeneity-agnostic",
		Section: "§5.4.2, Table 5.1", Objective: "jobs in arrival order, each on any free GPU (every GPU seen as equal)",
		Baseline: "fifo"}, staticPolicy(func(ctx context.Context, inst *Instance) (*Allocation, error) {
		return fifo(ctx, inst, agnosticThroughputs(inst), true)
	}))
	registerPolicy(PolicyInfo{Name: "fifo_perf", Title: "FIFO, heterogeneity-aware",
		Section: "§5.4.2, Table 5.1", Objective: "jobs in arrival order, each on its fastest available worker type",
		HeterogeneityAware: true, Baseline: "fifo"}, staticPolicy(func(ctx context.Context, inst *Instance) (*Allocation, error) {
		return fifo(ctx, inst, inst.Throughputs, false)
	}))
	registerPolicy(PolicyInfo{Name: "shortest_job_first_perf", Title: "Shortest job first",
		Section: "§5.4.2, Table 5.1", Objective: "the job with the fewest steps left first, at its fastest throughput; the next jobs fill what is left",
		HeterogeneityAware: true, NeedsSteps: true}, staticPolicy(shortestJobFirst))
}

// fastest returns throughput(m, X^fastest): job m's best t[m][j] over the
// worker types with enough workers for it.
func fastest(inst *Instance, t [][]float64, m int) float64 {
	f := 0.0
	for j, v := range t[m] {
		if inst.Jobs[m].ScaleFactor <= inst.NumWorkers[j] {
			f = max(f, v)
		}
	}
	return f
}

// orderedLP builds Maximize_X sum_m throughput(m,X)/throughput(m,X^fastest) * (M - rank_m)
// (§5.4.2, FIFO) for the given job order (order[0] ranks first).
func orderedLP(inst *Instance, t [][]float64, order []int) *allocLP {
	a := newAllocLP(inst, t, false)
	for rank, m := range order {
		idx, val := a.throughput(m, float64(len(order)-rank)/fastest(inst, t, m))
		for k, v := range idx {
			a.prob.Objective[v] += val[k]
		}
	}
	return a
}

// jobOrder returns job indices sorted by key, ties by index.
func jobOrder(n int, key func(m int) float64) []int {
	order := make([]int, n)
	for m := range order {
		order[m] = m
	}
	sort.SliceStable(order, func(a, b int) bool { return key(order[a]) < key(order[b]) })
	return order
}

// fifo is the FIFO policy of §5.4.2: jobs in arrival order, each placed on
// its fastest available type (the agnostic variant sees all types as
// equal and spreads each job's time over them, see spreadAgnostic). The
// objective is the LP's weighted normalized throughput.
func fifo(ctx context.Context, inst *Instance, t [][]float64, agnostic bool) (*Allocation, error) {
	order := jobOrder(len(inst.Jobs), func(m int) float64 { return inst.Jobs[m].ArrivalSeconds })
	a := orderedLP(inst, t, order)
	if agnostic {
		a.spreadAgnostic()
	}
	sol, err := a.solve(ctx)
	if err != nil {
		return nil, err
	}
	al := a.allocation(sol, 1)
	for k, v := range a.prob.Objective {
		al.Objective += v * sol[k]
	}
	return al, nil
}

// shortestJobFirst solves Minimize_X min_m num_steps_m/throughput(m,X)
// (§5.4.2): the optimum runs the job with the smallest r_m/max_j T_mj alone
// on its fastest type; the remaining capacity goes to the other jobs in
// shortest-first order by the FIFO objective. The objective is the
// shortest job's duration in seconds.
func shortestJobFirst(ctx context.Context, inst *Instance) (*Allocation, error) {
	r, err := remainingSteps(inst)
	if err != nil {
		return nil, err
	}
	t := inst.Throughputs
	order := jobOrder(len(inst.Jobs), func(m int) float64 { return r[m] / fastest(inst, t, m) })
	a := orderedLP(inst, t, order)
	first := order[0]
	idx, val := a.throughput(first, 1)
	a.addRow(idx, val, lp.GE, fastest(inst, t, first))
	sol, err := a.solve(ctx)
	if err != nil {
		return nil, err
	}
	al := a.allocation(sol, 1)
	al.Objective = r[first] / effectiveThroughputs(inst, t, al)[first]
	return al, nil
}
