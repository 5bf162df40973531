package partition

import (
	"context"
	"math"
	"math/bits"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"pipeplan/core/cost"
)

// pdSolver runs the PipeDream DP level by level.
type pdSolver struct {
	c     *Cuts
	opt   PipeDreamOptions
	exact bool // CostPipeDream
	n     int
	// comp[lv] holds the compute times of the stages at level lv >= 1,
	// read through compute: A^{lv−1}(i→j) with all workers of level lv−1,
	// +Inf where infeasible. comp[0] is nil: level 0 uses the cuts.
	comp []*stageTimes
	// final is the last level's row 0, with choices.
	final     []float64
	finalBack []pdChoice
	// tables[lv] caches the splits of level lv below the last (table).
	tables []*pdTable
	// bound[lv] is the value above which no entry of level lv's DP can be
	// part of the optimum (bounds).
	bound []float64
	// last[i], when not nil, is the last state j whose stage i..j of the
	// second-to-last level may be part of the optimum (usefulEnds): the
	// rows there stop at it, and skip when it is below i.
	last []int
	// rowBound[i], with last, replaces bound for row i of that level.
	rowBound []float64
	// near indexes the cuts' cumulative compute for nearSplits;
	// nearStates counts the rows' states whose splits it found.
	near       *cumIndex
	nearStates atomic.Int64
	// soleRows counts the rows soleRow filled without their DP and, of
	// the second-to-last level, the rows read whose entries soleEval
	// computed alone.
	soleRows atomic.Int64
	// lazy computes the second-to-last level's entries as the last
	// level's row reads them (nil with one level).
	lazy *lazyStages
	// topState, when not nil, reports the last level's states done, each
	// as rowSearch finishes it.
	topState func(j int)
	// scratch holds *pdScratch for rowDP, reused between rows.
	scratch sync.Pool
	// row, when not nil, replaces rowDP's search: tests run the reference
	// implementation through it.
	row func(s *pdSolver, lv, i int, a []float64, back []pdChoice)
}

// pdChoice is how A(i→j, m) was reached: a single stage with r replicas
// (k = −1), or the sub-pipeline to state k followed by a stage k+1..j with
// r replicas.
type pdChoice struct {
	k int32
	r int32
}

func newPDSolver(c *Cuts, opt PipeDreamOptions) *pdSolver {
	s := &pdSolver{c: c, opt: opt, exact: opt.CostModel == CostPipeDream, n: c.Len(),
		comp: make([]*stageTimes, len(opt.Levels)), tables: make([]*pdTable, len(opt.Levels))}
	s.bound = s.bounds()
	s.near = newCumIndex(c)
	return s
}

// bounds returns, per level, a value above which no entry of the level's DP
// can be part of the optimum, so rowDP may leave such entries larger: at the
// top level, plain data parallelism's time at every level (an upper bound
// of the optimum; +Inf when it does not fit or the pipeline is straight),
// and at a level below, the next level's bound times that level's workers
// (a stage there on r of them takes at least its compute / r). Each carries
// a relative margin of 1e-9, far above rounding.
func (s *pdSolver) bounds() []float64 {
	const margin = 1 + 1e-9
	L := len(s.opt.Levels)
	b := make([]float64, L)
	t, act, w := s.c.ComputeSeconds[s.n-1], s.c.ActivationBytes[s.n-1], s.c.ParameterBytes[s.n-1]
	for lv, l := range s.opt.Levels {
		if (s.opt.Straight && l.Workers > 1) || !s.fits(lv, act, w, l.Workers, l.Workers, l.Workers) {
			t = math.Inf(1)
			break
		}
		// The DP's row 0 at this level offers this single stage on all
		// workers, with a compute no larger than t (monotone in it).
		t = s.stageSeconds(t, w, l.Workers, l.BandwidthBytesPerSec, true, s.below(lv))
	}
	b[L-1] = t * margin
	for lv := L - 2; lv >= 0; lv-- {
		b[lv] = b[lv+1] * float64(s.opt.Levels[lv+1].Workers) * margin
	}
	return b
}

// usefulEnds returns, for each state i, the last state j whose stage i..j
// of the second-to-last level (its compute comp[L−1][i·n+j] at the last
// level) may be part of an optimal pipeline, −1 when none, and a bound for
// row i of that level: the largest value such a stage's compute may take.
// A pipeline whose bottleneck is under the last level's bound that gives
// the stage i..j r of its M workers (each of G GPUs) needs its compute v,
// at least the span over G GPUs, under r·bound (the stage takes at least
// v/r), and the rest of the layers, on the other M−r workers, under
// (M−r)·G·bound (workBound's argument: a pipeline's bottleneck is at least
// its compute over its GPUs), with r < M when there is a rest. Where data
// parallelism is near its compute bound, as for the ResNets on a large
// cluster, that leaves few stages besides the whole model. Entries of the
// last level over the bound may be left larger, so a stage past last[i],
// or one whose compute exceeds rmax·bound, may be left larger too.
func (s *pdSolver) usefulEnds() (last []int, rowBound []float64) {
	const margin = 1 + 1e-9
	L := len(s.opt.Levels)
	M, G, bound := s.opt.Levels[L-1].Workers, float64(s.gpusBelow(L-1)), s.bound[L-1]
	last, rowBound = make([]int, s.n), make([]float64, s.n)
	for i := range s.n {
		last[i] = -1
		for j := i; j < s.n; j++ {
			sp := span(s.c.ComputeSeconds, i, j)
			rmax := M
			if i > 0 || j < s.n-1 {
				// The rest's compute must stay under (M−r)·G·bound.
				rmax = min(M-1, int(math.Ceil(float64(M)-s.restSeconds(sp)/(G*bound)))-1)
			}
			if rmax >= 1 && sp/G*workMargin < float64(rmax)*bound {
				last[i] = j
				rowBound[i] = maxOf(rowBound[i], float64(rmax)*bound*margin)
			}
		}
	}
	return last, rowBound
}

// restSeconds is the compute of the layers outside a part whose compute
// span is sp, shrunk beyond rounding and the subtraction's cancellation.
func (s *pdSolver) restSeconds(sp float64) float64 {
	total := s.c.ComputeSeconds[s.n-1]
	return maxOf(0, (total-sp)*workMargin-(1-workMargin)*total)
}

