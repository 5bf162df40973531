package gavel

import (
	"context"
	"errors"
	"fmt"
	"math"

	"pipeplan/core/lp"
)

// allocLP is the common part of Gavel's allocation LPs (§5.3.1, §6.4.1):
// variables X[m][j] >= 0 (and, when packed, one per job pair and worker type,
// §5.3.1 space sharing), each job's total time sum_j X[m][j] (plus its pairs')
// <= 1, and each worker type's capacity sum_m scale_factor_m X[m][j] <= n_j
// (summed over the worker types that share GPUs, see capacityType).
type allocLP struct {
	inst              *Instance
	t                 [][]float64 // throughputs the LP uses (isolated, or agnostic ones)
	prob              lp.Problem
	x                 [][]int // x[m][j]: variable of job m on type j, -1 if it cannot run there
	px                [][]int // px[p][j]: variable of pair p on type j, -1 if absent
	pairsOf           [][]int // pairsOf[m]: the pairs job m belongs to (none unless packed)
	timeRows, capRows []int
}

// newAllocLP builds the variables and base constraints; t replaces the
// isolated throughputs (agnostic policies pass ones), packed adds pairs.
func newAllocLP(inst *Instance, t [][]float64, packed bool) *allocLP {
	a := &allocLP{inst: inst, t: t}
	k := len(inst.WorkerTypes)
	timeIdx := make([][]int, len(inst.Jobs))
	capIdx, capVal := make([][]int, k), make([][]float64, k)
	a.x = make([][]int, len(inst.Jobs))
	a.pairsOf = make([][]int, len(inst.Jobs))
	for m, job := range inst.Jobs {
		a.x[m] = make([]int, k)
		for j := range k {
			a.x[m][j] = -1
			if t[m][j] > 0 && job.ScaleFactor <= inst.NumWorkers[j] {
				v := a.addVar(0)
				a.x[m][j] = v
				timeIdx[m] = append(timeIdx[m], v)
				capIdx[j], capVal[j] = append(capIdx[j], v), append(capVal[j], float64(job.ScaleFactor))
			}
		}
	}
	if packed {
		a.px = make([][]int, len(inst.Pairs))
		for p, pair := range inst.Pairs {
			a.pairsOf[pair.A] = append(a.pairsOf[pair.A], p)
			a.pairsOf[pair.B] = append(a.pairsOf[pair.B], p)
			a.px[p] = make([]int, k)
			sf := inst.Jobs[pair.A].ScaleFactor
			for j := range k {
				a.px[p][j] = -1
				if pair.Throughputs[j][0] > 0 && pair.Throughputs[j][1] > 0 && sf <= inst.NumWorkers[j] {
					v := a.addVar(0)
					a.px[p][j] = v
					timeIdx[pair.A] = append(timeIdx[pair.A], v)
					timeIdx[pair.B] = append(timeIdx[pair.B], v)
					capIdx[j], capVal[j] = append(capIdx[j], v), append(capVal[j], float64(sf))
				}
			}
		}
	}
	for m := range inst.Jobs {
		a.timeRows = append(a.timeRows, a.addRow(timeIdx[m], ones(len(timeIdx[m])), lp.LE, 1))
	}
	// Worker types sharing GPUs (withPlacements) share one capacity row.
	for j := range k {
		if g := inst.capacityType(j); g != j {
			capIdx[g], capVal[g] = append(capIdx[g], capIdx[j]...), append(capVal[g], capVal[j]...)
		}
	}
	for j := range k {
		if inst.capacityType(j) == j {
			a.capRows = append(a.capRows, a.addRow(capIdx[j], capVal[j], lp.LE, float64(inst.NumWorkers[j])))
		}
	}
	// Consolidated placements fit only so many jobs per server (withPlacements).
	for _, c := range inst.consolidatedCaps {
		var idx []int
		for m, job := range inst.Jobs {
			if v := a.x[m][c.column]; v >= 0 && job.ScaleFactor == c.scale {
				idx = append(idx, v)
			}
		}
		if len(idx) > 0 {
			vals := make([]float64, len(idx))
			for i := range vals {
				vals[i] = float64(c.scale)
			}
			a.addRow(idx, vals, lp.LE, c.gpus)
		}
	}
	return a
}

