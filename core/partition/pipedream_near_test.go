package partition

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// nearTestCuts returns random chains, a third of them of identical layers
// (whose proportional splits sit exactly in nearSplits' windows), and two
// embedded graphs.
func nearTestCuts(t *testing.T, rng *rand.Rand, chains int) []*Cuts {
	var cs []*Cuts
	for q := range chains {
		cs = append(cs, randomChainCuts(t, rng, q%3 == 0))
	}
	return append(cs, graphCuts(t, "gnmt"), graphCuts(t, "resnet18"))
}

// TestNearSplitsCoverMaySplit checks nearSplits against its definition:
// whenever it answers, its splits include every split of appendSplits that
// maySplit passes (so the DP searches the same splits), each with its
// index in ancestors(j), ascending; on rows at their work bound, as data
// parallelism on a fast link leaves them, it must answer, and find the
// proportional splits of identical layers.
func TestNearSplitsCoverMaySplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	answered, found := 0, 0
	for _, c := range nearTestCuts(t, rng, 60) {
		n := c.Len()
		for _, cm := range []CostModel{CostPipeDream, CostPipeplan} {
			M := 2 + rng.IntN(11)
			s := newPDSolver(c, PipeDreamOptions{Levels: levels(float64(M), 1e11), CostModel: cm})
			sc := s.getScratch(M, M-1)
			row := make([]float64, M)
			for range 200 {
				i := rng.IntN(n)
				j := i + rng.IntN(n-i)
				top, maxMP := 1+rng.IntN(M-1), 1+rng.IntN(M-1)
				gpus := float64([]int{1, 4}[rng.IntN(2)])
				whole := span(c.ComputeSeconds, i, j)
				atBound := rng.IntN(2) == 0
				for m := range row {
					// Entries per worker of gpus GPUs, at the work bound
					// (rounding either way) or above it, some infinite.
					row[m] = whole / gpus / float64(m+1)
					switch {
					case atBound:
						row[m] *= 1 + float64(rng.IntN(3)-1)*1e-15
					case rng.IntN(8) == 0:
						row[m] = math.Inf(1)
					default:
						row[m] *= 1 + rng.Float64()
					}
				}
				bound := math.Inf(1)
				if rng.IntN(3) == 0 {
					bound = row[rng.IntN(M)] * (0.5 + rng.Float64())
				}
				inv := make([]float64, top+1)
				for m := range inv {
					inv[m] = 1 / min(row[m], bound)
				}
				var want []int32
				all := c.appendSplits(nil, i, j, cm == CostPipeplan)
				for x := 0; x < len(all); x += 2 {
					k := int(all[x])
					if maySplit(span(c.ComputeSeconds, i, k)/gpus, span(c.ComputeSeconds, k+1, j)/gpus, inv, 0, maxMP) {
						want = append(want, all[x], all[x+1])
					}
				}
				if !s.nearSplits(sc, i, j, top, maxMP, row, bound, gpus) {
					if atBound && n < 50 {
						t.Fatalf("%d states, stage %d..%d at its work bound: nearSplits did not answer", n, i, j)
					}
					continue
				}
				answered++
				got := slices.Clone(sc.ks)
				for x := 0; x < len(got); x += 2 {
					if x > 0 && got[x] <= got[x-2] {
						t.Fatalf("splits %v not ascending", got)
					}
					if q := slices.Index(all, got[x]); q < 0 || q%2 != 0 || all[q+1] != got[x+1] {
						t.Fatalf("split %d (index %d) of %d..%d is not one of appendSplits' %v", got[x], got[x+1], i, j, all)
					}
				}
				for x := 0; x < len(want); x += 2 {
					if q := slices.Index(got, want[x]); q < 0 || q%2 != 0 {
						t.Fatalf("stage %d..%d, top %d, maxMP %d, row %v, bound %v: maySplit passes split %d, nearSplits gave %v",
							i, j, top, maxMP, row, bound, want[x], got)
					}
				}
				if len(want) > 0 {
					found++
				}
			}
		}
	}
	// The index must both answer and find splits, not only fall back.
	if answered < 2000 || found < 100 {
		t.Errorf("nearSplits answered %d times and found maySplit's splits %d times, want >= 2000 and >= 100", answered, found)
	}
}

// TestPipeDreamNearSplitsMatchReference runs the DP on two levels with a
// fast inner link, where the inner rows sit at their work bound and
// nearSplits chooses their splits, and checks that it returns exactly
// what the reference row search returns, bit for bit, for both cost models,
// with and without memory limits; the index must have been used.
func TestPipeDreamNearSplitsMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	used := 0
	for q, c := range nearTestCuts(t, rng, 90) {
		total := c.ActivationBytes[c.Len()-1] + c.ParameterBytes[c.Len()-1]
		for _, cm := range []CostModel{CostPipeDream, CostPipeplan} {
			opt := PipeDreamOptions{Levels: levels(float64(2+rng.IntN(7)), 300e9, float64(1+rng.IntN(16)), 25e9),
				CostModel: cm, MemoryBytes: []float64{0, total / 3, total * 4}[rng.IntN(3)]}
			want, werr := solveWith(t, c, opt, refRowDP)
			s := newPDSolver(c, opt)
			if err := s.solveLevels(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			got, gerr := s.result()
			if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
				t.Fatalf("%s %+v:\n got %+v (%v)\nwant %+v (%v)", fmt.Sprintf("cuts %d", q), opt, got, gerr, want, werr)
			}
			if s.nearStates.Load() > 0 {
				used++
			}
		}
	}
	if used < 100 {
		t.Errorf("nearSplits answered in %d of the solves, want at least 100", used)
	}
}

// TestFmaxIsTheBuiltin checks fmax against the builtin max bit for bit on
// zeros of both signs, infinities, NaN and random values.
func TestFmaxIsTheBuiltin(t *testing.T) {
	vals := []float64{0, math.Copysign(0, -1), 1, -1, math.Inf(1), math.Inf(-1), math.NaN(), 5e-324, math.MaxFloat64}
	rng := rand.New(rand.NewPCG(11, 12))
	for range 50 {
		vals = append(vals, rng.NormFloat64()*1e3)
	}
	for _, a := range vals {
		for _, b := range vals {
			got, want := fmax(a, b), max(a, b)
			if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Errorf("fmax(%v, %v) = %v, want %v", a, b, got, want)
			}
		}
	}
}
