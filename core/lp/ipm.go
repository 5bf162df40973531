package lp

import (
	"context"
	"fmt"
	"math"
)

// Interior-point parameters.
const (
	ipmMaxIter   = 200
	ipmFeasTol   = 1e-10 // relative primal and dual infeasibility at optimality
	ipmGapTol    = 1e-9  // relative duality gap at optimality
	ipmAcceptTol = 1e-8  // max(infeasibilities, gap) accepted once progress stalls
	ipmStall     = 8     // iterations without a 10% better iterate that mean a stall
	ipmGiveUp    = 12    // iterations without a 10% better iterate after which it fails
	ipmStep      = 0.995 // fraction of the step to the boundary
	ipmReg       = 1e-12 // regularization: the normal matrix's diagonal grows by this fraction
	ipmDiverged  = 1e14  // iterate size that signals infeasibility or unboundedness
	refineSteps  = 2     // iterative-refinement rounds per normal-equation solve
)

// interiorPoint solves s by Mehrotra's predictor-corrector primal-dual
// interior-point method (Nocedal & Wright, Numerical Optimization, ch. 14,
// Algorithm 14.3) with normal equations factored by a sparse LDL^T after
// splitting dense columns. It assumes s is feasible and bounded; otherwise
// the iterates diverge and it returns an error saying so.
func interiorPoint(ctx context.Context, orig *standard) (Status, []float64, int, error) {
	s := splitDense(orig)
	m, n := s.m, s.n
	if m == 0 {
		for _, c := range s.c {
			if c < 0 {
				return Unbounded, nil, 0, nil
			}
		}
		return Optimal, make([]float64, n), 0, nil
	}
	sys, err := newIPMSystem(s)
	if err != nil {
		return 0, nil, 0, err
	}
	x, y, z := sys.start()
	rp, rd := make([]float64, m), make([]float64, n)
	rc := make([]float64, n)
	dxa, dya, dza := make([]float64, n), make([]float64, m), make([]float64, n)
	dx, dy, dz := make([]float64, n), make([]float64, m), make([]float64, n)
	bnorm, cnorm := 1+normInf(s.b), 1+normInf(s.c)
	best := struct {
		merit float64
		iter  int
		x     []float64
	}{merit: math.Inf(1)}
	for iter := 0; iter < ipmMaxIter; iter++ {
		if err := ctx.Err(); err != nil {
			return 0, nil, iter, err
		}
		// Residuals rp = b - Ax, rd = c - A^T y - z.
		copy(rp, s.b)
		sys.mulA(x, rp, -1)
		for j := range rd {
			rd[j] = s.c[j] - z[j]
		}
		sys.mulAT(y, rd, -1)
		pobj, dobj := dot(s.c, x), dot(s.b, y)
		mu := dot(x, z) / float64(n)
		pinf, dinf, gap := normInf(rp)/bnorm, normInf(rd)/cnorm, math.Abs(pobj-dobj)/(1+math.Abs(pobj))
		if pinf < ipmFeasTol && dinf < ipmFeasTol && gap < ipmGapTol {
			return Optimal, x[:orig.n], iter, nil
		}
		// Rounding can stall the last digits: keep the best iterate and accept
		// it at a looser tolerance once progress stops.
		if merit := max(pinf, dinf, gap); merit < 0.9*best.merit {
			best.merit, best.iter = merit, iter
			best.x = append(best.x[:0], x[:orig.n]...)
		} else if iter-best.iter >= ipmStall && best.merit < ipmAcceptTol {
			return Optimal, best.x, iter, nil
		} else if iter-best.iter >= ipmGiveUp {
			return 0, nil, iter, fmt.Errorf("lp: interior point stalled at relative infeasibility/gap %.2g after %d iterations (numerical trouble)", best.merit, iter)
		}
		// Diverging x means unbounded; diverging y while Ax = b still fails
		// means infeasible (a growing y with feasible x is an unbounded dual face).
		if normInf(x) > ipmDiverged || (normInf(y) > ipmDiverged && normInf(rp)/bnorm > 1e-6) || math.IsNaN(mu) {
			return 0, nil, iter, fmt.Errorf("lp: interior point diverged after %d iterations: the problem is probably infeasible or unbounded (solve it with Method: Simplex to tell which)", iter)
		}
		dj := sys.dj
		for j := range dj {
			dj[j] = x[j] / z[j]
		}
		sys.prepare()
		// Predictor (affine scaling) direction.
		for j := range rc {
			rc[j] = -x[j] * z[j]
		}
		sys.direction(x, z, rp, rd, rc, dxa, dya, dza)
		ap, ad := maxStep(x, dxa), maxStep(z, dza)
		muAff := 0.0
		for j := range x {
			muAff += (x[j] + ap*dxa[j]) * (z[j] + ad*dza[j])
		}
		muAff /= float64(n)
		sigma := math.Pow(muAff/mu, 3)
		// Corrector with centering.
		for j := range rc {
			rc[j] = sigma*mu - x[j]*z[j] - dxa[j]*dza[j]
		}
		sys.direction(x, z, rp, rd, rc, dx, dy, dz)
		ap, ad = math.Min(1, ipmStep*maxStep(x, dx)), math.Min(1, ipmStep*maxStep(z, dz))
		for j := range x {
			x[j] += ap * dx[j]
			z[j] += ad * dz[j]
		}
		for i := range y {
			y[i] += ad * dy[i]
		}
		recenterFree(s, x)
	}
	if best.merit < ipmAcceptTol {
		return Optimal, best.x, ipmMaxIter, nil
	}
	return 0, nil, ipmMaxIter, fmt.Errorf("lp: interior point: no convergence after %d iterations (the problem may be infeasible, unbounded or badly scaled)", ipmMaxIter)
}

