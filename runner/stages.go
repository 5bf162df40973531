package main

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
)

// isCompute reports whether a recorded kind is a computation on one
// microbatch (F, B, I or W), the actions the per-stage report times.
func isCompute(kind string) bool { return kind == "F" || kind == "B" || kind == "I" || kind == "W" }

// computeActions are the F, B, I and W actions of a position's list, in order.
func computeActions(s *schedule.Schedule, position int) []schedule.Action {
	var out []schedule.Action
	for _, a := range s.Devices[position] {
		if a.Kind <= schedule.BackwardWeight {
			out = append(out, a)
		}
	}
	return out
}

// stepActions checks a rank's timed actions and returns the compute ones
// of each measured step (index 0 is step Warmup), nil for a step without
// records: every record of a measured step with finite times, 0 <= start
// <= end; with a flushing schedule, a recorded step's compute actions are
// the rank's action list's, in order (a split schedule's I may be recorded
// as B).
func stepActions(res *rankResult, c *runConfig, flushes bool) ([][]actionTiming, error) {
	steps := make([][]actionTiming, c.Steps)
	for i, r := range res.Actions {
		if r.Step < c.Warmup || r.Step >= c.Warmup+c.Steps {
			return nil, fmt.Errorf("result.actions[%d].step: want a measured step in [%d, %d], got %d", i, c.Warmup, c.Warmup+c.Steps-1, r.Step)
		}
		if !finiteNonNegative(r.Start) || !finiteNonNegative(r.End) || r.End < r.Start {
			return nil, fmt.Errorf("result.actions[%d]: want finite times 0 <= start <= end, got start %v end %v", i, r.Start, r.End)
		}
		if isCompute(r.Kind) {
			if r.Stage < 0 || r.Stage >= c.Stages*c.Chunks {
				return nil, fmt.Errorf("result.actions[%d].stage: want a virtual stage in [0, %d], got %d", i, c.Stages*c.Chunks-1, r.Stage)
			}
			steps[r.Step-c.Warmup] = append(steps[r.Step-c.Warmup], r)
		}
	}
	if !flushes {
		return steps, nil
	}
	list := computeActions(c.schedule, position(c, res))
	for j, recs := range steps {
		if recs == nil {
			continue
		}
		if len(recs) != len(list) {
			return nil, fmt.Errorf("result.actions: step %d has %d compute actions, the rank's list %d", c.Warmup+j, len(recs), len(list))
		}
		for i, r := range recs {
			a := list[i]
			kindOK := r.Kind == a.Kind.String() || (r.Kind == "B" && a.Kind == schedule.BackwardInput)
			if !kindOK || r.Stage != a.Stage || r.Microbatch != a.Microbatch || r.Chunk != c.schedule.Chunk(a.Stage) {
				return nil, fmt.Errorf("result.actions: step %d's compute action %d: want %s of chunk %d (the rank's action list, in order), got kind %q stage %d chunk %d microbatch %d",
					c.Warmup+j, i, a, c.schedule.Chunk(a.Stage), r.Kind, r.Stage, r.Chunk, r.Microbatch)
			}
		}
	}
	return steps, nil
}

// position is the schedule device (pipeline position) whose action list
// the rank runs: the device the layout gave it (under 1F1B-RR a stage's
// replicas run different devices' lists), or its stage when the rank is
// not in the layout.
func position(c *runConfig, res *rankResult) int {
	if res.Rank >= 0 && res.Rank < len(c.Ranks) {
		return c.Ranks[res.Rank].Device
	}
	return res.Stage
}

// StageReport is one (virtual) stage's median measured time per
// microbatch of each kind of action against the plan's.
type StageReport struct {
	// Stage is the virtual stage (chunk Chunk of pipeline position Position).
	Stage    int `json:"stage"`
	Position int `json:"position"`
	Chunk    int `json:"chunk"`
	// ForwardSeconds is F; BackwardSeconds is B, or I when the schedule
	// splits the backward; WeightSeconds is W (split schedules only).
	ForwardSeconds           float64 `json:"forward_seconds"`
	PredictedForwardSeconds  float64 `json:"predicted_forward_seconds"`
	BackwardSeconds          float64 `json:"backward_seconds"`
	PredictedBackwardSeconds float64 `json:"predicted_backward_seconds"`
	WeightSeconds            float64 `json:"weight_seconds,omitempty"`
	PredictedWeightSeconds   float64 `json:"predicted_weight_seconds,omitempty"`
}

