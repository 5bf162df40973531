package partition

import "math"

// A level below the last passes up only its rows' entries with all M
// workers: the stage i..j's compute one level up is A(i→j, M)
// (stageTimes). Where a row's stages sit at their work bound, as data
// parallelism inside a server with a fast link leaves them, splits rarely
// beat a single stage, so the row's DP (all M entries of every state, with
// nearSplits' windows for each) mostly confirms its single stages.
// soleRow computes the entries with M workers alone, each from its single
// stage and the splits in its windows that maySplitAt passes (every split
// where the index declines), the workBound's mp whose last stage beats the
// entry, and the sub-pipeline's entries those need, computed the same way
// on demand. Each is the value rowDP leaves there: the least candidate
// under min(single stage, bound) if there is one, else the single stage;
// the least does not depend on the order of the search, so the entries
// are rowDP's bit for bit (TestSoleRowMatchesRowDP).

// soleRow fills a[j·M+M−1], for every state j >= i, with the entry A(i→j,
// M workers) of row i of level lv (below the last) exactly as rowDP leaves
// it, and returns true; false, with those entries unspecified, when that
// takes more than soleWork splits per entry of the row (rowDP must run).
func (s *pdSolver) soleRow(lv, i int, a []float64) bool {
	e := s.newSoleRow(lv, i)
	M := e.M
	for j := i; j < s.n; j++ {
		v, ok := e.entry(j, M-1)
		if !ok {
			return false
		}
		a[j*M+M-1] = v
	}
	s.soleRows.Add(1)
	return true
}

// soleWork bounds the splits soleRow evaluates in a row, per entry of the
// row's DP: past it, the row's DP runs instead (splits far from the
// work bound are better searched by its bounds).
const soleWork = 4

// soleEval evaluates entries of one row of a level for soleRow.
type soleEval struct {
	s             *pdSolver
	lv, i         int
	M, maxMP      int
	end           int // rowLimits
	bound, perGPU float64
	gpus, B       float64
	cf            *pdCoefficients
	// memo holds the entries below M workers computed so far, at j·M+m.
	memo map[int]float64
	// work counts the splits evaluated, up to maxWork.
	work, maxWork int
	// near is a stack of the windows' states: an entry's are those it
	// appended, popped when it returns.
	near []int32
}

// newSoleRow returns the soleEval of row i of level lv.
func (s *pdSolver) newSoleRow(lv, i int) *soleEval {
	e := &soleEval{s: s, lv: lv, i: i, M: s.opt.Levels[lv].Workers, maxMP: s.maxSplitReplicas(lv),
		gpus: float64(s.gpusBelow(lv)), cf: s.coefficients(lv)}
	e.end, e.bound = s.rowLimits(lv, i)
	e.perGPU, e.B = 1/e.gpus, s.opt.Levels[lv].BandwidthBytesPerSec
	e.maxWork = soleWork * s.n * e.M
	return e
}

// entry is rowDP's entry A(i→j, m+1 workers) of the row; ok is false when
// the row's work ran out.
func (e *soleEval) entry(j, m int) (v float64, ok bool) {
	if j > e.end {
		return math.Inf(1), true // rowDP leaves the entries past end at +Inf
	}
	key := j*e.M + m
	if e.memo != nil { // a nil map's lookup is still a call
		if v, ok := e.memo[key]; ok {
			return v, true
		}
	}
	s, c, i := e.s, e.s.c, e.i
	v = math.Inf(1)
	if t := s.compute(e.lv, i, j); !math.IsInf(t, 1) && m < s.maxReplicas(e.lv) {
		act, w := span(c.ActivationBytes, i, j), span(c.ParameterBytes, i, j)
		if s.fitsAlone(e.lv, act, w, m+1) {
			v = s.singleStage(e.lv, j, t, w, m+1)
		}
	}
	if m > 0 && (s.exact || i == 0 || c.precedes(i-1, j)) { // rowDP searches splits
		if v, ok = e.split(j, m, v); !ok {
			return v, false
		}
	}
	if m < e.M-1 {
		if e.memo == nil {
			e.memo = map[int]float64{}
		}
		e.memo[key] = v
	}
	return v, true
}

