package app

import (
	"bytes"
	"context"
	"fmt"

	"pipeplan/app/request"
	"pipeplan/core/schedule"
)

// Schedule generates the request's schedule of equal stages and simulates
// it (core/schedule); interleaved chunks each take 1/v of a stage's time.
func Schedule(ctx context.Context, in request.Schedule) (*schedule.Timeline, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	run, err := SimulateSchedule(ctx, ScheduleSpec{Kind: in.Kind, Stages: in.Stages, Microbatches: in.Microbatches, Chunks: in.Chunks,
		FwdSeconds: in.FwdSeconds, BwdSeconds: in.BwdSeconds, WgradSeconds: -1, CommSeconds: in.CommSeconds})
	if err != nil {
		return nil, err
	}
	return run.Timeline, nil
}

// ScheduleSpec is a schedule of equal stages with every option of the
// `pipeplan schedule` command: a request.Schedule's fields plus the kinds'
// extras (1f1b-rr's replicas, 1f1b-star's period, batches, vertical sync,
// the split-backward kinds' weight-gradient part) and per-stage memory. It is not bounded
// like a request: the CLI runs it on the user's own machine.
type ScheduleSpec struct {
	// Kind is a schedule kind (ScheduleKindHelp lists them).
	Kind string
	// Stages, Microbatches and Batches are p, m and the batches to run
	// (2bw and pipedream; 0 means 1).
	Stages, Microbatches, Batches int
	// Chunks is the model chunks per device v (interleaved only).
	Chunks int
	// Replicas is each stage's replica count (1f1b-rr; nil means 1 each).
	Replicas []int
	// VerticalSync turns on pipedream's vertical sync.
	VerticalSync bool
	// PeriodSeconds is 1f1b-star's target period (0: one stage's
	// forward and backward).
	PeriodSeconds float64
	// FwdSeconds and BwdSeconds are one microbatch's forward and backward
	// time on one device's layers (interleaved chunks take 1/v of them,
	// a V's two chunks half).
	FwdSeconds, BwdSeconds float64
	// WgradSeconds is the weight-gradient part of BwdSeconds that zb-h1,
	// zb-v and dualpipe-v run as W; negative means half of BwdSeconds under them,
	// else 0.
	WgradSeconds float64
	// CommSeconds is the time to move an activation or gradient between devices.
	CommSeconds float64
	// ActivationBytes and WeightBytes are what a stage stashes per
	// in-flight microbatch and holds per weight version.
	ActivationBytes, WeightBytes float64
}

// ScheduleRun is a generated schedule and its simulated timeline.
type ScheduleRun struct {
	Schedule *schedule.Schedule
	Timeline *schedule.Timeline
}

// SVG draws the timeline from fromSeconds to toSeconds into the step
// (0: the end).
func (r *ScheduleRun) SVG(fromSeconds, toSeconds float64) []byte {
	return schedule.RenderSVG(r.Timeline, schedule.SVGOptions{FromSeconds: fromSeconds, ToSeconds: toSeconds})
}

// TorchCSV is the action lists in torch.distributed.pipelining's CSV form.
func (r *ScheduleRun) TorchCSV() ([]byte, error) {
	var buf bytes.Buffer
	if err := schedule.WriteCSV(&buf, r.Schedule, true); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ScheduleKindHelp lists the schedule kinds, one per line after indent.
func ScheduleKindHelp(indent string) string { return schedule.KindHelp(indent) }

// SimulateSchedule generates spec's schedule and simulates it; bad chunks,
// periods and too few microbatches for the kind (dualpipe-v: 2 a stage)
// are a *request.FieldError naming chunks, period_seconds or
// microbatches, the generator's and the simulator's other errors pass
// through.
func SimulateSchedule(ctx context.Context, spec ScheduleSpec) (*ScheduleRun, error) {
	k := schedule.Kind(spec.Kind)
	o := schedule.Options{Stages: spec.Stages, Microbatches: spec.Microbatches, Batches: spec.Batches,
		Replicas: spec.Replicas, VerticalSync: spec.VerticalSync}
	fwd, bwd, wgrad := spec.FwdSeconds, spec.BwdSeconds, spec.WgradSeconds
	in, _ := k.Info() // an unknown kind: Generate's error below
	if least := in.MinMicrobatches(spec.Stages); spec.Microbatches < least && spec.Microbatches >= 1 {
		return nil, &request.FieldError{Field: "microbatches", Msg: fmt.Sprintf("%s needs at least %d on %d stages (%d a stage), got %d", k, least, spec.Stages, in.MinMicrobatchesPerDevice, spec.Microbatches)}
	}
	if wgrad < 0 {
		wgrad = 0
		if in.SplitsBackward {
			wgrad = bwd / 2 // the weight-gradient half of the backward runs as W
		}
	}
	if in.VShaped {
		v := float64(schedule.VChunks)
		fwd, bwd, wgrad = fwd/v, bwd/v, wgrad/v
	}
	if k == schedule.Interleaved {
		if spec.Chunks < 1 {
			return nil, &request.FieldError{Field: "chunks", Msg: fmt.Sprintf("must be >= 1, got %d", spec.Chunks)}
		}
		o.Chunks = spec.Chunks
		v := float64(spec.Chunks)
		fwd, bwd, wgrad = fwd/v, bwd/v, wgrad/v
	}
	costs := schedule.Uniform(fwd, bwd, wgrad, spec.CommSeconds)
	costs.Stages[0].ActivationBytes, costs.Stages[0].WeightBytes = spec.ActivationBytes, spec.WeightBytes
	if k == schedule.OneFOneBStar {
		period := spec.PeriodSeconds
		if period == 0 {
			period = fwd + bwd
		}
		stageCosts := make([]schedule.StageCost, max(spec.Stages, 0))
		for i := range stageCosts {
			stageCosts[i] = costs.Stages[0]
		}
		g, err := schedule.StarGroups(stageCosts, period)
		if err != nil {
			return nil, &request.FieldError{Field: "period_seconds", Msg: err.Error()}
		}
		o.Groups = g
	}
	s, err := schedule.Generate(k, o)
	if err != nil {
		return nil, err
	}
	tl, err := schedule.Simulate(ctx, s, costs, nil)
	if err != nil {
		return nil, err
	}
	return &ScheduleRun{Schedule: s, Timeline: tl}, nil
}
