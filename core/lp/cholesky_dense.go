package lp

import (
	"runtime"
	"sync"
)

// Dense trailing-block kernel parameters: panels of denseBlock columns, and
// trailing updates split across goroutines when at least parallelMinWork
// multiply-adds remain.
const (
	denseBlock      = 32
	parallelMinWork = 1 << 20
)

// factorTail factors the dense trailing block (positions >= f.tail, column
// major in f.dense): it adds the outer products d_j a_j a_j^T of the columns
// of A, scales the diagonal by 1+reg, subtracts the rank-one updates of the
// sparse columns of L, then runs a blocked right-looking LDL^T. Every entry
// receives its updates in the same order as a plain left-looking
// factorization, whatever the number of goroutines, so the result is
// deterministic.
func (f *normalEq) factorTail(s *standard, dj []float64, reg float64) {
	nd := f.m - f.tail
	t := f.dense
	clear(t)
	f.assembleTail(s, dj)
	for c := 0; c < nd; c++ {
		t[c*nd+c] *= 1 + reg
	}
	f.sparseIntoTail()
	f.denseLDL()
	for c := 0; c < nd; c++ {
		k := f.tail + c
		copy(f.lval[f.lptr[k]:f.lptr[k+1]], t[c*nd+c+1:(c+1)*nd])
	}
}

// assembleTail adds d_j a_j a_j^T restricted to the tail to the lower
// triangle of f.dense, one column of A after the other (toStandard merged
// repeated rows, so the entries of a column have distinct positions).
func (f *normalEq) assembleTail(s *standard, dj []float64) {
	k0, nd, t := f.tail, f.m-f.tail, f.dense
	pos := make([]int, 0, 64)
	val := make([]float64, 0, 64)
	for j := 0; j < s.n; j++ {
		pos, val = pos[:0], val[:0]
		for q := s.colStart[j]; q < s.colStart[j+1]; q++ {
			if pk := f.perm[s.rowIdx[q]] - k0; pk >= 0 {
				pos, val = append(pos, pk), append(val, s.val[q])
			}
		}
		d := dj[j]
		for a, pa := range pos {
			va := d * val[a]
			for b := a; b < len(pos); b++ {
				lo, hi := min(pa, pos[b]), max(pa, pos[b])
				t[lo*nd+hi] += va * val[b]
			}
		}
	}
}

// sparseIntoTail subtracts d_i l_i l_i^T of each sparse column i of L
// (positions < f.tail) from the tail, in ascending i. Columns whose tail
// part fills at least half of its span are spread into dense vectors and
// applied four at a time (one pass over the tail per four columns; the
// zeros add nothing); the others are applied entry by entry.
func (f *normalEq) sparseIntoTail() {
	k0, nd := f.tail, f.m-f.tail
	var g tailGroup
	for k := range g.v {
		g.v[k] = make([]float64, nd)
	}
	for i := 0; i < k0; i++ {
		lo, hi := f.lptr[i], f.lptr[i+1]
		for lo < hi && f.lrow[lo] < k0 {
			lo++
		}
		if lo == hi {
			continue
		}
		if span := f.lrow[hi-1] - f.lrow[lo] + 1; 2*(hi-lo) < span {
			f.flushGroup(&g)
			f.scatterColumn(i, lo, hi)
			continue
		}
		v := g.v[g.n]
		for p := lo; p < hi; p++ {
			v[f.lrow[p]-k0] = f.lval[p]
		}
		g.d[g.n] = f.d[i]
		if g.n == 0 || f.lrow[lo]-k0 < g.first {
			g.first = f.lrow[lo] - k0
		}
		if g.n++; g.n == len(g.v) {
			f.flushGroup(&g)
		}
	}
	f.flushGroup(&g)
}

// tailGroup holds up to four sparse columns of L spread over the tail.
type tailGroup struct {
	n     int
	first int // smallest tail position with an entry
	d     [4]float64
	v     [4][]float64
}

// flushGroup subtracts the group's rank-one updates from the tail and
// empties it.
func (f *normalEq) flushGroup(g *tailGroup) {
	nd, t := f.m-f.tail, f.dense
	for c := g.first; c < nd && g.n > 0; c++ {
		y := t[c*nd+c : (c+1)*nd]
		if g.n == 4 && (g.v[0][c] != 0 || g.v[1][c] != 0 || g.v[2][c] != 0 || g.v[3][c] != 0) {
			axpy4(-g.d[0]*g.v[0][c], -g.d[1]*g.v[1][c], -g.d[2]*g.v[2][c], -g.d[3]*g.v[3][c], g.v[0][c:], g.v[1][c:], g.v[2][c:], g.v[3][c:], y)
			continue
		}
		for k := 0; k < g.n; k++ {
			if a := g.d[k] * g.v[k][c]; a != 0 {
				axpy(-a, g.v[k][c:], y)
			}
		}
	}
	for k := 0; k < g.n; k++ {
		clear(g.v[k])
	}
	g.n = 0
}

