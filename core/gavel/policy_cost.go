package gavel

import (
	"context"
	"errors"
	"fmt"
	"math"

	"pipeplan/core/lp"
)

func init() {
	registerPolicy(PolicyInfo{Name: "min_cost_perf", Title: "Minimum cost",
		Section: "§6.4.2", Objective: "maximize Σ_m throughput(m, X)/cost(m, X)",
		HeterogeneityAware: true, NeedsPrices: true}, staticPolicy(func(ctx context.Context, inst *Instance) (*Allocation, error) {
		return minCost(ctx, inst, false)
	}))
	registerPolicy(PolicyInfo{Name: "min_cost_slo_perf", Title: "Minimum cost with SLOs",
		Section: "§6.4.3", Objective: "maximize Σ_m throughput(m, X)/cost(m, X) subject to num_steps_m/throughput(m, X) ≤ SLO_m",
		HeterogeneityAware: true, NeedsSteps: true, NeedsPrices: true}, staticPolicy(func(ctx context.Context, inst *Instance) (*Allocation, error) {
		return minCost(ctx, inst, true)
	}))
}

// ErrSLOsUnmet is wrapped by the errors of min_cost_slo_perf when the SLOs
// cannot all be met; RelaxSLOs is the simulator's fallback.
var ErrSLOsUnmet = errors.New("the SLOs cannot all be met on this cluster")

// secondsPerHour converts prices per hour to dollars per second.
const secondsPerHour = 3600

// costTerms returns the terms of cost(X) in dollars per second:
// sum_m sum_j price_j * scale_factor_m * X[m][j] (§6.4.2), pairs included.
func costTerms(a *allocLP) ([]int, []float64, error) {
	inst := a.inst
	if inst.PricePerHour == nil {
		return nil, nil, fmt.Errorf("instance.price_per_hour: required by cost policies")
	}
	var idx []int
	var val []float64
	for m, vars := range a.x {
		for j, v := range vars {
			if v >= 0 {
				idx = append(idx, v)
				val = append(val, inst.PricePerHour[j]/secondsPerHour*float64(inst.Jobs[m].ScaleFactor))
			}
		}
	}
	for p, vars := range a.px {
		for j, v := range vars {
			if v >= 0 {
				idx = append(idx, v)
				val = append(val, inst.PricePerHour[j]/secondsPerHour*float64(inst.Jobs[inst.Pairs[p].A].ScaleFactor))
			}
		}
	}
	return idx, val, nil
}

// sloNeeds returns the throughput each job with an SLO needs,
// num_steps_m / (SLO_m - elapsed_m) (§6.4.3), 0 for jobs without one, or an
// error naming a job whose SLO is already missed or above its fastest type.
func sloNeeds(inst *Instance, r []float64) ([]float64, error) {
	need := make([]float64, len(inst.Jobs))
	for m, job := range inst.Jobs {
		if job.SLOSeconds == 0 {
			continue
		}
		left := job.SLOSeconds - job.ElapsedSeconds
		if left <= 0 {
			return nil, fmt.Errorf("%w: instance.jobs[%d]: SLO of %g s already passed (elapsed %g s)", ErrSLOsUnmet, m, job.SLOSeconds, job.ElapsedSeconds)
		}
		need[m] = r[m] / left
		if f := fastest(inst, inst.Throughputs, m); need[m] > f {
			return nil, fmt.Errorf("%w: instance.jobs[%d]: SLO needs %g steps/s but its fastest worker type gives %g", ErrSLOsUnmet, m, need[m], f)
		}
	}
	return need, nil
}

