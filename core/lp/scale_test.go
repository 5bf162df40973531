package lp

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// TestEquilibratedIPMMatchesSimplex solves feasible bounded LPs whose rows
// and variables are scaled by 10^±4 (the same problems, written badly) with
// the interior-point method on the equilibrated standard form, and checks
// the unscaled point against the dense simplex on the unscaled problem:
// same objective to 1e-7 relative, and feasible to scaledAcceptTol.
func TestEquilibratedIPMMatchesSimplex(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 5))
	for trial := range 40 {
		n, m := 2+rng.IntN(12), 1+rng.IntN(10)
		colScale := make([]float64, n)
		p := &Problem{NumVars: n, Objective: make([]float64, n), Upper: make([]float64, n), Maximize: true}
		for j := range n {
			colScale[j] = math.Pow(10, 8*rng.Float64()-4)
			// x_j = y_j/colScale_j with y_j in [0, 1 + 4U): the unscaled y is well posed.
			p.Objective[j] = (1 + 9*rng.Float64()) * colScale[j]
			p.Upper[j] = (1 + 4*rng.Float64()) / colScale[j]
		}
		for range m {
			rowScale := math.Pow(10, 8*rng.Float64()-4)
			r := Row{Sense: LE, RHS: (1 + 9*rng.Float64()) * rowScale}
			for j := range n {
				if rng.IntN(3) > 0 {
					r.Index = append(r.Index, j)
					r.Value = append(r.Value, rng.Float64()*rowScale*colScale[j])
				}
			}
			p.Rows = append(p.Rows, r)
		}
		s := toStandard(p)
		_, want, _, err := simplex(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		scaled, cs := equilibrate(s)
		st, z, _, err := interiorPoint(context.Background(), scaled)
		if err != nil || st != Optimal {
			t.Fatalf("trial %d: interior point on the equilibrated problem: %v, %v", trial, st, err)
		}
		for j := range z {
			z[j] *= cs[j]
		}
		if r := primalResidual(s, z); r > scaledAcceptTol {
			t.Errorf("trial %d: unscaled point infeasible by %.2g", trial, r)
		}
		got, ref := dot(s.c, z), dot(s.c, want)
		if math.Abs(got-ref) > 1e-7*(1+math.Abs(ref)) {
			t.Errorf("trial %d: objective %v, simplex %v", trial, got, ref)
		}
	}
}
