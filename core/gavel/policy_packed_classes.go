package gavel

import (
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
// class pair) and worker type:
//
//   - u[c][j]: the time share of each job of class c on type j;
//   - v[e][j]: the time share of each pair of class pair e = {c, d} on type j.
//
// Its rows are the full LP's rows of one job per class (all jobs of a class
// have the same row) and the capacity rows, with multiplicities: a job of
// c belongs to mult(c, e) pairs of e (n_d for c != d, n_c - 1 for c = d),
// and e holds count(e) pairs (n_c n_d, or n_c (n_c - 1)/2). Both LPs
// therefore have the same max-min level and the same Pareto optimum, and the
// class LP of the 1024-job instance has ~1,100 variables instead of ~1.5M.

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
	for m, job := range inst.Jobs {
		c := slices.IndexFunc(cl.rep, func(r int) bool {
			return inst.Jobs[r].ScaleFactor == job.ScaleFactor && inst.Jobs[r].PriorityWeight == job.PriorityWeight && slices.Equal(t[r], t[m])
		})
		if c < 0 {
			c = len(cl.rep)
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

// partners is mult(c, e): the pairs of class pair cp each job of class c
// belongs to.
func (cl *jobClasses) partners(c int, cp classPair) int {
	switch {
	case cp.c == cp.d:
		return cl.size[c] - 1
	case c == cp.c:
		return cl.size[cp.d]
	}
	return cl.size[cp.c]
}

// classFairLP builds the class LP of packed max-min fairness (see above):
// maximize z subject to each class's scaled normalized throughput >= z, its
// time <= 1 and the capacity rows.
func classFairLP(inst *Instance, t [][]float64, cl *jobClasses) *fairLP {
	k := len(inst.WorkerTypes)
	var prob lp.Problem
	newVar := func() int { prob.NumVars++; return prob.NumVars - 1 }
	nc := len(cl.rep)
	u := make([][]int, nc)
	// terms[c]: job rep[c]'s scaled normalized throughput; timeIdx/timeVal its time.
	termIdx, termVal := make([][]int, nc), make([][]float64, nc)
	timeIdx, timeVal := make([][]int, nc), make([][]float64, nc)
	capIdx, capVal := make([][]int, k), make([][]float64, k)
	for c, m := range cl.rep {
		u[c] = make([]int, k)
		scale, sf := fairnessScale(inst, t, m), float64(inst.Jobs[m].ScaleFactor)
		for j := range k {
			u[c][j] = -1
			if t[m][j] > 0 && inst.Jobs[m].ScaleFactor <= inst.NumWorkers[j] {
				v := newVar()
				u[c][j] = v
				termIdx[c], termVal[c] = append(termIdx[c], v), append(termVal[c], scale*t[m][j])
				timeIdx[c], timeVal[c] = append(timeIdx[c], v), append(timeVal[c], 1)
				capIdx[j], capVal[j] = append(capIdx[j], v), append(capVal[j], float64(cl.size[c])*sf)
			}
		}
	}
	v := make([][]int, len(cl.pairs))
	for e, cp := range cl.pairs {
		v[e] = make([]int, k)
		sf := inst.Jobs[cl.rep[cp.c]].ScaleFactor
		for j := range k {
			v[e][j] = -1
			if cp.thr[j][0] <= 0 || cp.thr[j][1] <= 0 || sf > inst.NumWorkers[j] {
				continue
			}
			x := newVar()
			v[e][j] = x
			sides := []int{cp.c, cp.d}
			if cp.c == cp.d {
				sides = sides[:1] // equal sides: one job class, in size-1 pairs
			}
			for side, c := range sides {
				mult := float64(cl.partners(c, cp))
				termIdx[c], termVal[c] = append(termIdx[c], x), append(termVal[c], mult*fairnessScale(inst, t, cl.rep[c])*cp.thr[j][side])
				timeIdx[c], timeVal[c] = append(timeIdx[c], x), append(timeVal[c], mult)
			}
			capIdx[j], capVal[j] = append(capIdx[j], x), append(capVal[j], float64(cl.pairCount(cp)*sf))
		}
	}
	z := newVar()
	prob.Objective = make([]float64, prob.NumVars)
	prob.Objective[z] = 1
	for c := range nc {
		prob.Rows = append(prob.Rows, lp.Row{Index: timeIdx[c], Value: timeVal[c], Sense: lp.LE, RHS: 1})
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
				al.X[m] = shares(x[m*k:(m+1)*k:(m+1)*k], u[cl.of[m]], sol)
			}
			px := make([]float64, len(inst.Pairs)*k)
			for p := range inst.Pairs {
				al.PairX[p] = shares(px[p*k:(p+1)*k:(p+1)*k], v[cl.pairOf[p]], sol)
			}
			return al
		},
	}
}

// shares sets out[j] to the cleaned value (see cleanShare) of variable
// vars[j] in sol (0 where vars[j] is -1) and returns out.
func shares(out []float64, vars []int, sol []float64) []float64 {
	for j, v := range vars {
		if v >= 0 {
			out[j] = cleanShare(sol[v], 1)
		}
	}
	return out
}
