package gavel

import (
	"context"

	"pipeplan/core/lp"
)

func init() {
	registerPolicy(PolicyInfo{Name: "max_min_fairness", Title: "Max-min fairness (LAS), heterogeneity-agnostic",
		Section:   "§5.4.1, Table 5.1",
		Objective: "maximize min_m w_m·(time share of job m) over every GPU seen as equal (least attained service)"}, staticPolicy(func(ctx context.Context, inst *Instance) (*Allocation, error) {
		return maxMinFairness(ctx, inst, agnosticThroughputs(inst), false, true)
	}))
	registerPolicy(PolicyInfo{Name: "max_min_fairness_perf", Title: "Max-min fairness (LAS), heterogeneity-aware",
		Section: "§5.4.1, Table 5.1", Objective: "maximize min_m w_m·throughput(m, X)/throughput(m, X^equal)",
		HeterogeneityAware: true}, staticPolicy(func(ctx context.Context, inst *Instance) (*Allocation, error) {
		return maxMinFairness(ctx, inst, inst.Throughputs, false, false)
	}))
	registerPolicy(PolicyInfo{Name: "max_min_fairness_packed", Title: "Max-min fairness (LAS) with space sharing",
		Section: "§5.4.1, §5.3.1", Objective: "maximize min_m w_m·throughput(m, X)/throughput(m, X^equal), co-located pairs counted",
		HeterogeneityAware: true, SpaceSharing: true}, staticPolicy(func(ctx context.Context, inst *Instance) (*Allocation, error) {
		return maxMinFairness(ctx, inst, inst.Throughputs, true, false)
	}))
}

// staticPolicy wraps an allocation function that needs no options.
func staticPolicy(f func(ctx context.Context, inst *Instance) (*Allocation, error)) func(policyOptions) (func(context.Context, *Instance) (*Allocation, error), error) {
	return func(policyOptions) (func(context.Context, *Instance) (*Allocation, error), error) { return f, nil }
}

// agnosticThroughputs returns 1 wherever a job can run: a
// heterogeneity-agnostic policy sees every worker type as equally fast, so
// its "throughput" is the time share (§5.4.1, LAS).
func agnosticThroughputs(inst *Instance) [][]float64 {
	t := make([][]float64, len(inst.Jobs))
	for m, row := range inst.Throughputs {
		t[m] = make([]float64, len(row))
		for j, v := range row {
			if v > 0 {
				t[m][j] = 1
			}
		}
	}
	return t
}

// equalThroughput is throughput(m, X^equal_m): job m's throughput when it
// spends time on each worker type in proportion to that type's share of the
// cluster (§5.4.1: [0.5, 0.5] for 1 V100 and 1 K80), consolidated.
func equalThroughput(inst *Instance, t [][]float64, m int) float64 {
	total, s := 0, 0.0
	for j, n := range inst.NumWorkers {
		if inst.capacityType(j) != j {
			continue
		}
		total += n
		s += t[m][j] * float64(n)
	}
	return s / float64(total)
}

// fairnessScale is the coefficient of throughput(m, X) in the weighted
// normalized max-min objective: scale_factor_m / (w_m throughput(m, X^equal_m)) (§5.4.1).
func fairnessScale(inst *Instance, t [][]float64, m int) float64 {
	job := inst.Jobs[m]
	return float64(job.ScaleFactor) / (job.PriorityWeight * equalThroughput(inst, t, m))
}

// paretoSlack is the relative slack each job's fairness level may lose in
// the second, Pareto-improving LP of maxMinFairness (paretoStep) (below the 1e-9 to which
// the §5.4.1 example's unique optimum is checked).
const paretoSlack = 1e-10

// fairLP is a max-min fairness LP as maxMinFairness solves it: maximize
// its level variable z subject to every unit's scaled normalized
// throughput >= z, a unit being a job (maxMinLP) or a class of
// interchangeable jobs (classFairLP).
type fairLP struct {
	prob  *lp.Problem
	z     int
	units int
	// terms returns unit i's scaled normalized throughput
	// scale_i*throughput(i, X) as variable indices and coefficients.
	terms func(i int) ([]int, []float64)
	// weight is the number of jobs unit i stands for.
	weight func(i int) float64
	// alloc is the allocation of the instance a solution stands for.
	alloc func(sol []float64) *Allocation
}

