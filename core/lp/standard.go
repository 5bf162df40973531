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

// toStandard converts p (already validated) to standard form.
func toStandard(p *Problem) *standard {
	s := &standard{base: make([]float64, p.NumVars), sign: make([]float64, p.NumVars),
		pos: make([]int, p.NumVars), neg: make([]int, p.NumVars)}
	type entry struct {
		row int
		v   float64
	}
	var cols [][]entry
	newCol := func(cost float64) int {
		cols = append(cols, nil)
		s.c = append(s.c, cost)
		return len(cols) - 1
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
	add := func(row, col int, v float64) {
		if v != 0 {
			cols[col] = append(cols[col], entry{row, v})
		}
	}
	for i, r := range p.Rows {
		rhs := r.RHS
		for k, j := range r.Index {
			v := r.Value[k]
			rhs -= v * s.base[j]
			add(i, s.pos[j], v*s.sign[j])
			if s.neg[j] >= 0 {
				add(i, s.neg[j], -v)
			}
		}
		switch r.Sense {
		case LE:
			add(i, newCol(0), 1)
		case GE:
			add(i, newCol(0), -1)
		}
		s.b = append(s.b, rhs)
	}
	for _, j := range boundRows {
		i := len(s.b)
		add(i, s.pos[j], 1)
		add(i, newCol(0), 1)
		s.b = append(s.b, p.upper(j)-p.lower(j))
	}
	s.m, s.n = len(s.b), len(cols)
	s.colStart = make([]int, s.n+1)
	for j, col := range cols {
		// Rows were added in ascending order, so each column's entries are
		// sorted and a row's repeated indices are adjacent: merge them.
		for k := 0; k < len(col); k++ {
			if k > 0 && col[k].row == col[k-1].row {
				s.val[len(s.val)-1] += col[k].v
				continue
			}
			s.rowIdx = append(s.rowIdx, col[k].row)
			s.val = append(s.val, col[k].v)
		}
		s.colStart[j+1] = len(s.rowIdx)
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
