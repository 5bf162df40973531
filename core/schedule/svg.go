package schedule

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// SVGOptions control RenderSVG.
type SVGOptions struct {
	// WidthPx is the drawing width in pixels (0 means 1200).
	WidthPx int
	// Title is drawn above the timeline ("" for a summary of the schedule).
	Title string
	// MaxBoxes is the most action boxes drawn one by one; above it (or when
	// boxes would be under 3 px wide) each device row is drawn as runs of
	// forward, backward, alternating and idle time (0 means 4000).
	MaxBoxes int
	// FromSeconds and ToSeconds zoom into part of the step (seconds since
	// it started); ToSeconds <= FromSeconds draws the whole step.
	FromSeconds, ToSeconds float64
	// KeepSteadyState draws every period of a long steady state. By
	// default, when the whole step would need aggregating but would not
	// without its steady state's repeats, all but the first and last of
	// its repeated periods are left out: in their place a marked band says
	// how many, and a strip above the rows shows the whole step to scale.
	KeepSteadyState bool
}

// Colour-blind-safe palette (Okabe & Ito): forward light, backward dark,
// weight gradient orange, stage-wide actions green; later chunks lighter.
const (
	colForward   = "#56B4E9"
	colForward2  = "#A8D8F3"
	colBackward  = "#0072B2"
	colBackward2 = "#4C9BCB"
	colWeight    = "#E69F00"
	colStageWide = "#009E73"
	colAxis      = "#333333"
)

// svgLayout holds the geometry shared by the drawing helpers.
type svgLayout struct {
	left, top, width, rowH float64
	t0, span, scale        float64 // seconds at x = left, seconds drawn, pixels per second
	origin                 float64 // the step's start: times are shown relative to it
	unit                   timeUnit
	gap                    gap // the steady-state periods left out, if any
}

// clip returns the part of [from, to] inside the drawn window.
func (l svgLayout) clip(from, to float64) (float64, float64) {
	return max(from, l.t0), min(to, l.t0+l.span)
}

func (l svgLayout) x(sec float64) float64 { return l.left + (sec-l.t0)*l.scale }
func (l svgLayout) y(d int) float64       { return l.top + float64(d)*l.rowH }

