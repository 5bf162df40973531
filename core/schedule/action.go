// Package schedule holds pipeline-parallel schedules as data: one ordered
// list of actions per device (the shape of PyTorch's
// torch.distributed.pipelining), generators for the schedules of the papers
// (GPipe, 1F1B/PipeDream-Flush, interleaved 1F1B, PipeDream-2BW, PipeDream
// with weight stashing, 1F1B-RR, ZB-H1, ZB-V, DualPipeV, MadPipe's 1F1B*), an event simulator
// that turns a schedule and stage costs into a timeline (step time, bubble,
// peak memory, weight versions), and an SVG renderer for timelines.
package schedule

import (
	"fmt"
	"strconv"
	"strings"
)

// ActionKind is the kind of work an action does.
type ActionKind uint8

// The action kinds. F, B, I and W are computations; the others move data or
// update weights. Their text forms are those of torch.distributed.pipelining
// (I is torch's "backward input", B its full backward), plus OPT_STEP.
const (
	// Forward runs the forward pass of a stage on one microbatch.
	Forward ActionKind = iota
	// Backward runs the whole backward pass (input and weight gradients).
	Backward
	// BackwardInput computes only the input gradient (zero-bubble "B").
	BackwardInput
	// BackwardWeight computes only the weight gradient (zero-bubble "W").
	BackwardWeight
	// SendF sends a stage's output activation to the next stage.
	SendF
	// RecvF receives a stage's input activation from the previous stage.
	RecvF
	// SendB sends a stage's input gradient to the previous stage.
	SendB
	// RecvB receives a stage's output gradient from the next stage.
	RecvB
	// AllReduce all-reduces the weight gradients of a stage's replicas.
	AllReduce
	// OptStep applies the optimizer step to a stage's weights.
	OptStep
	numKinds
)

var kindNames = [numKinds]string{"F", "B", "I", "W", "SEND_F", "RECV_F", "SEND_B", "RECV_B", "REDUCE_GRAD", "OPT_STEP"}

// String returns the kind's text form, e.g. "F" or "SEND_B".
func (k ActionKind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "ActionKind(" + strconv.Itoa(int(k)) + ")"
}

// isCompute reports whether the kind is a computation on one microbatch.
func (k ActionKind) isCompute() bool { return k <= BackwardWeight }

// isBarrier reports whether the kind acts on a whole stage (no microbatch).
func (k ActionKind) isBarrier() bool { return k == AllReduce || k == OptStep }

// Action is one unit of work of one device: a small value.
type Action struct {
	// Stage is the (virtual) stage index; with v chunks on p devices the
	// chunk c of device r is stage c*p + r, as in torch.
	Stage int
	// Kind is what the action does.
	Kind ActionKind
	// Microbatch is the 0-based microbatch id, or -1 for stage-wide actions
	// (REDUCE_GRAD, OPT_STEP).
	Microbatch int
	// Version is the weight version the action must use, or -1 when the
	// schedule's versioning rule picks it during simulation.
	Version int
}

// String returns the compact form "<stage><kind><microbatch>", e.g. "2F0",
// with a "v<version>" suffix when the version is fixed (e.g. "2F5v1").
func (a Action) String() string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(a.Stage))
	b.WriteString(a.Kind.String())
	if a.Microbatch >= 0 {
		b.WriteString(strconv.Itoa(a.Microbatch))
	}
	if a.Version >= 0 {
		b.WriteString("v")
		b.WriteString(strconv.Itoa(a.Version))
	}
	return b.String()
}

// maxIndex bounds stage, microbatch and version numbers read from text so
// that a hostile file cannot make the simulator allocate without bound.
const maxIndex = 1 << 20

// ParseAction parses the compact form written by Action.String (and by
// torch's _Action.__repr__): digits, a kind, optional digits, optional
// "v<digits>".
func ParseAction(s string) (Action, error) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return Action{}, fmt.Errorf("action %q: must start with a stage number", s)
	}
	stage, err := parseIndex(s[:i])
	if err != nil {
		return Action{}, fmt.Errorf("action %q: stage: %v", s, err)
	}
	rest := s[i:]
	kind, ok := ActionKind(0), false
	for k := ActionKind(0); k < numKinds && !ok; k++ {
		// No kind name is a prefix of another, so the first match is the only one.
		if strings.HasPrefix(rest, kindNames[k]) {
			kind, ok, rest = k, true, rest[len(kindNames[k]):]
		}
	}
	if !ok {
		return Action{}, fmt.Errorf("action %q: unknown kind (want one of %s)", s, strings.Join(kindNames[:], ", "))
	}
	a := Action{Stage: stage, Kind: kind, Microbatch: -1, Version: -1}
	mb, rest := leadingDigits(rest)
	if mb != "" {
		if a.Microbatch, err = parseIndex(mb); err != nil {
			return Action{}, fmt.Errorf("action %q: microbatch: %v", s, err)
		}
	}
	if strings.HasPrefix(rest, "v") {
		var v string
		v, rest = leadingDigits(rest[1:])
		if v == "" {
			return Action{}, fmt.Errorf("action %q: version: want digits after v", s)
		}
		if a.Version, err = parseIndex(v); err != nil {
			return Action{}, fmt.Errorf("action %q: version: %v", s, err)
		}
	}
	if rest != "" {
		return Action{}, fmt.Errorf("action %q: unexpected trailing %q", s, rest)
	}
	if kind.isBarrier() != (a.Microbatch < 0) {
		if kind.isBarrier() {
			return Action{}, fmt.Errorf("action %q: %s takes no microbatch", s, kind)
		}
		return Action{}, fmt.Errorf("action %q: %s needs a microbatch", s, kind)
	}
	return a, nil
}

// leadingDigits splits s into its leading run of ASCII digits and the rest.
func leadingDigits(s string) (digits, rest string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i], s[i:]
}

// parseIndex parses a non-negative decimal index no larger than maxIndex.
func parseIndex(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n > maxIndex {
		return 0, fmt.Errorf("must be an integer in [0, %d], got %q", maxIndex, s)
	}
	return n, nil
}
