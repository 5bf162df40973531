package gavel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"pipeplan/core/lp"
)

func init() {
	registerPolicy(PolicyInfo{Name: "min_cost_perf", Title: "Minimum cost (most steps per dollar)",
		Section: "§6.4.2", Objective: "maximize Σ_m Σ_j X_mj·T_mj/c_j: each job's time earns its steps per dollar on that type",
		HeterogeneityAware: true, NeedsPrices: true}, staticPolicy(func(ctx context.Context, inst *Instance) (*Allocation, error) {
		return minCost(ctx, inst, false)
	}))
	registerPolicy(PolicyInfo{Name: "min_cost_slo_perf", Title: "Minimum cost with SLOs",
		Section: "§6.4.3", Objective: "maximize Σ_m Σ_j X_mj·T_mj/c_j subject to throughput(m, X) ≥ steps left/(SLO_m − elapsed)",
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
			return nil, fmt.Errorf("%w: instance.jobs[%d]: its SLO of %s h has passed (%s h elapsed)", ErrSLOsUnmet, m, formatNum(job.SLOSeconds/3600), formatNum(job.ElapsedSeconds/3600))
		}
		need[m] = r[m] / left
		if f := fastest(inst, inst.Throughputs, m); need[m] > f {
			return nil, fmt.Errorf("%w: instance.jobs[%d]: its SLO needs %s steps/s, at most %s on its fastest type", ErrSLOsUnmet, m, formatNum(need[m]), formatNum(f))
		}
	}
	return need, nil
}

// minCost solves §6.4.2's Maximize_X sum_m throughput(m,X)/cost(m,X) in
// the linear form of Gavel's ThroughputNormalizedByCostSumWithPerf: every
// job's time on worker type j earns its steps per dollar there,
// sum_m sum_j T_mj/c_j X_mj, so the cheapest steps come first and every
// GPU that still earns some goes to a job that has time left (the cluster
// stays busy). With slo, jobs must also meet throughput(m,X) >=
// steps_left_m/(SLO_m - elapsed_m) (§6.4.3); when the SLOs cannot all be
// met the error wraps ErrSLOsUnmet, and the simulator then drops SLO
// constraints with RelaxSLOs and solves again (best effort: those jobs
// still count as SLO violations when they finish late). The objective is
// the LP's, in steps per dollar.
func minCost(ctx context.Context, inst *Instance, slo bool) (*Allocation, error) {
	if inst.PricePerHour == nil {
		return nil, fmt.Errorf("instance.price_per_hour: required by cost policies")
	}
	a := newAllocLP(inst, inst.Throughputs, false)
	for m, vars := range a.x {
		for j, v := range vars {
			if v >= 0 {
				a.prob.Objective[v] += inst.Throughputs[m][j] * secondsPerHour / inst.PricePerHour[j]
			}
		}
	}
	if slo {
		r, err := remainingSteps(inst)
		if err != nil {
			return nil, err
		}
		need, err := sloNeeds(inst, r)
		if err != nil {
			return nil, err
		}
		for m, nd := range need {
			if nd > 0 {
				idx, val := a.throughput(m, 1/nd)
				a.addRow(idx, val, lp.GE, 1)
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
	al := a.allocation(sol, 1)
	for k, c := range a.prob.Objective {
		al.Objective += c * sol[k]
	}
	return al, nil
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

// formatNum writes a computed number for a message: three significant
// digits below 1,000 (43.9, 4.39, 0.0123; 1.23e-05 when tiny), whole
// numbers from 1,000 to 1e15 (12346).
func formatNum(v float64) string {
	s := strconv.FormatFloat(v, 'g', 3, 64)
	if r, _ := strconv.ParseFloat(s, 64); math.Abs(r) >= 1000 && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	}
	return s
}
