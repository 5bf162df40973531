package schedule

import (
	"cmp"
	"math"
	"slices"
)

// Timeline is the result of simulating a schedule.
type Timeline struct {
	// Kind, Stages, Chunks, Microbatches and Batches describe the schedule.
	Kind                                  Kind
	Stages, Chunks, Microbatches, Batches int
	// Ops holds, per device, its simulated actions in execution order.
	Ops [][]Op
	// StartSeconds is the first action's start, EndSeconds the last one's end.
	StartSeconds, EndSeconds float64
	// StepSeconds is EndSeconds - StartSeconds.
	StepSeconds float64
	// BubbleFraction is total idle device-time over devices × StepSeconds.
	BubbleFraction float64
	// Devices holds per-device statistics.
	Devices []DeviceStats
}

// DeviceStats are one device's totals and peaks over the step.
type DeviceStats struct {
	// BusySeconds is the time the device spends on actions.
	BusySeconds float64
	// IdleSeconds is StepSeconds - BusySeconds: the device's bubble.
	IdleSeconds float64
	// BubbleFraction is IdleSeconds / StepSeconds.
	BubbleFraction float64
	// PeakActivations is the most microbatch activations stashed at once
	// (forward started, backward or W not finished), over all its stages.
	PeakActivations int
	// PeakWeightVersions is the most weight versions of one of its stages
	// held at once.
	PeakWeightVersions int
	// PeakMemoryBytes is the most activation plus weight-version memory held at once.
	PeakMemoryBytes float64
}

// timeline assembles the result once every action has run.
func (r *run) timeline() (*Timeline, error) {
	t := &Timeline{Kind: r.s.Kind, Stages: r.s.Stages, Chunks: r.s.Chunks, Microbatches: r.s.Microbatches,
		Batches: r.s.Batches, Ops: r.ops, StartSeconds: math.Inf(1), EndSeconds: math.Inf(-1)}
	for _, ops := range r.ops {
		for _, o := range ops {
			t.StartSeconds = min(t.StartSeconds, o.StartSeconds)
			t.EndSeconds = max(t.EndSeconds, o.EndSeconds)
		}
	}
	t.StepSeconds = t.EndSeconds - t.StartSeconds
	vs, err := r.assignVersions(t)
	if err != nil {
		return nil, err
	}
	t.Devices = make([]DeviceStats, len(r.ops))
	idle := 0.0
	for d, ops := range r.ops {
		st := &t.Devices[d]
		for _, o := range ops {
			st.BusySeconds += o.EndSeconds - o.StartSeconds
		}
		st.IdleSeconds = max(t.StepSeconds-st.BusySeconds, 0)
		if t.StepSeconds > 0 {
			st.BubbleFraction = st.IdleSeconds / t.StepSeconds
		}
		idle += st.IdleSeconds
		r.peaks(t, d, vs, st)
	}
	if t.StepSeconds > 0 {
		t.BubbleFraction = idle / (float64(len(r.ops)) * t.StepSeconds)
	}
	return t, nil
}

// memEvent changes a device's held memory at a time.
type memEvent struct {
	at          float64
	activations int
	versions    int
	bytes       float64
}

// peaks sweeps device d's allocations in time order, frees first at ties.
func (r *run) peaks(t *Timeline, d int, vs *versionState, st *DeviceStats) {
	nv := 0
	for _, iv := range vs.alive[d] {
		nv += 2 * len(iv)
	}
	ev := make([]memEvent, 0, len(r.ops[d])+nv)
	for _, o := range r.ops[d] {
		c := r.c.stage(o.Stage)
		switch {
		case o.Kind == Forward:
			ev = append(ev, memEvent{o.StartSeconds, 1, 0, c.ActivationBytes})
		case o.Kind == Backward, o.Kind == BackwardWeight:
			ev = append(ev, memEvent{o.EndSeconds, -1, 0, -c.ActivationBytes})
		}
	}
	for j, stage := range vs.stagesOf[d] {
		w := r.c.stage(stage).WeightBytes
		from := len(ev)
		for _, iv := range vs.alive[d][j] {
			ev = append(ev, memEvent{iv[0], 0, 1, w}, memEvent{iv[1], 0, -1, -w})
		}
		perStage := ev[from:]
		sortEvents(perStage)
		n := 0
		for _, e := range perStage {
			n += e.versions
			st.PeakWeightVersions = max(st.PeakWeightVersions, n)
		}
	}
	sortEvents(ev)
	acts, bytes := 0, 0.0
	for _, e := range ev {
		acts += e.activations
		bytes += e.bytes
		st.PeakActivations = max(st.PeakActivations, acts)
		st.PeakMemoryBytes = max(st.PeakMemoryBytes, bytes)
	}
}

// sortEvents orders events by time, releases before allocations at ties.
func sortEvents(ev []memEvent) {
	slices.SortStableFunc(ev, func(a, b memEvent) int {
		if c := cmp.Compare(a.at, b.at); c != 0 {
			return c
		}
		return cmp.Compare(a.bytes+float64(a.activations+a.versions), b.bytes+float64(b.activations+b.versions))
	})
}