// recenterFree keeps split free variables x = z+ - z- from drifting to
// infinity together: it lowers both halves alike, which leaves A z unchanged.
func recenterFree(s *standard, z []float64) {
	for j, neg := range s.neg {
		if neg < 0 {
			continue
		}
		pos := s.pos[j]
		if d := math.Min(z[pos], z[neg]) - 1; d > 0 {
			z[pos] -= d
			z[neg] -= d
		}
	}
}

// ipmSystem solves the normal equations (A D A^T) dy = r of one
// interior-point iteration: a regularized sparse LDL^T factorization
// followed by iterative refinement.
type ipmSystem struct {
	s    *standard
	f    *normalEq
	dj   []float64 // D, one per column
	tmpN []float64
	tmpM []float64
}

// newIPMSystem orders the normal equations of s.
func newIPMSystem(s *standard) (*ipmSystem, error) {
	f, err := newNormalEq(s)
	if err != nil {
		return nil, err
	}
	return &ipmSystem{s: s, f: f, dj: make([]float64, s.n), tmpN: make([]float64, s.n), tmpM: make([]float64, s.m)}, nil
}

// prepare factors for the current sys.dj.
func (sys *ipmSystem) prepare() {
	sys.f.factor(sys.s, sys.dj, ipmReg)
}

// solve overwrites r with (A D A^T)^{-1} r: the regularized factorization
// followed by iterative refinement.
func (sys *ipmSystem) solve(r []float64) {
	rhs := append([]float64(nil), r...)
	sys.f.solve(r)
	res := sys.tmpM
	for it := 0; it < refineSteps; it++ {
		// res = rhs - A D A^T r: refining against the unregularized matrix
		// removes the regularization's bias where the system allows.
		copy(res, rhs)
		sys.subADAT(r, res)
		sys.f.solve(res)
		for i := range r {
			r[i] += res[i]
		}
	}
}

