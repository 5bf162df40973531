// Package lp solves linear programs: minimize or maximize c·x subject to
// sparse rows a·x {<=, >=, =} b and bounds l <= x <= u. Small problems are
// solved exactly by a two-phase dense simplex; large ones by a Mehrotra
// predictor-corrector interior-point method on sparse normal equations.
package lp

import (
	"fmt"
	"math"
)

// Sense is the relation of a row to its right-hand side.
type Sense int8

// Row senses.
const (
	// LE is a·x <= b.
	LE Sense = iota
	// GE is a·x >= b.
	GE
	// EQ is a·x = b.
	EQ
)

// String returns "<=", ">=" or "=".
func (s Sense) String() string {
	switch s {
	case LE:
		return "<="
	case GE:
		return ">="
	case EQ:
		return "="
	}
	return fmt.Sprintf("Sense(%d)", int8(s))
}

// Row is one sparse constraint sum_k Value[k]*x[Index[k]] Sense RHS.
// An index may repeat; its values add up.
type Row struct {
	Index []int
	Value []float64
	Sense Sense
	RHS   float64
}

// Problem is a linear program over NumVars variables.
type Problem struct {
	// NumVars is the number of variables.
	NumVars int
	// Objective holds c (nil means all zero).
	Objective []float64
	// Maximize selects maximization of c·x instead of minimization.
	Maximize bool
	// Lower holds the lower bounds (nil means all 0; -Inf allowed).
	Lower []float64
	// Upper holds the upper bounds (nil means all +Inf).
	Upper []float64
	// Rows are the constraints.
	Rows []Row
}

// Status is the outcome of a solve.
type Status int8

// Solve outcomes.
const (
	// Optimal means an optimal solution was found.
	Optimal Status = iota
	// Infeasible means no x satisfies the rows and bounds.
	Infeasible
	// Unbounded means the objective can improve without limit.
	Unbounded
)

// String returns "optimal", "infeasible" or "unbounded".
func (s Status) String() string {
	switch s {
	case Optimal:
		return "optimal"
	case Infeasible:
		return "infeasible"
	case Unbounded:
		return "unbounded"
	}
	return fmt.Sprintf("Status(%d)", int8(s))
}

// lower returns the lower bound of variable j.
func (p *Problem) lower(j int) float64 {
	if p.Lower == nil {
		return 0
	}
	return p.Lower[j]
}

// upper returns the upper bound of variable j.
func (p *Problem) upper(j int) float64 {
	if p.Upper == nil {
		return math.Inf(1)
	}
	return p.Upper[j]
}

// cost returns the minimization cost of variable j.
func (p *Problem) cost(j int) float64 {
	if p.Objective == nil {
		return 0
	}
	if p.Maximize {
		return -p.Objective[j]
	}
	return p.Objective[j]
}

// Validate reports malformed problems: lengths, indices, NaN or infinite
// coefficients, and crossed bounds.
func (p *Problem) Validate() error {
	n := p.NumVars
	if n < 0 {
		return fmt.Errorf("lp: NumVars: must be >= 0, got %d", n)
	}
	for name, v := range map[string][]float64{"Objective": p.Objective, "Lower": p.Lower, "Upper": p.Upper} {
		if v != nil && len(v) != n {
			return fmt.Errorf("lp: %s: must have NumVars=%d entries, got %d", name, n, len(v))
		}
	}
	for j := 0; j < n; j++ {
		if c := p.cost(j); math.IsNaN(c) || math.IsInf(c, 0) {
			return fmt.Errorf("lp: Objective[%d]: must be finite, got %g", j, c)
		}
		l, u := p.lower(j), p.upper(j)
		if math.IsNaN(l) || math.IsNaN(u) || math.IsInf(l, 1) || math.IsInf(u, -1) || l > u {
			return fmt.Errorf("lp: bounds of x[%d]: need -Inf <= lower <= upper <= +Inf, got [%g, %g]", j, l, u)
		}
	}
	for i, r := range p.Rows {
		if len(r.Index) != len(r.Value) {
			return fmt.Errorf("lp: Rows[%d]: %d indices but %d values", i, len(r.Index), len(r.Value))
		}
		if r.Sense != LE && r.Sense != GE && r.Sense != EQ {
			return fmt.Errorf("lp: Rows[%d].Sense: unknown %d", i, int8(r.Sense))
		}
		if math.IsNaN(r.RHS) || math.IsInf(r.RHS, 0) {
			return fmt.Errorf("lp: Rows[%d].RHS: must be finite, got %g", i, r.RHS)
		}
		for k, j := range r.Index {
			if j < 0 || j >= n {
				return fmt.Errorf("lp: Rows[%d].Index[%d]: must be in [0,%d), got %d", i, k, n, j)
			}
			if v := r.Value[k]; math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("lp: Rows[%d].Value[%d]: must be finite, got %g", i, k, v)
			}
		}
	}
	return nil
}