// RenderSVG draws the timeline as a standalone SVG document: one row per
// device, actions as boxes (forward light, backward dark) labelled with
// their microbatch, idle time hatched, a time axis, a legend and a <title>
// tooltip on every box. Large timelines are aggregated (see SVGOptions).
func RenderSVG(t *Timeline, o SVGOptions) []byte {
	if o.WidthPx <= 0 {
		o.WidthPx = 1200
	}
	if o.MaxBoxes <= 0 {
		o.MaxBoxes = 4000
	}
	if o.Title == "" {
		batches := ""
		if t.Batches > 1 {
			batches = fmt.Sprintf(" × %d batches", t.Batches)
		}
		stages := fmt.Sprintf("%d stages", t.Stages)
		switch {
		case t.Stages == 1:
			stages = "1 stage"
		case t.Chunks > 1:
			stages = fmt.Sprintf("p = %d stages × v = %d chunks", t.Stages/t.Chunks, t.Chunks)
			if in, err := t.Kind.Info(); err == nil && in.VShaped {
				stages = fmt.Sprintf("p = %d stages × %d chunks in a V", t.Stages/t.Chunks, t.Chunks)
			}
		}
		o.Title = fmt.Sprintf("%s · %s · %d microbatches%s · step %s · bubble %.1f%%",
			t.Kind, stages, t.Microbatches, batches, pickUnit(t.StepSeconds).format(t.StepSeconds), 100*t.BubbleFraction)
	}
	real := t // the timeline as simulated; t becomes the one drawn
	zoomed := false
	devices := len(t.Ops)
	rowH := math.Max(8, math.Min(30, 900/float64(max(devices, 1))))
	from, to := 0.0, t.StepSeconds
	if o.ToSeconds > o.FromSeconds {
		from, to = max(o.FromSeconds, 0), min(o.ToSeconds, t.StepSeconds)
		if to <= from {
			from, to = 0, t.StepSeconds
		}
		zoomed = to-from < t.StepSeconds
	}
	width := float64(o.WidthPx) - 64 - 24
	var g gap
	if !zoomed && !o.KeepSteadyState && aggregates(t, width, 0, t.StepSeconds, o.MaxBoxes) {
		// Leave out the steady state's repeats if the rest can then be
		// drawn box by box; otherwise the whole step is aggregated.
		if ss, ok := findSteadyState(t); ok && ss.Repeats > 4 {
			if c, cg := collapse(t, ss, gapPx/width); !aggregates(c, width, 0, c.StepSeconds, o.MaxBoxes) {
				t, g = c, cg
				from, to = 0, t.StepSeconds
			}
		}
	}
	l := svgLayout{left: 64, top: 56, width: width, rowH: rowH,
		t0: t.StartSeconds + from, span: to - from, origin: t.StartSeconds, unit: pickUnit(to - from), gap: g}
	if l.span > 0 {
		l.scale = l.width / l.span
	}
	if l.span < t.StepSeconds {
		o.Title += fmt.Sprintf(" · showing %s – %s", l.unit.format(from), l.unit.format(to))
	}
	height := l.top + float64(devices)*rowH + 48
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%.0f" viewBox="0 0 %d %.0f" font-family="sans-serif" font-size="12" role="img" aria-label="%s">`+"\n",
		o.WidthPx, height, o.WidthPx, height, html.EscapeString("timeline: "+o.Title))
	fmt.Fprintf(&b, "<title>%s</title>\n", html.EscapeString(o.Title))
	b.WriteString(`<defs><pattern id="idle" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">` +
		`<rect width="6" height="6" fill="#f4f4f4"/><line x1="0" y1="0" x2="0" y2="6" stroke="#bbbbbb" stroke-width="2"/></pattern>` +
		`<pattern id="mixed" width="4" height="4" patternUnits="userSpaceOnUse"><rect width="2" height="4" fill="` + colForward + `"/>` +
		`<rect x="2" width="2" height="4" fill="` + colBackward + `"/></pattern></defs>` + "\n")
	fmt.Fprintf(&b, `<text x="%g" y="18" font-size="14" font-weight="bold">%s</text>`+"\n", l.left, html.EscapeString(o.Title))
	aggregate := aggregates(t, l.width, from, to, o.MaxBoxes)
	legend(&b, l, t, aggregate)
	if g.Periods > 0 {
		overview(&b, l, real)
	}
	for d, ops := range t.Ops {
		y := l.y(d)
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="end" dominant-baseline="middle" font-size="%.0f">GPU %d</text>`+"\n",
			l.left-6, y+rowH/2, math.Min(12, rowH-1), d)
		fmt.Fprintf(&b, `<rect x="%g" y="%.1f" width="%.1f" height="%.1f" fill="url(#idle)"><title>GPU %d idle %s of %s (%.1f%%)</title></rect>`+"\n",
			l.left, y+1, l.width, rowH-2, d, l.unit.format(t.Devices[d].IdleSeconds), l.unit.format(real.StepSeconds), 100*t.Devices[d].BubbleFraction)
		if aggregate {
			drawRuns(&b, l, d, ops)
		} else {
			drawBoxes(&b, l, ops)
		}
	}
	if g.Periods > 0 {
		band(&b, l, devices)
	}
	axis(&b, l, height-48)
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// gapPx is the width of the band standing for a collapsed steady state.
const gapPx = 30

// aggregates reports whether the actions of t in [from, to] (seconds since
// the start) are too many (over maxBoxes) or too narrow (under 3 px on
// average at width px) to draw one by one.
func aggregates(t *Timeline, width, from, to float64, maxBoxes int) bool {
	boxes := 0
	for _, ops := range t.Ops {
		for _, op := range ops {
			if max(op.StartSeconds, t.StartSeconds+from) < min(op.EndSeconds, t.StartSeconds+to) {
				boxes++
			}
		}
	}
	return boxes > maxBoxes || (boxes > 0 && width*float64(len(t.Ops))/float64(boxes) < 3)
}

// overview draws, between the legend and the rows, the whole step to scale
// as a thin bar with the collapsed steady state marked on it.
func overview(b *strings.Builder, l svgLayout, t *Timeline) {
	g := l.gap
	scale := l.width / t.StepSeconds
	x0 := l.left + (g.AtSeconds-t.StartSeconds)*scale
	w := float64(g.Periods) * g.PeriodSeconds * scale
	fmt.Fprintf(b, `<rect x="%g" y="45" width="%g" height="6" fill="#cccccc"><title>the whole step to scale: %s</title></rect>`+"\n",
		l.left, l.width, l.unit.format(t.StepSeconds))
	fmt.Fprintf(b, `<rect x="%.1f" y="45" width="%.1f" height="6" fill="#666666"><title>left out below: %d repeated periods of %s (%s)</title></rect>`+"\n",
		x0, w, g.Periods, pickUnit(g.PeriodSeconds).format(g.PeriodSeconds), l.unit.format(float64(g.Periods)*g.PeriodSeconds))
}

// band draws the marked gap where the collapsed periods would be, across
// every row, saying how many periods of what length it stands for.
func band(b *strings.Builder, l svgLayout, devices int) {
	g := l.gap
	x, h := l.x(g.AtSeconds), float64(devices)*l.rowH
	what := fmt.Sprintf("⋯ %d × %s left out ⋯", g.Periods, pickUnit(g.PeriodSeconds).format(g.PeriodSeconds))
	fmt.Fprintf(b, `<g><title>%d repeated steady-state periods of %s (%s in all) left out: the drawing continues with the same actions after them</title>`,
		g.Periods, pickUnit(g.PeriodSeconds).format(g.PeriodSeconds), l.unit.format(float64(g.Periods)*g.PeriodSeconds))
	fmt.Fprintf(b, `<rect x="%.1f" y="%g" width="%.1f" height="%.1f" fill="#ffffff"/>`, x, l.top, gapPx*1.0, h)
	for _, e := range []float64{x, x + gapPx} {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%g" x2="%.1f" y2="%.1f" stroke="%s" stroke-dasharray="4 3"/>`, e, l.top, e, l.top+h, colAxis)
	}
	fmt.Fprintf(b, `<text transform="translate(%.1f %.1f) rotate(-90)" text-anchor="middle" dominant-baseline="central" font-size="11">%s</text></g>`+"\n",
		x+gapPx/2, l.top+h/2, html.EscapeString(what))
}

