package gavel

import (
	"context"
	"fmt"
)

func init() {
	registerPolicy("finish_time_fairness", staticPolicy(func(ctx context.Context, inst *Instance) (*Allocation, error) {
		return finishTimeFairness(ctx, inst, true)
	}))
	registerPolicy("finish_time_fairness_perf", staticPolicy(func(ctx context.Context, inst *Instance) (*Allocation, error) {
		return finishTimeFairness(ctx, inst, false)
	}))
}

// bisectRelTol is the relative width at which bisections stop.
const bisectRelTol = 1e-7

// finishTimeFairness solves Minimize_X max_m rho(m, X) with
// rho(m, X) = (t_m + r_m/throughput(m,X)) / (t_m + r_m/throughput(m,X^isolated))
// (§5.4.2, Themis), t_m the elapsed time, r_m the steps left and X^isolated
// the equal share of §5.4.1. rho <= p is linear in X for fixed p
// (throughput(m,X) >= r_m/(p*D_m - t_m)), so the optimum is found by
// bisection on p with one LP per step. The agnostic variant sees every
// worker type as equally fast (throughput 1 and r_m in seconds at the job's
// equal-share speed) and spreads each job's time over them
// (spreadAgnostic). The objective is max_m rho.
func finishTimeFairness(ctx context.Context, inst *Instance, agnostic bool) (*Allocation, error) {
	r, err := remainingSteps(inst)
	if err != nil {
		return nil, err
	}
	t := inst.Throughputs
	if agnostic {
		t = agnosticThroughputs(inst)
		for m := range r {
			r[m] /= equalThroughput(inst, inst.Throughputs, m)
		}
	}
	n := len(inst.Jobs)
	denom, fast := make([]float64, n), make([]float64, n)
	lo := 0.0
	for m, job := range inst.Jobs {
		denom[m] = job.ElapsedSeconds + r[m]/equalThroughput(inst, t, m)
		fast[m] = fastest(inst, t, m)
		lo = max(lo, (job.ElapsedSeconds+r[m]/fast[m])/denom[m])
	}
	// feasible solves the LP for target p: the best uniform scale s of the
	// throughputs it needs; p is achievable iff s >= 1.
	feasible := func(p float64) (*Allocation, bool, error) {
		need := make([]float64, n)
		for m, job := range inst.Jobs {
			slack := p*denom[m] - job.ElapsedSeconds
			if slack <= 0 {
				return nil, false, nil
			}
			need[m] = r[m] / slack
		}
		// Rows divided by the job's fastest throughput, not by need: a job
		// close to done needs little, and dividing by that made coefficients
		// of 1e6 that stalled the interior-point method mid-simulation.
		a, s := dividedThroughputLP(inst, t, need, fast, false)
		if agnostic {
			a.spreadAgnostic()
		}
		sol, err := a.solve(ctx)
		if err != nil {
			return nil, false, err
		}
		return a.allocation(sol, 1), sol[s] >= 1, nil
	}
	hi := 2 * lo
	best, ok, err := feasible(hi)
	for ; err == nil && !ok; best, ok, err = feasible(hi) {
		if hi > 1e12*lo {
			return nil, fmt.Errorf("no finite finish-time fairness found")
		}
		lo, hi = hi, 2*hi
	}
	if err != nil {
		return nil, err
	}
	for hi-lo > bisectRelTol*hi {
		mid := (lo + hi) / 2
		al, ok, err := feasible(mid)
		if err != nil {
			return nil, err
		}
		if ok {
			hi, best = mid, al
		} else {
			lo = mid
		}
	}
	best.Objective = 0
	for m, eff := range effectiveThroughputs(inst, t, best) {
		rho := (inst.Jobs[m].ElapsedSeconds + r[m]/eff) / denom[m]
		best.Objective = max(best.Objective, rho)
	}
	return best, nil
}
