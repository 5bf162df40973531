package lp

import (
	"context"
	"math"
	"strings"
	"testing"
)

func solveBoth(t *testing.T, p *Problem) (*Result, *Result) {
	t.Helper()
	sx, err := Solve(context.Background(), p, Options{Method: Simplex})
	if err != nil {
		t.Fatal(err)
	}
	ip, err := Solve(context.Background(), p, Options{Method: InteriorPoint})
	if err != nil && sx.Status == Optimal {
		t.Fatalf("interior point: %v", err)
	}
	return sx, ip
}

func TestInfeasible(t *testing.T) {
	// x + y <= 1, x + y >= 2.
	p := &Problem{NumVars: 2, Objective: []float64{1, 1}, Rows: []Row{
		{Index: []int{0, 1}, Value: []float64{1, 1}, Sense: LE, RHS: 1},
		{Index: []int{0, 1}, Value: []float64{1, 1}, Sense: GE, RHS: 2},
	}}
	if r, _ := Solve(context.Background(), p, Options{}); r.Status != Infeasible {
		t.Fatalf("status %v, want infeasible", r.Status)
	}
	// Crossed by bounds only: x in [0, 1], x >= 3.
	p = &Problem{NumVars: 1, Upper: []float64{1}, Rows: []Row{{Index: []int{0}, Value: []float64{1}, Sense: GE, RHS: 3}}}
	if r, _ := Solve(context.Background(), p, Options{}); r.Status != Infeasible {
		t.Fatalf("status %v, want infeasible", r.Status)
	}
	// The interior-point method reports an error instead of a wrong answer.
	if _, err := Solve(context.Background(), p, Options{Method: InteriorPoint}); err == nil {
		t.Fatal("interior point accepted an infeasible problem")
	}
}

func TestUnbounded(t *testing.T) {
	// max x + y, x - y <= 1.
	p := &Problem{NumVars: 2, Objective: []float64{1, 1}, Maximize: true, Rows: []Row{{Index: []int{0, 1}, Value: []float64{1, -1}, Sense: LE, RHS: 1}}}
	if r, _ := Solve(context.Background(), p, Options{}); r.Status != Unbounded {
		t.Fatalf("status %v, want unbounded", r.Status)
	}
	// Free variable, no rows.
	p = &Problem{NumVars: 1, Objective: []float64{1}, Lower: []float64{math.Inf(-1)}}
	if r, _ := Solve(context.Background(), p, Options{}); r.Status != Unbounded {
		t.Fatalf("status %v, want unbounded", r.Status)
	}
}

// TestBealeCycling solves Beale's example, on which Dantzig's rule with
// naive tie-breaking cycles forever; optimum -1/20 at x = (1/25, 0, 1, 0).
func TestBealeCycling(t *testing.T) {
	p := &Problem{NumVars: 4, Objective: []float64{-0.75, 150, -0.02, 6}, Rows: []Row{
		{Index: []int{0, 1, 2, 3}, Value: []float64{0.25, -60, -0.04, 9}, Sense: LE, RHS: 0},
		{Index: []int{0, 1, 2, 3}, Value: []float64{0.5, -90, -0.02, 3}, Sense: LE, RHS: 0},
		{Index: []int{2}, Value: []float64{1}, Sense: LE, RHS: 1},
	}}
	sx, ip := solveBoth(t, p)
	for _, r := range []*Result{sx, ip} {
		if r.Status != Optimal || math.Abs(r.Objective+0.05) > 1e-8 {
			t.Fatalf("%v %v, want optimal -0.05", r.Status, r.Objective)
		}
	}
}

// TestDegenerateRedundant has duplicated equalities and a degenerate vertex.
func TestDegenerateRedundant(t *testing.T) {
	// min -x - y s.t. x + y = 2 (twice), 2x + 2y = 4, x <= 2, y <= 2, x - y <= 2.
	p := &Problem{NumVars: 2, Objective: []float64{-1, -1}, Upper: []float64{2, 2}, Rows: []Row{
		{Index: []int{0, 1}, Value: []float64{1, 1}, Sense: EQ, RHS: 2},
		{Index: []int{0, 1}, Value: []float64{1, 1}, Sense: EQ, RHS: 2},
		{Index: []int{0, 1}, Value: []float64{2, 2}, Sense: EQ, RHS: 4},
		{Index: []int{0, 1}, Value: []float64{1, -1}, Sense: LE, RHS: 2},
	}}
	sx, ip := solveBoth(t, p)
	for _, r := range []*Result{sx, ip} {
		if r.Status != Optimal || math.Abs(r.Objective+2) > 1e-8 {
			t.Fatalf("%v %v, want optimal -2", r.Status, r.Objective)
		}
		checkFeasible(t, p, r.X, 1e-7)
	}
}