// opColour returns the fill of an action.
func opColour(o Op) string {
	switch o.Kind {
	case Forward:
		if o.Chunk > 0 {
			return colForward2
		}
		return colForward
	case Backward, BackwardInput:
		if o.Chunk > 0 {
			return colBackward2
		}
		return colBackward
	case BackwardWeight:
		return colWeight
	}
	return colStageWide
}

// drawBoxes draws one box per action with a microbatch label when it fits.
func drawBoxes(b *strings.Builder, l svgLayout, ops []Op) {
	for _, o := range ops {
		from, to := l.clip(o.StartSeconds, o.EndSeconds)
		w := (to - from) * l.scale
		if w <= 0 {
			continue
		}
		x, y := l.x(from), l.y(o.Device)
		fmt.Fprintf(b, `<rect x="%.2f" y="%.1f" width="%.2f" height="%.1f" fill="%s" stroke="#ffffff" stroke-width="0.5"><title>%s</title></rect>`+"\n",
			x, y+1, w, l.rowH-2, opColour(o), html.EscapeString(describe(o, l)))
		label := ""
		if o.Microbatch >= 0 {
			label = fmt.Sprint(o.Microbatch)
		}
		font := math.Min(11, l.rowH-4)
		if label != "" && font >= 7 && w >= float64(len(label))*font*0.62+2 {
			fill := "#000000"
			if o.Kind == Backward || o.Kind == BackwardInput {
				fill = "#ffffff"
			}
			fmt.Fprintf(b, `<text x="%.2f" y="%.1f" text-anchor="middle" dominant-baseline="central" font-size="%.0f" fill="%s" pointer-events="none">%s</text>`+"\n",
				x+w/2, y+l.rowH/2, font, fill, label)
		}
	}
}

