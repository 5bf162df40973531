package lp

import (
	"fmt"
	"math/bits"
	"slices"
)

// maxNormalRows bounds the rows of the normal equations (the symbolic
// ordering keeps one bitset row per row).
const maxNormalRows = 20000

// normalEq factors M = A D A^T + reg*diag(A D A^T) as P M P^T = L diag(d) L^T with a
// minimum-degree ordering P (dense columns were split beforehand, see
// splitDense, so M stays sparse).
type normalEq struct {
	m           int
	perm, iperm []int // perm[row] = position, iperm[position] = row
	// L column k (unit diagonal omitted): rows lrow[lptr[k]:lptr[k+1]] (positions, ascending).
	lptr []int
	lrow []int
	lval []float64
	d    []float64
	// Row structure of L: for position k, the columns i and value slots p with lrow[p] == k.
	rptr, rcol, rslot []int
	// A by rows, sparse columns only.
	arPtr []int
	arCol []int
	arVal []float64
	work  []float64
	// Positions >= tail form a dense trailing block of L, factored by a
	// dense kernel in the column-major buffer dense.
	tail  int
	dense []float64
}

// Dense trailing blocks between these sizes get the dense kernel.
const (
	denseTailMin = 64
	denseTailMax = 6000
)

// newNormalEq computes the ordering and symbolic factorization for s.
func newNormalEq(s *standard) (*normalEq, error) {
	m := s.m
	if m > maxNormalRows {
		return nil, fmt.Errorf("lp: interior point: %d rows exceed the limit of %d", m, maxNormalRows)
	}
	f := &normalEq{m: m, work: make([]float64, m)}
	// A by rows.
	cnt := make([]int, m+1)
	for j := 0; j < s.n; j++ {
		for k := s.colStart[j]; k < s.colStart[j+1]; k++ {
			cnt[s.rowIdx[k]+1]++
		}
	}
	for i := 0; i < m; i++ {
		cnt[i+1] += cnt[i]
	}
	f.arPtr = append([]int(nil), cnt...)
	f.arCol = make([]int, cnt[m])
	f.arVal = make([]float64, cnt[m])
	for j := 0; j < s.n; j++ {
		for k := s.colStart[j]; k < s.colStart[j+1]; k++ {
			i := s.rowIdx[k]
			f.arCol[cnt[i]], f.arVal[cnt[i]] = j, s.val[k]
			cnt[i]++
		}
	}
	// Adjacency of M as bitsets.
	words := (m + 63) / 64
	adj := make([]uint64, m*words)
	set := func(a, b int) { adj[a*words+b/64] |= 1 << (b % 64) }
	for j := 0; j < s.n; j++ {
		for p := s.colStart[j]; p < s.colStart[j+1]; p++ {
			for q := p + 1; q < s.colStart[j+1]; q++ {
				set(s.rowIdx[p], s.rowIdx[q])
				set(s.rowIdx[q], s.rowIdx[p])
			}
		}
	}
	// Minimum-degree ordering by explicit elimination (George & Liu); the
	// neighbours at elimination are the column pattern of L.
	deg := make([]int, m)
	for v := 0; v < m; v++ {
		deg[v] = popcount(adj[v*words : (v+1)*words])
	}
	alive := make([]bool, m)
	for v := range alive {
		alive[v] = true
	}
	f.perm, f.iperm = make([]int, m), make([]int, m)
	patterns := make([][]int, m)
	for k := 0; k < m; k++ {
		v := -1
		for u := 0; u < m; u++ {
			if alive[u] && (v < 0 || deg[u] < deg[v]) {
				v = u
			}
		}
		alive[v] = false
		f.perm[v], f.iperm[k] = k, v
		row := adj[v*words : (v+1)*words]
		var nb []int
		for w, x := range row {
			for x != 0 {
				b := bits.TrailingZeros64(x)
				x &= x - 1
				nb = append(nb, w*64+b)
			}
		}
		patterns[v] = nb
		for _, u := range nb {
			ur := adj[u*words : (u+1)*words]
			for w := range ur {
				ur[w] |= row[w]
			}
			ur[u/64] &^= 1 << (u % 64)
			ur[v/64] &^= 1 << (v % 64)
			deg[u] = popcount(ur)
		}
	}
	// Column patterns in positions, ascending.
	f.lptr = make([]int, m+1)
	for k := 0; k < m; k++ {
		f.lptr[k+1] = f.lptr[k] + len(patterns[f.iperm[k]])
	}
	f.lrow = make([]int, f.lptr[m])
	f.lval = make([]float64, f.lptr[m])
	f.d = make([]float64, m)
	rcnt := make([]int, m+1)
	for k := 0; k < m; k++ {
		col := f.lrow[f.lptr[k]:f.lptr[k+1]]
		for t, u := range patterns[f.iperm[k]] {
			col[t] = f.perm[u]
		}
		slices.Sort(col)
		for _, r := range col {
			rcnt[r+1]++
		}
	}
	for k := 0; k < m; k++ {
		rcnt[k+1] += rcnt[k]
	}
	f.tail = m
	for f.tail > 0 && f.lptr[f.tail]-f.lptr[f.tail-1] == m-f.tail {
		f.tail--
	}
	if nd := m - f.tail; nd < denseTailMin || nd > denseTailMax {
		f.tail = m
	} else {
		f.dense = make([]float64, nd*nd)
	}
	f.rptr = append([]int(nil), rcnt...)
	f.rcol = make([]int, rcnt[m])
	f.rslot = make([]int, rcnt[m])
	for k := 0; k < m; k++ {
		for p := f.lptr[k]; p < f.lptr[k+1]; p++ {
			r := f.lrow[p]
			f.rcol[rcnt[r]], f.rslot[rcnt[r]] = k, p
			rcnt[r]++
		}
	}
	return f, nil
}

