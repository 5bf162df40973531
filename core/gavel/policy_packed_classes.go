package gavel

import (
	"encoding/binary"
	"math"
	"slices"

	"pipeplan/core/lp"
)

// Packed max-min fairness by classes of interchangeable jobs.
//
// Jobs with the same scale factor, priority weight and throughput row are
// interchangeable in the max-min fairness LP when the pairs treat them
// alike: for every two classes c <= d, either no pair joins a job of c with
// one of d, or every such two jobs form exactly one pair, all with the same
// throughputs (side c first; equal sides when c = d). Gavel's instances are
// like that: pairs and throughputs come from a table keyed by job type
// (PairsFromTable), so the 1024-job instance has 26 classes and 510,672
// pairs. Permuting the jobs of a class then maps the LP's feasible set and
// objective onto themselves, so averaging an optimal solution over those
// permutations gives an optimal solution that gives every job of a class,
// and every pair of a class pair, the same values (the objective z, and the
// Pareto objective, a sum over all jobs, are invariant; the rows are linear,
// so the average is feasible). Such symmetric solutions are exactly the
// expansions of the class LP below, which has one variable per class (or
// class pair) and worker type, each the total over the class (n_c jobs) or
// class pair (count(e) pairs: n_c n_d, or n_c (n_c - 1)/2 for c = d), so its
// coefficients stay those of the per-job LP whatever the class sizes:
//
//   - U[c][j] = n_c u: the time of class c's jobs on type j, each job's u;
//   - W[e][j] = count(e) v: the time of class pair e = {c, d}'s pairs on
//     type j, each pair's v.
//
// Row by row, with o(c, e) = 2 when e = {c, c} (both jobs of its pairs are
// in c) and 1 otherwise:
//
//   - time of class c: sum_j U[c][j] + sum_{e ∋ c} o(c, e) sum_j W[e][j] <= n_c,
//     n_c times the time row of each of its jobs (a job of c belongs to
//     n_d pairs of e = {c, d}, or n_c - 1 of e = {c, c});
//   - capacity of type j: sf_c U[c][j] + sf_e W[e][j] summed <= n_j, the
//     per-job LP's row;
//   - level of class c: scale_c/n_c (sum_j t_cj U[c][j] + sum_{e ∋ c} o(c, e)
//     sum_j thr_e,j,c W[e][j]) >= z, each of its jobs' row.
//
// Both LPs therefore have the same max-min level and the same Pareto
// optimum (sum over jobs, so class c counts n_c times), and the class LP of
// the 1024-job instance has 856 variables and 55 rows instead of ~1.5M and 2,051.

// jobClasses is the partition of an instance's jobs and pairs into classes.
type jobClasses struct {
	of     []int       // of[m]: class of job m
	size   []int       // size[c]: jobs in class c
	rep    []int       // rep[c]: a job of class c
	pairs  []classPair // class pairs with at least one pair
	pairOf []int       // pairOf[p]: index into pairs of inst.Pairs[p]
}

// classPair is a pair of classes c <= d and the throughputs (side c first)
// all their pairs share.
type classPair struct {
	c, d  int
	thr   [][2]float64
	count int
}

// maxClassJobs bounds the jobs whose pairs classesOf checks (its bitset of
// seen job pairs takes n*n bits: 32 MB at the bound).
const maxClassJobs = 1 << 14

// classesOf returns the classes of inst's jobs under throughputs t, or nil
// when the pairs do not treat the jobs of a class alike (see above), when no
// two jobs are interchangeable, or when placements bound consolidated
// columns (withPlacements instances are not handled here).
func classesOf(inst *Instance, t [][]float64) *jobClasses {
	n := len(inst.Jobs)
	if n > maxClassJobs || len(inst.consolidatedCaps) > 0 || inst.capacityOf != nil {
		return nil
	}
	cl := &jobClasses{of: make([]int, n)}
	classOf := map[string]int{}
	for m, job := range inst.Jobs {
		key := make([]byte, 0, 8*(len(t[m])+2))
		for _, v := range append([]float64{float64(job.ScaleFactor), job.PriorityWeight}, t[m]...) {
			key = binary.LittleEndian.AppendUint64(key, math.Float64bits(v))
		}
		c, ok := classOf[string(key)]
		if !ok {
			c = len(cl.rep)
			classOf[string(key)] = c
			cl.rep, cl.size = append(cl.rep, m), append(cl.size, 0)
		}
		cl.of[m] = c
		cl.size[c]++
	}
	if len(cl.rep) == n {
		return nil
	}
	nc := len(cl.rep)
	index := make([]int, nc*nc) // index[c*nc+d]: 1 + class pair of (c, d), 0 if none yet
	seen := make([]uint64, (n*n+63)/64)
	cl.pairOf = make([]int, len(inst.Pairs))
	for p, pair := range inst.Pairs {
		lo, hi := min(pair.A, pair.B), max(pair.A, pair.B)
		if bit := lo*n + hi; seen[bit/64]&(1<<(bit%64)) != 0 {
			return nil // a repeated pair
		} else {
			seen[bit/64] |= 1 << (bit % 64)
		}
		c, d := cl.of[pair.A], cl.of[pair.B]
		flip := c > d
		if flip {
			c, d = d, c
		}
		thr := func(j int) [2]float64 {
			if flip {
				return [2]float64{pair.Throughputs[j][1], pair.Throughputs[j][0]}
			}
			return pair.Throughputs[j]
		}
		e := index[c*nc+d] - 1
		if e < 0 {
			e = len(cl.pairs)
			index[c*nc+d] = e + 1
			cp := classPair{c: c, d: d, thr: make([][2]float64, len(pair.Throughputs))}
			for j := range cp.thr {
				cp.thr[j] = thr(j)
				if c == d && cp.thr[j][0] != cp.thr[j][1] {
					return nil // a job of c would gain differently as a or b
				}
			}
			cl.pairs = append(cl.pairs, cp)
		}
		cp := &cl.pairs[e]
		for j := range cp.thr {
			if thr(j) != cp.thr[j] {
				return nil
			}
		}
		cp.count++
		cl.pairOf[p] = e
	}
	for _, cp := range cl.pairs {
		if cp.count != cl.pairCount(cp) {
			return nil // some jobs of c and d are not paired
		}
	}
	return cl
}

