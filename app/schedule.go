package app

import (
	"context"

	"pipeplan/app/request"
	"pipeplan/core/schedule"
)

// Schedule generates the request's schedule of equal stages and simulates
// it (core/schedule); interleaved chunks each take 1/v of a stage's time.
func Schedule(ctx context.Context, in request.Schedule) (*schedule.Timeline, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	kind := schedule.Kind(in.Kind)
	o := schedule.Options{Stages: in.Stages, Microbatches: in.Microbatches}
	fwd, bwd, wgrad := in.FwdSeconds, in.BwdSeconds, 0.0
	if kind == schedule.ZBH1 {
		wgrad = bwd / 2 // the weight-gradient half of the backward runs as W
	}
	if kind == schedule.Interleaved {
		o.Chunks = in.Chunks
		v := float64(in.Chunks)
		fwd, bwd = fwd/v, bwd/v
	}
	s, err := schedule.Generate(kind, o)
	if err != nil {
		return nil, err
	}
	return schedule.Simulate(ctx, s, schedule.Uniform(fwd, bwd, wgrad, in.CommSeconds), nil)
}