// TestBoundsAndRepeatedIndices: bounds shift variables, repeated indices add.
func TestBoundsAndRepeatedIndices(t *testing.T) {
	// max x0 + 2 x1, x0 in [-3, 5], x1 in [-inf, 4], (x0 + x0) + x1 <= 10.
	p := &Problem{NumVars: 2, Objective: []float64{1, 2}, Maximize: true, Lower: []float64{-3, math.Inf(-1)}, Upper: []float64{5, 4},
		Rows: []Row{{Index: []int{0, 1, 0}, Value: []float64{1, 1, 1}, Sense: LE, RHS: 10}}}
	sx, ip := solveBoth(t, p)
	for _, r := range []*Result{sx, ip} {
		if r.Status != Optimal || math.Abs(r.Objective-11) > 1e-7 || math.Abs(r.X[0]-3) > 1e-6 || math.Abs(r.X[1]-4) > 1e-6 {
			t.Fatalf("%v %v %v, want optimal 11 at (3, 4)", r.Status, r.Objective, r.X)
		}
	}
}

// TestSplitDenseColumn: a column in 200 rows is split for the interior
// point method; both methods agree on max t s.t. i*x_i >= t, sum x_i <= 1.
func TestSplitDenseColumn(t *testing.T) {
	const n = 200
	p := &Problem{NumVars: n + 1, Objective: make([]float64, n+1), Maximize: true}
	p.Objective[n] = 1
	sum := Row{Sense: LE, RHS: 1}
	for i := 0; i < n; i++ {
		p.Rows = append(p.Rows, Row{Index: []int{i, n}, Value: []float64{float64(i + 1), -1}, Sense: GE})
		sum.Index, sum.Value = append(sum.Index, i), append(sum.Value, 1)
	}
	p.Rows = append(p.Rows, sum)
	want := 0.0 // t = 1 / sum_i 1/i
	for i := 1; i <= n; i++ {
		want += 1 / float64(i)
	}
	want = 1 / want
	sx, ip := solveBoth(t, p)
	for _, r := range []*Result{sx, ip} {
		if r.Status != Optimal || math.Abs(r.Objective-want) > 1e-8*want {
			t.Fatalf("%v %v, want %v", r.Status, r.Objective, want)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		p    Problem
		want string
	}{
		{Problem{NumVars: 1, Rows: []Row{{Index: []int{1}, Value: []float64{1}}}}, "Rows[0].Index[0]: must be in [0,1), got 1"},
		{Problem{NumVars: 1, Rows: []Row{{Index: []int{0}, Value: []float64{math.NaN()}}}}, "Rows[0].Value[0]: must be finite"},
		{Problem{NumVars: 1, Objective: []float64{1, 2}}, "Objective: must have NumVars=1 entries, got 2"},
		{Problem{NumVars: 1, Lower: []float64{2}, Upper: []float64{1}}, "bounds of x[0]"},
		{Problem{NumVars: 1, Rows: []Row{{Index: []int{0}, Value: []float64{1}, RHS: math.Inf(1)}}}, "Rows[0].RHS: must be finite"},
		{Problem{NumVars: 1, Rows: []Row{{Index: []int{0}, Value: []float64{1}, Sense: 7}}}, "Rows[0].Sense: unknown 7"},
	} {
		if _, err := Solve(context.Background(), &c.p, Options{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := &Problem{NumVars: 1, Objective: []float64{-1}, Upper: []float64{1}}
	for _, m := range []Method{Simplex, InteriorPoint} {
		if _, err := Solve(ctx, p, Options{Method: m}); err == nil {
			t.Errorf("method %v: no error on a cancelled context", m)
		}
	}
}

// TestDenseNormalEquations: a dense 120 x 150 packing LP makes A D A^T
// dense, which the factorization handles with its dense trailing kernel; the
// optimum matches the simplex's.
func TestDenseNormalEquations(t *testing.T) {
	p := densePackingLP(120, 150, 7)
	f, err := newNormalEq(toStandard(p))
	if err != nil {
		t.Fatal(err)
	}
	if f.tail == f.m {
		t.Fatal("no dense trailing block detected")
	}
	sx, ip := solveBoth(t, p)
	if math.Abs(sx.Objective-ip.Objective) > 1e-8*math.Abs(sx.Objective) {
		t.Fatalf("simplex %v, interior point %v", sx.Objective, ip.Objective)
	}
	checkFeasible(t, p, ip.X, 1e-7)
}
