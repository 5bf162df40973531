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
		o.Title = fmt.Sprintf("%s · %d stages · %d microbatches%s · step %s · bubble %.1f%%",
			t.Kind, t.Stages, t.Microbatches, batches, pickUnit(t.StepSeconds).format(t.StepSeconds), 100*t.BubbleFraction)
	}
	devices := len(t.Ops)
	rowH := math.Max(8, math.Min(30, 900/float64(max(devices, 1))))
	from, to := 0.0, t.StepSeconds
	if o.ToSeconds > o.FromSeconds {
		from, to = max(o.FromSeconds, 0), min(o.ToSeconds, t.StepSeconds)
		if to <= from {
			from, to = 0, t.StepSeconds
		}
	}
	l := svgLayout{left: 64, top: 56, width: float64(o.WidthPx) - 64 - 24, rowH: rowH,
		t0: t.StartSeconds + from, span: to - from, origin: t.StartSeconds, unit: pickUnit(to - from)}
	if l.span > 0 {
		l.scale = l.width / l.span
	}
	if l.span < t.StepSeconds {
		o.Title += fmt.Sprintf(" · showing %s – %s", l.unit.format(from), l.unit.format(to))
	}
	height := l.top + float64(devices)*rowH + 48
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%.0f" viewBox="0 0 %d %.0f" font-family="sans-serif" font-size="12" role="img">`+"\n",
		o.WidthPx, height, o.WidthPx, height)
	fmt.Fprintf(&b, "<title>%s</title>\n", html.EscapeString(o.Title))
	b.WriteString(`<defs><pattern id="idle" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">` +
		`<rect width="6" height="6" fill="#f4f4f4"/><line x1="0" y1="0" x2="0" y2="6" stroke="#bbbbbb" stroke-width="2"/></pattern>` +
		`<pattern id="mixed" width="4" height="4" patternUnits="userSpaceOnUse"><rect width="2" height="4" fill="` + colForward + `"/>` +
		`<rect x="2" width="2" height="4" fill="` + colBackward + `"/></pattern></defs>` + "\n")
	fmt.Fprintf(&b, `<text x="%g" y="18" font-size="14" font-weight="bold">%s</text>`+"\n", l.left, html.EscapeString(o.Title))
	boxes := 0
	for _, ops := range t.Ops {
		for _, op := range ops {
			if a, b := l.clip(op.StartSeconds, op.EndSeconds); b > a {
				boxes++
			}
		}
	}
	aggregate := boxes > o.MaxBoxes || (boxes > 0 && l.width*float64(devices)/float64(boxes) < 3)
	legend(&b, l, t, aggregate)
	for d, ops := range t.Ops {
		y := l.y(d)
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="end" dominant-baseline="middle" font-size="%.0f">GPU %d</text>`+"\n",
			l.left-6, y+rowH/2, math.Min(12, rowH-1), d)
		fmt.Fprintf(&b, `<rect x="%g" y="%.1f" width="%.1f" height="%.1f" fill="url(#idle)"><title>GPU %d idle %s of %s (%.1f%%)</title></rect>`+"\n",
			l.left, y+1, l.width, rowH-2, d, l.unit.format(t.Devices[d].IdleSeconds), l.unit.format(t.StepSeconds), 100*t.Devices[d].BubbleFraction)
		if aggregate {
			drawRuns(&b, l, d, ops)
		} else {
			drawBoxes(&b, l, ops)
		}
	}
	axis(&b, l, height-48)
	b.WriteString("</svg>\n")
	return []byte(b.String())
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
	return s + fmt.Sprintf(" · %s – %s", l.unit.format(o.StartSeconds-l.origin), l.unit.format(o.EndSeconds-l.origin))
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
	class := func(i int) runClass {
		busy := fwd[i] + bwd[i]
		switch {
		case busy < binSec/2:
			return runIdle
		case fwd[i] >= 0.75*busy:
			return runForward
		case bwd[i] >= 0.75*busy:
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
				l.left+float64(i)*binPx, l.y(d)+1, float64(j-i)*binPx, l.rowH-2, fills[c], d, words[c], nf, nb, l.unit.format(from-l.origin), l.unit.format(to-l.origin))
		}
		i = j
	}
}

// legend draws the colour key of what the drawing shows under the title.
func legend(b *strings.Builder, l svgLayout, t *Timeline, aggregate bool) {
	var split, stageWide bool
	for _, ops := range t.Ops {
		for _, o := range ops {
			split = split || o.Kind == BackwardWeight
			stageWide = stageWide || (o.Kind.isBarrier() && o.EndSeconds > o.StartSeconds)
		}
	}
	type entry struct{ fill, text string }
	entries := []entry{{colForward, "forward"}}
	if split {
		entries = append(entries, entry{colBackward, "I: input gradient"}, entry{colWeight, "W: weight gradient"})
	} else {
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
	for v := max(math.Ceil(from/step-1e-9)*step, 0); v <= from+l.span*(1+1e-9); v += step {
		x := l.x(l.origin + v)
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
