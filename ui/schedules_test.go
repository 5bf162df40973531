package ui

import (
	"strings"
	"testing"

	"pipeplan/app"
	"pipeplan/core/schedule"
)

// TestSchedulesBar: a bar for each schedule that can run the
// configuration, the longest reaching the axis' range, its bubble a
// segment of its own, the values written beside, the plan's own marked;
// a schedule that cannot run gets no bar, and none draws nothing.
func TestSchedulesBar(t *testing.T) {
	if got := schedulesBarSVG([]app.ScheduleOption{{Schedule: schedule.ZBV, Problem: "too many stages"}}); got != "" {
		t.Errorf("no runnable schedule drew %q", got)
	}
	opts := []app.ScheduleOption{
		{Schedule: schedule.OneFOneB, IterationSeconds: 10, BubbleSeconds: 2, Fits: true, Selected: true},
		{Schedule: schedule.ZBV, IterationSeconds: 8.5, BubbleSeconds: 0.5, Fits: false},
		{Schedule: schedule.ZBH1, Problem: "no"},
	}
	svg := schedulesBarSVG(opts)
	for _, want := range []string{
		"<title>1f1b: 10.00 s a step, of which pipeline bubble 2.00 s</title>", "1f1b (the plan&#39;s)",
		">8.50 s, does not fit</text>", ">10.00 s</text>", `middle" fill="#1b1b1b">0</text>`, ">5.00 s</text>", "pipeline bubble",
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("chart lacks %q:\n%s", want, svg)
		}
	}
	if strings.Contains(svg, "zb-h1") || strings.Count(svg, "<title>") != 4 {
		t.Errorf("chart draws the schedule that cannot run, or not two segments a bar:\n%s", svg)
	}
}

// TestScheduleRows: kinds, chunks (ZB-V's in a V), per-GPU throughput, the
// engines with the runner, and why a schedule cannot run.
func TestScheduleRows(t *testing.T) {
	var c PlanPage
	c.App = &App{}
	c.App.Plan.Result.GPUs = 8
	c.App.Plan.Result.Schedules = []app.ScheduleOption{
		{Schedule: schedule.ZBV, Interleave: 1, Chunks: 2, VShaped: true, IterationSeconds: 2, TokensPerSec: 8000, BubbleSeconds: 0.1, PeakBytes: 1 << 30, Fits: true, Selected: true, Engines: []string{"torchtitan"}},
		{Schedule: schedule.TwoBW, Interleave: 1, Chunks: 1, IterationSeconds: 1.9, TokensPerSec: 8400, PeakBytes: 1 << 30, Fits: true, Asynchronous: true},
		{Schedule: schedule.Interleaved, Interleave: 2, Chunks: 2, Problem: "execution.global_batch: 6 microbatches"},
	}
	rows := c.scheduleRows()
	want := [][]string{
		{"zb-v (the plan's)", "2 in a V", "2.00 s", "1000", "100.0 ms", "1.0 GiB", "torchtitan, runner", "fits"},
		{"2bw", "1", "1.90 s", "1050", "0 µs", "1.0 GiB", "runner", "fits; no flush: updates use weights a step stale"},
		{"interleaved", "2", "–", "–", "–", "–", "runner", "execution.global_batch: 6 microbatches"},
	}
	for i, r := range rows {
		if strings.Join(r.Cells, "|") != strings.Join(want[i], "|") {
			t.Errorf("row %d: %q\nwant    %q", i, r.Cells, want[i])
		}
	}
	if rows[2].Class != "rejected" || rows[0].Class != "" {
		t.Errorf("classes %q, %q", rows[0].Class, rows[2].Class)
	}
}
