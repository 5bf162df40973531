package partition

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"pipeplan/core/cost"
)

// refRowDP is the DP row before the bounded, windowed one (commit 535d669),
// kept verbatim as the reference the fast one must match exactly. It solves level lv for the stages from state i: a[j*M+m] is the best
// bottleneck over states i..j with exactly m+1 workers (+Inf if none), and
// back, when not nil, how it was reached (dissertation §2.4.1 recurrence;
// for CostPipeDream, the original's loops: split states k preceding j, not
// preceding i−1, then m' ascending, first strict minimum kept).
func refRowDP(s *pdSolver, lv, i int, a []float64, back []pdChoice) {
	c, n := s.c, s.n
	lvl := s.opt.Levels[lv]
	M, B, g := lvl.Workers, lvl.BandwidthBytesPerSec, s.below(lv)
	inf := math.Inf(1)
	maxR := M
	if s.opt.Straight {
		maxR = 1
	}
	for j := range n {
		row := a[j*M : (j+1)*M]
		for m := range row {
			row[m] = inf
			if back != nil {
				back[j*M+m] = pdChoice{-1, int32(m + 1)}
			}
		}
		t := s.compute(lv, i, j)
		if math.IsInf(t, 1) {
			continue
		}
		act, w := span(c.ActivationBytes, i, j), span(c.ParameterBytes, i, j)
		for r := 1; r <= maxR; r++ {
			if s.fits(lv, act, w, r, r, M) {
				row[r-1] = s.stageSeconds(t, w, r, B, true, g)
				if !s.exact && j < n-1 {
					// pipeplan charges every stage its output boundary too;
					// the original leaves it out for a pipeline's first stage.
					row[r-1] = math.Max(row[r-1], 2*c.OutputBytes[j]/(B*float64(r)))
				}
			}
		}
	}
	last := n - 1
	maxMP := M - 1
	if s.opt.Straight {
		maxMP = min(maxMP, 1)
	}
	st, minM := make([]float64, maxMP+1), make([]int, maxMP+1)
	// stageSeconds and the transfer term as coefficients per replica count:
	// st = max(T·ct + W·cw, out·co) for the original, max(max(T, W·cw)·ct,
	// out·co) for pipeplan.
	ct, cw, co := make([]float64, maxMP+1), make([]float64, maxMP+1), make([]float64, maxMP+1)
	for mp := 1; mp <= maxMP; mp++ {
		f := float64(mp)
		ct[mp], co[mp] = 1/f, 1/(B*f)
		if s.exact {
			cw[mp] = 4 * (f - 1) / (B * f) / f
		} else {
			cw[mp] = cost.RingAllReduceBytes(mp, 1) / B
		}
		minM[mp] = mp - 1
	}
	// rowMin[k] is the best time over states i..k with any worker count: a
	// lower bound of every pipeline split after k.
	rowMin := make([]float64, n)
	for j := i; j < n; j++ {
		row := a[j*M : (j+1)*M]
		// worst is the largest entry of row: a split whose lower bound
		// reaches it cannot improve any entry (and ties keep the first).
		worst := slices.Max(row)
		anc := c.ancestors(j)
		// The sub-pipeline i..k needs k >= i (the original also skips k
		// preceding i−1, implied by the order); pipeplan also needs i−1 to
		// precede k for i..k to be a stage.
		from, _ := slices.BinarySearch(anc, i)
		for _, k := range anc[from:] {
			if rowMin[k] >= worst || (!s.exact && i > 0 && !c.precedes(i-1, k)) {
				continue
			}
			t := s.compute(lv, k+1, j)
			if math.IsInf(t, 1) || t/float64(maxMP) >= worst {
				continue
			}
			out := 2 * c.OutputBytes[k]
			if j < last {
				out = max(out, 2*c.OutputBytes[j])
			}
			prev := a[k*M : (k+1)*M]
			if !refMayImprove(row, prev, max(t, out/B), ct) {
				continue
			}
			act, w := span(c.ActivationBytes, k+1, j), span(c.ParameterBytes, k+1, j)
			// The last stage k+1..j on mp workers: its time and the fewest
			// workers m+1 the pipeline must use for it to fit.
			for mp := 1; mp <= maxMP; mp++ {
				if s.exact {
					st[mp] = max(t*ct[mp]+w*cw[mp], out*co[mp])
				} else {
					st[mp] = max(max(t, w*cw[mp])*ct[mp], out*co[mp])
				}
				if s.opt.MemoryBytes > 0 {
					minM[mp] = s.minUsed(lv, act, w, mp, M) - 1
				}
			}
			improved := false
			for m := 1; m < M; m++ {
				best, bestMP := row[m], 0
				for mp := 1; mp <= min(m, maxMP); mp++ {
					if m < minM[mp] {
						continue
					}
					if cand := max(prev[m-mp], st[mp]); cand < best {
						best, bestMP = cand, mp
					}
				}
				if bestMP > 0 {
					row[m], improved = best, true
					if back != nil {
						back[j*M+m] = pdChoice{int32(k), int32(bestMP)}
					}
				}
			}
			if improved {
				worst = slices.Max(row)
			}
		}
		rowMin[j] = slices.Min(row)
	}
}