// topEntry is the largest m for which the last level's entry A(0→j, m+1
// workers) may be part of the optimum: the layers after j, on the other
// M−m−1 workers of G GPUs, take at least their compute over those GPUs
// (workBound's argument), which must stay under the bound; j = n−1 leaves
// no layers and takes all M.
func (s *pdSolver) topEntry(j int) int {
	L := len(s.opt.Levels)
	M := s.opt.Levels[L-1].Workers
	if j == s.n-1 {
		return M - 1
	}
	rest := s.restSeconds(s.c.ComputeSeconds[j]) / (float64(s.gpusBelow(L-1)) * s.bound[L-1])
	// M−m−1 > rest, i.e. m <= M−2−floor(rest); 0 (a single worker, which
	// no split improves) at the least.
	return int(max(0, float64(M-2)-math.Floor(min(rest, float64(M)))))
}

// solveLevels fills comp for every level and the last level's row 0. The
// rows of a level below the second-to-last, each by soleRow where it
// answers and rowDP otherwise, are independent and run on GOMAXPROCS
// goroutines; each writes its own part of comp, so the result does not
// depend on them. The second-to-last level's entries are computed as the
// last level's row reads them (lazyStages), on its goroutine. progress
// counts those rows, then the last row's states, then 1 when the search is
// done: (L−2)·n + n + 1 units for L >= 2 levels, n + 1 for one.
func (s *pdSolver) solveLevels(ctx context.Context, progress Progress) error {
	L := len(s.opt.Levels)
	rows := max(L-2, 0)*s.n + s.n + 1
	done := 0
	var mu sync.Mutex
	report := func() { // rows done, in order: counted under the lock
		if progress != nil {
			mu.Lock()
			done++
			progress(done, rows)
			mu.Unlock()
		}
	}
	for lv := 0; lv < L-2; lv++ {
		M := s.opt.Levels[lv].Workers
		next := s.newStageTimes(false)
		s.tables[lv] = s.table(lv)
		var row atomic.Int64
		var wg sync.WaitGroup
		for range min(runtime.GOMAXPROCS(0), s.n) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a := make([]float64, s.n*M)
				for i := int(row.Add(1) - 1); i < s.n && ctx.Err() == nil; i = int(row.Add(1) - 1) {
					if (s.row != nil || !s.soleRow(lv, i, a)) && s.rowDP(ctx, lv, i, a, nil) != nil {
						return
					}
					next.setRow(i, a, M)
					report()
				}
			}()
		}
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return err
		}
		s.comp[lv+1] = next
	}
	if L >= 2 {
		s.tables[L-2] = s.table(L - 2)
		s.last, s.rowBound = s.usefulEnds()
		s.lazy = s.newLazyStages(ctx, L-2)
		s.comp[L-1] = s.lazy.t
	}
	if progress != nil {
		base := done
		s.topState = func(j int) { progress(base+j+1, rows) }
	}
	M := s.opt.Levels[L-1].Workers
	s.final, s.finalBack = make([]float64, s.n*M), make([]pdChoice, s.n*M)
	if err := s.rowDP(ctx, L-1, 0, s.final, s.finalBack); err != nil {
		return err
	}
	if s.lazy != nil {
		if err := s.lazy.err; err != nil {
			return err
		}
		s.soleRows.Add(int64(s.lazy.rows - s.lazy.dp))
	}
	if progress != nil {
		progress(rows, rows)
	}
	return nil
}

// stageTimes is a level's stage compute times (pdSolver.comp): every
// stage i..j, j >= i, at index i*n+j of full, or, for the last level, whose
// DP has the single row 0, only the stages it reads: first[j] for 0..j and
// split[off[j]+q] for k+1..j, k = ancestors(j)[q].
type stageTimes struct {
	c                  *Cuts
	n                  int
	full, first, split []float64
	off                []int
	// lazy, when not nil, computes a packed cell on its first read (NaN
	// until then).
	lazy *lazyStages
}

// newStageTimes returns a level's stageTimes, packed for the last level.
func (s *pdSolver) newStageTimes(packed bool) *stageTimes {
	t := &stageTimes{c: s.c, n: s.n}
	if !packed {
		t.full = make([]float64, s.n*s.n)
		return t
	}
	t.off = make([]int, s.n)
	pairs := 0
	for j := range s.n {
		t.off[j] = pairs
		pairs += len(s.c.ancestors(j))
	}
	t.first, t.split = make([]float64, s.n), make([]float64, pairs)
	return t
}

// setRow stores the stages from state i, a[j*M+M−1] (all workers) for
// stage i..j, or +Inf for all of them when a is nil. Rows write disjoint
// entries.
func (t *stageTimes) setRow(i int, a []float64, M int) {
	v := func(j int) float64 {
		if a == nil {
			return math.Inf(1)
		}
		return a[j*M+M-1]
	}
	switch {
	case t.full != nil:
		for j := i; j < t.n; j++ {
			t.full[i*t.n+j] = v(j)
		}
	case i == 0:
		for j := range t.n {
			t.first[j] = v(j)
		}
	case t.c.anc == nil: // a chain: k = i−1 precedes every j > k, at index k
		for j := i; j < t.n; j++ {
			t.split[t.off[j]+i-1] = v(j)
		}
	default:
		k := i - 1
		for w, word := range t.c.desc[k] {
			for ; word != 0; word &= word - 1 {
				j := w*64 + bits.TrailingZeros64(word)
				t.split[t.off[j]+t.c.ancestorIndex(k, j)] = v(j)
			}
		}
	}
}

// at is the time of the stage i..j, j >= i; packed, +Inf for a stage it
// does not hold (the last level never reads one).
func (t *stageTimes) at(i, j int) float64 {
	var cell *float64
	switch {
	case t.full != nil:
		return t.full[i*t.n+j]
	case i == 0:
		cell = &t.first[j]
	case t.c.precedes(i-1, j):
		cell = &t.split[t.off[j]+t.c.ancestorIndex(i-1, j)]
	default:
		return math.Inf(1)
	}
	if v := *cell; v == v || t.lazy == nil {
		return v
	}
	return t.lazy.fill(i, j, cell)
}

