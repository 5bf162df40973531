package engine

import (
	"context"
	"fmt"

	"pipeplan/core/cost"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
)

// maxTimelineMicrobatches bounds the microbatches drawn: enough to show
// the fill, the steady state and the drain; the caption says when it is cut.
const maxTimelineMicrobatches = 32

// TimelineSVG simulates the plan's pipeline schedule with core/schedule and
// draws it with schedule.RenderSVG. Every (virtual) stage gets the slowest
// stage's predicted time per microbatch split forward:backward 1:2 (the
// backward pass does twice the forward's matrix multiplications, §4.2.1),
// so the drawing shows the schedule's shape and bubble, not per-layer skew.
// It also returns a one-line caption of those assumptions.
func TimelineSVG(ctx context.Context, p *plan.Plan, pr cost.TimeBreakdown) (string, string, error) {
	m := p.Schedule.Microbatches
	pp, v := p.Parallelism.PP, p.Parallelism.Interleave
	if m < 1 || pp < 1 || v < 1 {
		return "", "", fmt.Errorf("timeline: plan has no pipeline to draw")
	}
	perMB := (pr.ComputeSeconds + pr.TensorParallelSeconds) / float64(m) / float64(v)
	comm := pr.PipelineP2PSeconds / float64(m) / float64(v)
	drawn := m
	kind := schedule.Kind(p.Schedule.Kind)
	if drawn > maxTimelineMicrobatches {
		drawn = maxTimelineMicrobatches
		if kind == schedule.Interleaved {
			drawn -= drawn % pp // interleaving needs m to be a multiple of p
			drawn = max(drawn, pp)
		}
	}
	opt := schedule.Options{Stages: pp, Microbatches: drawn}
	if kind == schedule.Interleaved {
		opt.Chunks = v
	}
	s, err := schedule.Generate(kind, opt)
	if err != nil {
		return "", "", fmt.Errorf("timeline: %w", err)
	}
	tl, err := schedule.Simulate(ctx, s, schedule.Uniform(perMB/3, 2*perMB/3, 0, comm), nil)
	if err != nil {
		return "", "", fmt.Errorf("timeline: %w", err)
	}
	caption := fmt.Sprintf("%s schedule, %d stages, every stage at the slowest stage's predicted %.1f ms per microbatch (forward:backward 1:2)", kind, pp, perMB*float64(v)*1e3)
	if drawn < m {
		caption += fmt.Sprintf("; first %d of %d microbatches drawn", drawn, m)
	}
	return string(schedule.RenderSVG(tl, schedule.SVGOptions{WidthPx: 900})), caption, nil
}
