package ui

import (
	"fmt"
	"html"
	"math"
	"strings"

	"github.com/vugu/vugu"

	"pipeplan/app"
)

// scheduleColours are the schedules chart's: the step but its bubble in the
// breakdown chart's compute colour, the bubble in its bubble colour.
var scheduleColours = [2]string{breakdownColours[0], breakdownColours[6]}

// schedulesBarSVG draws the selected configuration's step under each
// pipeline schedule: one bar a schedule that can run it, its length the
// iteration time on a common axis in seconds, the pipeline bubble its
// last part, with the values on it; the plan's own schedule marked. It
// returns "" when none can run.
func schedulesBarSVG(opts []app.ScheduleOption) string {
	var longest float64
	for _, o := range opts {
		if o.Problem == "" {
			longest = max(longest, o.IterationSeconds)
		}
	}
	if !(longest > 0) {
		return ""
	}
	const width, labelW, barH, rowH, axisH = 640.0, 130.0, 16.0, 22.0, 26.0
	plotW := width - labelW - 100 // room for the value after the longest bar
	step := roundStep(longest / 4)
	ticks := int(math.Ceil(longest / step))
	scale := plotW / (float64(ticks) * step)
	rows := 0
	for _, o := range opts {
		if o.Problem == "" {
			rows++
		}
	}
	height := float64(rows)*rowH + axisH
	var s strings.Builder
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="iteration time under each pipeline schedule">`, width, height, width, height)
	row := 0
	for _, o := range opts {
		if o.Problem != "" {
			continue
		}
		y := float64(row) * rowH
		name := string(o.Schedule)
		if o.Selected {
			name += " (the plan's)"
		}
		fmt.Fprintf(&s, `<text x="%.0f" y="%.1f" font-size="11" text-anchor="end" fill="#1b1b1b">%s</text>`, labelW-6, y+barH-4, html.EscapeString(name))
		rest, bubble := (o.IterationSeconds-o.BubbleSeconds)*scale, o.BubbleSeconds*scale
		label := fmt.Sprintf("%s: %s a step, of which pipeline bubble %s", o.Schedule, secs(o.IterationSeconds), secs(o.BubbleSeconds))
		fmt.Fprintf(&s, `<rect x="%.0f" y="%.1f" width="%.2f" height="%.0f" fill="%s"><title>%s</title></rect>`, labelW, y, rest, barH, scheduleColours[0], html.EscapeString(label))
		if bubble > 0 {
			fmt.Fprintf(&s, `<rect x="%.2f" y="%.1f" width="%.2f" height="%.0f" fill="%s"><title>%s</title></rect>`, labelW+rest, y, bubble, barH, scheduleColours[1], html.EscapeString(label))
		}
		value := secs(o.IterationSeconds)
		if !o.Fits {
			value += ", does not fit"
		}
		fmt.Fprintf(&s, `<text x="%.1f" y="%.1f" font-size="10" fill="#1b1b1b">%s</text>`, labelW+rest+bubble+4, y+barH-4, html.EscapeString(value))
		row++
	}
	axisY := float64(rows) * rowH
	fmt.Fprintf(&s, `<line x1="%.0f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#1b1b1b"/>`, labelW, axisY, labelW+plotW, axisY)
	for i := 0; i <= ticks; i++ {
		v := float64(i) * step
		x := labelW + v*scale
		tick := "0"
		if i > 0 {
			tick = secs(v)
		}
		fmt.Fprintf(&s, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#1b1b1b"/><text x="%.1f" y="%.1f" font-size="10" text-anchor="middle" fill="#1b1b1b">%s</text>`, x, axisY, x, axisY+4, x, axisY+15, tick)
	}
	fmt.Fprintf(&s, `<rect x="10" y="%.1f" width="10" height="10" fill="%s"/><text x="24" y="%.1f" font-size="10" fill="#1b1b1b">pipeline bubble</text>`, axisY+8, scheduleColours[1], axisY+17)
	s.WriteString(`</svg>`)
	return s.String()
}

// schedulesSVG draws the selected configuration's schedules
// (schedulesBarSVG), kept for the result on screen (charts).
func (c *PlanPage) schedulesSVG() vugu.HTML {
	opts, m := c.App.Plan.Result.Schedules, &c.App.charts
	if len(opts) == 0 {
		return vugu.HTML("")
	}
	if m.schedulesOf != &opts[0] {
		m.schedulesOf, m.schedules = &opts[0], vugu.HTML(schedulesBarSVG(opts))
	}
	return m.schedules
}

// scheduleHeaders are the schedules table's columns.
var scheduleHeaders = []column{
	{"schedule", "the pipeline schedule (the Plan inputs' schedule select describes each); the plan's own is marked"},
	{"chunks a GPU", "model chunks per GPU: the interleaved schedule's v, ZB-V's two in a V"},
	{"step", "predicted iteration time"}, {"tokens/s a GPU", "throughput per GPU"},
	{"bubble", "the pipeline's fill and drain: the step past the slowest GPU's work"},
	{"peak memory", "the most loaded GPU's, without the reserve"},
	{"runs on", "the engines whose launch artifacts run the schedule; pipeplan's runner runs every one"},
	{"note", "why it cannot run, whether it fits, and whether its updates wait for a flush"},
}

// scheduleRows are the schedules table's rows.
func (c *PlanPage) scheduleRows() []tableRow {
	r := c.App.Plan.Result
	out := make([]tableRow, len(r.Schedules))
	for i, o := range r.Schedules {
		name := string(o.Schedule)
		if o.Selected {
			name += " (the plan's)"
		}
		row := tableRow{Index: i, Selected: o.Selected}
		if o.Problem != "" || !o.Fits {
			row.Class = "rejected"
		}
		if o.Problem != "" {
			row.Cells = []string{name, o.ChunksText(), "–", "–", "–", "–", o.EnginesText(), o.Note()}
			out[i] = row
			continue
		}
		row.Cells = []string{name, o.ChunksText(), secs(o.IterationSeconds), fmt.Sprintf("%.0f", o.TokensPerSec/float64(r.GPUs)),
			secs(o.BubbleSeconds), gib(o.PeakBytes), o.EnginesText(), o.Note()}
		out[i] = row
	}
	return out
}
