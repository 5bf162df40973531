package lp

import (
	"context"
	"fmt"
	"math"
)

// Tolerances of the dense simplex.
const (
	pivotTol   = 1e-9 // smallest pivot element accepted by the ratio test
	costTol    = 1e-9 // reduced cost below -costTol lets a column enter
	feasTol    = 1e-7 // phase-1 optimum above this (relative to |b|) means infeasible
	blandAfter = 50   // consecutive degenerate pivots before switching to Bland's rule
	ctxEvery   = 64   // pivots between context checks
	iterFactor = 50   // iteration cap is iterFactor*(rows+columns)
	phaseOne   = "phase 1"
	phaseTwo   = "phase 2"
)

// tableau is a dense simplex tableau: m constraint rows and an objective row
// of reduced costs, over the standard columns, one artificial column per row
// that had no ready unit column, and the right-hand side last.
type tableau struct {
	m, w    int         // rows and width (columns incl. RHS)
	t       [][]float64 // m+1 rows; t[m] is the objective row
	basis   []int       // basic column of each row
	nReal   int         // columns < nReal are standard columns
	barred  []bool      // columns that may not enter
	iters   int
	maxIter int
}

// simplex solves s by the two-phase primal simplex on a dense tableau
// (Dantzig pricing, Bland's rule after a run of degenerate pivots).
func simplex(ctx context.Context, s *standard) (Status, []float64, int, error) {
	tb := newTableau(s)
	// Phase 1: minimize the sum of artificials.
	obj := make([]float64, tb.w)
	for j := tb.nReal; j < tb.w-1; j++ {
		obj[j] = 1
	}
	tb.setObjective(obj)
	if st, err := tb.run(ctx, phaseOne); err != nil {
		return 0, nil, tb.iters, err
	} else if st == Unbounded {
		return 0, nil, tb.iters, fmt.Errorf("lp: %s unbounded (numerical trouble)", phaseOne)
	}
	bmax := 1.0
	for _, v := range s.b {
		bmax = math.Max(bmax, math.Abs(v))
	}
	if -tb.t[tb.m][tb.w-1] > feasTol*bmax {
		return Infeasible, nil, tb.iters, nil
	}
	tb.dropArtificials()
	// Phase 2: the real objective.
	obj = make([]float64, tb.w)
	copy(obj, s.c)
	tb.setObjective(obj)
	st, err := tb.run(ctx, phaseTwo)
	if err != nil || st != Optimal {
		return st, nil, tb.iters, err
	}
	z := make([]float64, s.n)
	for i, j := range tb.basis {
		if j < s.n {
			z[j] = math.Max(0, tb.t[i][tb.w-1])
		}
	}
	return Optimal, z, tb.iters, nil
}

// newTableau builds the phase-1 tableau of s with b >= 0.
func newTableau(s *standard) *tableau {
	m := s.m
	flip := make([]bool, m)
	for i, v := range s.b {
		flip[i] = v < 0
	}
	// A column with a single +1 entry (after flipping) can start a row's basis.
	ready := make([]int, m)
	for i := range ready {
		ready[i] = -1
	}
	for j := 0; j < s.n; j++ {
		if s.colStart[j+1]-s.colStart[j] != 1 {
			continue
		}
		k := s.colStart[j]
		i, v := s.rowIdx[k], s.val[k]
		if flip[i] {
			v = -v
		}
		if v == 1 && ready[i] < 0 {
			ready[i] = j
		}
	}
	nArt := 0
	for _, j := range ready {
		if j < 0 {
			nArt++
		}
	}
	tb := &tableau{m: m, w: s.n + nArt + 1, nReal: s.n, basis: make([]int, m)}
	tb.maxIter = iterFactor * (tb.m + tb.w)
	tb.barred = make([]bool, tb.w-1)
	tb.t = make([][]float64, m+1)
	for i := range tb.t {
		tb.t[i] = make([]float64, tb.w)
	}
	for j := 0; j < s.n; j++ {
		for k := s.colStart[j]; k < s.colStart[j+1]; k++ {
			tb.t[s.rowIdx[k]][j] = s.val[k]
		}
	}
	art := s.n
	for i := 0; i < m; i++ {
		tb.t[i][tb.w-1] = s.b[i]
		if flip[i] {
			for j := range tb.t[i] {
				tb.t[i][j] = -tb.t[i][j]
			}
		}
		if ready[i] >= 0 {
			tb.basis[i] = ready[i]
		} else {
			tb.t[i][art] = 1
			tb.basis[i] = art
			art++
		}
	}
	return tb
}

// setObjective loads cost vector c (width w, RHS entry 0) into the objective
// row and prices out the basic columns.
func (tb *tableau) setObjective(c []float64) {
	obj := tb.t[tb.m]
	copy(obj, c)
	for i, j := range tb.basis {
		if f := obj[j]; f != 0 {
			row := tb.t[i]
			for k := range obj {
				obj[k] -= f * row[k]
			}
		}
	}
}

// run pivots until optimal or unbounded.
func (tb *tableau) run(ctx context.Context, phase string) (Status, error) {
	degenerate := 0
	obj := tb.t[tb.m]
	for {
		if tb.iters%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		if tb.iters > tb.maxIter {
			return 0, fmt.Errorf("lp: simplex %s: no convergence after %d pivots", phase, tb.iters)
		}
		bland := degenerate > blandAfter
		enter := -1
		best := -costTol
		for j, d := range obj[:tb.w-1] {
			if tb.barred[j] || d >= best {
				continue
			}
			enter, best = j, d
			if bland {
				break
			}
		}
		if enter < 0 {
			return Optimal, nil
		}
		leave := -1
		ratio := math.Inf(1)
		for i := 0; i < tb.m; i++ {
			a := tb.t[i][enter]
			if a <= pivotTol {
				continue
			}
			r := tb.t[i][tb.w-1] / a
			if r < ratio-1e-12 || (r <= ratio+1e-12 && leave >= 0 && tb.basis[i] < tb.basis[leave]) {
				leave, ratio = i, r
			}
		}
		if leave < 0 {
			return Unbounded, nil
		}
		if ratio <= 1e-12 {
			degenerate++
		} else {
			degenerate = 0
		}
		tb.pivot(leave, enter)
		tb.iters++
	}
}

// pivot makes column e basic in row r.
func (tb *tableau) pivot(r, e int) {
	pr := tb.t[r]
	inv := 1 / pr[e]
	nz := make([]int, 0, tb.w)
	for k, v := range pr {
		if v != 0 {
			pr[k] = v * inv
			nz = append(nz, k)
		}
	}
	pr[e] = 1
	for i, row := range tb.t {
		if i == r {
			continue
		}
		f := row[e]
		if f == 0 {
			continue
		}
		for _, k := range nz {
			row[k] -= f * pr[k]
		}
		row[e] = 0
	}
	tb.basis[r] = e
}

// dropArtificials pivots basic artificials out where a real column can
// replace them, and bars every artificial column from entering again. Rows
// whose artificial stays basic are redundant (all real entries zero).
func (tb *tableau) dropArtificials() {
	for i, j := range tb.basis {
		if j < tb.nReal {
			continue
		}
		best, at := pivotTol, -1
		for k := 0; k < tb.nReal; k++ {
			if a := math.Abs(tb.t[i][k]); a > best {
				best, at = a, k
			}
		}
		if at >= 0 {
			tb.pivot(i, at)
		}
	}
	for j := tb.nReal; j < tb.w-1; j++ {
		tb.barred[j] = true
	}
}
