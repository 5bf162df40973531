package partition

import (
	"context"
	"math"
)

// The last level's single row reads the stage times of the level below,
// A(i→j, M) with all M workers of level L−2, only for the splits its bounds
// let through: where the stage k+1..j's time is not known yet, the row
// first screens the split with a lower bound of it, the stage's compute
// over its GPUs (workBound's argument), and every test the row applies
// before searching a split's entries passes at least as many entries with
// a smaller time (rowSearch's screen). So the entries of level L−2 are
// computed when the row first reads them (lazyStages), and those of the
// splits the lower bound screens out never are (on GNMT-16 on 128 × 8,
// 155 k of its 284 k stages); the row's result is the one it has with
// every entry computed (TestPipeDreamLazyMatchesEager). The level's rows no
// longer run in parallel: the playground's wasm runs on one thread.

// lazyStages fills the last level's stageTimes (packed, NaN where not yet
// computed: no entry is NaN) on first read: entry A(i→j, M) of row i of
// level lv = L−2 by the row's soleEval, kept between reads (its memo), or,
// where that runs out of work or a test replaces the row search, by the
// row's DP, which stores all of the row's entries at once. Each is the
// value the eager rows stored. The last level's row reads them on one
// goroutine.
type lazyStages struct {
	s    *pdSolver
	ctx  context.Context
	t    *stageTimes
	lv   int
	sole []*soleEval // per row of level lv, once read
	a    []float64   // rowDP's entries for a row
	// err is ctx's error when it stopped a row's DP: the cell read stays
	// NaN and the solve must fail.
	err error
	// rows counts the rows read, dp those solved by their DP, and entries
	// the entries soleEval computed.
	rows, dp, entries int
}

// newLazyStages returns level lv+1's stage times (lv = L−2, packed), to be
// computed on demand: the rows usefulEnds rules out hold +Inf, the others
// NaN until read.
func (s *pdSolver) newLazyStages(ctx context.Context, lv int) *lazyStages {
	t := s.newStageTimes(true)
	nan := math.NaN()
	for x := range t.first {
		t.first[x] = nan
	}
	for x := range t.split {
		t.split[x] = nan
	}
	M := s.opt.Levels[lv].Workers
	for i := range s.n {
		if s.last[i] < i {
			t.setRow(i, nil, M) // no stage from i can be part of the optimum
		}
	}
	l := &lazyStages{s: s, ctx: ctx, t: t, lv: lv, sole: make([]*soleEval, s.n)}
	t.lazy = l
	return l
}

// fill computes the stage i..j's time into cell, its place in l.t, and
// returns it; +Inf, with l.err set and the cell left NaN, when ctx stopped
// the row's DP.
func (l *lazyStages) fill(i, j int, cell *float64) float64 {
	s := l.s
	M := s.opt.Levels[l.lv].Workers
	e := l.sole[i]
	if e == nil {
		l.rows++
		if s.row == nil {
			e = s.newSoleRow(l.lv, i)
			l.sole[i] = e
		}
	}
	if e != nil {
		if v, ok := e.entry(j, M-1); ok {
			l.entries++
			*cell = v
			return v
		}
		l.sole[i] = nil // its work ran out: the row's DP stores every entry
	}
	l.dp++
	if l.a == nil {
		l.a = make([]float64, s.n*M)
	}
	if err := s.rowDP(l.ctx, l.lv, i, l.a, nil); err != nil {
		l.err = err
		return math.Inf(1)
	}
	l.t.setRow(i, l.a, M)
	return *cell
}