// predictedStageCosts are the plan's per-microbatch times of each virtual
// stage (model order), with where they come from: a layer profile's
// layer times summed over the stage, or, for a transformer plan (which
// carries no per-stage times), the predicted busy time per device,
// iteration × (1 − bubble), split over its m × v microbatch-chunks with
// B = 2F (3F with full recomputation, eq. 4.2). A split schedule's W is
// half the backward, as app's schedule view takes it.
func predictedStageCosts(p *plan.Plan, c *runConfig) ([]schedule.StageCost, string) {
	virtual := c.Stages * c.Chunks
	costs := make([]schedule.StageCost, virtual)
	split := false
	for _, list := range c.schedule.Devices {
		split = split || slices.ContainsFunc(list, func(a schedule.Action) bool { return a.Kind == schedule.BackwardWeight })
	}
	var from string
	if prof := p.Model.Profile; prof != nil && p.Model.Transformer == nil {
		for k := range costs {
			st := p.Stages[k]
			for _, l := range prof.Layers[st.FirstLayer : st.LastLayer+1] {
				costs[k].FwdSeconds += l.FwdSeconds
				costs[k].BwdSeconds += l.BwdSeconds
			}
		}
		from = "the layer profile's times, summed over each stage's layers"
	} else {
		busy := p.Predictions.IterationSeconds * (1 - p.Predictions.BubbleFraction)
		ratio := 2 + recomputedShare(p)
		per := busy / float64(c.Microbatches*c.Chunks) / (1 + ratio)
		for k := range costs {
			costs[k] = schedule.StageCost{FwdSeconds: per, BwdSeconds: ratio * per}
		}
		from = fmt.Sprintf("derived from the plan's iteration time and bubble: busy time per device over %d microbatches × %d chunks, backward = %g × forward (the plan carries no per-stage times)",
			c.Microbatches, c.Chunks, ratio)
	}
	if split {
		for k := range costs {
			costs[k].WgradSeconds = costs[k].BwdSeconds / 2
		}
		from += "; W = half the backward"
	}
	return costs, from
}

// recomputedShare is the share of plan p's layers whose forward pass the
// backward reruns: every one with full recomputation, the first
// RecomputeLayers of each model chunk when set; none otherwise (selective
// recomputation reruns only the attention core).
func recomputedShare(p *plan.Plan) float64 {
	e := p.Execution
	if e.Recompute != model.RecomputeFull {
		return 0
	}
	var all, rerun int
	for _, st := range p.Stages {
		n := max(0, st.LastLayer-st.FirstLayer+1) // a chunk of the embedding or output layer alone holds none
		all += n
		if e.RecomputeLayers == 0 {
			rerun += n
		} else {
			rerun += min(n, e.RecomputeLayers)
		}
	}
	if all == 0 {
		return 0
	}
	return float64(rerun) / float64(all)
}

// stageAnalysis is what the action records give: per-stage times, the
// measured bubble and the measured timeline against the predicted one.
type stageAnalysis struct {
	stages    []StageReport
	bubble    *float64
	steps     int // recorded steps the bubble is the median of
	predicted *schedule.Timeline
	measured  *schedule.Timeline
	// timelineNote says why there is no measured bubble or timeline ("" when there are).
	timelineNote string
}

// missingActions names the ranks that recorded no actions, or "" when all did.
func missingActions(results []*rankResult) string {
	var ranks []string
	for _, r := range results {
		if len(r.Actions) == 0 {
			ranks = append(ranks, fmt.Sprint(r.Rank))
		}
	}
	switch {
	case len(ranks) == 0:
		return ""
	case len(ranks) == len(results):
		return "the workers recorded no action times (no \"actions\" in their results): no per-stage times, measured bubble or measured timeline"
	}
	return fmt.Sprintf("rank(s) %s recorded no action times (no \"actions\" in their results): no per-stage times, measured bubble or measured timeline", strings.Join(ranks, ", "))
}

