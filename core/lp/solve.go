package lp

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// errNaN reports a solution with NaN entries (numerical breakdown).
var errNaN = errors.New("lp: numerical failure (NaN)")

// Method selects the algorithm of Solve.
type Method int8

// Methods.
const (
	// Auto picks Simplex for small problems and InteriorPoint for large
	// ones, falling back to Simplex when the interior-point method gives up
	// on a problem of moderate size (to tell infeasible from unbounded, or
	// when it stalls numerically), and to InteriorPoint when the simplex
	// fails (cycling).
	Auto Method = iota
	// Simplex is the two-phase dense primal simplex: exact vertex solutions,
	// for problems up to a few thousand rows times columns.
	Simplex
	// InteriorPoint is Mehrotra's predictor-corrector method on sparse
	// normal equations, for large sparse problems that are feasible and bounded.
	InteriorPoint
)

// Tableau sizes (rows x columns) steering Auto: up to autoSimplexLimit it
// uses the simplex; above, the interior-point method, with the simplex as
// fallback up to autoFallbackLimit.
const (
	autoSimplexLimit  = 100_000
	autoFallbackLimit = 10_000_000
)

// Options tunes Solve; the zero value is the default.
type Options struct {
	// Method selects the algorithm (default Auto).
	Method Method
}

// Result is the outcome of Solve.
type Result struct {
	// Status says whether X is optimal or the problem is infeasible or unbounded.
	Status Status
	// X is an optimal point (nil unless Status is Optimal).
	X []float64
	// Objective is c·x at X, in the problem's own sense.
	Objective float64
	// Iterations counts simplex pivots or interior-point iterations.
	Iterations int
	// Method is the algorithm that produced the result.
	Method Method
}

// Solve validates and solves p. An error means bad input, cancellation or a
// numerical failure; infeasibility and unboundedness are reported in Status.
func Solve(ctx context.Context, p *Problem, opt Options) (*Result, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	s := toStandard(p)
	method := opt.Method
	size := float64(s.m) * float64(s.n+s.m)
	if method == Auto {
		method = Simplex
		if size > autoSimplexLimit {
			method = InteriorPoint
		}
	}
	var (
		st    Status
		z     []float64
		iters int
		err   error
	)
	if method == InteriorPoint {
		st, z, iters, err = interiorPoint(ctx, s)
		if err != nil && ctx.Err() == nil {
			// A stall is often bad scaling: solve the equilibrated problem.
			scaled, colScale := equilibrate(s)
			var more int
			if st, z, more, err = interiorPoint(ctx, scaled); err == nil && z != nil {
				for j := range z {
					z[j] *= colScale[j]
				}
				if r := primalResidual(s, z); r > scaledAcceptTol {
					err = fmt.Errorf("lp: interior point on the equilibrated problem: relative infeasibility %.2g once unscaled", r)
				}
			}
			iters += more
		}
		if err != nil && ctx.Err() == nil && opt.Method == Auto && size <= autoFallbackLimit {
			method = Simplex
		}
	}
	if method == Simplex {
		triedIPM := err != nil
		st, z, iters, err = simplex(ctx, s)
		if err != nil && ctx.Err() == nil && opt.Method == Auto && !triedIPM {
			// The simplex can cycle on degenerate problems; the interior
			// point decides feasible bounded ones.
			method = InteriorPoint
			st, z, iters, err = interiorPoint(ctx, s)
		}
	}
	if err != nil {
		return nil, err
	}
	res := &Result{Status: st, Iterations: iters, Method: method}
	if st != Optimal {
		return res, nil
	}
	res.X = s.recover(z)
	for j, x := range res.X {
		if p.Objective != nil {
			res.Objective += p.Objective[j] * x
		}
		if math.IsNaN(x) {
			return nil, errNaN
		}
	}
	return res, nil
}