// direction solves the Newton system for complementarity target rc:
// A dx = rp, A^T dy + dz = rd, Z dx + X dz = rc.
func (sys *ipmSystem) direction(x, z, rp, rd, rc, dx, dy, dz []float64) {
	// (A D A^T) dy = rp + A (D rd - Z^{-1} rc)
	t := sys.tmpN
	for j := range t {
		t[j] = sys.dj[j]*rd[j] - rc[j]/z[j]
	}
	copy(dy, rp)
	sys.mulA(t, dy, 1)
	sys.solve(dy)
	copy(dz, rd)
	sys.mulAT(dy, dz, -1)
	for j := range dx {
		dx[j] = (rc[j] - x[j]*dz[j]) / z[j]
	}
}

// start returns Mehrotra's starting point (Nocedal & Wright §14.2).
func (sys *ipmSystem) start() (x, y, z []float64) {
	s := sys.s
	for j := range sys.dj {
		sys.dj[j] = 1
	}
	sys.prepare()
	w := append([]float64(nil), s.b...)
	sys.solve(w)
	x = make([]float64, s.n)
	sys.mulAT(w, x, 1)
	y = make([]float64, s.m)
	sys.mulA(s.c, y, 1)
	sys.solve(y)
	z = append([]float64(nil), s.c...)
	sys.mulAT(y, z, -1)
	dx, dz := 0.0, 0.0
	for j := range x {
		dx = math.Max(dx, -1.5*x[j])
		dz = math.Max(dz, -1.5*z[j])
	}
	// Keep the start strictly interior even when x or z is all zero.
	dx, dz = math.Max(dx, 1e-2), math.Max(dz, 1e-2)
	sx, sz, xz := 0.0, 0.0, 0.0
	for j := range x {
		x[j] += dx
		z[j] += dz
		sx += x[j]
		sz += z[j]
	}
	for j := range x {
		xz += x[j] * z[j]
	}
	ex, ez := 0.5*xz/sz, 0.5*xz/sx
	for j := range x {
		x[j] += ex
		z[j] += ez
	}
	return x, y, z
}

// subADAT subtracts A D A^T v from out (len m) in one pass over the
// columns of A.
func (sys *ipmSystem) subADAT(v, out []float64) {
	s := sys.s
	for j := 0; j < s.n; j++ {
		lo, hi := s.colStart[j], s.colStart[j+1]
		t := 0.0
		for k := lo; k < hi; k++ {
			t += s.val[k] * v[s.rowIdx[k]]
		}
		if t = -t * sys.dj[j]; t != 0 {
			for k := lo; k < hi; k++ {
				out[s.rowIdx[k]] += s.val[k] * t
			}
		}
	}
}

// mulA adds alpha*A*v to out (len m).
func (sys *ipmSystem) mulA(v, out []float64, alpha float64) {
	s := sys.s
	for j := 0; j < s.n; j++ {
		if vj := v[j]; vj != 0 {
			vj *= alpha
			for k := s.colStart[j]; k < s.colStart[j+1]; k++ {
				out[s.rowIdx[k]] += s.val[k] * vj
			}
		}
	}
}

// mulAT adds alpha*A^T*v to out (len n).
func (sys *ipmSystem) mulAT(v, out []float64, alpha float64) {
	s := sys.s
	for j := 0; j < s.n; j++ {
		t := 0.0
		for k := s.colStart[j]; k < s.colStart[j+1]; k++ {
			t += s.val[k] * v[s.rowIdx[k]]
		}
		out[j] += alpha * t
	}
}

// maxStep returns the largest a with v + a*dv >= 0 (1e30 when no
// component decreases).
func maxStep(v, dv []float64) float64 {
	a := 1e30
	for j, d := range dv {
		if d < 0 {
			a = math.Min(a, -v[j]/d)
		}
	}
	return a
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func normInf(a []float64) float64 {
	s := 0.0
	for _, v := range a {
		s = math.Max(s, math.Abs(v))
	}
	return s
}