// jobFairLP is the fairLP of max-min LP a (level variable z, see maxMinLP),
// one unit per job.
func jobFairLP(inst *Instance, t [][]float64, a *allocLP, z int) *fairLP {
	return &fairLP{
		prob:   &a.prob,
		z:      z,
		units:  len(inst.Jobs),
		terms:  func(m int) ([]int, []float64) { return a.throughput(m, fairnessScale(inst, t, m)) },
		weight: func(int) float64 { return 1 },
		alloc:  func(sol []float64) *Allocation { return a.allocation(sol, 1) },
	}
}

// maxMinFairness solves Maximize_X min_m scale_factor_m/w_m *
// throughput(m,X)/throughput(m,X^equal_m) (§5.4.1) as the LP "maximize z
// subject to each job's scaled normalized throughput >= z"; the objective is z.
// That LP is degenerate: only the bottleneck jobs are pinned, the others may
// sit anywhere above z (even with whole GPU types idle), so paretoStep then
// hands out what is left. If that LP fails numerically, fillIdle hands out
// the idle capacity instead. agnostic spreads each job's time over worker
// types in proportion to their size (see spreadAgnostic). With pairs, the
// pairs worth less than time sharing are left out (withoutDominatedPairs),
// and jobs that are interchangeable are solved for as classes
// (classFairLP) when the instance allows it.
func maxMinFairness(ctx context.Context, inst *Instance, t [][]float64, packed, agnostic bool) (*Allocation, error) {
	var f *fairLP
	if packed && !agnostic {
		inst = withoutDominatedPairs(inst, t)
		if cl := classesOf(inst, t); cl != nil {
			f = classFairLP(inst, t, cl)
		}
	}
	if f == nil {
		a, z := maxMinLP(inst, t, packed)
		if agnostic {
			a.spreadAgnostic()
		}
		f = jobFairLP(inst, t, a, z)
	}
	sol, err := solveMax(ctx, f.prob)
	if err != nil {
		return nil, err
	}
	al := f.alloc(sol)
	al.Objective = sol[f.z]
	if sol[f.z] <= 0 {
		return al, nil
	}
	sol2, err := f.pareto(ctx, sol)
	switch {
	case err == nil:
		al = f.alloc(sol2)
		al.Objective = sol[f.z]
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case !agnostic:
		fillIdle(inst, t, al)
	}
	return al, nil
}

// paretoStep is the Pareto step (fairLP.pareto) of the max-min LP a with
// level variable z and solution sol, one unit per job.
func paretoStep(ctx context.Context, inst *Instance, t [][]float64, a *allocLP, z int, sol []float64) ([]float64, error) {
	return jobFairLP(inst, t, a, z).pareto(ctx, sol)
}

// pareto re-solves f (solution sol) maximizing the sum over jobs of their
// scaled normalized throughputs while no job falls below the max-min level,
// so the allocation is Pareto-efficient: z is held at >= level*(1-paretoSlack)
// (z as sol attains it, so solver tolerances cannot make the LP
// infeasible), which lets jobs above the level trade time among
// themselves. On large packed instances that band is a sliver on which the
// interior point stalls (the normal equations turn singular: the
// bottleneck and capacity rows are nearly dependent); then every variable
// is held at >= (1-paretoSlack) of its value in sol instead
// (holdVariables): no job loses, and the capacity left over is handed out.
func (f *fairLP) pareto(ctx context.Context, sol []float64) ([]float64, error) {
	prob := f.prob
	prob.Objective[f.z] = 0
	prob.Lower = make([]float64, prob.NumVars)
	level := sol[f.z]
	for i := range f.units {
		idx, val := f.terms(i)
		w := f.weight(i)
		got := 0.0
		for k, v := range idx {
			prob.Objective[v] += w * val[k]
			got += val[k] * sol[v]
		}
		level = min(level, got)
	}
	prob.Lower[f.z] = level * (1 - paretoSlack)
	sol2, err := solveMax(ctx, prob)
	if err == nil || ctx.Err() != nil {
		return sol2, err
	}
	holdVariables(prob, f.z, sol)
	return solveMax(ctx, prob)
}

