package partition

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sync/atomic"
	"testing"
)

// soleChecker runs rowDP's search on every row (through pdSolver.row) and
// soleRow beside it on the rows of the levels below the last, counting the
// rows soleRow answered and failing on any entry with all M workers that
// differs from the search's, bit for bit.
type soleChecker struct {
	t             *testing.T
	rows, answers atomic.Int64
}

func (sc *soleChecker) row(s *pdSolver, lv, i int, a []float64, back []pdChoice) {
	if err := s.rowSearch(context.Background(), lv, i, a, back); err != nil {
		sc.t.Error(err)
	}
	if lv == len(s.opt.Levels)-1 || back != nil { // the last level, or a stage's walk
		return
	}
	sc.rows.Add(1)
	M := s.opt.Levels[lv].Workers
	b := make([]float64, len(a))
	if !s.soleRow(lv, i, b) {
		return
	}
	sc.answers.Add(1)
	for j := i; j < s.n; j++ {
		if got, want := b[j*M+M-1], a[j*M+M-1]; math.Float64bits(got) != math.Float64bits(want) {
			sc.t.Errorf("level %d of %+v, stage %d..%d on %d workers: soleRow %v, rowDP %v", lv, s.opt, i, j, M, got, want)
		}
	}
}

// randomSoleOptions draws one random case's options for c under cost model
// cm: a server of 2–8 GPUs under 1–16 servers (with threeLevels, 1–4 such
// groups of servers below them too), straight one time in eight, and no
// memory limit, a third of c's memory or four times it.
func randomSoleOptions(rng *rand.Rand, c *Cuts, cm CostModel, threeLevels bool) PipeDreamOptions {
	total := c.ActivationBytes[c.Len()-1] + c.ParameterBytes[c.Len()-1]
	lv := []float64{float64(2 + rng.IntN(7)), 300e9, float64(1 + rng.IntN(16)), 25e9}
	if threeLevels {
		lv = append([]float64{float64(1 + rng.IntN(4)), 600e9}, lv...)
	}
	return PipeDreamOptions{Levels: levels(lv...), CostModel: cm, Straight: rng.IntN(8) == 0,
		MemoryBytes: []float64{0, total / 3, total * 4}[rng.IntN(3)]}
}

