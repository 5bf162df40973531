package schedule

import (
	"fmt"
	"sort"
)

// versionState records, per device and each of its stages (replicas hold
// their own weights), when each weight version is held.
type versionState struct {
	// stagesOf lists each device's stages in first-use order.
	stagesOf [][]int
	// alive[d][j] holds one [from, to] interval per version of stage stagesOf[d][j].
	alive [][][][2]float64
}

// local returns the position of stage st in list, appending it if new.
func local(list *[]int, st int) int {
	for j, s := range *list {
		if s == st {
			return j
		}
	}
	*list = append(*list, st)
	return len(*list) - 1
}

// TwoBWVersion is the weight version microbatch mb (0-based) uses under
// PipeDream-2BW with m microbatches per batch: max(⌊(k−1)/m⌋−1, 0) for the
// 1-based k = mb+1 (dissertation §3.2.1).
func TwoBWVersion(mb, m int) int { return max(mb/m-1, 0) }

// assignVersions sets UsedVersion on every compute op following the
// schedule's versioning rule, checks that each version exists when used and
// that backward passes use their forward's version, and records how long
// each version is held.
func (r *run) assignVersions(t *Timeline) (*versionState, error) {
	vs := &versionState{stagesOf: make([][]int, len(r.ops)), alive: make([][][][2]float64, len(r.ops))}
	every := 1 // microbatches per new version
	if r.s.Versioning == DoubleBuffered {
		every = r.s.Microbatches
	}
	// Gradient ends per device and local stage, in time order (a device's ops are sequential).
	grads := make([][][]float64, len(r.ops))
	for d, ops := range r.ops {
		for _, o := range ops {
			j := local(&vs.stagesOf[d], o.Stage)
			if j == len(grads[d]) {
				grads[d] = append(grads[d], nil)
			}
			if o.Kind == Backward || o.Kind == BackwardWeight {
				grads[d][j] = append(grads[d][j], o.EndSeconds)
			}
		}
	}
	// available is the newest version of device d's stage st at time at.
	available := func(d, st int, at float64) int {
		if r.s.Versioning == Synchronous {
			return 0
		}
		g := grads[d][local(&vs.stagesOf[d], st)]
		return sort.Search(len(g), func(i int) bool { return g[i] > at }) / every
	}
	fwd := make([]int, r.x.stages*r.x.microbatches) // version used per stage and microbatch
	// Forwards on stage 0 first: vertical sync propagates their versions.
	for _, first := range []bool{true, false} {
		for d, ops := range r.ops {
			for i := range ops {
				o := &ops[i]
				if o.Kind != Forward || (o.Stage == 0) != first {
					continue
				}
				newest := available(d, o.Stage, o.StartSeconds)
				v := r.chooseVersion(o, newest, fwd)
				if v > newest {
					return nil, fmt.Errorf("stage %d microbatch %d: forward on device %d at %gs needs weight version %d, which does not exist yet",
						o.Stage, o.Microbatch, d, o.StartSeconds, v)
				}
				o.UsedVersion = v
				fwd[o.Stage*r.x.microbatches+o.Microbatch] = v
			}
		}
	}
	lastUse := make([][][]float64, len(r.ops))
	for d, ops := range r.ops {
		lastUse[d] = make([][]float64, len(vs.stagesOf[d]))
		for i := range ops {
			o := &ops[i]
			if !o.Kind.isCompute() {
				continue
			}
			v := fwd[o.Stage*r.x.microbatches+o.Microbatch]
			if o.Version >= 0 && o.Version != v {
				return nil, fmt.Errorf("stage %d microbatch %d: %v on device %d names weight version %d but its forward used %d (weight stashing)",
					o.Stage, o.Microbatch, o.Action, d, o.Version, v)
			}
			o.UsedVersion = v
			lu := &lastUse[d][local(&vs.stagesOf[d], o.Stage)]
			for len(*lu) <= v {
				*lu = append(*lu, t.StartSeconds)
			}
			(*lu)[v] = max((*lu)[v], o.EndSeconds)
		}
	}
	for d := range grads {
		vs.alive[d] = make([][][2]float64, len(grads[d]))
		for j, g := range grads[d] {
			vs.alive[d][j] = r.versionIntervals(t, g, lastUse[d][j], every)
		}
	}
	return vs, nil
}

// versionIntervals returns when each version of one device's stage is
// held: from its creation (the end of the gradient that completes it) to
// the later of the next version's creation and its last use.
func (r *run) versionIntervals(t *Timeline, g, lastUse []float64, every int) [][2]float64 {
	n := len(g) / every
	if r.s.Versioning == Synchronous {
		n = 0
	}
	iv := make([][2]float64, 0, n+1)
	for v := 0; v <= n; v++ {
		from, to := t.StartSeconds, t.EndSeconds
		if v > 0 {
			from = g[v*every-1]
		}
		if v < n {
			to = g[(v+1)*every-1]
		}
		if v < len(lastUse) {
			to = max(to, lastUse[v])
		}
		iv = append(iv, [2]float64{from, to})
	}
	return iv
}

// chooseVersion picks the version a forward op uses under the schedule's rule.
func (r *run) chooseVersion(o *Op, newest int, fwd []int) int {
	switch {
	case o.Version >= 0:
		return o.Version
	case r.s.Versioning == DoubleBuffered:
		return TwoBWVersion(o.Microbatch, r.s.Microbatches)
	case r.s.Versioning == VerticalSync && o.Stage > 0:
		return fwd[o.Microbatch]
	}
	return newest
}
