package schedule

import "fmt"

// Options are the inputs of a schedule generator.
type Options struct {
	// Stages is the number of pipeline stages p (devices, unless replicated).
	Stages int
	// Microbatches is the number of microbatches per batch m.
	Microbatches int
	// Chunks is the number of model chunks per device v (interleaved only;
	// a V-shaped kind takes 1 or its VChunks; 0 means 1).
	Chunks int
	// Batches is the number of batches to run (2bw and pipedream; 0 means 1).
	Batches int
	// Replicas is the number of replicas of each stage (1f1b-rr; nil means 1 each).
	Replicas []int
	// VerticalSync turns on vertical sync for pipedream (§2.4.3).
	VerticalSync bool
	// Groups is MadPipe's group number of each stage for 1f1b-star, e.g.
	// from StarGroups (madpipe-2020 §4.1).
	Groups []int
}

// maxGenerate bounds the actions a generator makes.
const maxGenerate = 1 << 23

// Generate returns the schedule of the given kind.
func Generate(kind Kind, o Options) (*Schedule, error) {
	if o.Chunks == 0 {
		o.Chunks = 1
	}
	if o.Batches == 0 {
		o.Batches = 1
	}
	switch {
	case o.Stages < 1 || o.Stages > 1<<12:
		return nil, fmt.Errorf("stages: must be in [1, 4096], got %d", o.Stages)
	case o.Microbatches < 1:
		return nil, fmt.Errorf("microbatches: must be >= 1, got %d", o.Microbatches)
	case o.Chunks < 1 || o.Chunks > 64:
		return nil, fmt.Errorf("chunks: must be in [1, 64], got %d", o.Chunks)
	}
	in, err := kind.Info()
	if err != nil {
		return nil, fmt.Errorf("kind: %w", err)
	}
	switch {
	case o.Chunks != 1 && !in.Chunked && !(in.VShaped && o.Chunks == VChunks):
		return nil, fmt.Errorf("chunks: only %s take chunks (and %s its %d), got %d for %s", namesWhere(func(in KindInfo) bool { return in.Chunked }),
			namesWhere(func(in KindInfo) bool { return in.VShaped }), VChunks, o.Chunks, kind)
	case o.Batches < 1:
		return nil, fmt.Errorf("batches: must be >= 1, got %d", o.Batches)
	case o.Batches != 1 && !in.MultiBatch:
		return nil, fmt.Errorf("batches: only %s run several batches, got %d for %s", namesWhere(func(in KindInfo) bool { return in.MultiBatch }), o.Batches, kind)
	case o.Replicas != nil && kind != OneFOneBRR:
		return nil, fmt.Errorf("replicas: only 1f1b-rr replicates stages")
	case o.VerticalSync && kind != PipeDream:
		return nil, fmt.Errorf("vertical sync: only pipedream has it")
	case o.Microbatches < in.MinMicrobatches(o.Stages):
		return nil, fmt.Errorf("microbatches: %s needs at least %d per device (%d on %d), got %d", kind, in.MinMicrobatchesPerDevice, in.MinMicrobatches(o.Stages), o.Stages, o.Microbatches)
	case o.Groups != nil && kind != OneFOneBStar:
		return nil, fmt.Errorf("groups: only 1f1b-star takes groups")
	case int64(o.Stages)*int64(o.Chunks)*int64(o.Microbatches)*int64(o.Batches) > maxGenerate/3:
		return nil, fmt.Errorf("stages × chunks × microbatches × batches: must be at most %d, got %d×%d×%d×%d",
			maxGenerate/3, o.Stages, o.Chunks, o.Microbatches, o.Batches)
	}
	return in.generate(o)
}

// newSchedule returns an empty schedule with one list per device.
func newSchedule(kind Kind, o Options, devices int) *Schedule {
	return &Schedule{Kind: kind, Stages: o.Stages * o.Chunks, Chunks: o.Chunks, Microbatches: o.Microbatches,
		Batches: o.Batches, Devices: make([][]Action, devices)}
}

// act returns a per-microbatch action with no fixed version.
func act(stage int, k ActionKind, mb int) Action {
	return Action{Stage: stage, Kind: k, Microbatch: mb, Version: -1}
}