// compute is the stage i..j's compute time at level lv, +Inf when the
// stage is not a valid one.
func (s *pdSolver) compute(lv, i, j int) float64 {
	if lv > 0 {
		if j < i {
			return math.Inf(1)
		}
		return s.comp[lv].at(i, j)
	}
	if j < i || (!s.exact && i > 0 && !s.c.precedes(i-1, j)) {
		return math.Inf(1)
	}
	return span(s.c.ComputeSeconds, i, j)
}

// below is the number of workers of the level under lv (1 at level 0), the
// "g" PipeDream's original divides a single stage's all-reduce by.
func (s *pdSolver) below(lv int) int {
	if lv == 0 {
		return 1
	}
	return s.opt.Levels[lv-1].Workers
}

// gpusBelow is the number of GPUs in one worker of level lv.
func (s *pdSolver) gpusBelow(lv int) int {
	g := 1
	for _, l := range s.opt.Levels[:lv] {
		g *= l.Workers
	}
	return g
}

// stageSeconds is the time per minibatch of a stage with compute t and
// parameters w replicated r ways at bandwidth b. single marks the original
// optimizer's single-stage case, where it divides the all-reduce by g.
func (s *pdSolver) stageSeconds(t, w float64, r int, b float64, single bool, g int) float64 {
	rf := float64(r)
	if s.exact {
		// optimizer_graph_hierarchical.py: (T + 4(r−1)|W|/(B·r) [/g]) / r.
		dp := 4 * (rf - 1) * w / (b * rf)
		if single {
			dp /= float64(g)
		}
		return (t + dp) / rf
	}
	// §2.4.1 with the ring volume: max(T, 2(r−1)/r·|W|/B) / r.
	return fmax(t, cost.RingAllReduceBytes(r, w)/b) / rf
}

// fits applies the memory constraint to a stage with activations act and
// parameters w, r replicas, where used workers of the level's M are taken
// by the stages up to and including this one.
func (s *pdSolver) fits(lv int, act, w float64, r, used, M int) bool {
	return used >= s.minUsed(lv, act, w, r, M)
}

// minUsed is the fewest workers the stages up to and including a stage with
// activations act, parameters w and r replicas must take for it to fit in
// memory: the fewer GPUs after it, the fewer inputs it holds in flight.
func (s *pdSolver) minUsed(lv int, act, w float64, r, M int) int {
	if s.opt.MemoryBytes == 0 {
		return r
	}
	return usedFor(s.maxInFlight(lv, act, w, M), r, M)
}

// usedFor is minUsed for a stage on r replicas that holds at most nmax
// inputs in flight (maxInFlight): M+1 (never) when nmax < 0.
func usedFor(nmax, r, M int) int {
	if nmax < 0 {
		return M + 1
	}
	return max(r, M-nmax*r)
}

// maxInFlight is the most inputs in flight, besides the stage's own, that a
// stage with activations act and parameters w can hold in memory at level
// lv, capped at M+1 (unlimited memory): −1 when it fits none. It does not
// depend on the stage's replicas.
func (s *pdSolver) maxInFlight(lv int, act, w float64, M int) int {
	if s.opt.MemoryBytes == 0 {
		return M + 1
	}
	var ok func(n int) bool
	if s.exact {
		// The original: ceil((M − used)/r)·(Act + Par) <= memory, which lets
		// the last stage and pure data parallelism always pass.
		ok = func(n int) bool { return float64(n)*(act+w) <= s.opt.MemoryBytes }
	} else {
		// pipeplan: ceil((M − used + r)/r) inputs in flight (§2.3.2).
		g := float64(s.gpusBelow(lv))
		ok = func(n int) bool { return stageMemoryBytes(act, w, n)/g <= s.opt.MemoryBytes }
	}
	nmax := M + 1
	if act+w > 0 {
		nmax = int(min(float64(M+1), max(-1, math.Floor(s.opt.MemoryBytes/(act+w)))))
		for nmax < M+1 && ok(nmax+1) {
			nmax++
		}
	}
	for nmax >= 0 && !ok(nmax) {
		nmax--
	}
	if !s.exact {
		nmax-- // the stage's own input is in flight too
	}
	return nmax
}

// fitsAlone reports whether a single stage with activations act and
// parameters w on r of level lv's M workers fits in memory: r >=
// usedFor(maxInFlight(lv, act, w, M), r, M), with one memory test. That
// needs nmax >= need = ceil((M−r)/r) (>= 0), and maxInFlight's n (before
// pipeplan's own input) is the largest n <= M+1 that fits, fitting being
// monotone in n, so it holds iff need (plus the stage's own input for
// pipeplan) fits, and need+1 <= M.
func (s *pdSolver) fitsAlone(lv int, act, w float64, r int) bool {
	if s.opt.MemoryBytes == 0 {
		return true
	}
	M := s.opt.Levels[lv].Workers
	n := ceilDiv(M-r, r)
	if s.exact {
		return float64(n)*(act+w) <= s.opt.MemoryBytes
	}
	return stageMemoryBytes(act, w, n+1)/float64(s.gpusBelow(lv)) <= s.opt.MemoryBytes
}

