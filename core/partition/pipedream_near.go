package partition

import (
	"math"
	"slices"
)

// A split of a row's stage i..j at state k can only improve entry m (m+1
// workers, the last stage on mp of them) if its two parts' compute per
// worker are both under the entry's value R: span(i,k) < (m+1−mp)·R and
// span(k+1,j) < mp·R (workBound, tested by maySplit). When the stage's
// single-stage entries sit at their work bound, as data parallelism does
// inside a server with a fast link, those windows of cum[k] are a few
// ulps wide around the proportional splits cum[i−1] + span·(m+1−mp)/(m+1),
// so the few states inside them are found through an index of the
// cumulative compute instead of testing every ancestor of j. That needs
// the parts' spans non-negative (cum grows along precedes) and the
// entries positive and finite; otherwise nearSplits declines. The windows
// are widened far beyond maySplit's own margin and rounding, and maySplit
// still decides, so the splits searched are exactly those it would pass.

// cumIndex finds the states whose cumulative compute lies in a window:
// bucket b of its uniform grid holds the states with cum in
// [lo + b·width, lo + (b+1)·width).
type cumIndex struct {
	cum       []float64
	lo, width float64
	inv       float64 // 1/width, 0 for a single bucket of infinite width
	last      float64 // the last bucket
	// byCum lists the states by ascending cum; start[b] is the position in
	// it of bucket b's first state (len(start) = buckets + 1).
	byCum []int32
	start []int32
	// slack is an absolute widening of every window, far above the
	// rounding of a difference of cum values.
	slack float64
}

// nearBudget caps the states a row's state may scan through the index (and
// windows it may try) before its search falls back to every ancestor.
const nearBudget = 256

