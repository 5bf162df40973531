package lp

import (
	"context"
	"testing"
)

// BenchmarkDenseInteriorPoint solves a dense 200 x 300 packing LP by the
// interior-point method (dense trailing-block factorization).
func BenchmarkDenseInteriorPoint(b *testing.B) {
	const m, n = 200, 300
	p := &Problem{NumVars: n, Objective: make([]float64, n), Maximize: true}
	seed := uint64(11)
	next := func() float64 {
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
	for b.Loop() {
		if _, err := Solve(context.Background(), p, Options{Method: InteriorPoint}); err != nil {
			b.Fatal(err)
		}
	}
}