// stageMemoryBytes is pipeplan's per-GPU memory of a PipeDream stage with n
// inputs in flight: weight stashing keeps n weight versions and n activation
// stashes (§2.3.2), plus one gradient buffer and the SGD momentum.
func stageMemoryBytes(act, w float64, n int) float64 {
	return float64(n)*(act+w) + 2*w
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// rowDP solves level lv for the stages from state i: a[j*M+m], j >= i (it
// leaves the entries before i as they were), is the best bottleneck over
// states i..j with exactly m+1 workers (+Inf if none), and
// back, when not nil, how it was reached (dissertation §2.4.1 recurrence;
// for CostPipeDream, the original's loops: split states k preceding j, not
// preceding i−1, then m' ascending, first strict minimum kept). Entries
// whose value exceeds s.bound[lv] may be left larger (+Inf): none of them
// can be part of the optimum (see bounds). It returns ctx's error, checked
// once per state j.
func (s *pdSolver) rowDP(ctx context.Context, lv, i int, a []float64, back []pdChoice) error {
	if s.row != nil {
		s.row(s, lv, i, a, back)
		return ctx.Err()
	}
	return s.rowSearch(ctx, lv, i, a, back)
}

// rowSearch is rowDP's bounded, windowed search.
func (s *pdSolver) rowSearch(ctx context.Context, lv, i int, a []float64, back []pdChoice) error {
	c, n := s.c, s.n
	lvl := s.opt.Levels[lv]
	M, B := lvl.Workers, lvl.BandwidthBytesPerSec
	inf := math.Inf(1)
	maxR := s.maxReplicas(lv)
	end, bound := s.rowLimits(lv, i)
	for j := i; j < n; j++ {
		row := a[j*M : (j+1)*M]
		for m := range row {
			row[m] = inf
			if back != nil {
				back[j*M+m] = pdChoice{-1, int32(m + 1)}
			}
		}
		if j > end {
			continue
		}
		t := s.compute(lv, i, j)
		if math.IsInf(t, 1) {
			continue
		}
		act, w := span(c.ActivationBytes, i, j), span(c.ParameterBytes, i, j)
		nmax := s.maxInFlight(lv, act, w, M) // fits, with used = r
		for r := 1; r <= maxR; r++ {
			if r >= usedFor(nmax, r, M) {
				row[r-1] = s.singleStage(lv, j, t, w, r)
			}
		}
	}
	cf := s.coefficients(lv)
	maxMP := cf.maxMP
	tab := s.tables[lv]
	sc := s.getScratch(M, maxMP)
	defer func() {
		s.nearStates.Add(int64(sc.nearStates))
		sc.nearStates = 0
		s.scratch.Put(sc)
	}()
	// rowMin[k] is the best time over states i..k with any worker count: a
	// lower bound of every pipeline split after k. preMin[k*M+x] is the best
	// with at most x+1 workers, min(a[k*M .. k*M+x]), and under[k] the
	// first x where that is under the bound (M if none): a sub-pipeline
	// i..k on fewer workers cannot be part of a candidate that beats the
	// bound. All are written at k before they are read.
	rowMin, preMin, under, inv, beat, st := sc.rowMin, sc.preMin[:n*M], sc.under, sc.inv[:M], sc.beat[:M], sc.st[:maxMP+1]
	// A level's worker is gpusBelow GPUs: a stage's compute there is at
	// least its span over them (the level below's bottleneck, recursively).
	perGPU := 1 / float64(s.gpusBelow(lv))
	invBound := 1 / bound // at most every inv[m]
	// screen applies to the split at k of state j, whose last stage
	// k+1..j has compute t, the tests that need no entry of the split, and
	// leaves in sc.ms the entries of row j it may improve (none when it
	// improves none); it returns the split's workBound and the mp in
	// [lo, hi] that may beat the bound. Each test passes at least as many
	// entries with a smaller t: the bounds below (wb.last, lb, work, lo,
	// low) grow with it, and the first entry (firstEntry) with those.
	// With one, it stops at the first entry it leaves.
	screen := func(k, j, top int, worst, t float64, one bool) (wb workBound, lo, hi int) {
		if math.IsInf(t, 1) || t/float64(maxMP) >= worst {
			sc.ms = sc.ms[:0]
			return wb, 1, 0
		}
		// Every split's candidate is at least the larger of its two
		// parts' work per worker (workBound): the last stage's compute
		// or transfers, the prefix's compute spread over all its GPUs
		// or, for pipeplan, its last stage's output.
		out := s.outBytes(k, j)
		wb = workBound{prefix: span(c.ComputeSeconds, i, k) * perGPU, last: maxOf(t, out/B) * workMargin}
		if !s.exact {
			wb.prefix = maxOf(wb.prefix, 2*c.OutputBytes[k]/B)
		}
		wb.prefix *= workMargin
		// The entries m the split may improve: its candidates are at
		// least max(min(prev[0..m−1]), lb/min(m, maxMP)), where
		// lb·ct[mp] = lb/mp bounds the last stage's time on mp workers,
		// and workBound's (p+l)/(m+1) (max(p/x, l/y) >= (p+l)/(x+y));
		// only the mp in [lo, hi] can beat the bound for any m
		// (workBound), and over those, the least of max(pre[m−mp],
		// last/mp), last workBound's: the last stage on mp workers
		// takes at least last/mp (times ct[mp], non-increasing).
		lb, work := maxOf(t, out/B), wb.prefix+wb.last
		if lo, hi = wb.mps(top, 1, min(top, maxMP), bound); lo > hi {
			sc.ms = sc.ms[:0]
			return wb, lo, hi
		}
		low := newCandidateBound(preMin[k*M:(k+1)*M], nil, lo, hi)
		low.last, low.ct = wb.last, cf.ct
		// Entry m needs m−mp >= under[k], so m > under[k], and low
		// under what it must beat (firstEntry).
		m0 := max(firstUnder(work, bound, top), int(under[k])+1)
		row := a[j*M : (j+1)*M]
		sc.ms = sc.ms[:0]
		for m := firstEntry(&low, beat, m0, top); m <= top; m++ {
			if r := minOf(row[m], bound); preMin[k*M+m-1] < r && lb*cf.ct[min(m, maxMP)] < r && work < r*float64(m+1) &&
				low.next(m) < r {
				if sc.ms = append(sc.ms, int32(m)); one {
					break
				}
			}
		}
		return wb, lo, hi
	}
	for j := i; j <= end; j++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		row := a[j*M : (j+1)*M]
		// Only the entries up to top may be part of the optimum (topEntry);
		// the others keep their single stage.
		top := M - 1
		if lv == len(s.opt.Levels)-1 {
			top = s.topEntry(j)
		}
		open := row[:top+1]
		// The sub-pipeline i..k needs k >= i (the original also skips k
		// preceding i−1, implied by the order); pipeplan also needs i−1 to
		// precede k for i..k to be a stage, so j too (precedes is
		// transitive). nearSplits narrows them down when it can.
		sc.ks = sc.ks[:0]
		if s.exact || i == 0 || c.precedes(i-1, j) {
			if !s.nearSplits(sc, i, j, top, maxMP, row, bound, float64(s.gpusBelow(lv))) {
				sc.ks = c.appendSplits(sc.ks[:0], i, j, !s.exact)
			}
		}
		// worst caps what a split must beat to matter: the largest entry of
		// open (a split whose lower bound reaches it cannot improve any
		// entry, and ties keep the first), or the bound.
		worst := bound
		if len(sc.ks) > 0 {
			worst = targets(open, bound, inv, beat)
		}
		for x := 0; x < len(sc.ks); x += 2 {
			k, q := int(sc.ks[x]), int(sc.ks[x+1])
			if rowMin[k] >= worst ||
				!maySplit(span(c.ComputeSeconds, i, k)*perGPU, span(c.ComputeSeconds, k+1, j)*perGPU, inv[:top+1], invBound, maxMP) {
				continue
			}
			var t float64
			if lv > 0 && s.comp[lv].split != nil {
				// k = ancestors(j)[q]; NaN until lazyStages computes it,
				// which a split that its compute over its GPUs screens out
				// never needs (screen passes more with a smaller t).
				cell := &s.comp[lv].split[s.comp[lv].off[j]+q]
				if t = *cell; t != t {
					if _, _, _ = screen(k, j, top, worst, span(c.ComputeSeconds, k+1, j)*perGPU*workMargin, true); len(sc.ms) == 0 {
						continue
					}
					t = s.comp[lv].lazy.fill(k+1, j, cell)
				}
			} else {
				t = s.compute(lv, k+1, j)
			}
			wb, lo, hi := screen(k, j, top, worst, t, false)
			if len(sc.ms) == 0 {
				continue
			}
			prev := a[k*M : (k+1)*M]
			// The largest m left narrows hi, and so does under[k]: mp <=
			// m − under[k].
			mMax := int(sc.ms[len(sc.ms)-1])
			if lo, hi = wb.mps(mMax, lo, min(hi, mMax-int(under[k])), bound); lo > hi {
				continue
			}
			// The last stage k+1..j on mp workers: its time st[mp], and the
			// fewest workers it needs to fit, at most nmax inputs in flight.
			var nmax int
			var mono bool
			if tab != nil {
				p := tab.off[j] + q
				st, nmax, mono = tab.st[p*(maxMP+1):(p+1)*(maxMP+1)], int(tab.nmax[p]), tab.mono[p]
			} else {
				nmax, mono = s.lastStage(lv, k, j, t, cf, st, lo, hi)
			}
			if nmax < 0 {
				continue
			}
			sp := split{row: row, prev: prev, pre: preMin[k*M : (k+1)*M], st: st, bound: bound,
				nmax: nmax, lo: lo, hi: hi, limited: s.opt.MemoryBytes > 0, mono: mono, work: wb}
			improved := false
			// best changes only row[m], which only m's tests read.
			cb := newCandidateBound(sp.pre, st, lo, hi)
			for _, m := range sc.ms {
				if mono && cb.next(int(m)) >= minOf(row[m], bound) {
					continue
				}
				if mp := sp.best(int(m)); mp > 0 {
					improved = true
					if back != nil {
						back[j*M+int(m)] = pdChoice{int32(k), int32(mp)}
					}
				}
			}
			if improved {
				worst = targets(open, bound, inv, beat)
			}
		}
		pm := inf
		under[j] = int32(M)
		for m, v := range row {
			pm = minOf(pm, v)
			preMin[j*M+m] = pm
			if pm < bound && under[j] == int32(M) {
				under[j] = int32(m)
			}
		}
		rowMin[j] = pm
		if lv == len(s.opt.Levels)-1 && s.topState != nil {
			s.topState(j)
		}
	}
	return nil
}

