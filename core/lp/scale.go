package lp

import "math"

// scalePasses is the number of geometric-mean passes of equilibrate.
const scalePasses = 8

// scaledAcceptTol is the relative primal infeasibility, max |b - A z| /
// (1 + max |b|), up to which a solution of the equilibrated problem is
// accepted for the original one.
const scaledAcceptTol = 1e-7

// primalResidual is max_i |b_i - (A z)_i| / (1 + max |b|).
func primalResidual(s *standard, z []float64) float64 {
	r := append([]float64(nil), s.b...)
	for j := 0; j < s.n; j++ {
		for k := s.colStart[j]; k < s.colStart[j+1]; k++ {
			r[s.rowIdx[k]] -= s.val[k] * z[j]
		}
	}
	return normInf(r) / (1 + normInf(s.b))
}

// equilibrate returns s with rows and columns scaled, A' = R A C, b' = R b,
// c' = C c, so every row's and column's nonzeros straddle 1 (geometric-mean
// scaling, then each column's largest entry scaled to 1: the equilibration
// of LP codes such as CLP and HiGHS), and the column scales C: a solution z'
// of the result gives z = C z' of s. Interior-point iterations on badly
// scaled rows (fairness rows of throughputs 1e-3 to 1e3 next to capacity
// rows of GPU counts) stall where the scaled problem converges.
func equilibrate(s *standard) (*standard, []float64) {
	t := *s
	t.val = append([]float64(nil), s.val...)
	t.b = append([]float64(nil), s.b...)
	t.c = append([]float64(nil), s.c...)
	rowScale := make([]float64, s.m)
	colScale := make([]float64, s.n)
	for i := range rowScale {
		rowScale[i] = 1
	}
	for j := range colScale {
		colScale[j] = 1
	}
	lo, hi := make([]float64, s.m), make([]float64, s.m)
	for range scalePasses {
		for i := range lo {
			lo[i], hi[i] = math.Inf(1), 0
		}
		for j := 0; j < t.n; j++ {
			for k := t.colStart[j]; k < t.colStart[j+1]; k++ {
				if v := math.Abs(t.val[k]); v > 0 {
					i := t.rowIdx[k]
					lo[i], hi[i] = min(lo[i], v), max(hi[i], v)
				}
			}
		}
		for i := range lo {
			if hi[i] > 0 {
				f := 1 / math.Sqrt(lo[i]*hi[i])
				rowScale[i] *= f
				lo[i] = f // reused as this pass's row factor
			} else {
				lo[i] = 1
			}
		}
		for j := 0; j < t.n; j++ {
			cmin, cmax := math.Inf(1), 0.0
			for k := t.colStart[j]; k < t.colStart[j+1]; k++ {
				t.val[k] *= lo[t.rowIdx[k]]
				if v := math.Abs(t.val[k]); v > 0 {
					cmin, cmax = min(cmin, v), max(cmax, v)
				}
			}
			if cmax > 0 {
				f := 1 / math.Sqrt(cmin*cmax)
				colScale[j] *= f
				for k := t.colStart[j]; k < t.colStart[j+1]; k++ {
					t.val[k] *= f
				}
			}
		}
	}
	for j := 0; j < t.n; j++ {
		cmax := 0.0
		for k := t.colStart[j]; k < t.colStart[j+1]; k++ {
			cmax = max(cmax, math.Abs(t.val[k]))
		}
		if cmax > 0 {
			colScale[j] /= cmax
			for k := t.colStart[j]; k < t.colStart[j+1]; k++ {
				t.val[k] /= cmax
			}
		}
	}
	for i := range t.b {
		t.b[i] *= rowScale[i]
	}
	for j := range t.c {
		t.c[j] *= colScale[j]
	}
	return &t, colScale
}