// pairCount is the number of job pairs class pair cp stands for.
func (cl *jobClasses) pairCount(cp classPair) int {
	if cp.c == cp.d {
		return cl.size[cp.c] * (cl.size[cp.c] - 1) / 2
	}
	return cl.size[cp.c] * cl.size[cp.d]
}

// classFairLP builds the class LP of packed max-min fairness (see above):
// maximize z subject to each class's scaled normalized throughput >= z, its
// time and the capacity rows.
func classFairLP(inst *Instance, t [][]float64, cl *jobClasses) *fairLP {
	k := len(inst.WorkerTypes)
	var prob lp.Problem
	newVar := func() int { prob.NumVars++; return prob.NumVars - 1 }
	nc := len(cl.rep)
	// termIdx/termVal[c]: a job of class c's scaled normalized throughput;
	// timeIdx/timeVal[c]: the class's time.
	termIdx, termVal := make([][]int, nc), make([][]float64, nc)
	timeIdx, timeVal := make([][]int, nc), make([][]float64, nc)
	capIdx, capVal := make([][]int, k), make([][]float64, k)
	add := func(c, v int, time, thr float64) {
		n := float64(cl.size[c])
		termIdx[c], termVal[c] = append(termIdx[c], v), append(termVal[c], fairnessScale(inst, t, cl.rep[c])*time*thr/n)
		timeIdx[c], timeVal[c] = append(timeIdx[c], v), append(timeVal[c], time)
	}
	u := make([][]int, nc)
	for c, m := range cl.rep {
		u[c] = make([]int, k)
		for j := range k {
			u[c][j] = -1
			if t[m][j] > 0 && inst.Jobs[m].ScaleFactor <= inst.NumWorkers[j] {
				u[c][j] = newVar()
				add(c, u[c][j], 1, t[m][j])
				capIdx[j], capVal[j] = append(capIdx[j], u[c][j]), append(capVal[j], float64(inst.Jobs[m].ScaleFactor))
			}
		}
	}
	w := make([][]int, len(cl.pairs))
	for e, cp := range cl.pairs {
		w[e] = make([]int, k)
		sf := inst.Jobs[cl.rep[cp.c]].ScaleFactor
		for j := range k {
			w[e][j] = -1
			if cp.thr[j][0] <= 0 || cp.thr[j][1] <= 0 || sf > inst.NumWorkers[j] {
				continue
			}
			w[e][j] = newVar()
			if cp.c == cp.d {
				add(cp.c, w[e][j], 2, cp.thr[j][0]) // equal sides (classesOf)
			} else {
				add(cp.c, w[e][j], 1, cp.thr[j][0])
				add(cp.d, w[e][j], 1, cp.thr[j][1])
			}
			capIdx[j], capVal[j] = append(capIdx[j], w[e][j]), append(capVal[j], float64(sf))
		}
	}
	z := newVar()
	prob.Objective = make([]float64, prob.NumVars)
	prob.Objective[z] = 1
	for c := range nc {
		prob.Rows = append(prob.Rows, lp.Row{Index: timeIdx[c], Value: timeVal[c], Sense: lp.LE, RHS: float64(cl.size[c])})
	}
	for j := range k {
		prob.Rows = append(prob.Rows, lp.Row{Index: capIdx[j], Value: capVal[j], Sense: lp.LE, RHS: float64(inst.NumWorkers[j])})
	}
	for c := range nc {
		prob.Rows = append(prob.Rows, lp.Row{Index: append(slices.Clone(termIdx[c]), z), Value: append(slices.Clone(termVal[c]), -1), Sense: lp.GE})
	}
	return &fairLP{
		prob:   &prob,
		z:      z,
		units:  nc,
		terms:  func(c int) ([]int, []float64) { return termIdx[c], termVal[c] },
		weight: func(c int) float64 { return float64(cl.size[c]) },
		alloc: func(sol []float64) *Allocation {
			al := &Allocation{X: make([][]float64, len(inst.Jobs)), PairX: make([][]float64, len(inst.Pairs))}
			x := make([]float64, len(inst.Jobs)*k)
			for m := range inst.Jobs {
				c := cl.of[m]
				al.X[m] = shares(x[m*k:(m+1)*k:(m+1)*k], u[c], sol, float64(cl.size[c]))
			}
			px := make([]float64, len(inst.Pairs)*k)
			for p := range inst.Pairs {
				e := cl.pairOf[p]
				al.PairX[p] = shares(px[p*k:(p+1)*k:(p+1)*k], w[e], sol, float64(cl.pairCount(cl.pairs[e])))
			}
			return al
		},
	}
}

// shares sets out[j] to the cleaned value of variable vars[j] in sol
// divided by n (cleanShare; 0 where vars[j] is -1) and returns out.
func shares(out []float64, vars []int, sol []float64, n float64) []float64 {
	for j, v := range vars {
		if v >= 0 {
			out[j] = cleanShare(sol[v], n)
		}
	}
	return out
}