// optSteps appends the flush's optimizer step for each stage to the
// device that runs the stage (its first forward's).
func optSteps(s *Schedule) {
	device := make([]int, s.Stages)
	seen := make([]bool, s.Stages)
	for d, list := range s.Devices {
		for _, a := range list {
			if a.Kind == Forward && !seen[a.Stage] {
				device[a.Stage], seen[a.Stage] = d, true
			}
		}
	}
	for st := range s.Stages {
		d := device[st]
		s.Devices[d] = append(s.Devices[d], Action{Stage: st, Kind: OptStep, Microbatch: -1, Version: -1})
	}
}

// gpipe: all forwards, then all backwards, then the flush (dissertation
// §4.2.1, Figure 4.3; backwards in microbatch order as drawn there).
func gpipe(o Options) (*Schedule, error) {
	s := newSchedule(GPipe, o, o.Stages)
	for r := range o.Stages {
		for mb := range o.Microbatches {
			s.Devices[r] = append(s.Devices[r], act(r, Forward, mb))
		}
		for mb := range o.Microbatches {
			s.Devices[r] = append(s.Devices[r], act(r, Backward, mb))
		}
	}
	optSteps(s)
	return s, nil
}

// oneFOneB returns the 1F1B order of one stage over the given microbatches:
// warmup forwards, then alternating one forward and one backward, then the
// remaining backwards (dissertation §2.4.2 / §3.2.3).
func oneFOneB(stage int, mbs []int, warmup int, version func(mb int) int) []Action {
	warmup = min(warmup, len(mbs))
	out := make([]Action, 0, 2*len(mbs)+1) // room for the flush's OPT_STEP
	f := func(mb int) Action { a := act(stage, Forward, mb); a.Version = version(mb); return a }
	b := func(mb int) Action { a := act(stage, Backward, mb); a.Version = version(mb); return a }
	for _, mb := range mbs[:warmup] {
		out = append(out, f(mb))
	}
	for j, mb := range mbs[warmup:] {
		out = append(out, f(mb), b(mbs[j]))
	}
	for _, mb := range mbs[len(mbs)-warmup:] {
		out = append(out, b(mb))
	}
	return out
}

// anyVersion leaves the version to the schedule's versioning rule.
func anyVersion(int) int { return -1 }

// seq returns 0, 1, ..., n-1.
func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// oneFOneBFlush is PipeDream-Flush: stage i warms up with p−1−i forwards
// (dissertation §3.2.3, Figure 4.4 top), then flushes.
func oneFOneBFlush(o Options) (*Schedule, error) {
	s := newSchedule(OneFOneB, o, o.Stages)
	mbs := seq(o.Microbatches)
	for r := range o.Stages {
		s.Devices[r] = oneFOneB(r, mbs, o.Stages-1-r, anyVersion)
	}
	optSteps(s)
	return s, nil
}

// pipeDream is asynchronous 1F1B: NOAM = p inputs in flight at the input
// stage, every backward makes a new version, forwards use the latest
// (weight stashing) or the input stage's (vertical sync) version (§2.4.3).
func pipeDream(o Options) (*Schedule, error) {
	s := newSchedule(PipeDream, o, o.Stages)
	s.Versioning = Stashed
	if o.VerticalSync {
		s.Versioning = VerticalSync
	}
	mbs := seq(s.TotalMicrobatches())
	for r := range o.Stages {
		s.Devices[r] = oneFOneB(r, mbs, o.Stages-1-r, anyVersion)
	}
	return s, nil
}

// twoBW is PipeDream-2BW: 1F1B across batches with no flush; microbatch k
// uses weight version max(⌊(k−1)/m⌋−1, 0) (§3.2.1), which needs m ≥ p.
func twoBW(o Options) (*Schedule, error) {
	if o.Microbatches < o.Stages {
		return nil, fmt.Errorf("microbatches: 2bw needs m >= stages (%d), got %d", o.Stages, o.Microbatches)
	}
	s := newSchedule(TwoBW, o, o.Stages)
	s.Versioning = DoubleBuffered
	mbs := seq(s.TotalMicrobatches())
	version := func(mb int) int { return TwoBWVersion(mb, o.Microbatches) }
	for r := range o.Stages {
		s.Devices[r] = oneFOneB(r, mbs, o.Stages-1-r, version)
	}
	return s, nil
}