// minCost maximizes the total normalized throughput per dollar,
// (sum_m throughput(m,X)/num_steps_m) / cost(X) (§6.4.2, the
// linear-fractional program with job terms summed), optionally subject to
// the SLO constraints throughput(m,X) >= num_steps_m/SLO_m (§6.4.3). The
// Charnes-Cooper transformation Y = sX, cost(Y) = 1 makes it one LP. The
// ratio is scale-free, so X is then scaled up until a job or worker type
// saturates. The objective is in completed jobs per dollar. When the SLOs
// cannot all be met the error wraps ErrSLOsUnmet; the simulator then drops
// SLO constraints with RelaxSLOs and solves again (best effort: those jobs
// still count as SLO violations when they finish late).
func minCost(ctx context.Context, inst *Instance, slo bool) (*Allocation, error) {
	r, err := remainingSteps(inst)
	if err != nil {
		return nil, err
	}
	a := newAllocLP(inst, inst.Throughputs, false)
	s := a.addVar(0)
	// Time and capacity rows become  ... - s*rhs <= 0.
	for _, row := range append(append([]int(nil), a.timeRows...), a.capRows...) {
		rw := &a.prob.Rows[row]
		rw.Index, rw.Value = append(rw.Index, s), append(rw.Value, -rw.RHS)
		rw.RHS = 0
	}
	idx, val, err := costTerms(a)
	if err != nil {
		return nil, err
	}
	a.addRow(idx, val, lp.EQ, 1)
	for m := range inst.Jobs {
		idx, val := a.throughput(m, 1/r[m])
		for k, v := range idx {
			a.prob.Objective[v] += val[k]
		}
	}
	if slo {
		need, err := sloNeeds(inst, r)
		if err != nil {
			return nil, err
		}
		for m, nd := range need {
			if nd > 0 {
				idx, val := a.throughput(m, 1)
				a.addRow(append(idx, s), append(val, -nd), lp.GE, 0)
			}
		}
	}
	sol, err := a.solve(ctx)
	if err != nil {
		if slo && errors.Is(err, errInfeasible) {
			return nil, fmt.Errorf("%w: %w", ErrSLOsUnmet, err)
		}
		return nil, err
	}
	if sol[s] <= 0 {
		return nil, fmt.Errorf("degenerate cost LP (scale %g)", sol[s])
	}
	al := a.allocation(sol, sol[s])
	saturate(inst, al)
	for m, eff := range effectiveThroughputs(inst, inst.Throughputs, al) {
		al.Objective += eff / r[m]
	}
	al.Objective /= costOf(inst, al)
	return al, nil
}

// saturate scales X up by the largest factor that keeps every job's time
// <= 1 and every worker type within capacity.
func saturate(inst *Instance, al *Allocation) {
	f := math.Inf(1)
	used := make([]float64, len(inst.WorkerTypes))
	for m, row := range al.X {
		tm := 0.0
		for j, x := range row {
			tm += x
			used[inst.capacityType(j)] += x * float64(inst.Jobs[m].ScaleFactor)
		}
		if tm > 0 {
			f = min(f, 1/tm)
		}
	}
	for j, u := range used {
		if u > 0 {
			f = min(f, float64(inst.NumWorkers[j])/u)
		}
	}
	if math.IsInf(f, 1) {
		return
	}
	for _, row := range al.X {
		for j := range row {
			row[j] = min(1, row[j]*f)
		}
	}
}

// costOf returns cost(X) in dollars per second.
func costOf(inst *Instance, al *Allocation) float64 {
	c := 0.0
	for m, row := range al.X {
		for j, x := range row {
			c += inst.PricePerHour[j] / secondsPerHour * float64(inst.Jobs[m].ScaleFactor) * x
		}
	}
	return c
}

// RelaxSLOs is the best-effort fallback of min_cost_slo_perf when the SLOs
// cannot all be met (ErrSLOsUnmet): it drops the SLO constraint (sets
// SLOSeconds to 0) of every job whose SLO can no longer be met on its own
// (already passed, or needing more than its fastest worker type gives); if
// there is none, of the one job whose SLO needs the largest fraction of its
// fastest throughput. It reports whether it dropped any.
func RelaxSLOs(inst *Instance) bool {
	r, err := remainingSteps(inst)
	if err != nil {
		return false
	}
	tightest, worst, dropped := -1, 0.0, false
	for m := range inst.Jobs {
		job := &inst.Jobs[m]
		if job.SLOSeconds == 0 {
			continue
		}
		left := job.SLOSeconds - job.ElapsedSeconds
		f := fastest(inst, inst.Throughputs, m)
		if left <= 0 || f <= 0 || r[m]/left > f {
			job.SLOSeconds, dropped = 0, true
			continue
		}
		if frac := r[m] / left / f; frac > worst {
			tightest, worst = m, frac
		}
	}
	if !dropped && tightest >= 0 {
		inst.Jobs[tightest].SLOSeconds, dropped = 0, true
	}
	return dropped
}
