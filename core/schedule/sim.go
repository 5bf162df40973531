package schedule

import (
	"context"
	"fmt"
	"math"
	"strings"
)

// Op is one simulated action: where and when it ran.
type Op struct {
	Action
	// Device is the device (rank) that ran the action.
	Device int
	// Chunk is the model chunk of the action's stage on its device.
	Chunk int
	// StartSeconds and EndSeconds bound the action in time.
	StartSeconds, EndSeconds float64
	// UsedVersion is the weight version a compute action used (0 for
	// synchronous schedules), or -1 for other actions.
	UsedVersion int
}

// Progress is called now and then during long work with the number of
// units done out of total.
type Progress func(done, total int)

// Simulate runs the schedule with the given costs. Each device runs its
// list in order; an action starts when its device is free and its inputs
// have arrived (the producer's end plus the link's CommSeconds when the
// producer ran on another device). It returns the timeline, or an error for
// an invalid schedule, a deadlock, or a weight version used before it exists.
func Simulate(ctx context.Context, s *Schedule, c Costs, progress Progress) (*Timeline, error) {
	x, err := s.index()
	if err != nil {
		return nil, err
	}
	if err := c.validate(s.Stages); err != nil {
		return nil, err
	}
	r := newRun(s, c, x, true)
	if err := r.run(ctx, progress); err != nil {
		return nil, err
	}
	return r.timeline()
}

// Stepper times one schedule under many costs: its step alone, what a cost
// model needs per candidate, without the timeline's actions, peaks and
// weight versions (Simulate). The schedule is validated and indexed once.
type Stepper struct {
	s *Schedule
	x *index
}

// NewStepper validates s and indexes it for StepSeconds.
func NewStepper(s *Schedule) (*Stepper, error) {
	x, err := s.index()
	if err != nil {
		return nil, err
	}
	return &Stepper{s: s, x: x}, nil
}

// StepSeconds returns the step Simulate's timeline would give the schedule
// under c: from its first action's start to its last one's end. It does
// not check weight versions (Simulate does), which only schedules without
// flushes use.
func (st *Stepper) StepSeconds(c Costs) (float64, error) {
	if err := c.validate(st.s.Stages); err != nil {
		return 0, err
	}
	r := newRun(st.s, c, st.x, false)
	if err := r.run(context.Background(), nil); err != nil {
		return 0, err
	}
	return r.last - r.first, nil
}

// run is the state of one simulation.
type run struct {
	s   *Schedule
	c   Costs
	x   *index
	ops [][]Op // per device, its simulated actions; nil when not kept (Stepper)
	// first and last are the earliest start and the latest end so far.
	first, last float64
	end         []float64 // per slot: end time, valid once done[slot]
	done        []bool
	pc          []int     // per device: next action
	free        []float64 // per device: when the device is free
	grads       []int     // per stage: gradient actions (B or W) done
	// waiters: devices blocked on a slot (or a stage's gradients) form
	// intrusive lists: head[slot] and stageHead[stage] hold device+1,
	// next[device] the following device+1.
	head, stageHead, next []int32
	queue                 []int32
}

// newRun prepares a simulation, keeping each action's Op or not; every
// device starts on the queue.
func newRun(s *Schedule, c Costs, x *index, keep bool) *run {
	r := &run{s: s, c: c, x: x, first: math.Inf(1), last: math.Inf(-1),
		end: make([]float64, len(x.device)), done: make([]bool, len(x.device)),
		pc: make([]int, len(s.Devices)), free: make([]float64, len(s.Devices)), grads: make([]int, s.Stages),
		head: make([]int32, len(x.device)), stageHead: make([]int32, s.Stages), next: make([]int32, len(s.Devices)),
	}
	if keep {
		r.ops = make([][]Op, len(s.Devices))
		for d, list := range s.Devices {
			r.ops[d] = make([]Op, 0, len(list))
		}
	}
	for d := range s.Devices {
		r.queue = append(r.queue, int32(d))
	}
	return r
}

// run advances devices until all lists are done or none can move.
func (r *run) run(ctx context.Context, progress Progress) error {
	total, doneCount := 0, 0
	for _, l := range r.s.Devices {
		total += len(l)
	}
	for len(r.queue) > 0 {
		d := int(r.queue[len(r.queue)-1])
		r.queue = r.queue[:len(r.queue)-1]
		for r.pc[d] < len(r.s.Devices[d]) {
			a := r.s.Devices[d][r.pc[d]]
			ready, ok := r.ready(d, a)
			if !ok {
				break
			}
			r.execute(d, a, ready)
			doneCount++
			if doneCount&(1<<14-1) == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
				if progress != nil {
					progress(doneCount, total)
				}
			}
		}
	}
	if progress != nil {
		progress(doneCount, total)
	}
	if doneCount < total {
		return r.deadlock()
	}
	return nil
}

// dep is one input of an action: a slot and the latency after its end.
type dep struct {
	slot    int
	latency float64
}

