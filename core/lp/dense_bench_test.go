package lp

import (
	"context"
	"testing"
)

// BenchmarkDenseInteriorPoint solves a dense 200 x 300 packing LP by the
// interior-point method (dense trailing-block factorization).
func BenchmarkDenseInteriorPoint(b *testing.B) {
	p := densePackingLP(200, 300, 11)
	for b.Loop() {
		if _, err := Solve(context.Background(), p, Options{Method: InteriorPoint}); err != nil {
			b.Fatal(err)
		}
	}
}

// densePackingLP is a dense m x n packing LP, max c·x s.t. Ax <= b, x >= 0,
// with every coefficient positive, drawn by a xorshift generator from seed.
func densePackingLP(m, n int, seed uint64) *Problem {
	p := &Problem{NumVars: n, Objective: make([]float64, n), Maximize: true}
	next := func() float64 { // xorshift in [0, 1)
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		return float64(seed%1_000_000) / 1e6
	}
	for j := range p.Objective {
		p.Objective[j] = 1 + next()
	}
	for i := 0; i < m; i++ {
		r := Row{Sense: LE, RHS: 1 + 10*next()}
		for j := 0; j < n; j++ {
			r.Index, r.Value = append(r.Index, j), append(r.Value, 0.1+next())
		}
		p.Rows = append(p.Rows, r)
	}
	return p
}