// split is entry (j, m) from its single stage v: the least candidate of
// the splits in its windows under min(v, bound), or v when none is.
func (e *soleEval) split(j, m int, v float64) (float64, bool) {
	s, c, i := e.s, e.s.c, e.i
	best := minOf(v, e.bound)
	// The states in the windows, or where the index declines, every
	// split as appendSplits' pairs (step 2).
	budget, from, inIndex, step := nearBudget, len(e.near), false, 1
	if s.near != nil {
		e.near, inIndex = s.near.windows(i, j, m, e.maxMP, best, e.gpus, &budget, e.near)
	}
	if !inIndex {
		e.near, step = c.appendSplits(e.near[:from], i, j, !s.exact), 2
	}
	least, ok := e.least(j, m, best, from, step)
	e.near = e.near[:from]
	if least < best {
		return least, ok
	}
	return v, ok
}

// least is the least candidate under best of the splits of entry (j, m)
// listed in e.near from from on, every step-th, or best when none is.
func (e *soleEval) least(j, m int, best float64, from, step int) (float64, bool) {
	s, c, i := e.s, e.s.c, e.i
	inv := 1 / best
	for x := from; x < len(e.near); x += step { // e.near grows with the entries computed below
		k := int(e.near[x])
		if (step == 1 && !s.isSplit(i, k, j)) ||
			!maySplitAt(span(c.ComputeSeconds, i, k)*e.perGPU, span(c.ComputeSeconds, k+1, j)*e.perGPU, inv, m, e.maxMP) {
			continue
		}
		t := s.compute(e.lv, k+1, j)
		if math.IsInf(t, 1) {
			continue
		}
		// Only the mp whose work bounds beat best (workBound, as rowDP
		// narrows them), whose last stage does and which fit may improve
		// the entry.
		out := s.outBytes(k, j)
		wb := workBound{prefix: span(c.ComputeSeconds, i, k) * e.perGPU, last: maxOf(t, out/e.B) * workMargin}
		if !s.exact {
			wb.prefix = maxOf(wb.prefix, 2*c.OutputBytes[k]/e.B)
		}
		wb.prefix *= workMargin
		lo, hi := wb.mps(m, 1, min(m, e.maxMP), best)
		if lo > hi {
			continue
		}
		if e.work++; e.work > e.maxWork {
			return best, false
		}
		w, fewest := span(c.ParameterBytes, k+1, j), -1 // fewestReplicas, once needed
		for mp := lo; mp <= hi; mp++ {
			st := s.splitStageSeconds(t, w, out, e.cf, mp)
			if !(st < best) {
				continue
			}
			if fewest < 0 {
				fewest = e.fewestReplicas(m, s.maxInFlight(e.lv, span(c.ActivationBytes, k+1, j), w, e.M))
			}
			if mp < fewest {
				continue
			}
			prev, ok := e.entry(k, m-mp)
			if !ok {
				return best, false
			}
			if cand := max(prev, st); cand < best {
				best = cand
			}
		}
	}
	return best, true
}

// fewestReplicas is the fewest workers a stage after a split, holding at
// most nmax inputs in flight, needs to fit when the pipeline takes m+1 of
// the M: m+1 >= M − nmax·mp (usedFor, split.best); M+1 when none fits.
func (e *soleEval) fewestReplicas(m, nmax int) int {
	need := e.M - m - 1
	switch {
	case nmax < 0:
		return e.M + 1
	case e.s.opt.MemoryBytes == 0 || need <= 0:
		return 1
	case nmax == 0:
		return e.M + 1
	}
	return ceilDiv(need, nmax)
}
