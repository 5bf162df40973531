package lp

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// mixedNormalLP has 97 sparse rows and 420 rows that become a dense
// trailing block: the columns among the dense rows fill it in, and each
// sparse row links to a few scattered dense rows.
func mixedNormalLP(rng *rand.Rand) *Problem {
	const sparse, dense = 97, 420
	p := &Problem{NumVars: 0}
	rows := make([]Row, sparse+dense)
	addCol := func(idx ...int) {
		for _, i := range idx {
			rows[i].Index = append(rows[i].Index, p.NumVars)
			rows[i].Value = append(rows[i].Value, 0.5+rng.Float64())
		}
		p.NumVars++
	}
	for k := 0; k < 8*dense; k++ {
		addCol(sparse+rng.IntN(dense), sparse+rng.IntN(dense), sparse+rng.IntN(dense))
	}
	for i := 0; i < sparse; i++ {
		addCol(i, sparse+rng.IntN(dense))
		addCol(i, sparse+rng.IntN(dense), sparse+rng.IntN(dense))
	}
	for i := range rows {
		rows[i].Sense, rows[i].RHS = LE, 1
	}
	p.Rows = rows
	return p
}

// TestDenseTailFactorization: with a sparse part and a dense trailing block
// (large enough for the parallel trailing update), L diag(d) L^T reproduces
// A D A^T entry by entry to rounding and solves A D A^T x = r with a
// row-wise backward error below 1e-10 for D spread over twelve orders of
// magnitude, and gives bit-identical factors with one or two goroutines.
func TestDenseTailFactorization(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	s := toStandard(mixedNormalLP(rng))
	f, err := newNormalEq(s)
	if err != nil {
		t.Fatal(err)
	}
	if rest := f.m - f.tail - denseBlock; f.tail == 0 || rest*rest/2*denseBlock < parallelMinWork {
		t.Fatalf("tail at %d of %d: want a sparse part and a tail for the parallel update", f.tail, f.m)
	}
	dj := make([]float64, s.n)
	for j := range dj {
		dj[j] = math.Pow(10, 12*rng.Float64()-6)
	}
	// Dense reference M = A D A^T.
	m := s.m
	M := make([]float64, m*m)
	for j := 0; j < s.n; j++ {
		for p := s.colStart[j]; p < s.colStart[j+1]; p++ {
			for q := s.colStart[j]; q < s.colStart[j+1]; q++ {
				M[s.rowIdx[p]*m+s.rowIdx[q]] += dj[j] * s.val[p] * s.val[q]
			}
		}
	}
	factors := func(procs int) ([]float64, []float64) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		f.factor(s, dj, 0)
		return slices.Clone(f.d), slices.Clone(f.lval)
	}
	d1, l1 := factors(1)
	d2, l2 := factors(2)
	if !slices.Equal(d1, d2) || !slices.Equal(l1, l2) {
		t.Error("factors differ between one and two goroutines")
	}
	// Backward error of P M P^T = L diag(d) L^T, entry by entry.
	L := make([]float64, m*m) // L[a*m+k], positions
	for k := 0; k < m; k++ {
		L[k*m+k] = 1
		for p := f.lptr[k]; p < f.lptr[k+1]; p++ {
			L[f.lrow[p]*m+k] = f.lval[p]
		}
	}
	for a := 0; a < m; a++ {
		for b := 0; b <= a; b++ {
			ldl, scale := 0.0, 0.0
			for k := 0; k <= b; k++ {
				v := L[a*m+k] * f.d[k] * L[b*m+k]
				ldl += v
				scale += math.Abs(v)
			}
			if e := math.Abs(ldl - M[f.iperm[a]*m+f.iperm[b]]); e > 1e-12*scale {
				t.Fatalf("entry (%d,%d) of L D L^T: %.17g, M: %.17g", a, b, ldl, M[f.iperm[a]*m+f.iperm[b]])
			}
		}
	}
	for trial := 0; trial < 3; trial++ {
		r := make([]float64, m)
		for i := range r {
			r[i] = rng.NormFloat64()
		}
		x := slices.Clone(r)
		f.solve(x)
		// Componentwise backward error of each row (Oettli-Prager).
		worst := 0.0
		for i := 0; i < m; i++ {
			ax, scale := 0.0, math.Abs(r[i])
			for k := 0; k < m; k++ {
				ax += M[i*m+k] * x[k]
				scale += math.Abs(M[i*m+k] * x[k])
			}
			worst = math.Max(worst, math.Abs(ax-r[i])/scale)
		}
		if worst > 1e-10 {
			t.Errorf("trial %d: row backward error %.3g", trial, worst)
		}
	}
}
