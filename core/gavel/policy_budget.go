package gavel

import (
	"context"
	"fmt"
	"math"

	"pipeplan/core/lp"
)

func init() {
	registerPolicy(PolicyInfo{Name: "min_makespan_budget_perf", Title: "Minimum makespan within a budget",
		Section: "§6.4.3", Objective: "minimize max_m num_steps_m/throughput(m, X) subject to the cost of the whole run ≤ budget B",
		HeterogeneityAware: true, NeedsSteps: true, NeedsPrices: true}, func(o policyOptions) (func(context.Context, *Instance) (*Allocation, error), error) {
		if !(o.budgetDollars > 0) || math.IsInf(o.budgetDollars, 0) {
			return nil, fmt.Errorf("budget: must be > 0 dollars, got %g (use WithBudget)", o.budgetDollars)
		}
		return func(ctx context.Context, inst *Instance) (*Allocation, error) {
			return minMakespanBudget(ctx, inst, o.budgetDollars)
		}, nil
	})
}

// minMakespanBudget minimizes the makespan M subject to num_steps_m/M <=
// throughput(m,X) and M*cost(X) <= B (§6.4.3) by bisection on s = 1/M: for
// fixed s the cheapest X meeting throughput(m,X) >= num_steps_m*s is an LP,
// and its cost rate C(s) is convex with C(0) = 0, so the total C(s)/s grows
// with s and the feasible s form an interval. The objective is M in seconds.
func minMakespanBudget(ctx context.Context, inst *Instance, budget float64) (*Allocation, error) {
	r, err := remainingSteps(inst)
	if err != nil {
		return nil, err
	}
	// The fastest possible makespan bounds s from above (shrunk by a
	// rounding margin so that the LP at sMax stays feasible).
	_, _, sMax, err := maxCompletionRate(ctx, inst, r, false)
	if err != nil {
		return nil, err
	}
	sMax *= 1 - 1e-9
	// cheapest returns the cheapest allocation finishing all jobs by 1/s and its total cost.
	cheapest := func(s float64) (*Allocation, float64, error) {
		a := newAllocLP(inst, inst.Throughputs, false)
		idx, val, err := costTerms(a)
		if err != nil {
			return nil, 0, err
		}
		for k, v := range idx {
			a.prob.Objective[v] = -val[k]
		}
		for m := range inst.Jobs {
			idx, val := a.throughput(m, 1)
			a.addRow(idx, val, lp.GE, r[m]*s)
		}
		sol, err := a.solve(ctx)
		if err != nil {
			return nil, 0, err
		}
		al := a.allocation(sol, 1)
		return al, costOf(inst, al) / s, nil
	}
	best, total, err := cheapest(sMax)
	if err != nil {
		return nil, err
	}
	if total > budget {
		lo := sMax * 1e-6
		if best, total, err = cheapest(lo); err != nil {
			return nil, err
		}
		if total > budget {
			return nil, fmt.Errorf("budget of $%.2f is below the $%.2f any allocation needs to finish all jobs", budget, total)
		}
		for hi := sMax; hi-lo > bisectRelTol*hi; {
			mid := (lo + hi) / 2
			al, total, err := cheapest(mid)
			if err != nil {
				return nil, err
			}
			if total <= budget {
				lo, best = mid, al
			} else {
				hi = mid
			}
		}
	}
	best.Objective = makespanOf(inst, inst.Throughputs, best, r)
	return best, nil
}
