package partition

import (
	"context"
	"math"
	"runtime"
	"slices"
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
	// comp[lv] is the compute time of the stage from state i to state j at
	// level lv >= 1 (index i*n+j): A^{lv−1}(i→j) with all workers of level
	// lv−1, +Inf where infeasible. comp[0] is nil: level 0 uses the cuts.
	comp [][]float64
	// final is the last level's row 0, with choices.
	final     []float64
	finalBack []pdChoice
}

// pdChoice is how A(i→j, m) was reached: a single stage with r replicas
// (k = −1), or the sub-pipeline to state k followed by a stage k+1..j with
// r replicas.
type pdChoice struct {
	k int32
	r int32
}

func newPDSolver(c *Cuts, opt PipeDreamOptions) *pdSolver {
	return &pdSolver{c: c, opt: opt, exact: opt.CostModel == CostPipeDream, n: c.Len(),
		comp: make([][]float64, len(opt.Levels))}
}

// solveLevels fills comp for every level and the last level's row 0. The
// rows of a lower level are independent and run on GOMAXPROCS goroutines;
// each writes its own part of comp, so the result does not depend on them.
func (s *pdSolver) solveLevels(ctx context.Context, progress Progress) error {
	L := len(s.opt.Levels)
	rows := (L-1)*s.n + 1
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
	for lv := 0; lv < L-1; lv++ {
		M := s.opt.Levels[lv].Workers
		next := make([]float64, s.n*s.n)
		var row atomic.Int64
		var wg sync.WaitGroup
		for range min(runtime.GOMAXPROCS(0), s.n) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a := make([]float64, s.n*M)
				for i := int(row.Add(1) - 1); i < s.n && ctx.Err() == nil; i = int(row.Add(1) - 1) {
					s.rowDP(lv, i, a, nil)
					for j := range s.n {
						next[i*s.n+j] = a[j*M+M-1]
					}
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
	M := s.opt.Levels[L-1].Workers
	s.final, s.finalBack = make([]float64, s.n*M), make([]pdChoice, s.n*M)
	s.rowDP(L-1, 0, s.final, s.finalBack)
	report()
	return ctx.Err()
}

// compute is the stage i..j's compute time at level lv, +Inf when the
// stage is not a valid one.
func (s *pdSolver) compute(lv, i, j int) float64 {
	if lv > 0 {
		return s.comp[lv][i*s.n+j]
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
	return math.Max(t, cost.RingAllReduceBytes(r, w)/b) / rf
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
	// nmax is the most inputs in flight that fit.
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
	if nmax < 0 {
		return M + 1
	}
	return max(r, M-nmax*r)
}

// stageMemoryBytes is pipeplan's per-GPU memory of a PipeDream stage with n
// inputs in flight: weight stashing keeps n weight versions and n activation
// stashes (§2.3.2), plus one gradient buffer and the SGD momentum.
func stageMemoryBytes(act, w float64, n int) float64 {
	return float64(n)*(act+w) + 2*w
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// rowDP solves level lv for the stages from state i: a[j*M+m] is the best
// bottleneck over states i..j with exactly m+1 workers (+Inf if none), and
// back, when not nil, how it was reached (dissertation §2.4.1 recurrence;
// for CostPipeDream, the original's loops: split states k preceding j, not
// preceding i−1, then m' ascending, first strict minimum kept).
func (s *pdSolver) rowDP(lv, i int, a []float64, back []pdChoice) {
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
			if !mayImprove(row, prev, max(t, out/B), ct) {
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

// mayImprove reports whether a split could lower some entry m of row: its
// candidates are at least max(min(prev[0..m−1]), lb/min(m, maxMP)), where
// lb·ct[mp] = lb/mp bounds the last stage's time on mp workers from below.
func mayImprove(row, prev []float64, lb float64, ct []float64) bool {
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
	s.rowDP(lv-1, i, a, back)
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
