package partition

import (
	"context"
	"fmt"
	"math"
	"sort"
)

// madStage is one stage of a MadPipe allocation: layers first..last,
// on a normal processor of its own or on the special processor.
type madStage struct {
	first, last int
	special     bool
}

// madDP runs MadPipe-DP (madpipe-2020 §4.2.2) as a feasibility test.
//
// The paper's T(l, p, t_P, m_P, V) is the smallest period of the first l
// layers given the special processor's load t_P and memory m_P and the delay
// V of the layers after l, with t_P, m_P and V on grids (§5.1). Asked
// whether some allocation has period at most X with memory estimated at
// T̂ = X, the same recurrence runs over labels (t_P, m_P, V) reached by the
// suffixes, each exact, keeping for every (l, p) only the labels no other
// label beats in all three. The discretization becomes a pruning rule: two
// labels whose m_P fall in the same of memCells cells of the memory limit,
// or whose V fall in the same of vSteps cells of the period, count as equal
// in that coordinate. It can drop a label that would have led to a
// solution, but every estimate of an allocation it returns is exact.
type madDP struct {
	c       *madChain
	workers int
	memory  float64
	// vSteps is the number of cells of V per target period.
	vSteps int
	// memCells is the number of cells of m_P in the memory limit.
	memCells int
	// contiguous restricts the DP to one stage per processor: workers
	// normal processors and no special one.
	contiguous bool
	// arena holds the labels of the last call, reused by the next.
	arena []madLabel
	// work counts the DP's steps (a label extended by a stage, or compared
	// with one it is inserted beside) over every call of one MadPipe run,
	// against madMaxWork; nil counts nothing.
	work *float64
	// specialOffset is subtracted from the group number of stages on the
	// special processor: 1 in the paper (§4.2.1, the g-1 lower bound on its
	// memory), 0 for a conservative estimate.
	specialOffset int
}

// madMaxLabels bounds the labels one DP call holds (about 110 MiB), so
// that the largest request a user can make (thousands of GPUs, a profile of
// hundreds of layers) fails with a reason instead of taking gigabytes.
const madMaxLabels = 1 << 21

// madMaxWork bounds the steps of one MadPipe run (madDP.work: labels
// extended by a stage, and labels compared with one inserted beside them)
// over every DP call of its search, as madMaxLabels bounds one call's
// memory: the time grows with how many labels a chain's memory profile
// keeps apart, not with layers × GPUs alone. A step took 10 to 35 ns of
// CPU on the shared 2-core machine the limit was set on, so a run stops
// within about 0.6 to 2 s. Within it: ResNet-101's 346 layers on 16 GPUs
// (51 million steps); past it ResNet-50's 176 on 16 GPUs (86 million) and
// on 31 (493 million, 11.8 s of CPU and 370 MB when it ran to the end).
// BENCHMARKS.md, "Worst cases".
const madMaxWork = 60e6

// madLabel is a (t_P, m_P, V) point reached by allocating a suffix of the
// chain, with the stage that led to it, for rebuilding the allocation.
type madLabel struct {
	load, mem, v float64
	// group is ⌈v/T̂⌉.
	group       int
	memCell     int64
	prev        int32
	first, last int32
	special     bool
}

// madBucket holds the labels of one (l, p) whose V falls in cell v.
type madBucket struct {
	v      int64
	labels []int32
}

// madFront holds the buckets of one (l, p), sorted by V cell.
type madFront []madBucket

func (f *madFront) bucket(v int64) *madBucket {
	i := sort.Search(len(*f), func(i int) bool { return (*f)[i].v >= v })
	if i == len(*f) || (*f)[i].v != v {
		*f = append(*f, madBucket{})
		copy((*f)[i+1:], (*f)[i:])
		(*f)[i] = madBucket{v: v}
	}
	return &(*f)[i]
}

// count adds steps to the run's work and fails past madMaxWork.
func (d *madDP) count(steps, layers int) error {
	if d.work == nil {
		return nil
	}
	if *d.work += float64(steps); *d.work > madMaxWork {
		return fmt.Errorf("workers: MadPipe's search over %d layers on up to %d GPUs takes over %.0f million steps, its work budget: ask for fewer GPUs", layers, d.workers, madMaxWork/1e6)
	}
	return nil
}