// analyzeStages computes the per-stage report from every rank's records:
// medians over ranks, steps and microbatches, for the stages with records
// (on one node of several, those it ran). With a flushing schedule, the
// bubble of a step every rank recorded is 1 − busy rank-time / (ranks ×
// the step's slowest rank), the median over those steps, and the measured
// timeline is replica 0's tensor- and context-parallel rank 0 of each
// position in the median one; a schedule without flushes has neither (timelineNote says so).
func analyzeStages(ctx context.Context, p *plan.Plan, c *runConfig, results []*rankResult) (*stageAnalysis, error) {
	info, err := schedule.Kind(c.Schedule).Info()
	if err != nil {
		return nil, err
	}
	costs, _ := predictedStageCosts(p, c)
	pred, err := schedule.Simulate(ctx, c.schedule, schedule.Costs{Stages: costs}, nil)
	if err != nil {
		return nil, fmt.Errorf("predicted timeline: %w", err)
	}
	perRank := make([][][]actionTiming, len(results))
	for i, res := range results {
		if perRank[i], err = stepActions(res, c, info.Flushes()); err != nil {
			return nil, fmt.Errorf("rank %d: %w", res.Rank, err)
		}
	}
	virtual := c.Stages * c.Chunks
	durations := make([][3][]float64, virtual) // F, B or I, W
	var recorded []int                         // measured steps every rank recorded
	for j := range c.Steps {
		all := true
		for i := range results {
			for _, r := range perRank[i][j] {
				durations[r.Stage][kindSlot(r.Kind)] = append(durations[r.Stage][kindSlot(r.Kind)], r.End-r.Start)
			}
			all = all && perRank[i][j] != nil
		}
		if all {
			recorded = append(recorded, j)
		}
	}
	a := &stageAnalysis{predicted: pred, steps: len(recorded)}
	for k := range virtual {
		if len(durations[k][0])+len(durations[k][1])+len(durations[k][2]) == 0 {
			continue // run on another node
		}
		a.stages = append(a.stages, StageReport{
			Stage: k, Position: c.position(k), Chunk: k / c.Stages,
			ForwardSeconds: summarize(durations[k][0]).Median, PredictedForwardSeconds: costs[k].FwdSeconds,
			BackwardSeconds: summarize(durations[k][1]).Median, PredictedBackwardSeconds: costs[k].BwdSeconds - costs[k].WgradSeconds,
			WeightSeconds: summarize(durations[k][2]).Median, PredictedWeightSeconds: costs[k].WgradSeconds,
		})
	}
	switch {
	case !info.Flushes():
		a.timelineNote = fmt.Sprintf("%s has no flush (steps overlap): no per-step bubble or measured timeline", c.Schedule)
		return a, nil
	case len(recorded) == 0:
		a.timelineNote = "no measured step was recorded by every rank: no measured bubble or timeline"
		return a, nil
	}
	bubbles := make([]float64, len(recorded))
	iter := make([]float64, len(recorded))
	for n, j := range recorded {
		busy := 0.0
		for i, res := range results {
			iter[n] = max(iter[n], res.StepSeconds[j])
			for _, r := range perRank[i][j] {
				busy += r.End - r.Start
			}
		}
		if iter[n] > 0 {
			bubbles[n] = max(0, 1-busy/(float64(len(results))*iter[n]))
		}
	}
	med := summarize(bubbles).Median
	a.bubble = &med
	// The median step by iteration time (the lower middle one for even counts).
	order := make([]int, len(recorded))
	for n := range order {
		order[n] = n
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(iter[x], iter[y]) })
	j := recorded[order[(len(recorded)-1)/2]]
	steps := make([][]actionTiming, len(results))
	for i := range results {
		steps[i] = perRank[i][j]
	}
	a.measured, a.timelineNote = measuredTimeline(c, results, steps, j)
	return a, nil
}

// kindSlot is the StageReport column of a recorded kind: 0 F, 1 B or I, 2 W.
func kindSlot(kind string) int {
	switch kind {
	case "F":
		return 0
	case "W":
		return 2
	}
	return 1
}

// measuredTimeline builds the timeline of measured step j from replica
// 0's tensor- and context-parallel rank 0 at each position: the first
// replica-0, tp-rank-0 result there, as results are in rank order and
// placeRanks numbers cp rank 0's tp ranks before the other cp ranks'.
// steps holds each result's compute records of step j. The
// timeline runs from the step's start to its slowest rank's end; or it
// says why it cannot be built.
func measuredTimeline(c *runConfig, results []*rankResult, steps [][]actionTiming, j int) (*schedule.Timeline, string) {
	t := &schedule.Timeline{Kind: schedule.Kind(c.Schedule), Stages: c.Stages * c.Chunks, Chunks: c.Chunks,
		Microbatches: c.Microbatches, Batches: 1, Ops: make([][]schedule.Op, c.Stages), Devices: make([]schedule.DeviceStats, c.Stages)}
	seen := make([]bool, c.Stages)
	for i, r := range results {
		d := position(c, r)
		if r.Replica != 0 || r.TPRank != 0 || seen[d] {
			continue
		}
		seen[d] = true
		for k, rec := range steps[i] {
			t.Ops[d] = append(t.Ops[d], schedule.Op{Action: computeActions(c.schedule, d)[k], Device: d, Chunk: rec.Chunk,
				StartSeconds: rec.Start, EndSeconds: rec.End})
			t.Devices[d].BusySeconds += rec.End - rec.Start
			t.EndSeconds = max(t.EndSeconds, rec.End)
		}
		t.EndSeconds = max(t.EndSeconds, r.StepSeconds[j])
	}
	if d := slices.Index(seen, false); d >= 0 {
		return nil, fmt.Sprintf("replica 0's tp and cp rank 0 of position %d ran on another node: no measured timeline here", d)
	}
	t.StepSeconds = t.EndSeconds
	idle := 0.0
	for d := range t.Devices {
		st := &t.Devices[d]
		st.IdleSeconds = max(0, t.StepSeconds-st.BusySeconds)
		if t.StepSeconds > 0 {
			st.BubbleFraction = st.IdleSeconds / t.StepSeconds
		}
		idle += st.IdleSeconds
	}
	if t.StepSeconds > 0 {
		t.BubbleFraction = idle / (float64(c.Stages) * t.StepSeconds)
	}
	return t, ""
}

