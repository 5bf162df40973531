package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"pipeplan/core/model"
)

// fixtureResults reads the hand-made per-rank fixtures of
// testdata/results/<name> (see its README) through parseResult.
func fixtureResults(t *testing.T, name string, c *runConfig) []*rankResult {
	t.Helper()
	var out []*rankResult
	for _, rk := range c.Ranks {
		data, err := os.ReadFile(fmt.Sprintf("testdata/results/%s/result-rank%d.json", name, rk.Rank))
		if err != nil {
			t.Fatal(err)
		}
		res, err := parseResult(data, rk, c)
		if err != nil {
			t.Fatalf("rank %d: %v", rk.Rank, err)
		}
		out = append(out, res)
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestPerStageReport: from the fixtures' hand simulation (testdata/results
// README): stage 0's forwards take 10 ms in step 1 and 11 ms in step 2, so
// their median is 10.5 ms; its backwards 21 ms; stage 1's 12.6 and 25.2 ms.
// Step 1 keeps the ranks busy 4 × 30 + 4 × 36 = 264 ms of 2 × 178 ms, a
// bubble of 1 − 264/356, and step 2 (every time × 1.1) the same. The
// profile's layers take 1 ms forward, 2 ms backward: 2 and 4 ms per stage.
func TestPerStageReport(t *testing.T) {
	p := loadPlan(t, "tiny-profile.json")
	c, err := newRunConfig(p, options{device: "cpu", steps: 2, warmup: 1})
	if err != nil {
		t.Fatal(err)
	}
	results := fixtureResults(t, "tiny-profile-gpipe", c)
	r := newReport(p, c, results)
	svg, err := r.addStages(context.Background(), p, c, results)
	if err != nil {
		t.Fatal(err)
	}
	want := []StageReport{
		{Stage: 0, ForwardSeconds: 0.0105, PredictedForwardSeconds: 0.002, BackwardSeconds: 0.021, PredictedBackwardSeconds: 0.004},
		{Stage: 1, Position: 1, ForwardSeconds: 0.0126, PredictedForwardSeconds: 0.002, BackwardSeconds: 0.0252, PredictedBackwardSeconds: 0.004},
	}
	if len(r.PerStage) != 2 {
		t.Fatalf("per stage %+v", r.PerStage)
	}
	for i, w := range want {
		g := r.PerStage[i]
		if g.Stage != w.Stage || g.Position != w.Position || g.Chunk != 0 || !near(g.ForwardSeconds, w.ForwardSeconds) ||
			!near(g.BackwardSeconds, w.BackwardSeconds) || !near(g.PredictedForwardSeconds, w.PredictedForwardSeconds) ||
			!near(g.PredictedBackwardSeconds, w.PredictedBackwardSeconds) || g.WeightSeconds != 0 || g.PredictedWeightSeconds != 0 {
			t.Errorf("stage %d: %+v, want %+v", i, g, w)
		}
	}
	if wantBubble := 1 - 0.264/(2*0.178); r.BubbleFraction == nil || !near(*r.BubbleFraction, wantBubble) {
		t.Errorf("bubble %v, want %v", r.BubbleFraction, wantBubble)
	}
	if r.PredictedBubbleFraction != 0.2 || r.PerStageNote != "" || !strings.Contains(r.PredictedStageTimesFrom, "layer profile") {
		t.Errorf("predicted bubble %v, note %q, from %q", r.PredictedBubbleFraction, r.PerStageNote, r.PredictedStageTimesFrom)
	}
	// Both timelines in one picture: the predicted GPipe step is
	// (m + p − 1)(F + B) = 5 × 6 ms, the measured one the median step's 178 ms.
	s := string(svg)
	if strings.Count(s, "<svg") != 3 || !strings.Contains(s, "step 0.03 s") || !strings.Contains(s, "step 0.178 s") ||
		strings.Count(s, ">GPU 0</text>") != 2 || strings.Count(s, "GPU 1 · 1B3 · backward") != 2 {
		t.Errorf("timelines SVG lacks the two timelines:\n%.3000s", s)
	}
	var b bytes.Buffer
	if err := r.writeTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"0 (0, 0)", "10.5", "25.2", "bubble (idle share of the step)", "25.8%", "predicted 20.0%"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	enc, _ := json.Marshal(r)
	for _, key := range []string{`"per_stage":[`, `"bubble_fraction":0.25`, `"predicted_bubble_fraction":0.2`, `"comparable":true`, `"per_rank":[`} {
		if !bytes.Contains(enc, []byte(key)) {
			t.Errorf("JSON report lacks %s: %s", key, enc)
		}
	}
}

// TestTimelinesSameScale: with a comparable run the two drawings have the
// same pixels per second (plot widths proportional to the step times);
// otherwise each spans the full width.
func TestTimelinesSameScale(t *testing.T) {
	p := loadPlan(t, "tiny-profile.json")
	c, err := newRunConfig(p, options{device: "cpu", steps: 2, warmup: 1})
	if err != nil {
		t.Fatal(err)
	}
	a, err := analyzeStages(context.Background(), p, c, fixtureResults(t, "tiny-profile-gpipe", c))
	if err != nil {
		t.Fatal(err)
	}
	widths := func(svg []byte) []int {
		var ws []int
		for _, m := range regexp.MustCompile(`<svg overflow="visible" xmlns="http://www.w3.org/2000/svg" width="(\d+)"`).FindAllSubmatch(svg, -1) {
			w, _ := strconv.Atoi(string(m[1]))
			ws = append(ws, w)
		}
		return ws
	}
	same := widths(timelinesSVG(a.predicted, a.measured, "p", "m", true, 1200))
	pxPerSec := func(w int, step float64) float64 { return float64(w-svgPlotMargins) / step }
	if len(same) != 2 || same[1] != 1200 || math.Abs(pxPerSec(same[0], 0.03)-pxPerSec(same[1], 0.178)) > pxPerSec(same[1], 0.178)*0.01 {
		t.Errorf("same scale: widths %v for steps 0.03 s and 0.178 s", same)
	}
	if own := widths(timelinesSVG(a.predicted, a.measured, "p", "m", false, 1200)); len(own) != 2 || own[0] != 1200 || own[1] != 1200 {
		t.Errorf("own scales: widths %v", own)
	}
}

// TestPerStageReportWithoutActions: a worker that records no actions
// leaves the per-stage fields empty, and the report says so plainly.
func TestPerStageReportWithoutActions(t *testing.T) {
	p := loadPlan(t, "tiny-profile.json")
	c, err := newRunConfig(p, options{device: "cpu", steps: 2, warmup: 1})
	if err != nil {
		t.Fatal(err)
	}
	results := fixtureResults(t, "tiny-profile-gpipe", c)
	results[1].Actions = nil
	r := newReport(p, c, results)
	if svg, err := r.addStages(context.Background(), p, c, results); err != nil || svg != nil {
		t.Fatalf("svg %d bytes, %v", len(svg), err)
	}
	if r.PerStage != nil || r.BubbleFraction != nil || r.PerStageNote != `rank(s) 1 recorded no action times (no "actions" in their results): no per-stage times, measured bubble or measured timeline` {
		t.Errorf("per stage %+v, bubble %v, note %q", r.PerStage, r.BubbleFraction, r.PerStageNote)
	}
	results[0].Actions = nil
	r = newReport(p, c, results)
	if _, err := r.addStages(context.Background(), p, c, results); err != nil || !strings.HasPrefix(r.PerStageNote, "the workers recorded no action times") {
		t.Errorf("note %q, %v", r.PerStageNote, err)
	}
	var b bytes.Buffer
	if err := r.writeTable(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "per stage: NOTE: the workers recorded no action times") {
		t.Errorf("table does not say so:\n%s", b.String())
	}
}

// TestStepActionsRejects: records of an unmeasured step, out of the action
// list's order, of the wrong chunk or kind, partial steps or bad times are
// refused with the field; waits and optimizer steps are left out.
func TestStepActionsRejects(t *testing.T) {
	p := loadPlan(t, "tiny-profile.json")
	c, err := newRunConfig(p, options{device: "cpu", steps: 2, warmup: 1})
	if err != nil {
		t.Fatal(err)
	}
	res := fixtureResults(t, "tiny-profile-gpipe", c)[1]
	steps, err := stepActions(res, c, true)
	if err != nil || len(steps) != 2 || len(steps[0]) != 8 || len(steps[1]) != 8 || steps[1][0].Kind != "F" || steps[1][0].Step != 2 {
		t.Fatalf("rank 1's steps: %+v, %v", steps, err)
	}
	good := res.Actions // RECV_F, F, ... B, OPT_STEP per step: F0 is record 1, B0 record 8
	for _, tc := range []struct {
		edit func([]actionTiming) []actionTiming
		want string
	}{
		{func(a []actionTiming) []actionTiming { a[1].Step = 0; return a }, "result.actions[1].step: want a measured step in [1, 2], got 0"},
		{func(a []actionTiming) []actionTiming { return append(a[:1], a[2:]...) }, "result.actions: step 1 has 7 compute actions, the rank's list 8"},
		{func(a []actionTiming) []actionTiming { a[1].Microbatch, a[3].Microbatch = 1, 0; return a }, "step 1's compute action 0: want 1F0 of chunk 0 (the rank's action list, in order), got kind \"F\" stage 1 chunk 0 microbatch 1"},
		{func(a []actionTiming) []actionTiming { a[3].Chunk = 1; return a }, "step 1's compute action 1: want 1F1 of chunk 0"},
		{func(a []actionTiming) []actionTiming { a[8].Kind = "W"; return a }, "step 1's compute action 4: want 1B0"},
		{func(a []actionTiming) []actionTiming { a[8].Stage = 7; return a }, "result.actions[8].stage: want a virtual stage in [0, 1], got 7"},
		{func(a []actionTiming) []actionTiming { a[5].End = a[5].Start - 1e-3; return a }, "result.actions[5]: want finite times 0 <= start <= end"},
		{func(a []actionTiming) []actionTiming { a[0].Start = math.Inf(1); return a }, "result.actions[0]: want finite times"},
	} {
		r := *res
		r.Actions = tc.edit(append([]actionTiming(nil), good...))
		if _, err := stepActions(&r, c, true); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
	// Without a flush the order is not checked (steps overlap).
	r := *res
	r.Actions = append([]actionTiming(nil), good...)
	r.Actions[1].Microbatch, r.Actions[3].Microbatch = 1, 0
	if _, err := stepActions(&r, c, false); err != nil {
		t.Errorf("no flush: %v", err)
	}
}

// TestPerStageReportBadRecords: records that do not match the action list
// leave the per-stage fields empty and say why.
func TestPerStageReportBadRecords(t *testing.T) {
	p := loadPlan(t, "tiny-profile.json")
	c, err := newRunConfig(p, options{device: "cpu", steps: 2, warmup: 1})
	if err != nil {
		t.Fatal(err)
	}
	results := fixtureResults(t, "tiny-profile-gpipe", c)
	results[0].Actions = results[0].Actions[1:]
	r := newReport(p, c, results)
	if svg, err := r.addStages(context.Background(), p, c, results); err != nil || svg != nil || r.PerStage != nil ||
		!strings.HasPrefix(r.PerStageNote, "the action records are not usable (rank 0: result.actions: step 1 has 7 compute actions") {
		t.Errorf("svg %d bytes, %v, per stage %+v, note %q", len(svg), err, r.PerStage, r.PerStageNote)
	}
}

// TestPredictedStageCostsRecompute: without per-stage times, a
// transformer plan's predicted backward is twice its forward, plus the
// forward it reruns for the layers that recompute: every one (3×), the
// first of each two-layer stage (2.5×), or none for selective
// recomputation (2×, the attention core aside).
func TestPredictedStageCostsRecompute(t *testing.T) {
	for _, c := range []struct {
		recompute string
		layers    int
		ratio     float64
	}{{"none", 0, 2}, {"selective", 0, 2}, {"full", 0, 3}, {"full", 1, 2.5}, {"full", 5, 3}} {
		p := loadPlan(t, "tiny-llama-tp2.json") // two stages of two layers
		p.Execution.Recompute, p.Execution.RecomputeLayers = model.Recompute(c.recompute), c.layers
		rc, err := newRunConfig(p, options{device: "cpu", steps: 2, warmup: 1})
		if err != nil {
			t.Fatal(err)
		}
		costs, from := predictedStageCosts(p, rc)
		for k, sc := range costs {
			if !near(sc.BwdSeconds/sc.FwdSeconds, c.ratio) {
				t.Errorf("recompute %s, %d layers: stage %d backward %.3g × forward, want %g (%s)", c.recompute, c.layers, k, sc.BwdSeconds/sc.FwdSeconds, c.ratio, from)
			}
		}
	}
}