// maxReplicas is the most replicas of a stage at level lv.
func (s *pdSolver) maxReplicas(lv int) int {
	if s.opt.Straight {
		return 1
	}
	return s.opt.Levels[lv].Workers
}

// maxSplitReplicas is the most replicas of a stage after a split at
// level lv: all workers but one, the sub-pipeline's.
func (s *pdSolver) maxSplitReplicas(lv int) int {
	return min(s.maxReplicas(lv), s.opt.Levels[lv].Workers-1)
}

// rowLimits are the last state of row i of level lv that may hold a useful
// entry, and the bound above which its entries may be left larger: the
// level's bound, or for the second-to-last level usefulEnds' limits.
func (s *pdSolver) rowLimits(lv, i int) (end int, bound float64) {
	if s.last != nil && lv == len(s.opt.Levels)-2 {
		return s.last[i], min(s.bound[lv], s.rowBound[i])
	}
	return s.n - 1, s.bound[lv]
}

// singleStage is entry A(i→j, r workers) of level lv as one stage, if
// it fits: its time with compute t and parameters w replicated r ways.
func (s *pdSolver) singleStage(lv, j int, t, w float64, r int) float64 {
	B := s.opt.Levels[lv].BandwidthBytesPerSec
	v := s.stageSeconds(t, w, r, B, true, s.below(lv))
	if !s.exact && j < s.n-1 {
		// pipeplan charges every stage its output boundary too; the
		// original leaves it out for a pipeline's first stage.
		v = fmax(v, 2*s.c.OutputBytes[j]/(B*float64(r)))
	}
	return v
}

// targets sets, for the entries open of a row capped at bound, inv[m] =
// 1/min(open[m], bound) and beat[m] = max(min(open[m'], bound), m' >= m),
// the most a split must beat to improve an entry from m on, and returns
// beat[0]: a split whose lower bound reaches it improves no entry.
func targets(open []float64, bound float64, inv, beat []float64) float64 {
	most := math.Inf(-1)
	for m := len(open) - 1; m >= 0; m-- {
		r := minOf(open[m], bound)
		inv[m], most = 1/r, maxOf(most, r)
		beat[m] = most
	}
	return most
}

// firstEntry is the first entry m >= m0, at most top, whose bound low
// (candidateBound, st nil) may be under what the entry must beat, top+1
// when none: from m0 on that is at most beat[m0], so some mp in [lo, hi]
// needs both at(mp) and pre[m−mp] under beat[m0], i.e. mp >= mpMin and
// m−mp >= xMin (both non-increasing: firstBelow), so m >= mpMin+xMin.
func firstEntry(low *candidateBound, beat []float64, m0, top int) int {
	if m0 > top {
		return m0
	}
	mpMin := firstBelow(low.ct, low.last, beat[m0], low.lo, low.hi)
	xMin := firstBelow(low.pre, 1, beat[m0], 0, len(low.pre)-1)
	if mpMin > low.hi || xMin == len(low.pre) {
		return top + 1
	}
	return max(m0, mpMin+xMin)
}

