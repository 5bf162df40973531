package lp

import "math"

// standard is a problem in standard form: minimize c·z + offset subject to
// A z = b, z >= 0, with A stored by columns (CSC). Every original row gets a
// slack column unless it is an equality; finite upper bounds become rows.
type standard struct {
	m, n     int
	colStart []int
	rowIdx   []int
	val      []float64
	b, c     []float64
	offset   float64
	// back maps original variable j to x_j = base[j] + sign[j]*z[pos[j]] - z[neg[j]] (neg -1 if none).
	base, sign []float64
	pos, neg   []int
}

// toStandard converts p (already validated) to standard form. Columns are
// the variables' halves (in variable order), then one slack per inequality
// row and per bounded variable (in row order); A is built in two passes
// (count, then fill) so no per-column lists are allocated.
func toStandard(p *Problem) *standard {
	s := &standard{base: make([]float64, p.NumVars), sign: make([]float64, p.NumVars),
		pos: make([]int, p.NumVars), neg: make([]int, p.NumVars)}
	newCol := func(cost float64) int {
		s.c = append(s.c, cost)
		return len(s.c) - 1
	}
	// Variable substitution.
	var boundRows []int // original vars needing z_pos + slack = u - l
	for j := 0; j < p.NumVars; j++ {
		l, u, cj := p.lower(j), p.upper(j), p.cost(j)
		s.neg[j] = -1
		switch {
		case !math.IsInf(l, -1):
			s.base[j], s.sign[j] = l, 1
			s.pos[j] = newCol(cj)
			s.offset += cj * l
			if !math.IsInf(u, 1) {
				boundRows = append(boundRows, j)
			}
		case !math.IsInf(u, 1):
			s.base[j], s.sign[j] = u, -1
			s.pos[j] = newCol(-cj)
			s.offset += cj * u
		default:
			s.sign[j] = 1
			s.pos[j] = newCol(cj)
			s.neg[j] = newCol(-cj)
		}
	}
	slack := make([]int, len(p.Rows)) // slack column of row i, -1 for equalities
	for i, r := range p.Rows {
		slack[i] = -1
		if r.Sense != EQ {
			slack[i] = newCol(0)
		}
	}
	boundSlack := len(s.c)
	for range boundRows {
		newCol(0)
	}
	s.m, s.n = len(p.Rows)+len(boundRows), len(s.c)
	// visit calls add(row, column, value) for every entry of A, row by row.
	visit := func(add func(i, col int, v float64)) {
		for i, r := range p.Rows {
			for k, j := range r.Index {
				v := r.Value[k]
				add(i, s.pos[j], v*s.sign[j])
				if s.neg[j] >= 0 {
					add(i, s.neg[j], -v)
				}
			}
			switch r.Sense {
			case LE:
				add(i, slack[i], 1)
			case GE:
				add(i, slack[i], -1)
			}
		}
		for k, j := range boundRows {
			i := len(p.Rows) + k
			add(i, s.pos[j], 1)
			add(i, boundSlack+k, 1)
		}
	}
	s.colStart = make([]int, s.n+1)
	visit(func(_, col int, v float64) {
		if v != 0 {
			s.colStart[col+1]++
		}
	})
	for j := range s.n {
		s.colStart[j+1] += s.colStart[j]
	}
	s.rowIdx, s.val = make([]int, s.colStart[s.n]), make([]float64, s.colStart[s.n])
	next := append([]int(nil), s.colStart[:s.n]...)
	// Rows come in ascending order, so each column's entries are sorted and
	// a row's repeated indices are adjacent: merge them.
	visit(func(i, col int, v float64) {
		switch {
		case v == 0:
		case next[col] > s.colStart[col] && s.rowIdx[next[col]-1] == i:
			s.val[next[col]-1] += v
		default:
			s.rowIdx[next[col]], s.val[next[col]] = i, v
			next[col]++
		}
	})
	// Close the gaps merged entries left.
	w := 0
	for j := range s.n {
		lo := s.colStart[j]
		s.colStart[j] = w
		w += copy(s.rowIdx[w:], s.rowIdx[lo:next[j]])
		copy(s.val[s.colStart[j]:], s.val[lo:next[j]])
	}
	s.colStart[s.n] = w
	s.rowIdx, s.val = s.rowIdx[:w:w], s.val[:w:w]
	s.b = make([]float64, s.m)
	for i, r := range p.Rows {
		s.b[i] = r.RHS
		for k, j := range r.Index {
			s.b[i] -= r.Value[k] * s.base[j]
		}
	}
	for k, j := range boundRows {
		s.b[len(p.Rows)+k] = p.upper(j) - p.lower(j)
	}
	return s
}

// recover maps a standard-form point z back to the original variables.
func (s *standard) recover(z []float64) []float64 {
	x := make([]float64, len(s.base))
	for j := range x {
		x[j] = s.base[j] + s.sign[j]*z[s.pos[j]]
		if s.neg[j] >= 0 {
			x[j] -= z[s.neg[j]]
		}
	}
	return x
}
