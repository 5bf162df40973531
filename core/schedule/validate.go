package schedule

import "fmt"

// maxActions bounds the size of a schedule the simulator accepts.
const maxActions = 1 << 24

// Validate checks that the schedule is well formed: sizes in range, every
// microbatch runs forward and backward (whole, or split into I and W)
// exactly once on every stage, the backward on the device that ran the
// forward, and no action twice. It does not check ordering; Simulate
// reports deadlocks.
func (s *Schedule) Validate() error {
	_, err := s.index()
	return err
}

// index is a validated schedule's dense table of where each per-microbatch
// action runs.
type index struct {
	stages, microbatches int
	// kinds lists the per-microbatch kinds the schedule uses; kindIdx maps
	// a kind to its position there, or -1.
	kinds   []ActionKind
	kindIdx [AllReduce]int
	// device holds device+1 for each slot (used kind, stage, microbatch), 0 when absent.
	device []int32
}

// splits reports whether stage st splits microbatch mb's backward into I
// and W (DualPipeV splits some microbatches of a stage and not others).
func (x *index) splits(st, mb int) bool { return x.dev(BackwardInput, st, mb) != 0 }

// slot returns the dense index of a per-microbatch action of a used kind.
func (x *index) slot(k ActionKind, stage, mb int) int {
	return (x.kindIdx[k]*x.stages+stage)*x.microbatches + mb
}

// dev returns device+1 of the action, or 0 when no device runs it.
func (x *index) dev(k ActionKind, stage, mb int) int32 {
	if x.kindIdx[k] < 0 {
		return 0
	}
	return x.device[x.slot(k, stage, mb)]
}

// index validates the schedule and builds its dense table.
func (s *Schedule) index() (*index, error) {
	switch {
	case s.Stages < 1 || s.Stages > maxIndex:
		return nil, fmt.Errorf("schedule.stages: must be in [1, %d], got %d", maxIndex, s.Stages)
	case s.Chunks < 1 || s.Stages%s.Chunks != 0:
		return nil, fmt.Errorf("schedule.chunks: must be >= 1 and divide stages (%d), got %d", s.Stages, s.Chunks)
	case s.Microbatches < 1 || s.Microbatches > maxIndex:
		return nil, fmt.Errorf("schedule.microbatches: must be in [1, %d], got %d", maxIndex, s.Microbatches)
	case s.Batches < 1 || s.Batches > maxIndex/s.Microbatches:
		return nil, fmt.Errorf("schedule.batches: must be in [1, %d], got %d", maxIndex/s.Microbatches, s.Batches)
	case s.Versioning > DoubleBuffered:
		return nil, fmt.Errorf("schedule.versioning: unknown rule %d", s.Versioning)
	case len(s.Devices) == 0 || len(s.Devices) > maxIndex:
		return nil, fmt.Errorf("schedule.devices: must have 1 to %d devices, got %d", maxIndex, len(s.Devices))
	}
	n := s.TotalMicrobatches()
	if int64(s.Stages)*int64(n) > maxActions/int64(AllReduce) {
		return nil, fmt.Errorf("schedule: %d stages × %d microbatches is too large (at most %d)", s.Stages, n, maxActions/int64(AllReduce))
	}
	total := 0
	for _, list := range s.Devices {
		total += len(list)
	}
	if int64(total) < 2*int64(s.Stages)*int64(n) {
		return nil, fmt.Errorf("schedule: %d actions cannot hold a forward and a backward for each of %d stages × %d microbatches", total, s.Stages, n)
	}
	x := &index{stages: s.Stages, microbatches: n}
	for k := range x.kindIdx {
		x.kindIdx[k] = -1
	}
	for d, list := range s.Devices {
		for i, a := range list {
			if err := s.checkAction(a, n); err != nil {
				return nil, fmt.Errorf("schedule.devices[%d][%d]: %v", d, i, err)
			}
			if !a.Kind.isBarrier() && x.kindIdx[a.Kind] < 0 {
				x.kindIdx[a.Kind] = len(x.kinds)
				x.kinds = append(x.kinds, a.Kind)
			}
		}
	}
	x.device = make([]int32, len(x.kinds)*s.Stages*n)
	barriers := map[[2]int]bool{}
	for d, list := range s.Devices {
		for i, a := range list {
			if a.Kind.isBarrier() {
				k := [2]int{int(a.Kind)*s.Stages + a.Stage, d}
				if barriers[k] {
					return nil, fmt.Errorf("schedule.devices[%d][%d]: %v twice on this device", d, i, a)
				}
				barriers[k] = true
				continue
			}
			at := x.slot(a.Kind, a.Stage, a.Microbatch)
			if prev := x.device[at]; prev != 0 {
				return nil, fmt.Errorf("schedule.devices[%d][%d]: %v already runs on device %d", d, i, a, prev-1)
			}
			x.device[at] = int32(d + 1)
		}
	}
	for st := range s.Stages {
		for mb := range n {
			if err := x.checkMicrobatch(st, mb); err != nil {
				return nil, fmt.Errorf("schedule: stage %d microbatch %d: %v", st, mb, err)
			}
		}
	}
	return x, nil
}

// checkMicrobatch checks that one stage runs one microbatch's forward and
// backward exactly once, all on one device.
func (x *index) checkMicrobatch(st, mb int) error {
	f := x.dev(Forward, st, mb)
	b := x.dev(Backward, st, mb)
	i := x.dev(BackwardInput, st, mb)
	w := x.dev(BackwardWeight, st, mb)
	switch {
	case f == 0:
		return fmt.Errorf("no forward (F)")
	case b != 0 && (i != 0 || w != 0):
		return fmt.Errorf("both a whole (B) and a split (I, W) backward")
	case b == 0 && (i == 0 || w == 0):
		return fmt.Errorf("no backward (B, or I and W)")
	case b != 0 && b != f, b == 0 && (i != f || w != f):
		return fmt.Errorf("forward on device %d but backward on another device", f-1)
	}
	for k := SendF; k <= RecvB; k++ {
		// A stage sends and receives its own microbatch's tensors.
		if d := x.dev(k, st, mb); d != 0 && d != f {
			return fmt.Errorf("%s on device %d, but the stage runs this microbatch on device %d", k, d-1, f-1)
		}
	}
	return nil
}

// checkAction checks one action's fields against the schedule's sizes.
func (s *Schedule) checkAction(a Action, n int) error {
	switch {
	case a.Kind >= numKinds:
		return fmt.Errorf("kind: unknown kind %d", a.Kind)
	case a.Stage < 0 || a.Stage >= s.Stages:
		return fmt.Errorf("%v: stage must be in [0, %d), got %d", a, s.Stages, a.Stage)
	case a.Kind.isBarrier() && a.Microbatch != -1:
		return fmt.Errorf("%v: %s takes no microbatch, got %d", a, a.Kind, a.Microbatch)
	case !a.Kind.isBarrier() && (a.Microbatch < 0 || a.Microbatch >= n):
		return fmt.Errorf("%v: microbatch must be in [0, %d), got %d", a, n, a.Microbatch)
	case a.Version < -1 || a.Version > n:
		return fmt.Errorf("%v: version must be -1 or in [0, %d], got %d", a, n, a.Version)
	case (a.Kind == RecvF || a.Kind == SendB) && a.Stage == 0:
		return fmt.Errorf("%v: the first stage has no previous stage", a)
	case (a.Kind == SendF || a.Kind == RecvB) && a.Stage == s.Stages-1:
		return fmt.Errorf("%v: the last stage has no next stage", a)
	}
	return nil
}
