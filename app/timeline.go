package app

import (
	"context"
	"fmt"
	"math"

	"pipeplan/core/cost"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
	"pipeplan/internal/format"
)

// maxTimelineWork bounds the (virtual stage, microbatch) pairs simulated
// for a drawing (tens of ms): every microbatch of the presets' plans on the
// default cluster (GPT 1T: p = 64, v = 2, m = 768 is 98,304); beyond it the
// first microbatches are drawn and the caption says so.
const maxTimelineWork = 1 << 17

// TimelineSVG simulates a PTD-P plan's pipeline schedule with core/schedule
// and draws it with schedule.RenderSVG. Every (virtual) stage gets the
// slowest stage's predicted time per microbatch (compute, tensor-parallel,
// context- and expert-parallel, ZeRO-3 and point-to-point time), and the
// flush the exposed data-parallel reduction and the optimizer step, so the
// drawn step is the predicted one (eq. 4.4's form) when the stages are
// alike; the caption says both. A V-shaped schedule, which the cost model
// simulates (cost.Predictor.ChunkCosts), is drawn with each chunk's own
// times, its step the predicted one. It also returns that caption.
func TimelineSVG(ctx context.Context, p *plan.Plan, pr cost.Prediction, pred *cost.Predictor) (string, string, error) {
	e := p.Execution
	m, pp, v := e.Microbatches(), e.PP, e.Chunks()
	if m < 1 || pp < 1 || v < 1 {
		return "", "", fmt.Errorf("timeline: plan has no pipeline to draw")
	}
	t := pr.Time
	flush := t.DataParallelSeconds + t.OptimizerSeconds
	if in, err := e.Schedule.Info(); err == nil && in.VShaped {
		costs, err := pred.ChunkCosts(e)
		if err != nil {
			return "", "", fmt.Errorf("timeline: %w", err)
		}
		return drawTimeline(ctx, e.Schedule, pp, v, m, costs, flush, pr.IterationSeconds,
			"each chunk at its own predicted forward, input- and weight-gradient times (the first GPU's two hold the embedding and the output layer)")
	}
	perMB := (t.ComputeSeconds + t.TensorParallelSeconds + t.ContextParallelSeconds + t.ExpertParallelSeconds +
		t.ZeRO3GatherSeconds + t.PipelineP2PSeconds) / float64(m)
	return drawUniform(ctx, e.Schedule, pp, v, m, perMB, flush, pr.IterationSeconds,
		"the slowest stage's predicted time per microbatch")
}

// wholeNanoseconds rounds seconds to whole nanoseconds.
func wholeNanoseconds(s float64) float64 { return math.Round(s*1e9) / 1e9 }

// uniformTimeline draws a schedule of stages × m microbatches, every stage
// taking perMBSeconds per microbatch (what says where that time comes from).
func uniformTimeline(ctx context.Context, kind schedule.Kind, stages, m int, perMBSeconds float64, what string) (string, string, error) {
	return drawUniform(ctx, kind, stages, 1, m, perMBSeconds, 0, 0, what)
}

// drawUniform draws kind on pp devices with v chunks each and m
// microbatches (drawTimeline), each device taking perMBSeconds per
// microbatch split forward:backward 1:2 (the backward pass does twice the
// forward's matrix multiplications, §4.2.1; where the kind splits it,
// input:weight gradient 1:1).
func drawUniform(ctx context.Context, kind schedule.Kind, pp, v, m int, perMBSeconds, flushSeconds, predicted float64, what string) (string, string, error) {
	in, err := kind.Info()
	if err != nil {
		return "", "", fmt.Errorf("timeline: %w", err)
	}
	chunk, wgrad := wholeNanoseconds(perMBSeconds)/float64(v), 0.0
	if in.SplitsBackward {
		wgrad = chunk / 3
	}
	what = fmt.Sprintf("every stage at %s, %s", what, format.Seconds(wholeNanoseconds(perMBSeconds)))
	if in.SplitsBackward {
		what += " (forward:input gradient:weight gradient 1:1:1)"
	} else {
		what += " (forward:backward 1:2)"
	}
	return drawTimeline(ctx, kind, pp, v, m, schedule.Uniform(chunk/3, 2*chunk/3, wgrad, 0), flushSeconds, predicted, what)
}

// drawTimeline simulates and draws kind on pp devices with v chunks each
// and m microbatches (the first ones, at most maxTimelineWork pairs), the
// (virtual) stages costing costs and the flush flushSeconds; what says
// where the costs come from, and predicted, if > 0, is the step time the
// caption compares the drawn one with.
func drawTimeline(ctx context.Context, kind schedule.Kind, pp, v, m int, costs schedule.Costs, flushSeconds, predicted float64, what string) (string, string, error) {
	// Whole nanoseconds: the prediction's last bit differs between amd64
	// and wasm (assembly against pure-Go math), and the drawing, which
	// finds the steady state's repeats in the simulated times, must not.
	for i := range costs.Stages {
		st := &costs.Stages[i]
		st.FwdSeconds, st.BwdSeconds = wholeNanoseconds(st.FwdSeconds), wholeNanoseconds(st.BwdSeconds)
		st.WgradSeconds, st.CommSeconds = min(wholeNanoseconds(st.WgradSeconds), st.BwdSeconds), wholeNanoseconds(st.CommSeconds)
	}
	flushSeconds = wholeNanoseconds(flushSeconds)
	in, err := kind.Info()
	if err != nil {
		return "", "", fmt.Errorf("timeline: %w", err)
	}
	drawn := m
	if pp*v*m > maxTimelineWork {
		drawn = max(maxTimelineWork/(pp*v), 1)
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
	costs.OptStepSeconds = flushSeconds / float64(v) // one per chunk on each device
	tl, err := schedule.Simulate(ctx, s, costs, nil)
	if err != nil {
		return "", "", fmt.Errorf("timeline: %w", err)
	}
	stages := "p = " + format.Count(pp, "stage", "stages")
	switch {
	case in.VShaped:
		stages += fmt.Sprintf(" × %d chunks in a V", v)
	case v > 1:
		stages += fmt.Sprintf(" × v = %d chunks", v)
	}
	caption := fmt.Sprintf("%s schedule, %s, %s, %s", kind, stages, format.Count(m, "microbatch", "microbatches"), what)
	if flushSeconds > 0 {
		caption += fmt.Sprintf("; the flush (green) is the exposed data-parallel reduction and optimizer step, %s", format.Seconds(flushSeconds))
	}
	switch {
	case drawn < m:
		caption += fmt.Sprintf("; first %d of %d microbatches drawn (step drawn %s), so the drawing's idle share is larger than the step's", drawn, m, format.Seconds(tl.StepSeconds))
	case predicted > 0 && math.Abs(tl.StepSeconds-predicted) > 0.005*predicted:
		caption += fmt.Sprintf("; step drawn %s, predicted %s", format.Seconds(tl.StepSeconds), format.Seconds(predicted))
		if len(costs.Stages) == 1 {
			caption += ": the stages differ, and the drawing gives each the slowest one's time"
		}
	case predicted > 0:
		caption += fmt.Sprintf("; step %s as predicted", format.Seconds(tl.StepSeconds))
	}
	return string(schedule.RenderSVG(tl, schedule.SVGOptions{WidthPx: 900, MaxBoxes: timelineMaxBoxes})), caption, nil
}

// timelineMaxBoxes is the most boxes the page's timeline draws one by one
// (about 250 bytes each): beyond, the steady state is collapsed or the
// step aggregated, which keeps the SVG near 100 KB at most.
const timelineMaxBoxes = 400