// refMayImprove is mayImprove as refRowDP used it. It reports whether a split could lower some entry m of row: its
// candidates are at least max(min(prev[0..m−1]), lb/min(m, maxMP)), where
// lb·ct[mp] = lb/mp bounds the last stage's time on mp workers from below.
func refMayImprove(row, prev []float64, lb float64, ct []float64) bool {
	maxMP := len(ct) - 1
	pm := math.Inf(1)
	for m := 1; m < len(row); m++ {
		pm = min(pm, prev[m-1])
		if max(pm, lb*ct[min(m, maxMP)]) < row[m] {
			return true
		}
	}
	return false
}

// solveWith runs the PipeDream DP with row as its row search (nil: rowDP's).
func solveWith(t testing.TB, c *Cuts, opt PipeDreamOptions, row func(*pdSolver, int, int, []float64, []pdChoice)) (*PipeDreamResult, error) {
	t.Helper()
	if opt.CostModel == "" {
		opt.CostModel = CostPipeplan
	}
	s := newPDSolver(c, opt)
	s.row = row
	if err := s.solveLevels(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return s.result()
}

// TestPipeDreamMatchesReference checks that the bounded, windowed DP returns
// exactly what the reference row search returns — bottleneck, stages and
// replicas bit for bit — on random chains (a third of identical layers,
// whose proportional splits tie) over one to three levels and on
// embedded graphs, for both cost models, straight or not, with and without
// memory limits.
func TestPipeDreamMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cut := 0 // checks where usefulEnds cut some row of the second-to-last level short
	check := func(name string, c *Cuts, opt PipeDreamOptions) {
		want, werr := solveWith(t, c, opt, refRowDP)
		got, gerr := solveWith(t, c, opt, nil)
		if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s %+v:\n got %+v (%v)\nwant %+v (%v)", name, opt, got, gerr, want, werr)
		}
		if len(opt.Levels) > 1 && slices.ContainsFunc(first(newPDSolver(c, opt).usefulEnds()), func(j int) bool { return j < c.Len()-1 }) {
			cut++
		}
	}
	defer func() {
		// The pruning must be exercised, not only left idle.
		if cut < 50 {
			t.Errorf("usefulEnds cut rows short in %d checks, want at least 50", cut)
		}
	}()
	for trial := range 400 {
		cuts := randomChainCuts(t, rng, trial%3 == 0)
		var lv []float64
		for range 1 + rng.IntN(3) {
			lv = append(lv, float64(1+rng.IntN(12)), []float64{1e9, 1e10, 1e11}[rng.IntN(3)])
		}
		mem := 0.0
		if rng.IntN(2) == 0 {
			mem = math.Floor(rng.Float64() * 6e10)
		}
		for _, cm := range []CostModel{CostPipeDream, CostPipeplan} {
			check(fmt.Sprintf("trial %d", trial), cuts, PipeDreamOptions{Levels: levels(lv...), Straight: rng.IntN(5) == 0, MemoryBytes: mem, CostModel: cm})
		}
	}
	// The playground's default cluster (128 servers × 8 A100s) with ResNet-50.
	check("resnet50 on 128×8", graphCuts(t, "resnet50"), PipeDreamOptions{Levels: levels(8, 300e9, 128, 25e9), MemoryBytes: 80e9})
	for _, name := range []string{"alexnet", "vgg16", "gnmt", "resnet18"} {
		c := graphCuts(t, name)
		total := c.ActivationBytes[c.Len()-1] + c.ParameterBytes[c.Len()-1]
		for _, lv := range [][]float64{{8, 300e9, 16, 25e9}, {4, 16e9, 4, 1.25e9, 4, 1e9}} {
			for _, cm := range []CostModel{CostPipeDream, CostPipeplan} {
				for _, mem := range []float64{0, total / 3, total * 4} {
					check(name, c, PipeDreamOptions{Levels: levels(lv...), MemoryBytes: mem, CostModel: cm})
				}
			}
		}
	}
}

func first[A, B any](a A, _ B) A { return a }

// randomChainCuts returns the cuts of a random chain of 1 to 24 layers, all
// identical when identical is set: their proportional splits tie with data
// parallelism, as ResNet's do, and ties must break alike.
func randomChainCuts(t *testing.T, rng *rand.Rand, identical bool) *Cuts {
	prof := randomChain(rng, 1+rng.IntN(24))
	if identical {
		for l := range prof.Layers {
			prof.Layers[l] = prof.Layers[0]
		}
	}
	c, err := ChainCuts(prof)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