// deps lists the inputs of a per-microbatch action (dissertation §2.3: a
// stage's forward needs the previous stage's output, its backward the next
// stage's input gradient and its own stashed activation).
func (r *run) deps(a Action, buf []dep) []dep {
	x, st, mb := r.x, a.Stage, a.Microbatch
	prev := func() dep { return dep{x.slot(Forward, st-1, mb), r.c.stage(st - 1).CommSeconds} }
	next := func() dep {
		k := Backward
		if x.splits(st+1, mb) {
			k = BackwardInput
		}
		return dep{x.slot(k, st+1, mb), r.c.stage(st).CommSeconds}
	}
	own := func() dep {
		k := Backward
		if x.splits(st, mb) {
			k = BackwardInput
		}
		return dep{x.slot(k, st, mb), 0}
	}
	switch a.Kind {
	case Forward:
		if st > 0 {
			buf = append(buf, prev())
		}
	case Backward, BackwardInput:
		buf = append(buf, dep{x.slot(Forward, st, mb), 0})
		if st < r.s.Stages-1 {
			buf = append(buf, next())
		}
	case BackwardWeight:
		buf = append(buf, dep{x.slot(BackwardInput, st, mb), 0})
	case SendF:
		buf = append(buf, dep{x.slot(Forward, st, mb), 0})
	case RecvF:
		buf = append(buf, prev())
	case SendB:
		buf = append(buf, own())
	case RecvB:
		buf = append(buf, next())
	}
	return buf
}

// ready returns when action a on device d may start, or false after
// registering d as a waiter on the first missing input.
func (r *run) ready(d int, a Action) (float64, bool) {
	t := r.free[d]
	if a.Kind.isBarrier() {
		// REDUCE_GRAD and OPT_STEP wait for every gradient of the stage.
		if r.grads[a.Stage] < r.x.microbatches {
			r.next[d] = r.stageHead[a.Stage]
			r.stageHead[a.Stage] = int32(d + 1)
			return 0, false
		}
		return t, true
	}
	var buf [2]dep
	for _, p := range r.deps(a, buf[:0]) {
		if !r.done[p.slot] {
			r.next[d] = r.head[p.slot]
			r.head[p.slot] = int32(d + 1)
			return 0, false
		}
		arrive := r.end[p.slot]
		if int(r.x.device[p.slot]-1) != d {
			arrive += p.latency
		}
		t = max(t, arrive)
	}
	return t, true
}

// execute runs action a on device d from time start and wakes its waiters.
func (r *run) execute(d int, a Action, start float64) {
	end := start + r.c.duration(a)
	r.first, r.last = min(r.first, start), max(r.last, end)
	if r.ops != nil {
		r.ops[d] = append(r.ops[d], Op{Action: a, Device: d, Chunk: r.s.Chunk(a.Stage), StartSeconds: start, EndSeconds: end, UsedVersion: -1})
	}
	r.free[d] = end
	r.pc[d]++
	if a.Kind.isBarrier() {
		return
	}
	at := r.x.slot(a.Kind, a.Stage, a.Microbatch)
	r.end[at], r.done[at] = end, true
	r.wake(&r.head[at])
	if a.Kind == Backward || a.Kind == BackwardWeight {
		r.grads[a.Stage]++
		if r.grads[a.Stage] == r.x.microbatches {
			r.wake(&r.stageHead[a.Stage])
		}
	}
}

// wake moves every device of a waiter list back onto the queue.
func (r *run) wake(h *int32) {
	for w := *h; w != 0; {
		d := w - 1
		r.queue = append(r.queue, d)
		w, r.next[d] = r.next[d], 0
	}
	*h = 0
}

// deadlock describes why the remaining actions cannot run.
func (r *run) deadlock() error {
	var b strings.Builder
	for d, list := range r.s.Devices {
		if r.pc[d] >= len(list) {
			continue
		}
		a := list[r.pc[d]]
		fmt.Fprintf(&b, "; device %d stuck at step %d (%v)", d, r.pc[d], a)
		if a.Kind.isBarrier() {
			fmt.Fprintf(&b, " waiting for all %d gradients of stage %d, %d done", r.x.microbatches, a.Stage, r.grads[a.Stage])
			continue
		}
		var buf [2]dep
		for _, p := range r.deps(a, buf[:0]) {
			if r.done[p.slot] {
				continue
			}
			// Validate guarantees every input exists somewhere.
			fmt.Fprintf(&b, " waiting for %v on device %d", r.slotAction(p.slot), r.x.device[p.slot]-1)
			break
		}
	}
	return fmt.Errorf("schedule deadlocks%s", b.String())
}

// slotAction turns a slot back into the action it stands for.
func (r *run) slotAction(slot int) Action {
	n, st := r.x.microbatches, r.x.stages
	return Action{Stage: slot / n % st, Kind: r.x.kinds[slot/n/st], Microbatch: slot % n, Version: -1}
}