// describe is the tooltip of one action.
func describe(o Op, l svgLayout) string {
	s := fmt.Sprintf("GPU %d · %v · %s", o.Device, o.Action, kindWords[o.Kind])
	if o.Microbatch >= 0 {
		s += fmt.Sprintf(" · microbatch %d · chunk %d", o.Microbatch, o.Chunk)
	}
	if o.UsedVersion >= 0 {
		s += fmt.Sprintf(" · weights v%d", o.UsedVersion)
	}
	return s + fmt.Sprintf(" · %s – %s", l.unit.format(l.gap.real(o.StartSeconds)-l.origin), l.unit.format(l.gap.real(o.EndSeconds)-l.origin))
}

var kindWords = [numKinds]string{"forward", "backward", "input gradient", "weight gradient", "send activation",
	"receive activation", "send gradient", "receive gradient", "all-reduce gradients", "optimizer step"}

// runClass is what a stretch of an aggregated row mostly does.
type runClass uint8

const (
	runIdle runClass = iota
	runForward
	runBackward
	runMixed
)

// drawRuns draws a device row at 2-px resolution as merged runs of mostly
// forward, mostly backward, alternating (1F1B steady state) or idle time;
// idle runs leave the hatched background visible.
func drawRuns(b *strings.Builder, l svgLayout, d int, ops []Op) {
	const binPx = 2.0
	bins := int(math.Ceil(l.width / binPx))
	if bins == 0 || l.scale == 0 {
		return
	}
	fwd, bwd := make([]float64, bins), make([]float64, bins)
	binSec := binPx / l.scale
	for _, o := range ops {
		acc := bwd
		switch {
		case o.Kind == Forward:
			acc = fwd
		case !o.Kind.isCompute():
			continue
		}
		for i := max(int((o.StartSeconds-l.t0)/binSec), 0); i < bins; i++ {
			lo, hi := l.t0+float64(i)*binSec, l.t0+float64(i+1)*binSec
			if lo >= o.EndSeconds {
				break
			}
			acc[i] += math.Max(0, math.Min(hi, o.EndSeconds)-math.Max(lo, o.StartSeconds))
		}
	}
	// A bin is idle when under half busy; otherwise forward, backward or
	// alternating by its shares over it and two bins each side, so that a
	// steady state whose period beats with the bins reads as one run.
	class := func(i int) runClass {
		if fwd[i]+bwd[i] < binSec/2 {
			return runIdle
		}
		f, bw := 0.0, 0.0
		for j := max(i-2, 0); j <= min(i+2, bins-1); j++ {
			f, bw = f+fwd[j], bw+bwd[j]
		}
		switch {
		case f >= 0.75*(f+bw):
			return runForward
		case bw >= 0.75*(f+bw):
			return runBackward
		}
		return runMixed
	}
	fills := map[runClass]string{runForward: colForward, runBackward: colBackward, runMixed: "url(#mixed)"}
	words := map[runClass]string{runForward: "forwards", runBackward: "backwards", runMixed: "alternating forwards and backwards"}
	k := 0 // first op not yet counted; ops are in time order
	for i := 0; i < bins; {
		c, j := class(i), i+1
		for j < bins && class(j) == c {
			j++
		}
		if c != runIdle {
			from, to := l.t0+float64(i)*binSec, l.t0+float64(j)*binSec
			nf, nb := 0, 0
			for ; k < len(ops) && ops[k].StartSeconds < to; k++ {
				switch {
				case ops[k].StartSeconds < from:
				case ops[k].Kind == Forward:
					nf++
				case ops[k].Kind.isCompute():
					nb++
				}
			}
			fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>GPU %d · %s · %d forward and %d backward actions · %s – %s</title></rect>`+"\n",
				l.left+float64(i)*binPx, l.y(d)+1, float64(j-i)*binPx, l.rowH-2, fills[c], d, words[c], nf, nb, l.unit.format(l.gap.real(from)-l.origin), l.unit.format(l.gap.real(to)-l.origin))
		}
		i = j
	}
}

// legend draws the colour key of what the drawing shows under the title.
func legend(b *strings.Builder, l svgLayout, t *Timeline, aggregate bool) {
	var whole, split, stageWide bool
	for _, ops := range t.Ops {
		for _, o := range ops {
			whole = whole || o.Kind == Backward
			split = split || o.Kind == BackwardWeight
			stageWide = stageWide || (o.Kind.isBarrier() && o.EndSeconds > o.StartSeconds)
		}
	}
	type entry struct{ fill, text string }
	entries := []entry{{colForward, "forward"}}
	switch {
	case split && whole: // DualPipeV: some backwards whole, others split
		entries = append(entries, entry{colBackward, "B: backward, or I: input gradient"}, entry{colWeight, "W: weight gradient"})
	case split:
		entries = append(entries, entry{colBackward, "I: input gradient"}, entry{colWeight, "W: weight gradient"})
	default:
		entries = append(entries, entry{colBackward, "backward"})
	}
	if t.Chunks > 1 && !aggregate {
		entries = append(entries, entry{colForward2, "later chunk (forward)"}, entry{colBackward2, "later chunk (backward)"})
	}
	if stageWide {
		entries = append(entries, entry{colStageWide, "all-reduce / optimizer"})
	}
	if aggregate {
		entries = append(entries, entry{"url(#mixed)", "alternating F/B (aggregated)"})
	}
	x := l.left
	for _, e := range append(entries, entry{"url(#idle)", "idle"}) {
		fmt.Fprintf(b, `<rect x="%.0f" y="28" width="12" height="12" fill="%s"/><text x="%.0f" y="38">%s</text>`+"\n", x, e.fill, x+16, e.text)
		x += 16 + 7*float64(len(e.text)) + 14
	}
}

// axis draws the time axis of the window with round ticks.
func axis(b *strings.Builder, l svgLayout, y float64) {
	fmt.Fprintf(b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="%s"/>`+"\n", l.left, y, l.left+l.width, y, colAxis)
	if l.span <= 0 {
		return
	}
	step := niceStep(l.span / 10)
	from := l.t0 - l.origin
	g := l.gap
	end := g.real(l.t0+l.span) - l.origin // the real time at the right edge
	for v := max(math.Ceil(from/step-1e-9)*step, 0); v <= end+l.span*1e-9; v += step {
		at := l.origin + v // drawn time of real time v
		if g.Periods > 0 && at > g.AtSeconds {
			if at -= g.ShiftSeconds; at < g.AtSeconds+g.BandSeconds {
				continue // left out
			}
		}
		x := l.x(at)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"/><text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n",
			x, y, x, y+5, colAxis, x, y+18, l.unit.format(v))
	}
	fmt.Fprintf(b, `<text x="%g" y="%.1f" text-anchor="middle" fill="%s">time since the step started</text>`+"\n", l.left+l.width/2, y+36, colAxis)
}

// niceStep rounds a tick spacing up to 1, 2 or 5 × 10^k.
func niceStep(raw float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// timeUnit formats seconds in a unit suited to a duration.
type timeUnit struct {
	name  string
	scale float64
}

// pickUnit chooses s, ms or µs for durations around d seconds.
func pickUnit(d float64) timeUnit {
	switch {
	case d >= 1 || d == 0:
		return timeUnit{"s", 1}
	case d >= 1e-3:
		return timeUnit{"ms", 1e3}
	}
	return timeUnit{"µs", 1e6}
}

func (u timeUnit) format(sec float64) string {
	return fmt.Sprintf("%.4g %s", sec*u.scale, u.name)
}