// scatterColumn subtracts d_i l_i l_i^T of sparse column i, whose tail
// entries are lrow[lo:hi], entry by entry.
func (f *normalEq) scatterColumn(i, lo, hi int) {
	k0, nd, t := f.tail, f.m-f.tail, f.dense
	for p := lo; p < hi; p++ {
		c := f.lrow[p] - k0
		cf := f.lval[p] * f.d[i]
		col := t[c*nd : (c+1)*nd]
		for q := p; q < hi; q++ {
			col[f.lrow[q]-k0] -= cf * f.lval[q]
		}
	}
}

// denseLDL factors the assembled block in place (column c holds d_c on the
// diagonal and L below it) by panels of denseBlock columns: a panel is
// factored column by column, then the columns right of it receive the
// panel's updates, split over goroutines by column ranges of equal work.
func (f *normalEq) denseLDL() {
	k0, nd, t := f.tail, f.m-f.tail, f.dense
	for b0 := 0; b0 < nd; b0 += denseBlock {
		b1 := min(b0+denseBlock, nd)
		for c := b0; c < b1; c++ {
			col := t[c*nd : (c+1)*nd]
			dk := col[c]
			if dk < 1e-30 {
				dk = 1e128
			}
			col[c] = dk
			f.d[k0+c] = dk
			for r := c + 1; r < nd; r++ {
				col[r] /= dk
			}
			f.panelUpdate(c, c+1, b1)
		}
		f.trailingUpdate(b0, b1)
	}
}

// panelUpdate subtracts column c's update from columns [lo, hi).
func (f *normalEq) panelUpdate(c, lo, hi int) {
	nd, t := f.m-f.tail, f.dense
	col := t[c*nd : (c+1)*nd]
	dk := col[c]
	for c2 := lo; c2 < hi; c2++ {
		if l := col[c2] * dk; l != 0 {
			axpy(-l, col[c2:], t[c2*nd+c2:(c2+1)*nd])
		}
	}
}

// trailingUpdate subtracts the updates of panel columns [b0, b1) from every
// column right of the panel, four panel columns per pass over a column.
func (f *normalEq) trailingUpdate(b0, b1 int) {
	nd, t := f.m-f.tail, f.dense
	update := func(lo, hi int) {
		for c2 := lo; c2 < hi; c2++ {
			y := t[c2*nd+c2 : (c2+1)*nd]
			c := b0
			for ; c+4 <= b1; c += 4 {
				x0, x1, x2, x3 := t[c*nd+c2:(c+1)*nd], t[(c+1)*nd+c2:(c+2)*nd], t[(c+2)*nd+c2:(c+3)*nd], t[(c+3)*nd+c2:(c+4)*nd]
				axpy4(-x0[0]*t[c*nd+c], -x1[0]*t[(c+1)*nd+c+1], -x2[0]*t[(c+2)*nd+c+2], -x3[0]*t[(c+3)*nd+c+3], x0, x1, x2, x3, y)
			}
			for ; c < b1; c++ {
				x := t[c*nd+c2 : (c+1)*nd]
				axpy(-x[0]*t[c*nd+c], x, y)
			}
		}
	}
	workers := min(runtime.GOMAXPROCS(0), 2)
	rest := nd - b1
	if workers < 2 || rest*rest/2*(b1-b0) < parallelMinWork {
		update(b1, nd)
		return
	}
	// Column c2 costs nd-c2: split at the column that halves the triangle.
	mid := nd - int(float64(rest)/1.4142135623730951)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		update(mid, nd)
	}()
	update(b1, mid)
	wg.Wait()
}

// axpy4 computes y += a0*x0 + a1*x1 + a2*x2 + a3*x3 elementwise, adding the
// terms in that order (the same rounding as four axpy calls, one load and
// store of y instead of four).
func axpy4(a0, a1, a2, a3 float64, x0, x1, x2, x3, y []float64) {
	n := len(y)
	x0, x1, x2, x3 = x0[:n], x1[:n], x2[:n], x3[:n]
	for i := range y {
		y[i] = y[i] + a0*x0[i] + a1*x1[i] + a2*x2[i] + a3*x3[i]
	}
}

// axpy computes y += a*x (len(y) == len(x)), unrolled by four.
func axpy(a float64, x, y []float64) {
	y = y[:len(x)]
	i := 0
	for ; i+4 <= len(x); i += 4 {
		y[i] += a * x[i]
		y[i+1] += a * x[i+1]
		y[i+2] += a * x[i+2]
		y[i+3] += a * x[i+3]
	}
	for ; i < len(x); i++ {
		y[i] += a * x[i]
	}
}
