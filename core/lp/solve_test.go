package lp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	gonumlp "gonum.org/v1/gonum/optimize/convex/lp"
)

// randomProblem draws a small LP with mixed row senses and bounds.
func randomProblem(rng *rand.Rand) *Problem {
	n, m := 1+rng.IntN(6), 1+rng.IntN(6)
	p := &Problem{NumVars: n, Objective: make([]float64, n), Lower: make([]float64, n), Upper: make([]float64, n), Maximize: rng.IntN(2) == 0}
	for j := 0; j < n; j++ {
		p.Objective[j] = float64(rng.IntN(11) - 5)
		switch rng.IntN(4) {
		case 0:
			p.Lower[j] = math.Inf(-1)
		case 1:
			p.Lower[j] = float64(-rng.IntN(4))
		}
		p.Upper[j] = math.Inf(1)
		if rng.IntN(3) == 0 {
			p.Upper[j] = p.Lower[j] + float64(rng.IntN(5))
			if math.IsInf(p.Lower[j], -1) {
				p.Upper[j] = float64(rng.IntN(5))
			}
		}
	}
	for i := 0; i < m; i++ {
		var r Row
		for j := 0; j < n; j++ {
			if rng.IntN(3) > 0 {
				r.Index = append(r.Index, j)
				r.Value = append(r.Value, float64((1+rng.IntN(5))*(1-2*rng.IntN(2))))
			}
		}
		if len(r.Index) == 0 { // gonum's Convert mishandles empty rows
			r.Index, r.Value = []int{rng.IntN(n)}, []float64{1}
		}
		r.Sense = Sense(rng.IntN(3))
		r.RHS = float64(rng.IntN(21) - 6)
		p.Rows = append(p.Rows, r)
	}
	// Every variable appears in some row (gonum rejects all-zero columns).
	used := make([]bool, n)
	for _, r := range p.Rows {
		for _, j := range r.Index {
			used[j] = true
		}
	}
	for j, u := range used {
		if !u {
			r := &p.Rows[rng.IntN(m)]
			r.Index, r.Value = append(r.Index, j), append(r.Value, float64(1+rng.IntN(5)))
		}
	}
	return p
}

// gonumSolve solves p with gonum's dense simplex through lp.Convert
// (inequalities G x <= h, equalities A x = b, free variables split).
func gonumSolve(p *Problem) (f float64, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("gonum: %v", r) // e.g. more equalities than variables
		}
	}()
	n := p.NumVars
	var gRows, aRows [][]float64
	var h, b []float64
	dense := func(r Row, sign float64) []float64 {
		v := make([]float64, n)
		for k, j := range r.Index {
			v[j] += sign * r.Value[k]
		}
		return v
	}
	for _, r := range p.Rows {
		switch r.Sense {
		case LE:
			gRows, h = append(gRows, dense(r, 1)), append(h, r.RHS)
		case GE:
			gRows, h = append(gRows, dense(r, -1)), append(h, -r.RHS)
		case EQ:
			aRows, b = append(aRows, dense(r, 1)), append(b, r.RHS)
		}
	}
	for j := 0; j < n; j++ {
		e := make([]float64, n)
		if l := p.Lower[j]; !math.IsInf(l, -1) {
			e[j] = -1
			gRows, h = append(gRows, e), append(h, -l)
		}
		if u := p.Upper[j]; !math.IsInf(u, 1) {
			e = make([]float64, n)
			e[j] = 1
			gRows, h = append(gRows, e), append(h, u)
		}
	}
	c := make([]float64, n)
	for j := range c {
		c[j] = p.cost(j)
	}
	toMat := func(rows [][]float64) *mat.Dense {
		if len(rows) == 0 {
			return nil
		}
		d := mat.NewDense(len(rows), n, nil)
		for i, r := range rows {
			d.SetRow(i, r)
		}
		return d
	}
	var g, a mat.Matrix
	if gm := toMat(gRows); gm != nil {
		g = gm
	}
	if am := toMat(aRows); am != nil {
		a = am
	}
	cNew, aNew, bNew := gonumlp.Convert(c, g, h, a, b)
	f, _, err = gonumlp.Simplex(cNew, aNew, bNew, 1e-10, nil)
	if p.Maximize {
		f = -f
	}
	return f, err
}

func TestSolveMatchesGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	counts := map[Status]int{}
	ipmFailed := 0
	for trial := 0; trial < 3000; trial++ {
		p := randomProblem(rng)
		want, gerr := gonumSolve(p)
		if errors.Is(gerr, gonumlp.ErrSingular) || (gerr != nil && !errors.Is(gerr, gonumlp.ErrInfeasible) && !errors.Is(gerr, gonumlp.ErrUnbounded)) {
			continue // gonum could not decide; nothing to compare
		}
		res, err := Solve(context.Background(), p, Options{Method: Simplex})
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		counts[res.Status]++
		wantStatus := Optimal
		switch {
		case errors.Is(gerr, gonumlp.ErrInfeasible):
			wantStatus = Infeasible
		case errors.Is(gerr, gonumlp.ErrUnbounded):
			wantStatus = Unbounded
		}
		if res.Status == Infeasible && wantStatus == Unbounded {
			// gonum's Simplex sometimes calls infeasible problems unbounded;
			// its verdict on the pure feasibility problem decides.
			if v, ferr := gonumSolve(phaseOneProblem(p)); ferr == nil && v > 1e-9 {
				wantStatus = Infeasible
			}
		}
		if res.Status != wantStatus {
			t.Fatalf("trial %d: status %v, gonum %v (%v)\n%+v", trial, res.Status, wantStatus, gerr, p)
		}
		if wantStatus != Optimal {
			continue
		}
		if math.Abs(res.Objective-want) > 1e-7*(1+math.Abs(want)) {
			t.Fatalf("trial %d: objective %v, gonum %v\n%+v", trial, res.Objective, want, p)
		}
		checkFeasible(t, p, res.X, 1e-7)
		ipm, err := Solve(context.Background(), p, Options{Method: InteriorPoint})
		if err != nil {
			// Allowed (documented): problems without a strict interior may
			// make the interior-point method give up; it must never be wrong.
			ipmFailed++
			continue
		}
		if math.Abs(ipm.Objective-want) > 1e-6*(1+math.Abs(want)) {
			t.Fatalf("trial %d: interior point objective %v, gonum %v\n%+v", trial, ipm.Objective, want, p)
		}
		checkFeasible(t, p, ipm.X, 1e-6)
	}
	if ipmFailed > counts[Optimal]/20 {
		t.Errorf("interior point gave up on %d of %d optimal problems", ipmFailed, counts[Optimal])
	}
	t.Logf("statuses %v; interior point gave up on %d of %d optimal problems", counts, ipmFailed, counts[Optimal])
	for _, s := range []Status{Optimal, Infeasible, Unbounded} {
		if counts[s] < 50 {
			t.Errorf("only %d random problems were %v; the generator needs more variety", counts[s], s)
		}
	}
}

// phaseOneProblem returns min sum of row violations e+ + e- over p's rows
// and bounds: always feasible and bounded; its optimum is 0 iff p is feasible.
func phaseOneProblem(p *Problem) *Problem {
	q := &Problem{NumVars: p.NumVars + 2*len(p.Rows)}
	q.Lower = append(append([]float64(nil), p.Lower...), make([]float64, 2*len(p.Rows))...)
	q.Upper = append([]float64(nil), p.Upper...)
	q.Objective = make([]float64, q.NumVars)
	for i, r := range p.Rows {
		ep, en := p.NumVars+2*i, p.NumVars+2*i+1
		q.Upper = append(q.Upper, math.Inf(1), math.Inf(1))
		q.Objective[ep], q.Objective[en] = 1, 1
		q.Rows = append(q.Rows, Row{Index: append(append([]int(nil), r.Index...), ep, en),
			Value: append(append([]float64(nil), r.Value...), 1, -1), Sense: r.Sense, RHS: r.RHS})
	}
	return q
}

// checkFeasible asserts that x satisfies p's rows and bounds within tol.
func checkFeasible(t *testing.T, p *Problem, x []float64, tol float64) {
	t.Helper()
	for j, v := range x {
		if v < p.lower(j)-tol || v > p.upper(j)+tol {
			t.Fatalf("x[%d] = %v outside [%v, %v]", j, v, p.lower(j), p.upper(j))
		}
	}
	for i, r := range p.Rows {
		a := 0.0
		for k, j := range r.Index {
			a += r.Value[k] * x[j]
		}
		s := tol * (1 + math.Abs(r.RHS))
		if (r.Sense == LE && a > r.RHS+s) || (r.Sense == GE && a < r.RHS-s) || (r.Sense == EQ && math.Abs(a-r.RHS) > s) {
			t.Fatalf("row %d: %v %v %v violated", i, a, r.Sense, r.RHS)
		}
	}
}
