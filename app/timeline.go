package app

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

// TimelineSVG simulates a PTD-P plan's pipeline schedule with core/schedule
// and draws it with schedule.RenderSVG. Every (virtual) stage gets the
// slowest stage's predicted time per microbatch, so the drawing shows the
// schedule's shape and bubble, not per-layer skew. It also returns a
// one-line caption of those assumptions.
func TimelineSVG(ctx context.Context, p *plan.Plan, pr cost.TimeBreakdown) (string, string, error) {
	e := p.Execution
	m, pp, v := e.Microbatches(), e.PP, e.Interleave
	if m < 1 || pp < 1 || v < 1 {
		return "", "", fmt.Errorf("timeline: plan has no pipeline to draw")
	}
	perMB := (pr.ComputeSeconds + pr.TensorParallelSeconds) / float64(m)
	comm := pr.PipelineP2PSeconds / float64(m) / float64(v)
	return drawUniform(ctx, e.Schedule, pp, v, m, perMB, comm, "the slowest stage's predicted time per microbatch")
}

// uniformTimeline draws a schedule of stages × m microbatches, every stage
// taking perMBSeconds per microbatch (what says where that time comes from).
func uniformTimeline(ctx context.Context, kind schedule.Kind, stages, m int, perMBSeconds float64, what string) (string, string, error) {
	return drawUniform(ctx, kind, stages, 1, m, perMBSeconds, 0, what)
}

// drawUniform simulates and draws kind on pp devices with v chunks each,
// the first microbatches of m (at most maxTimelineMicrobatches), each device
// taking perMBSeconds per microbatch split forward:backward 1:2 (the
// backward pass does twice the forward's matrix multiplications, §4.2.1).
func drawUniform(ctx context.Context, kind schedule.Kind, pp, v, m int, perMBSeconds, commSeconds float64, what string) (string, string, error) {
	drawn := m
	if drawn > maxTimelineMicrobatches {
		drawn = maxTimelineMicrobatches
		switch kind {
		case schedule.Interleaved:
			drawn = max(drawn-drawn%pp, pp) // interleaving needs m to be a multiple of p
		case schedule.TwoBW:
			drawn = max(drawn, pp) // 2BW needs m >= p (§3.2.1)
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
	chunk := perMBSeconds / float64(v)
	tl, err := schedule.Simulate(ctx, s, schedule.Uniform(chunk/3, 2*chunk/3, 0, commSeconds), nil)
	if err != nil {
		return "", "", fmt.Errorf("timeline: %w", err)
	}
	caption := fmt.Sprintf("%s schedule, %d stages, every stage at %s, %.1f ms (forward:backward 1:2)", kind, pp, what, perMBSeconds*1e3)
	if drawn < m {
		caption += fmt.Sprintf("; first %d of %d microbatches drawn, so the drawing's idle share is larger than the step's", drawn, m)
	}
	return string(schedule.RenderSVG(tl, schedule.SVGOptions{WidthPx: 900})), caption, nil
}
