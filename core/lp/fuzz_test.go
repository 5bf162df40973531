package lp

import (
	"context"
	"math"
	"testing"
)

// problemFromBytes decodes a small LP from fuzz input: each byte pair gives
// a coefficient in [-8, 7], rows and bounds chosen by further bytes.
func problemFromBytes(data []byte) *Problem {
	next := func() int {
		if len(data) == 0 {
			return 0
		}
		b := int(data[0])
		data = data[1:]
		return b
	}
	n, m := 1+next()%5, next()%5
	p := &Problem{NumVars: n, Objective: make([]float64, n), Lower: make([]float64, n), Upper: make([]float64, n), Maximize: next()%2 == 0}
	for j := 0; j < n; j++ {
		p.Objective[j] = float64(next()%16 - 8)
		p.Lower[j], p.Upper[j] = 0, math.Inf(1)
		switch next() % 4 {
		case 1:
			p.Lower[j] = math.Inf(-1)
		case 2:
			p.Upper[j] = float64(next() % 6)
		}
	}
	for i := 0; i < m; i++ {
		r := Row{Sense: Sense(next() % 3), RHS: float64(next()%16 - 8)}
		for j := 0; j < n; j++ {
			if v := next()%16 - 8; v != 0 {
				r.Index, r.Value = append(r.Index, j), append(r.Value, float64(v))
			}
		}
		p.Rows = append(p.Rows, r)
	}
	return p
}

// FuzzSolve checks on arbitrary small problems that Solve never panics or
// returns NaN, that optimal points are feasible, and that the interior-point
// method, when it answers, agrees with the simplex.
func FuzzSolve(f *testing.F) {
	f.Add([]byte{3, 2, 0, 1, 2, 3, 0, 1, 2, 0, 5, 7, 9, 11, 13})
	f.Add([]byte{1, 1, 1, 200, 1, 0, 0, 9})
	f.Add([]byte{4, 4, 0, 5, 5, 5, 5, 2, 3, 9, 9, 9, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	f.Fuzz(func(t *testing.T, data []byte) {
		p := problemFromBytes(data)
		sx, err := Solve(context.Background(), p, Options{Method: Simplex})
		if err != nil {
			t.Fatalf("simplex: %v", err)
		}
		if sx.Status != Optimal {
			return
		}
		if math.IsNaN(sx.Objective) {
			t.Fatal("NaN objective")
		}
		checkFeasible(t, p, sx.X, 1e-7)
		ip, err := Solve(context.Background(), p, Options{Method: InteriorPoint})
		if err != nil {
			return // allowed: problems without a strict interior
		}
		if math.Abs(ip.Objective-sx.Objective) > 1e-6*(1+math.Abs(sx.Objective)) {
			t.Fatalf("interior point %v, simplex %v", ip.Objective, sx.Objective)
		}
		checkFeasible(t, p, ip.X, 1e-6)
	})
}