// newCumIndex indexes the cuts' cumulative compute with about four
// buckets per state; nil when some state's compute falls below one
// preceding it (a negative span), where the windows would not hold.
func newCumIndex(c *Cuts) *cumIndex {
	cum, n := c.ComputeSeconds, c.Len()
	for j := range n {
		if c.anc == nil {
			if j > 0 && !(cum[j] >= cum[j-1]) {
				return nil
			}
			continue
		}
		for _, k := range c.Ancestors[j] {
			if !(cum[j] >= cum[k]) {
				return nil
			}
		}
	}
	x := &cumIndex{cum: cum, byCum: make([]int32, n)}
	for k := range x.byCum {
		x.byCum[k] = int32(k)
	}
	slices.SortFunc(x.byCum, func(a, b int32) int {
		return cmpFloat(cum[a], cum[b])
	})
	lo, hi := cum[x.byCum[0]], cum[x.byCum[n-1]]
	x.lo, x.slack = lo, 1e-12*max(math.Abs(lo), math.Abs(hi))
	buckets := 4 * n
	x.width = (hi - lo) / float64(buckets)
	if !(x.width > 0) || math.IsInf(x.width, 0) {
		buckets, x.width = 1, math.Inf(1)
	}
	x.inv, x.last = 1/x.width, float64(buckets-1)
	x.start = make([]int32, buckets+1)
	p := 0
	for b := range buckets {
		x.start[b] = int32(p)
		for p < n && x.bucket(cum[x.byCum[p]]) <= b {
			p++
		}
	}
	x.start[buckets] = int32(n)
	return x
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// bucket is the bucket holding cum value v, clamped to the grid.
func (x *cumIndex) bucket(v float64) int {
	nb := len(x.start) - 1
	if math.IsInf(x.width, 1) {
		return 0
	}
	f := (v - x.lo) * x.inv
	if !(f > 0) {
		return 0
	}
	if f >= float64(nb) {
		return nb - 1
	}
	return int(f)
}

// empty reports whether the buckets from ua to ub (in bucket units)
// hold no state.
func (x *cumIndex) empty(ua, ub float64) bool {
	b0, b1 := int(minOf(maxOf(ua, 0), x.last)), int(minOf(maxOf(ub, 0), x.last))
	return b0 > b1 || x.start[b0] == x.start[b1+1]
}

// scan appends to out the states with cum in [a, b], spending from budget
// one unit per state it appends; it returns false, with out unspecified,
// when the budget runs out.
func (x *cumIndex) scan(a, b float64, budget *int, out []int32) ([]int32, bool) {
	if a > b {
		return out, true
	}
	in := x.byCum[x.start[x.bucket(a)]:x.start[x.bucket(b)+1]]
	from, to := x.first(in, a, false), x.first(in, b, true)
	if *budget -= to - from; *budget < 0 {
		return out, false
	}
	return append(out, in[from:to]...), true
}

// first is the position in in (states by ascending cum) of the first
// state with cum >= v, or > v when after.
func (x *cumIndex) first(in []int32, v float64, after bool) int {
	lo, hi := 0, len(in)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if c := x.cum[in[h]]; c < v || (after && c == v) {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo
}

// nearSplits replaces sc.ks with the splits (appendSplits' pairs, in its
// order) of the stage i..j of level lv that may pass maySplit for some
// entry m in 1..top of row, at most maxMP replicas for the last stage,
// entries capped at bound and compute per worker span/gpus. It returns
// false, leaving sc.ks unspecified, when the windows are too wide for the
// index (the caller then takes every ancestor).
func (s *pdSolver) nearSplits(sc *pdScratch, i, j, top, maxMP int, row []float64, bound float64, gpus float64) bool {
	if s.near == nil {
		return false
	}
	budget := nearBudget
	sc.near = sc.near[:0]
	for m := 1; m <= top; m++ {
		var ok bool
		if sc.near, ok = s.near.windows(i, j, m, maxMP, minOf(row[m], bound), gpus, &budget, sc.near); !ok {
			return false
		}
	}
	slices.Sort(sc.near)
	sc.ks = sc.ks[:0]
	for _, k := range slices.Compact(sc.near) {
		if kk := int(k); s.isSplit(i, kk, j) {
			sc.ks = append(sc.ks, k, int32(s.c.ancestorIndex(kk, j)))
		}
	}
	sc.nearStates++
	return true
}

// isSplit reports whether state k splits the stage i..j: i <= k, k
// precedes j and, for pipeplan, i−1 precedes k (appendSplits' states).
func (s *pdSolver) isSplit(i, k, j int) bool {
	return k >= i && s.c.precedes(k, j) && (s.exact || i == 0 || s.c.precedes(i-1, k))
}

// windows appends to out the states whose cumulative compute lies in the
// windows of entry m (m+1 workers) of the stage i..j, whose value is v on
// workers of gpus GPUs, r = v·gpus per GPU: span(k+1, j) < mp·r and
// span(i, k) < (m+1−mp)·r for some mp in 1..min(m, maxMP), widened. It
// spends from budget one unit per window and per state, and returns
// false, with out unspecified, when r is not positive and finite
// (maySplit may pass anything) or the budget runs out.
func (x *cumIndex) windows(i, j, m, maxMP int, v, gpus float64, budget *int, out []int32) ([]int32, bool) {
	const widen = 1 + 1e-8 // maySplit's margin is 2e-9
	r := v * widen * gpus
	if !(r > 0) || math.IsInf(r, 1) {
		return out, false
	}
	base, end := 0.0, x.cum[j]
	if i > 0 {
		base = x.cum[i-1]
	}
	// The windows in bucket units first, widened by far more than their
	// rounding there: most fall in empty buckets.
	const pad = 1e-6
	uEnd, uBase, us, ur := (end-x.lo)*x.inv-pad, (base-x.lo)*x.inv+pad, x.slack*x.inv, r*x.inv
	for mp := 1; mp <= min(m, maxMP); mp++ {
		if *budget--; *budget < 0 {
			return out, false
		}
		if x.empty(uEnd-float64(mp)*ur-us, uBase+float64(m+1-mp)*ur+us) {
			continue
		}
		var ok bool
		if out, ok = x.scan(end-float64(mp)*r-x.slack, base+float64(m+1-mp)*r+x.slack, budget, out); !ok {
			return out, false
		}
	}
	return out, true
}