// TestSoleRowMatchesRowDP checks soleRow against the row's DP entry by
// entry: wherever it answers, every entry with all M workers is rowDP's,
// bit for bit, on random chains (a third of identical layers, whose
// proportional splits tie), embedded graphs and GNMT-16 on the
// playground's default cluster, for both cost models, with and without
// memory limits, straight or not, on two and three levels. It must answer
// on most rows, and on every row of GNMT-16.
func TestSoleRowMatchesRowDP(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	sc := &soleChecker{t: t}
	solve := func(c *Cuts, opt PipeDreamOptions) {
		if opt.CostModel == "" {
			opt.CostModel = CostPipeplan
		}
		s := newPDSolver(c, opt)
		s.row = sc.row
		if err := s.solveLevels(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	for q, c := range nearTestCuts(t, rng, 120) {
		for _, cm := range []CostModel{CostPipeDream, CostPipeplan} {
			solve(c, randomSoleOptions(rng, c, cm, q%4 == 0))
		}
	}
	if rows, answers := sc.rows.Load(), sc.answers.Load(); answers*10 < rows*9 {
		t.Errorf("soleRow answered %d of %d rows, want at least 90%%", answers, rows)
	}
	gnmt := &soleChecker{t: t}
	sc = gnmt
	solve(graphCuts(t, "gnmt_large"), PipeDreamOptions{Levels: levels(8, 300e9, 128, 25e9), MemoryBytes: 80e9})
	if gnmt.rows.Load() == 0 || gnmt.answers.Load() != gnmt.rows.Load() {
		t.Errorf("GNMT-16: soleRow answered %d of %d rows, want all", gnmt.answers.Load(), gnmt.rows.Load())
	}
}

// TestPipeDreamGNMT16SoleMatchesRowDP checks the DP with soleRow against
// the DP whose every row is rowDP's search (itself checked against the
// reference row search, which takes over 10 s here), on GNMT-16's 1,495
// states and the playground's default request: the same result, bit for
// bit. (With CostPipeDream the search alone takes 9 s; the two cost models
// are compared row by row in TestSoleRowMatchesRowDP.)
func TestPipeDreamGNMT16SoleMatchesRowDP(t *testing.T) {
	c := graphCuts(t, "gnmt_large")
	search := func(s *pdSolver, lv, i int, a []float64, back []pdChoice) {
		if err := s.rowSearch(context.Background(), lv, i, a, back); err != nil {
			t.Error(err)
		}
	}
	opt := PipeDreamOptions{Levels: levels(8, 300e9, 128, 25e9), MemoryBytes: 80e9, CostModel: CostPipeplan}
	want, werr := solveWith(t, c, opt, search)
	s := newPDSolver(c, opt)
	if err := s.solveLevels(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	got, gerr := s.result()
	if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v (%v)\nwant %+v (%v)", got, gerr, want, werr)
	}
	// The server level's rows are the second-to-last level's, computed as
	// the top row reads them: soleEval must answer every entry read.
	if n, rows := s.soleRows.Load(), s.lazy.rows; n != int64(rows) || s.lazy.dp != 0 || rows == 0 {
		t.Errorf("soleEval answered %d of the %d rows read (%d by their DP), want all", n, rows, s.lazy.dp)
	}
}

// TestMaySplitFromSkipsOnlyFailures checks that every entry before
// maySplitFrom's fails maySplitAt when each entry's inv is at least the
// bound's, on random parts, entries and bounds, and that it skips some.
func TestMaySplitFromSkipsOnlyFailures(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	skipped := 0
	for trial := range 20000 {
		M := 2 + rng.IntN(200)
		bound := math.Exp(rng.NormFloat64() * 3)
		if trial%50 == 0 {
			bound = []float64{math.Inf(1), 0, math.SmallestNonzeroFloat64}[trial/50%3]
		}
		prefix, last := rng.Float64()*bound*float64(M), rng.Float64()*bound*float64(M)/4
		if trial%7 == 0 {
			last = 0
		}
		invBound := 1 / bound
		from := maySplitFrom(prefix, last, invBound, M)
		if from < 1 || from > M {
			t.Fatalf("maySplitFrom(%v, %v, %v, %d) = %d, out of [1, %d]", prefix, last, invBound, M, from, M)
		}
		skipped += from - 1
		for m := 1; m < from; m++ {
			inv := invBound
			if rng.IntN(2) == 0 {
				inv = 1 / math.Min(bound, bound*rng.Float64())
			}
			for _, v := range []float64{invBound, inv, math.Nextafter(invBound, math.Inf(1))} {
				if maySplitAt(prefix, last, v, m, M-1) {
					t.Fatalf("%s: maySplitAt passes entry %d, before maySplitFrom's %d", fmt.Sprint(prefix, last, v), m, from)
				}
			}
		}
	}
	if skipped == 0 {
		t.Error("maySplitFrom never skipped an entry")
	}
}

// TestFitsAloneIsMaxInFlight checks fitsAlone against its definition
// through maxInFlight and usedFor, for both cost models, one to three
// levels, stages of random size around the memory limit and every r.
func TestFitsAloneIsMaxInFlight(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	fits, fails := 0, 0
	for range 3000 {
		var lv []float64
		for range 1 + rng.IntN(3) {
			lv = append(lv, float64(1+rng.IntN(16)), 1e10)
		}
		mem := []float64{0, 1e9, 8e10}[rng.IntN(3)]
		for _, cm := range []CostModel{CostPipeDream, CostPipeplan} {
			s := newPDSolver(&Cuts{ComputeSeconds: []float64{1}, ActivationBytes: []float64{1}, ParameterBytes: []float64{1}, OutputBytes: []float64{0}},
				PipeDreamOptions{Levels: levels(lv...), MemoryBytes: mem, CostModel: cm})
			l := rng.IntN(len(s.opt.Levels))
			M := s.opt.Levels[l].Workers
			scale := math.Max(mem, 1e9) * math.Exp(rng.NormFloat64()*2) / float64(1+rng.IntN(M))
			act, w := rng.Float64()*scale, rng.Float64()*scale
			if rng.IntN(10) == 0 {
				act, w = 0, 0
			}
			for r := 1; r <= M; r++ {
				want := r >= usedFor(s.maxInFlight(l, act, w, M), r, M)
				if got := s.fitsAlone(l, act, w, r); got != want {
					t.Fatalf("%s, level %d of %v, memory %v, act %v, w %v, r %d: fitsAlone %v, want %v", cm, l, lv, mem, act, w, r, got, want)
				}
				if want {
					fits++
				} else {
					fails++
				}
			}
		}
	}
	if fits < 1000 || fails < 1000 {
		t.Errorf("%d stages fit and %d did not, want at least 1000 of each", fits, fails)
	}
}

// lazyMatchesEager solves with the second-to-last level's entries computed
// on demand (lazyStages) and checks every entry computed against the row
// computed eagerly (soleRow, or the row's DP where it gives up), bit for
// bit, and the last level's row, entries and choices, against the same row
// searched on every entry computed eagerly (so with no split screened by a
// lower bound). It returns the cells never computed and all cells.
func lazyMatchesEager(t *testing.T, c *Cuts, opt PipeDreamOptions) (skipped, cells int) {
	t.Helper()
	if opt.CostModel == "" {
		opt.CostModel = CostPipeplan
	}
	s := newPDSolver(c, opt)
	if err := s.solveLevels(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	L := len(s.opt.Levels)
	lv, M := L-2, s.opt.Levels[L-2].Workers
	lazy, eager := s.comp[L-1], s.newStageTimes(true)
	a := make([]float64, s.n*M)
	for i := range s.n {
		if s.last[i] < i {
			eager.setRow(i, nil, M)
			continue
		}
		if !s.soleRow(lv, i, a) {
			if err := s.rowDP(context.Background(), lv, i, a, nil); err != nil {
				t.Fatal(err)
			}
		}
		eager.setRow(i, a, M)
	}
	for _, p := range [][2][]float64{{lazy.first, eager.first}, {lazy.split, eager.split}} {
		for x, got := range p[0] {
			cells++
			if got != got {
				skipped++
			} else if want := p[1][x]; math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("%+v: cell %d of the last level's stages: lazy %v, eager %v", opt, x, got, want)
			}
		}
	}
	s.comp[L-1] = eager
	final, back := make([]float64, len(s.final)), make([]pdChoice, len(s.finalBack))
	if err := s.rowDP(context.Background(), L-1, 0, final, back); err != nil {
		t.Fatal(err)
	}
	for x := range final {
		if math.Float64bits(final[x]) != math.Float64bits(s.final[x]) || back[x] != s.finalBack[x] {
			t.Fatalf("%+v: last level's entry %d: lazy %v %+v, eager %v %+v", opt, x, s.final[x], s.finalBack[x], final[x], back[x])
		}
	}
	return skipped, cells
}

// TestPipeDreamLazyMatchesEager checks the on-demand entries of the
// second-to-last level and the last level's row that screens splits by a
// lower bound before computing them (lazyMatchesEager) on random chains
// and graphs, both cost models, two and three levels, memory limits,
// straight pipelines, and on GNMT-16 on the playground's default cluster,
// where most stages must never be computed.
func TestPipeDreamLazyMatchesEager(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	skipped := 0
	for q, c := range nearTestCuts(t, rng, 120) {
		for _, cm := range []CostModel{CostPipeDream, CostPipeplan} {
			n, _ := lazyMatchesEager(t, c, randomSoleOptions(rng, c, cm, q%4 == 0))
			skipped += n
		}
	}
	if skipped == 0 {
		t.Error("no stage was left uncomputed on the random cases")
	}
	n, cells := lazyMatchesEager(t, graphCuts(t, "gnmt_large"), PipeDreamOptions{Levels: levels(8, 300e9, 128, 25e9), MemoryBytes: 80e9})
	t.Logf("GNMT-16: %d of %d stages never computed", n, cells)
	if n*2 < cells {
		t.Errorf("GNMT-16: %d of %d stages never computed, want at least half", n, cells)
	}
}