// spreadAgnostic fixes the semantics of heterogeneity-agnostic policies:
// they decide each job's total time share x_m as if all GPUs were the same,
// and the job then runs on every worker type it can use in proportion to that
// type's size, X[m][j] = x_m * n_j / sum_{j' usable} n_j'. It adds the rows
// X[m][j]*n_j0 = X[m][j0]*n_j for each job's usable types j after the first
// j0, so the capacity rows still hold for the spread allocation. Without them
// every split is optimal for an agnostic LP and the solver returns an
// arbitrary vertex (e.g. every job on the first worker type).
func (a *allocLP) spreadAgnostic() {
	n := a.inst.NumWorkers
	for _, vars := range a.x {
		first := -1
		for j, v := range vars {
			switch {
			case v < 0:
			case first < 0:
				first = j
			default:
				a.addRow([]int{v, vars[first]}, []float64{float64(n[first]), -float64(n[j])}, lp.EQ, 0)
			}
		}
	}
}

// addVar adds a variable >= 0 with objective coefficient c and returns its index.
func (a *allocLP) addVar(c float64) int {
	a.prob.Objective = append(a.prob.Objective, c)
	a.prob.NumVars++
	return a.prob.NumVars - 1
}

// addRow adds a constraint and returns its index.
func (a *allocLP) addRow(idx []int, val []float64, sense lp.Sense, rhs float64) int {
	a.prob.Rows = append(a.prob.Rows, lp.Row{Index: idx, Value: val, Sense: sense, RHS: rhs})
	return len(a.prob.Rows) - 1
}

// throughput returns the terms of scale*throughput(m, X) (§5.3.1 effective
// throughput; with pairs, job m's share of each co-located pair).
func (a *allocLP) throughput(m int, scale float64) ([]int, []float64) {
	var idx []int
	var val []float64
	for j, v := range a.x[m] {
		if v >= 0 {
			idx, val = append(idx, v), append(val, scale*a.t[m][j])
		}
	}
	for _, p := range a.pairsOf[m] {
		side := 0
		if a.inst.Pairs[p].B == m {
			side = 1
		}
		pair := a.inst.Pairs[p]
		for j, v := range a.px[p] {
			if v >= 0 {
				idx, val = append(idx, v), append(val, scale*pair.Throughputs[j][side])
			}
		}
	}
	return idx, val
}

// errInfeasible is the error of an allocation LP without a feasible point.
var errInfeasible = errors.New("the allocation problem is infeasible")

// solve maximizes the objective and returns the variable values.
func (a *allocLP) solve(ctx context.Context) ([]float64, error) {
	return solveMax(ctx, &a.prob)
}

// solveMax maximizes prob's objective and returns the variable values
// (lp.Auto tries the other method when one fails numerically).
func solveMax(ctx context.Context, prob *lp.Problem) ([]float64, error) {
	prob.Maximize = true
	res, err := lp.Solve(ctx, prob, lp.Options{})
	if err != nil {
		return nil, err
	}
	switch res.Status {
	case lp.Infeasible:
		return nil, errInfeasible
	case lp.Unbounded:
		return nil, fmt.Errorf("the allocation problem is unbounded")
	}
	return res.X, nil
}

// cleanShare is a time share v of a solution divided by scale (1 unless
// Charnes-Cooper scaled it), with solver noise below 1e-9 cleaned to 0 and
// at most 1.
func cleanShare(v, scale float64) float64 {
	v /= scale
	if v < 1e-9 {
		return 0
	}
	return math.Min(v, 1)
}

// allocation extracts X (and pair fractions) from a solution (see
// cleanShare).
func (a *allocLP) allocation(sol []float64, scale float64) *Allocation {
	al := &Allocation{X: make([][]float64, len(a.x))}
	for m, vars := range a.x {
		al.X[m] = make([]float64, len(vars))
		for j, v := range vars {
			if v >= 0 {
				al.X[m][j] = cleanShare(sol[v], scale)
			}
		}
	}
	if a.px != nil {
		al.PairX = make([][]float64, len(a.px))
		for p, vars := range a.px {
			al.PairX[p] = make([]float64, len(vars))
			for j, v := range vars {
				if v >= 0 {
					al.PairX[p][j] = cleanShare(sol[v], scale)
				}
			}
		}
	}
	return al
}

// effectiveThroughputs returns throughput(m, X) of every job under
// throughputs t, pairs included (§5.3.1).
func effectiveThroughputs(inst *Instance, t [][]float64, al *Allocation) []float64 {
	eff := make([]float64, len(al.X))
	for m, row := range al.X {
		for j, x := range row {
			eff[m] += t[m][j] * x
		}
	}
	for p, xs := range al.PairX {
		pair := inst.Pairs[p]
		for j, x := range xs {
			eff[pair.A] += pair.Throughputs[j][0] * x
			eff[pair.B] += pair.Throughputs[j][1] * x
		}
	}
	return eff
}

func ones(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 1
	}
	return v
}