// firstBelow is the first x in [lo, hi] with scale·f[x] < v, hi+1 when
// none, for f non-increasing on [lo, hi] (scale >= 0 keeps it so).
func firstBelow(f []float64, scale, v float64, lo, hi int) int {
	for lo <= hi {
		mid := int(uint(lo+hi) >> 1)
		if scale*f[mid] < v {
			hi = mid - 1
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// firstUnder is the first m >= 1 with work < bound·(m+1): for every m
// before it, work >= bound·(m+1) (m+1 workers of a split cannot beat the
// bound), top+1 when none is.
func firstUnder(work, bound float64, top int) int {
	m := 1
	if f := work / bound; f > 3 && f < float64(top) {
		m = int(f) - 1
		for m > 1 && !(work >= bound*float64(m)) {
			m--
		}
	}
	for m <= top && work >= bound*float64(m+1) {
		m++
	}
	return m
}

// minOf and maxOf are min and max for the bounds and tests of rowDP, whose
// values are never NaN and where a zero's sign does not matter: the
// builtins' handling of those is a runtime call in wasm, the playground's
// target. Stored times keep the builtins.
func minOf(a, b float64) float64 {
	if b < a {
		return b
	}
	return a
}

func maxOf(a, b float64) float64 {
	if b > a {
		return b
	}
	return a
}

// fmax is the builtin max of two float64s, NaN and signed zeros included,
// without the runtime call the builtin is in wasm.
func fmax(a, b float64) float64 {
	switch {
	case a > b:
		return a
	case b > a:
		return b
	case a != a || b != b:
		return math.NaN()
	case a == 0: // +0 unless both are −0
		return math.Float64frombits(math.Float64bits(a) & math.Float64bits(b))
	}
	return a
}

// pdScratch is rowDP's working memory, reused between its rows.
type pdScratch struct {
	rowMin, preMin, inv, beat, st []float64
	under                         []int32
	// ks holds a state's splits, appendSplits' pairs; near is
	// nearSplits' working list, ms a split's entries to search.
	ks, near, ms []int32
	// nearStates counts nearSplits' successes, added to the solver's.
	nearStates int
}

// getScratch returns a pdScratch with at least M workers and maxMP
// replicas per stage.
func (s *pdSolver) getScratch(M, maxMP int) *pdScratch {
	sc, _ := s.scratch.Get().(*pdScratch)
	if sc == nil {
		sc = &pdScratch{rowMin: make([]float64, s.n), under: make([]int32, s.n)}
	}
	if len(sc.preMin) < s.n*M {
		sc.preMin, sc.inv, sc.beat = make([]float64, s.n*M), make([]float64, M), make([]float64, M)
	}
	if len(sc.st) < maxMP+1 {
		sc.st = make([]float64, maxMP+1)
	}
	return sc
}

// pdCoefficients are stageSeconds and the transfer term of level lv as
// coefficients per replica count mp <= maxMP: a stage's time is
// max(T·ct + W·cw, out·co) for the original, max(max(T, W·cw)·ct, out·co)
// for pipeplan.
type pdCoefficients struct {
	maxMP      int
	ct, cw, co []float64
}

// coefficients returns level lv's pdCoefficients; maxMP is the most
// replicas a stage after a split may take.
func (s *pdSolver) coefficients(lv int) *pdCoefficients {
	B := s.opt.Levels[lv].BandwidthBytesPerSec
	maxMP := s.maxSplitReplicas(lv)
	cf := &pdCoefficients{maxMP: maxMP, ct: make([]float64, maxMP+1), cw: make([]float64, maxMP+1), co: make([]float64, maxMP+1)}
	for mp := 1; mp <= maxMP; mp++ {
		f := float64(mp)
		cf.ct[mp], cf.co[mp] = 1/f, 1/(B*f)
		if s.exact {
			cf.cw[mp] = 4 * (f - 1) / (B * f) / f
		} else {
			cf.cw[mp] = cost.RingAllReduceBytes(mp, 1) / B
		}
	}
	return cf
}

// outBytes is what the stage k+1..j sends and receives per input: twice
// the larger boundary, the output counting unless j is the last state.
func (s *pdSolver) outBytes(k, j int) float64 {
	out := 2 * s.c.OutputBytes[k]
	if j < s.n-1 {
		out = fmax(out, 2*s.c.OutputBytes[j])
	}
	return out
}

// lastStage fills st[mp], for mp in [lo, hi], with the time of the stage
// k+1..j (compute t) on mp workers of level lv after a split at k, and
// returns the most inputs it can hold in flight besides its own
// (maxInFlight) and whether st is non-increasing on [max(lo, 2), hi].
func (s *pdSolver) lastStage(lv, k, j int, t float64, cf *pdCoefficients, st []float64, lo, hi int) (nmax int, mono bool) {
	c := s.c
	out := s.outBytes(k, j)
	act, w := span(c.ActivationBytes, k+1, j), span(c.ParameterBytes, k+1, j)
	mono = true
	for mp := lo; mp <= hi; mp++ {
		st[mp] = s.splitStageSeconds(t, w, out, cf, mp)
		mono = mono && (mp < max(lo+1, 3) || st[mp] <= st[mp-1])
	}
	return s.maxInFlight(lv, act, w, s.opt.Levels[lv].Workers), mono
}

// splitStageSeconds is the time of a stage after a split with compute t,
// parameters w and transfers out (outBytes) on mp workers.
func (s *pdSolver) splitStageSeconds(t, w, out float64, cf *pdCoefficients, mp int) float64 {
	if s.exact {
		return fmax(t*cf.ct[mp]+w*cf.cw[mp], out*cf.co[mp])
	}
	return fmax(fmax(t, w*cf.cw[mp])*cf.ct[mp], out*cf.co[mp])
}

// pdTable holds lastStage for every split (k, j) of a level, k an ancestor
// of j, the same in every row: entry off[j]+q for k = ancestors(j)[q].
type pdTable struct {
	off  []int
	st   []float64 // maxMP+1 per entry
	nmax []int32
	mono []bool
}

// maxTableFloats bounds a level's pdTable (8 bytes each).
const maxTableFloats = 2 << 20

// table builds level lv's pdTable, or returns nil when it would exceed
// maxTableFloats (the rows then compute each split themselves).
func (s *pdSolver) table(lv int) *pdTable {
	cf := s.coefficients(lv)
	w := cf.maxMP + 1
	tab := &pdTable{off: make([]int, s.n)}
	pairs := 0
	for j := range s.n {
		tab.off[j] = pairs
		pairs += len(s.c.ancestors(j))
	}
	if pairs*w > maxTableFloats {
		return nil
	}
	tab.st, tab.nmax, tab.mono = make([]float64, pairs*w), make([]int32, pairs), make([]bool, pairs)
	for j := range s.n {
		for q, k := range s.c.ancestors(j) {
			p := tab.off[j] + q
			t := s.compute(lv, k+1, j)
			if math.IsInf(t, 1) {
				continue // never read
			}
			nmax, mono := s.lastStage(lv, k, j, t, cf, tab.st[p*w:(p+1)*w], 1, cf.maxMP)
			tab.nmax[p], tab.mono[p] = int32(nmax), mono
		}
	}
	return tab
}

// split is one split of a DP row: the pipeline's entries row, to be
// improved by the sub-pipeline prev (its prefix minima pre) followed by a
// last stage taking st[mp] on mp workers that holds at most nmax inputs in
// flight (when memory is limited).
type split struct {
	row, prev, pre, st []float64
	bound              float64
	nmax               int
	// lo and hi are the replicas of the last stage that may beat the
	// bound (st holds those), lo >= 1.
	lo, hi  int
	limited bool
	// mono reports st non-increasing on [max(lo, 2), hi], which lets best
	// stop early.
	mono bool
	// work, when set, bounds the candidates from below by compute per worker.
	work workBound
}

// maySplit is workBound's test without divisions, for every split of a
// row: with compute per GPU prefix up to the split and last after it, and
// inv[m] the reciprocal of what entry m must beat, it reports whether some
// m may have an mp <= maxMP with last/mp and prefix/(m+1−mp) both under
// it (maySplitAt). invBound is at most every inv[m]: the entries before
// maySplitFrom's are not tried.
func maySplit(prefix, last float64, inv []float64, invBound float64, maxMP int) bool {
	for m := maySplitFrom(prefix, last, invBound, len(inv)); m < len(inv); m++ {
		if maySplitAt(prefix, last, inv[m], m, maxMP) {
			return true
		}
	}
	return false
}

// maySplitFrom is the first entry m >= 1 for which maySplitAt may pass, at
// most end, when every entry's inv is at least invBound: passing needs
// floor(x)+floor(y)+1 <= m, so x+y < m+1, and x+y is at least the same
// sum with invBound (rounding is monotone), xb+yb. Every m below
// (xb+yb)·(1−1e-12), far beyond the sum's rounding, fails.
func maySplitFrom(prefix, last, invBound float64, end int) int {
	const shrink = 1 - 2e-9
	sum := (last*shrink*invBound + prefix*shrink*invBound) * (1 - 1e-12)
	if !(sum >= 1) {
		return 1
	}
	return int(minOf(sum, float64(end)))
}

// maySplitAt is maySplit's test of entry m alone, whose value is 1/inv:
// whether some mp <= maxMP has mp > x = last·inv and m+1−mp > y =
// prefix·inv. Both are shrunk by 2e-9, twice workMargin, so rounding never
// makes it refuse a split the bound (or the exact search) would take.
func maySplitAt(prefix, last, inv float64, m, maxMP int) bool {
	const shrink = 1 - 2e-9
	// mp = floor(x)+1 is the smallest allowed; it needs m+1−mp >=
	// floor(y)+1, so both are under m (NaN, from an entry of 0 that
	// nothing beats, is not). Truncation is floor here: x, y >= 0.
	fm := float64(m)
	x, y := last*shrink*inv, prefix*shrink*inv
	if !(x < fm) || !(y < fm) {
		return false
	}
	xi := int(x)
	return xi+int(y)+1 <= m && xi < maxMP
}

// workMargin shrinks a workBound's compute far beyond rounding (a few ulps).
const workMargin = 1 - 1e-9

// workBound bounds a split's candidates from below: a pipeline's
// bottleneck is at least its compute over its GPUs (the largest of the
// stages' compute/replicas is at least their sum over the replicas' sum,
// compute spans telescope, and a level's compute is the level below's
// bottleneck), and a stage's time at least its compute or transfers over
// its replicas. With prefix such a bound of states i..k and last one
// of the stage k+1..j, each per worker and times workMargin, the candidate
// with mp workers for the last stage and m+1 in all is at least
// max(prefix/(m−mp+1), last/mp). Zero means no bound.
type workBound struct{ prefix, last float64 }

// mps narrows [lo, hi] to the mp whose bound is under best: mp > last/best
// and m+1−mp > prefix/best.
func (w workBound) mps(m, lo, hi int, best float64) (int, int) {
	if w.last == 0 && w.prefix == 0 || !(best > 0) || math.IsInf(best, 1) {
		return lo, hi
	}
	if x := w.last / best; x >= 1 {
		lo = max(lo, int(min(x, float64(hi+1)))) // every mp below floor(x) is bounded by >= best
		for lo <= hi && w.last/float64(lo) >= best {
			lo++
		}
	}
	if y := w.prefix / best; y >= 1 {
		hi = min(hi, m+1-int(min(y, float64(m+1))))
		for hi >= lo && w.prefix/float64(m-hi+1) >= best {
			hi--
		}
	}
	return lo, hi
}

// best lowers row[m] to the split's best candidate max(prev[m−mp], st[mp])
// when that is smaller (and under the bound), and returns the mp it took:
// the smallest of those achieving the minimum, as the ascending scan with
// strict improvement finds it; 0 when row[m] stays.
func (sp *split) best(m int) int {
	lo, hi := sp.lo, min(m, sp.hi)
	if sp.limited {
		// The stage fits when the pipeline takes m+1 >= M − nmax·mp workers
		// (usedFor), i.e. mp >= (M − m − 1)/nmax.
		need := len(sp.row) - m - 1
		if need > 0 {
			if sp.nmax == 0 {
				return 0
			}
			lo = max(lo, ceilDiv(need, sp.nmax))
		}
	}
	best, bestMP := min(sp.row[m], sp.bound), 0
	if lo, hi = sp.work.mps(m, lo, hi, best); lo > hi {
		return 0
	}
	if !sp.mono {
		for mp := lo; mp <= hi; mp++ {
			if cand := max(sp.prev[m-mp], sp.st[mp]); cand < best {
				best, bestMP = cand, mp
			}
		}
	} else {
		// Every candidate is at least pre[m−mp], which grows with mp: none
		// past the largest mp with pre[m−mp] <= best can improve row[m].
		hi = lo - 1 + sort.Search(hi-lo+1, func(q int) bool { return sp.pre[m-lo-q] > best })
		mp := hi
		for ; mp >= lo; mp-- {
			s := sp.st[mp]
			if mp >= 2 && (s > best || (s == best && bestMP == 0)) {
				break // st only grows as mp falls, down to 2
			}
			// Downwards, a tie goes to the smaller mp: the ascending
			// scan's first strict minimum.
			if cand := max(sp.prev[m-mp], s); cand < best || (cand == best && bestMP > 0) {
				best, bestMP = cand, mp
			}
		}
		if mp >= 1 && lo <= 1 {
			if cand := max(sp.prev[m-1], sp.st[1]); cand < best || (cand == best && bestMP > 0) {
				best, bestMP = cand, 1
			}
		}
	}
	if bestMP > 0 {
		sp.row[m] = best
	}
	return bestMP
}

// candidateBound is the least of max(pre[m−mp], st[mp]) over the mp in
// [lo, min(m, hi)], a lower bound of a split's candidates max(prev[m−mp],
// st[mp]) there, for ascending m, when st is non-increasing on
// [max(lo, 2), hi]: pre[m−mp] grows with mp, so past mp = 1 the least is
// where the two cross, at the first such mp with pre[m−mp] >= st[mp] (c)
// or just before it, and c only moves up as m grows (pre[m−mp] falls).
// O(m + hi) for all m together. With st nil, st[mp] is last·ct[mp].
type candidateBound struct {
	pre, st      []float64
	last         float64
	ct           []float64
	lo, from, hi int // from = max(lo, 2)
	c            int
}

func newCandidateBound(pre, st []float64, lo, hi int) candidateBound {
	from := max(lo, 2)
	return candidateBound{pre: pre, st: st, lo: lo, from: from, hi: hi, c: from}
}

// at is st[mp].
func (b *candidateBound) at(mp int) float64 {
	if b.st == nil {
		return b.last * b.ct[mp]
	}
	return b.st[mp]
}

// next returns the bound for entry m, m larger than at the last call.
func (b *candidateBound) next(m int) float64 {
	hi := min(m, b.hi)
	for b.c <= hi && b.pre[m-b.c] < b.at(b.c) {
		b.c++
	}
	least := math.Inf(1)
	if b.lo <= 1 {
		least = maxOf(b.pre[m-1], b.at(1))
	}
	if b.c > b.from {
		least = minOf(least, b.at(b.c-1))
	}
	if b.c <= hi {
		least = minOf(least, b.pre[m-b.c])
	}
	return least
}

// result reads the optimum off the last level and rebuilds its stages
// through the levels.
func (s *pdSolver) result() (*PipeDreamResult, error) {
	L := len(s.opt.Levels)
	M := s.opt.Levels[L-1].Workers
	best := s.final[(s.n-1)*M+M-1]
	if math.IsInf(best, 1) {
		return nil, errNoPartition
	}
	var stages []PipeDreamStage
	s.walk(L-1, 0, s.n-1, M-1, 1, s.final, s.finalBack, &stages)
	gpus := s.gpusBelow(L)
	res := &PipeDreamResult{BottleneckSeconds: best, GPUs: gpus, CostModel: s.opt.CostModel,
		SingleStageSeconds: s.c.ComputeSeconds[s.n-1], DataParallelSeconds: s.dataParallelSeconds()}
	after := gpus
	for q := range stages {
		st := &stages[q]
		i, j := st.FirstLayer, st.LastLayer
		st.ComputeSeconds = span(s.c.ComputeSeconds, i, j)
		st.ParameterBytes = span(s.c.ParameterBytes, i, j)
		st.ActivationBytes = span(s.c.ActivationBytes, i, j)
		st.InFlight = ceilDiv(after, st.Replicas)
		st.MemoryBytes = stageMemoryBytes(st.ActivationBytes, st.ParameterBytes, st.InFlight)
		after -= st.Replicas
	}
	res.Stages = stages
	res.NOAM = ceilDiv(gpus, stages[0].Replicas)
	return res, nil
}

// walk appends the stages of A^{lv}(i→j, m+1 workers), each GPU count
// multiplied by mult (the replicas of the enclosing levels).
func (s *pdSolver) walk(lv, i, j, m, mult int, a []float64, back []pdChoice, out *[]PipeDreamStage) {
	M := s.opt.Levels[lv].Workers
	ch := back[j*M+m]
	if ch.k < 0 {
		s.place(lv, i, j, mult*int(ch.r), out)
		return
	}
	s.walk(lv, i, int(ch.k), m-int(ch.r), mult, a, back, out)
	s.place(lv, int(ch.k)+1, j, mult*int(ch.r), out)
}

// place appends a stage i..j of level lv run by mult workers of that level:
// at level 0 that is one stage on mult GPUs, above it the level below's
// optimal sub-pipeline in each of them.
func (s *pdSolver) place(lv, i, j, mult int, out *[]PipeDreamStage) {
	if lv == 0 {
		*out = append(*out, PipeDreamStage{FirstLayer: i, LastLayer: j, Replicas: mult})
		return
	}
	M := s.opt.Levels[lv-1].Workers
	a, back := make([]float64, s.n*M), make([]pdChoice, s.n*M)
	s.rowDP(context.Background(), lv-1, i, a, back) // one row, bounded: the search is over
	s.walk(lv-1, i, j, M-1, mult, a, back, out)
}

// dataParallelSeconds is the cost model's time per minibatch of plain data
// parallelism over all GPUs, level by level as the original prints it.
func (s *pdSolver) dataParallelSeconds() float64 {
	d, w := s.c.ComputeSeconds[s.n-1], s.c.ParameterBytes[s.n-1]
	for lv, l := range s.opt.Levels {
		d = s.stageSeconds(d, w, l.Workers, l.BandwidthBytesPerSec, true, s.below(lv))
	}
	return d
}
