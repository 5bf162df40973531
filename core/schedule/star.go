package schedule

import (
	"context"
	"fmt"
	"math"
)

// StarGroups returns MadPipe's group number (1-based) of each stage for a
// target period (madpipe-2020 §4.1): walking back from the last stage,
// stages join the current group while the group's load Σ(U_F+U_B) stays
// within the period. A link with CommSeconds > 0 counts as a stage of load
// 2·CommSeconds between its two stages (the §4.1 transformation to 2P−1
// resources). The first stage gets the highest group number.
func StarGroups(stages []StageCost, periodSeconds float64) ([]int, error) {
	if len(stages) == 0 {
		return nil, fmt.Errorf("stages: must have at least 1 stage, got 0")
	}
	if !(periodSeconds > 0) || math.IsInf(periodSeconds, 0) {
		return nil, fmt.Errorf("period_seconds: must be finite and > 0, got %v", periodSeconds)
	}
	if err := (Costs{Stages: stages}).validate(len(stages)); err != nil {
		return nil, err
	}
	groups := make([]int, len(stages))
	g, load := 1, 0.0
	add := func(u float64, what string) error {
		if u > periodSeconds {
			return fmt.Errorf("period_seconds: %v is below the load of %s (%v)", periodSeconds, what, u)
		}
		if load+u > periodSeconds {
			g, load = g+1, 0
		}
		load += u
		return nil
	}
	for s := len(stages) - 1; s >= 0; s-- {
		if c := stages[s].CommSeconds; s < len(stages)-1 && c > 0 {
			if err := add(2*c, fmt.Sprintf("the link after stage %d", s)); err != nil {
				return nil, err
			}
		}
		if err := add(stages[s].FwdSeconds+stages[s].BwdSeconds, fmt.Sprintf("stage %d", s)); err != nil {
			return nil, err
		}
		groups[s] = g
	}
	return groups, nil
}

// oneFOneBStar is MadPipe's 1F1B* (madpipe-2020 §4.1): a stage of group g
// runs 1F1B keeping exactly g activations, so it warms up with g−1 forwards.
func oneFOneBStar(o Options) (*Schedule, error) {
	if len(o.Groups) != o.Stages {
		return nil, fmt.Errorf("groups: must have one entry per stage (%d), got %d", o.Stages, len(o.Groups))
	}
	for i, g := range o.Groups {
		switch {
		case g < 1:
			return nil, fmt.Errorf("groups[%d]: must be >= 1, got %d", i, g)
		case i > 0 && g > o.Groups[i-1]:
			return nil, fmt.Errorf("groups[%d]: must not exceed groups[%d] (%d): groups number stages from the last one, got %d", i, i-1, o.Groups[i-1], g)
		}
	}
	s := newSchedule(OneFOneBStar, o, o.Stages)
	mbs := seq(o.Microbatches)
	for r, g := range o.Groups {
		s.Devices[r] = oneFOneB(r, mbs, g-1, anyVersion)
	}
	optSteps(s)
	return s, nil
}

// StarReport is the result of CheckStar.
type StarReport struct {
	// Groups is each stage's group number for the period.
	Groups []int
	// Timeline is the simulated 1F1B* schedule.
	Timeline *Timeline
	// PeakMemoryBytes is each device's peak activation + weight memory.
	PeakMemoryBytes []float64
	// OverLimit lists the devices whose peak exceeds the memory limit.
	OverLimit []int
}

// CheckStar builds the 1F1B* schedule of a contiguous partition (one stage
// per device) for a target period, simulates it over the given number of
// microbatches (at least twice the stage count reaches the steady state)
// and reports each device's peak memory against memoryLimitBytes: the
// validation MadPipe's partitioner needs (madpipe-2020 §4.1–4.2). Put every
// schedule-independent byte (weights, gradients, buffers) in WeightBytes:
// 1F1B* holds one copy per stage.
func CheckStar(ctx context.Context, stages []StageCost, periodSeconds, memoryLimitBytes float64, microbatches int) (*StarReport, error) {
	if !(memoryLimitBytes > 0) || math.IsInf(memoryLimitBytes, 0) {
		return nil, fmt.Errorf("memory_limit_bytes: must be finite and > 0, got %v", memoryLimitBytes)
	}
	groups, err := StarGroups(stages, periodSeconds)
	if err != nil {
		return nil, err
	}
	s, err := Generate(OneFOneBStar, Options{Stages: len(stages), Microbatches: microbatches, Groups: groups})
	if err != nil {
		return nil, err
	}
	t, err := Simulate(ctx, s, Costs{Stages: stages}, nil)
	if err != nil {
		return nil, err
	}
	rep := &StarReport{Groups: groups, Timeline: t}
	for d, st := range t.Devices {
		rep.PeakMemoryBytes = append(rep.PeakMemoryBytes, st.PeakMemoryBytes)
		if st.PeakMemoryBytes > memoryLimitBytes {
			rep.OverLimit = append(rep.OverLimit, d)
		}
	}
	return rep, nil
}