// factor computes L and d for the column scaling dj (len n), the diagonal
// scaled by 1+reg (a regularization relative to each row, harmless at any
// scale of D, which iterative refinement then removes), assembling A D A^T column by column (left-looking
// LDL^T). Tiny pivots are replaced by a huge value, which zeroes the
// corresponding solution component (the usual interior-point safeguard).
func (f *normalEq) factor(s *standard, dj []float64, reg float64) {
	scale := 1 + reg
	w := f.work
	for k := 0; k < f.tail; k++ {
		r := f.iperm[k]
		// Scatter column k of M (positions >= k).
		for p := f.arPtr[r]; p < f.arPtr[r+1]; p++ {
			j := f.arCol[p]
			a := f.arVal[p] * dj[j]
			for q := s.colStart[j]; q < s.colStart[j+1]; q++ {
				if pk := f.perm[s.rowIdx[q]]; pk >= k {
					w[pk] += a * s.val[q]
				}
			}
		}
		w[k] *= scale
		// Subtract earlier columns i with L[k][i] != 0.
		for t := f.rptr[k]; t < f.rptr[k+1]; t++ {
			i, p := f.rcol[t], f.rslot[t]
			c := f.lval[p] * f.d[i]
			w[k] -= c * f.lval[p]
			for q := p + 1; q < f.lptr[i+1]; q++ {
				w[f.lrow[q]] -= c * f.lval[q]
			}
		}
		dk := w[k]
		w[k] = 0
		if dk < 1e-30 {
			dk = 1e128
		}
		f.d[k] = dk
		for p := f.lptr[k]; p < f.lptr[k+1]; p++ {
			q := f.lrow[p]
			f.lval[p] = w[q] / dk
			w[q] = 0
		}
	}
	if f.tail < f.m {
		f.factorTail(s, dj, reg)
	}
}

// solve overwrites x (original row order) with M^{-1} x.
func (f *normalEq) solve(x []float64) {
	y := f.work
	for k := 0; k < f.m; k++ {
		y[k] = x[f.iperm[k]]
	}
	for k := 0; k < f.m; k++ {
		if v := y[k]; v != 0 {
			for p := f.lptr[k]; p < f.lptr[k+1]; p++ {
				y[f.lrow[p]] -= f.lval[p] * v
			}
		}
	}
	for k := 0; k < f.m; k++ {
		y[k] /= f.d[k]
	}
	for k := f.m - 1; k >= 0; k-- {
		v := y[k]
		for p := f.lptr[k]; p < f.lptr[k+1]; p++ {
			v -= f.lval[p] * y[f.lrow[p]]
		}
		y[k] = v
	}
	for k := 0; k < f.m; k++ {
		x[f.iperm[k]] = y[k]
		y[k] = 0
	}
}

func popcount(ws []uint64) int {
	n := 0
	for _, w := range ws {
		n += bits.OnesCount64(w)
	}
	return n
}