// madBeats reports whether label x makes y useless: no more load, no more
// memory (or the same memory cell) and no longer delay (the caller only
// compares labels of one V cell when V is pruned by cells).
func madBeats(x, y *madLabel, sameVCell bool) bool {
	return x.load <= y.load && (x.mem <= y.mem || x.memCell == y.memCell) && (x.v <= y.v || sameVCell)
}

// insert adds n to the arena and to b unless a label of b beats it, and
// drops the labels n beats. It returns the labels of b it compared n with.
func (b *madBucket) insert(arena *[]madLabel, n madLabel, pruneV bool) int {
	for i, o := range b.labels {
		if madBeats(&(*arena)[o], &n, pruneV) {
			return i + 1
		}
	}
	kept := b.labels[:0]
	for _, o := range b.labels {
		if !madBeats(&n, &(*arena)[o], pruneV) {
			kept = append(kept, o)
		}
	}
	compared := 2 * len(b.labels)
	*arena = append(*arena, n)
	b.labels = append(kept, int32(len(*arena)-1))
	return compared
}

// feasible reports an allocation whose period (the load of its busiest
// processor or link, §4.2) is at most x, with the memory of every stage
// estimated by 1F1B* at T̂ = x (§4.2.1), or nil if the DP finds none.
func (d *madDP) feasible(ctx context.Context, x float64) ([]madStage, error) {
	c, L := d.c, d.c.layers
	normal := d.normal()
	// fronts[e][p]: labels with layers e..L-1 allocated using p normal processors.
	fronts := make([][]madFront, L+1)
	for e := range fronts {
		fronts[e] = make([]madFront, normal+1)
	}
	// The label arena is reused across calls of the search.
	arena := append(d.arena[:0], madLabel{prev: -1, first: -1, last: -1})
	defer func() { d.arena = arena[:0] }()
	fronts[L][0].bucket(0).labels = []int32{0}
	pruneV := d.vSteps > 0
	vCell := func(v float64) int64 {
		if !pruneV {
			return 0
		}
		return int64(v / x * float64(d.vSteps))
	}
	memCell := func(m float64) int64 {
		if d.memCells <= 0 {
			return -1 - int64(len(arena)) // unique: no two labels share a cell
		}
		return int64(m / d.memory * float64(d.memCells))
	}
	for e := L; e >= 1; e-- {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		madDropBeaten(fronts[e], arena, pruneV)
		for p := 0; p <= normal; p++ {
			if len(arena) > madMaxLabels {
				return nil, fmt.Errorf("workers: MadPipe's search over %d layers on up to %d GPUs needs over %d labels, its memory budget: ask for fewer GPUs", L, d.workers, madMaxLabels)
			}
			for _, b := range fronts[e][p] {
				minLoad, minMem, minV := math.Inf(1), math.Inf(1), math.Inf(1)
				for _, id := range b.labels {
					l := &arena[id]
					minLoad, minMem, minV = math.Min(minLoad, l.load), math.Min(minMem, l.mem), math.Min(minV, l.v)
				}
				for k := e - 1; k >= 0; k-- {
					u := c.compute(k, e-1)
					// Weights and stored activations only grow as the stage
					// extends to earlier layers: stop when neither a normal
					// nor the special processor can take it.
					g := madGroups(minV+u, x)
					grow := 3*(c.weightSum[e]-c.weightSum[k]) + float64(max(g-d.specialOffset, 0))*c.stored(k, e-1)
					if u > x || (minLoad+u > x || minMem+grow > d.memory) && (p == normal || grow > d.memory) {
						break
					}
					cin := 0.0
					if k > 0 {
						if cin = c.comm(k - 1); cin > x {
							continue
						}
					}
					steps := len(b.labels)
					for _, id := range b.labels {
						l := arena[id]
						g := madGroups(l.v+u, x)
						next := madOplusGroups(l.v, l.group, g, u, x)
						gNext := madGroups(next, x)
						if k > 0 {
							gCin := madGroups(next+cin, x)
							next = madOplusGroups(next, gNext, gCin, cin, x)
							gNext = madGroups(next, x)
						}
						if p < normal && c.memory(k, e-1, g) <= d.memory && d.canFinish(k, p+1, l.load, l.mem, x) {
							n := madLabel{load: l.load, mem: l.mem, v: next, group: gNext, memCell: l.memCell, prev: id, first: int32(k), last: int32(e - 1)}
							steps += fronts[k][p+1].bucket(vCell(next)).insert(&arena, n, pruneV)
						}
						ms := l.mem + c.memory(k, e-1, max(g-d.specialOffset, 0))
						if !d.contiguous && l.load+u <= x && ms <= d.memory && d.canFinish(k, p, l.load+u, ms, x) {
							n := madLabel{load: l.load + u, mem: ms, v: next, group: gNext, memCell: memCell(ms), prev: id, first: int32(k), last: int32(e - 1), special: true}
							steps += fronts[k][p].bucket(vCell(next)).insert(&arena, n, pruneV)
						}
					}
					if err := d.count(steps, L); err != nil {
						return nil, err
					}
				}
			}
			fronts[e][p] = nil
		}
	}
	var best []madStage
	bestPeriod := math.Inf(1)
	for p := 0; p <= normal; p++ {
		for _, b := range fronts[0][p] {
			for _, id := range b.labels {
				a := madRebuild(arena, id)
				if per := madAllocationPeriod(c, a); per < bestPeriod {
					best, bestPeriod = a, per
				}
			}
		}
	}
	return best, nil
}

