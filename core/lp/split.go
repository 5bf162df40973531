package lp

// Dense-column splitting parameters: a column with more than denseColumn
// entries and denseRatio times the average would make A D A^T much denser
// than the rest of the problem, so it is cut into pieces of splitPiece
// entries.
const (
	denseColumn = 64
	denseRatio  = 10
	splitPiece  = 32
)

// splitDense returns s with each dense column split into pieces x_1..x_p
// of at most splitPiece entries each, linked by rows x_k - x_{k+1} = 0, the
// classical remedy for dense columns in interior-point normal equations
// (Vanderbei, "Splitting dense columns in sparse linear systems", 1991). The
// first piece keeps the column's index and cost, so z[:s.n] of a solution of
// the result solves s. Without dense columns it returns s itself.
func splitDense(s *standard) *standard {
	limit := max(denseColumn, denseRatio*len(s.rowIdx)/max(1, s.n))
	extra := 0
	for j := 0; j < s.n; j++ {
		if nnz := s.colStart[j+1] - s.colStart[j]; nnz > limit {
			extra += (nnz+splitPiece-1)/splitPiece - 1
		}
	}
	if extra == 0 {
		return s
	}
	t := &standard{m: s.m + extra, n: s.n + extra, offset: s.offset,
		base: s.base, sign: s.sign, pos: s.pos, neg: s.neg}
	t.b = append(append([]float64(nil), s.b...), make([]float64, extra)...)
	t.c = append(append([]float64(nil), s.c...), make([]float64, extra)...)
	type piece struct {
		rows []int
		vals []float64
	}
	var later []piece
	link := s.m // next linking row
	t.colStart = make([]int, 1, t.n+1)
	t.rowIdx = make([]int, 0, len(s.rowIdx)+2*extra)
	t.val = make([]float64, 0, len(s.rowIdx)+2*extra)
	for j := 0; j < s.n; j++ {
		lo, hi := s.colStart[j], s.colStart[j+1]
		if hi-lo <= limit {
			t.rowIdx = append(t.rowIdx, s.rowIdx[lo:hi]...)
			t.val = append(t.val, s.val[lo:hi]...)
			t.colStart = append(t.colStart, len(t.rowIdx))
			continue
		}
		// First piece stays in column j and opens link row "link".
		t.rowIdx = append(append(t.rowIdx, s.rowIdx[lo:lo+splitPiece]...), link)
		t.val = append(append(t.val, s.val[lo:lo+splitPiece]...), 1)
		t.colStart = append(t.colStart, len(t.rowIdx))
		for k := lo + splitPiece; k < hi; k += splitPiece {
			end := min(k+splitPiece, hi)
			p := piece{rows: append(append([]int(nil), s.rowIdx[k:end]...), link), vals: append(append([]float64(nil), s.val[k:end]...), -1)}
			link++
			if end < hi {
				p.rows, p.vals = append(p.rows, link), append(p.vals, 1)
			}
			later = append(later, p)
		}
	}
	for _, p := range later {
		t.rowIdx = append(t.rowIdx, p.rows...)
		t.val = append(t.val, p.vals...)
		t.colStart = append(t.colStart, len(t.rowIdx))
	}
	return t
}
