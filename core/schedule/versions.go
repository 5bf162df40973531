package schedule

import (
	"fmt"
	"sort"
)

// devStage is one stage's weights on one device (replicas hold their own).
type devStage struct{ device, stage int }

// versionState records, per device and stage, when each weight version is held.
type versionState struct {
	// stagesOf lists each device's stages in first-use order.
	stagesOf [][]devStage
	// alive holds [from, to] intervals, one per version.
	alive map[devStage][][2]float64
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
	vs := &versionState{stagesOf: make([][]devStage, len(r.ops)), alive: map[devStage][][2]float64{}}
	every := 1 // microbatches per new version
	if r.s.Versioning == DoubleBuffered {
		every = r.s.Microbatches
	}
	// Gradient ends per device and stage, in time order (a device's ops are sequential).
	grads := map[devStage][]float64{}
	for d, ops := range r.ops {
		for _, o := range ops {
			k := devStage{d, o.Stage}
			if _, seen := grads[k]; !seen {
				grads[k] = nil
				vs.stagesOf[d] = append(vs.stagesOf[d], k)
			}
			if o.Kind == Backward || o.Kind == BackwardWeight {
				grads[k] = append(grads[k], o.EndSeconds)
			}
		}
	}
	// available is the newest version of k at time at.
	available := func(k devStage, at float64) int {
		if r.s.Versioning == Synchronous {
			return 0
		}
		g := grads[k]
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
				k := devStage{d, o.Stage}
				v := r.chooseVersion(o, available(k, o.StartSeconds), fwd)
				if v > available(k, o.StartSeconds) {
					return nil, fmt.Errorf("stage %d microbatch %d: forward on device %d at %gs needs weight version %d, which does not exist yet",
						o.Stage, o.Microbatch, d, o.StartSeconds, v)
				}
				o.UsedVersion = v
				fwd[o.Stage*r.x.microbatches+o.Microbatch] = v
			}
		}
	}
	lastUse := map[devStage][]float64{}
	for d, ops := range r.ops {
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
			k := devStage{d, o.Stage}
			for len(lastUse[k]) <= v {
				lastUse[k] = append(lastUse[k], t.StartSeconds)
			}
			lastUse[k][v] = max(lastUse[k][v], o.EndSeconds)
		}
	}
	for k, g := range grads {
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
			if v < len(lastUse[k]) {
				to = max(to, lastUse[k][v])
			}
			iv = append(iv, [2]float64{from, to})
		}
		vs.alive[k] = iv
	}
	return vs, nil
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