// madDropBeaten removes from the buckets of one boundary the labels that a
// label using fewer normal processors beats (in the same V cell when V is
// pruned by cells): it can do all they can with a processor to spare.
func madDropBeaten(fronts []madFront, arena []madLabel, pruneV bool) {
	for p := 1; p < len(fronts); p++ {
		for bi := range fronts[p] {
			b := &fronts[p][bi]
			kept := b.labels[:0]
			for _, id := range b.labels {
				if !madBeatenBelow(fronts[:p], b.v, &arena[id], arena, pruneV) {
					kept = append(kept, id)
				}
			}
			b.labels = kept
		}
	}
}

// madBeatenBelow reports whether a label of the V cell v in one of fronts beats y.
func madBeatenBelow(fronts []madFront, v int64, y *madLabel, arena []madLabel, pruneV bool) bool {
	for _, f := range fronts {
		i := sort.Search(len(f), func(i int) bool { return f[i].v >= v })
		if i == len(f) || f[i].v != v {
			continue
		}
		for _, o := range f[i].labels {
			if madBeats(&arena[o], y, pruneV) {
				return true
			}
		}
	}
	return false
}

// canFinish is a necessary condition for allocating layers 0..k-1 once p
// normal processors are used and the special one holds load and mem: their
// compute fits in what the processors have left of the period x, and their
// weights (three copies) in what they have left of memory.
func (d *madDP) canFinish(k, p int, load, mem, x float64) bool {
	free := float64(d.normal() - p)
	if !d.contiguous {
		free++
	}
	return d.c.computeSum[k] <= free*x-load && 3*d.c.weightSum[k] <= free*d.memory-mem
}

// normal is the number of normal processors.
func (d *madDP) normal() int {
	if d.contiguous {
		return d.workers
	}
	return d.workers - 1
}

// madRebuild follows the labels back from a complete allocation and merges
// consecutive special stages, which share a processor and need no link.
func madRebuild(arena []madLabel, id int32) []madStage {
	var a []madStage
	for ; arena[id].prev >= 0; id = arena[id].prev {
		l := arena[id]
		s := madStage{first: int(l.first), last: int(l.last), special: l.special}
		if n := len(a); n > 0 && s.special && a[n-1].special {
			a[n-1].last = s.last
			continue
		}
		a = append(a, s)
	}
	return a
}

// madAllocationPeriod is the period of an allocation ignoring memory (§4.2):
// the load of its most loaded processor or link.
func madAllocationPeriod(c *madChain, a []madStage) float64 {
	per, special := 0.0, 0.0
	for i, s := range a {
		u := c.compute(s.first, s.last)
		if s.special {
			special += u
		} else {
			per = math.Max(per, u)
		}
		if i > 0 {
			per = math.Max(per, c.comm(s.first-1))
		}
	}
	return math.Max(per, special)
}

var madDbgLabels, madDbgBuckets int