// svgPlotMargins is the horizontal space schedule.RenderSVG keeps beside
// the plot (64 px left, 24 px right).
const svgPlotMargins = 88

// timelinesSVG draws the predicted timeline above the measured one in one
// SVG document, both by schedule.RenderSVG; with sameScale the widths are
// proportional to the step times (the longer step spans widthPx), so a
// second is as wide in both.
func timelinesSVG(pred, meas *schedule.Timeline, predTitle, measTitle string, sameScale bool, widthPx int) []byte {
	widths := [2]int{widthPx, widthPx}
	if span := max(pred.StepSeconds, meas.StepSeconds); sameScale && span > 0 {
		for i, t := range []*schedule.Timeline{pred, meas} {
			widths[i] = svgPlotMargins + max(1, int(math.Round(float64(widthPx-svgPlotMargins)*t.StepSeconds/span)))
		}
	}
	var b strings.Builder
	y := 0.0
	var parts []string
	for i, t := range []*schedule.Timeline{pred, meas} {
		title := []string{predTitle, measTitle}[i]
		svg := string(schedule.RenderSVG(t, schedule.SVGOptions{WidthPx: widths[i], Title: title}))
		var w int
		var h float64
		fmt.Sscanf(svg[strings.Index(svg, "width="):], `width="%d" height="%g"`, &w, &h)
		// Nested documents clip to their width: let the title run on.
		svg = strings.Replace(svg, "<svg ", `<svg overflow="visible" `, 1)
		parts = append(parts, fmt.Sprintf(`<g transform="translate(0,%g)">`+"\n%s</g>\n", y, svg))
		y += h
	}
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%g" viewBox="0 0 %d %g">`+"\n", widthPx, y, widthPx, y)
	for _, p := range parts {
		b.WriteString(p)
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// addStages fills the report's per-stage fields from the workers' action
// records and returns the predicted and measured timelines as one SVG;
// without records (or without a measured timeline on this node) it says
// so in PerStageNote and returns nil.
func (r *Report) addStages(ctx context.Context, p *plan.Plan, c *runConfig, results []*rankResult) ([]byte, error) {
	_, r.PredictedStageTimesFrom = predictedStageCosts(p, c)
	if why := missingActions(results); why != "" {
		r.PerStageNote = why
		return nil, nil
	}
	a, err := analyzeStages(ctx, p, c, results)
	if err != nil {
		r.PerStageNote = fmt.Sprintf("the action records are not usable (%v): no per-stage times, measured bubble or measured timeline", err)
		return nil, nil
	}
	r.PerStage, r.BubbleFraction = a.stages, a.bubble
	if a.measured == nil {
		r.PerStageNote = a.timelineNote
		return nil, nil
	}
	scale := "same time scale"
	if !r.Comparable {
		scale = "each on its own time scale: the run is not comparable to the prediction"
	}
	predTitle := fmt.Sprintf("predicted: %s · %d stages · %d microbatches · step %.4g s · bubble %.1f%% (%s)",
		c.Schedule, c.Stages*c.Chunks, c.Microbatches, a.predicted.StepSeconds, 100*a.predicted.BubbleFraction, scale)
	measTitle := fmt.Sprintf("measured on %s: replica 0, tp and cp rank 0 · the median step of %d recorded · step %.4g s · bubble %.1f%%",
		c.Device, a.steps, a.measured.StepSeconds, 100*a.measured.BubbleFraction)
	return timelinesSVG(a.predicted, a.measured, predTitle, measTitle, r.Comparable, timelineWidthPx), nil
}

// timelineWidthPx is the width of the timelines' drawing.
const timelineWidthPx = 1200