// holdVariables bounds every variable of prob but z below by
// (1-paretoSlack) of its value in sol, and frees z.
func holdVariables(prob *lp.Problem, z int, sol []float64) {
	for v, x := range sol {
		prob.Lower[v] = x * (1 - paretoSlack)
	}
	prob.Lower[z] = 0
}

// fillIdle is the fallback when the Pareto LP fails numerically: it gives
// each job whose time is below 1, least favoured first, free capacity of
// the worker types it runs fastest on. No job loses throughput, and no
// usable worker type stays idle while a job could take more time.
func fillIdle(inst *Instance, t [][]float64, al *Allocation) {
	free, share := freeCapacity(inst, al)
	consolidated := consolidatedFree(inst, al)
	eff := effectiveThroughputs(inst, t, al)
	order := jobOrder(len(inst.Jobs), func(m int) float64 { return eff[m] * fairnessScale(inst, t, m) })
	for _, m := range order {
		sf := float64(inst.Jobs[m].ScaleFactor)
		types := jobOrder(len(free), func(j int) float64 { return -t[m][j] })
		for _, j := range types {
			g := inst.capacityType(j)
			if t[m][j] <= 0 || sf > float64(inst.NumWorkers[j]) || free[g] <= 0 || share[m] >= 1 {
				continue
			}
			add := min(1-share[m], free[g]/sf)
			c, capped := consolidated[[2]int{j, inst.Jobs[m].ScaleFactor}]
			if capped {
				add = min(add, max(0, c/sf))
				consolidated[[2]int{j, inst.Jobs[m].ScaleFactor}] -= add * sf
			}
			al.X[m][j] += add
			share[m] += add
			free[g] -= add * sf
		}
	}
}

// consolidatedFree returns the GPUs each consolidated cap of inst
// (withPlacements) leaves to its scale factor under al, keyed by (column,
// scale factor).
func consolidatedFree(inst *Instance, al *Allocation) map[[2]int]float64 {
	free := map[[2]int]float64{}
	for _, c := range inst.consolidatedCaps {
		used := 0.0
		for m, job := range inst.Jobs {
			if job.ScaleFactor == c.scale {
				used += al.X[m][c.column] * float64(c.scale)
			}
		}
		free[[2]int{c.column, c.scale}] = c.gpus - used
	}
	return free
}

// freeCapacity returns the GPUs al leaves idle per capacity type (free[g]
// for the worker types g = capacityType(j)) and each job's total time
// share, its own plus its pairs'.
func freeCapacity(inst *Instance, al *Allocation) (free, share []float64) {
	free = make([]float64, len(inst.WorkerTypes))
	for j, n := range inst.NumWorkers {
		free[j] = float64(n)
	}
	share = make([]float64, len(inst.Jobs))
	for m, row := range al.X {
		for j, x := range row {
			free[inst.capacityType(j)] -= x * float64(inst.Jobs[m].ScaleFactor)
			share[m] += x
		}
	}
	for p, row := range al.PairX {
		pair := inst.Pairs[p]
		for j, x := range row {
			free[inst.capacityType(j)] -= x * float64(inst.Jobs[pair.A].ScaleFactor)
			share[pair.A] += x
			share[pair.B] += x
		}
	}
	return free, share
}

// maxMinLP builds the max-min fairness LP: scale_m * throughput(m, X) >= z
// is throughput(m, X) >= z / scale_m; z is the index of the minimum.
func maxMinLP(inst *Instance, t [][]float64, packed bool) (*allocLP, int) {
	need := make([]float64, len(inst.Jobs))
	for m := range need {
		need[m] = 1 / fairnessScale(inst, t, m)
	}
	a, z := scaledThroughputLP(inst, t, need, packed)
	a.prob.Maximize = true
	return a, z
}
