package ui

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"

	"pipeplan/core/cost"
)

// memoryParts are the stacked segments of a memory bar, with their
// Okabe–Ito colours (colour-blind safe) and how each is computed.
var memoryParts = []struct {
	name, colour, how string
	bytes             func(cost.Memory) float64
}{
	{"weights", "#0072B2", "parameters of the stage's layers × bytes per value (eq. 4.3), all versions the schedule keeps", func(m cost.Memory) float64 { return m.WeightBytes }},
	{"gradients", "#56B4E9", "one gradient per parameter", func(m cost.Memory) float64 { return m.GradientBytes }},
	{"optimizer", "#009E73", "optimizer state per parameter (Adam: fp32 master weights, momentum, variance), sharded by ZeRO", func(m cost.Memory) float64 { return m.OptimizerBytes }},
	{"activations", "#E69F00", "stashed activations at the schedule's peak in-flight microbatches (Korthikanti et al. 2022)", func(m cost.Memory) float64 { return m.ActivationBytes }},
	{"buffers", "#CC79A7", "point-to-point send/receive buffers", func(m cost.Memory) float64 { return m.CommBufferBytes }},
	{"FP8 weights", "#D55E00", "FP8 training: Transformer Engine's FP8 copy of each linear weight and its transpose (only the transpose when the weights are kept in FP8)", func(m cost.Memory) float64 { return m.FP8WeightBytes }},
	{"reserve", "#BBBBBB", "CUDA context, NCCL buffers and fragmentation: 1 GiB + 5 % of capacity", func(m cost.Memory) float64 { return m.ReserveBytes }},
}

// memoryBarsSVG draws one horizontal stacked bar per pipeline stage on a
// GiB axis with round ticks, each segment's GiB written on it where it is
// wide enough and each bar's total at its end, against the GPU's capacity
// line.
func memoryBarsSVG(stages []cost.Memory, capacityBytes float64) string {
	const width, left, right, barH, gap, top = 680.0, 70.0, 60.0, 14.0, 4.0, 22.0
	const minLabelPx = 30.0 // a segment narrower than this carries no value
	maxBytes := capacityBytes
	for _, m := range stages {
		maxBytes = max(maxBytes, m.PeakBytes+m.ReserveBytes)
	}
	step := roundStep(maxBytes / (1 << 30) / 5) // about five ticks, GiB
	axisGiB := math.Ceil(maxBytes/(1<<30)/step) * step
	scale := (width - left - right) / (axisGiB * (1 << 30))
	bottom := top + float64(len(stages))*(barH+gap)
	height := bottom + 36
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`,
		width, height, width, height, html.EscapeString(memoryLabel(stages, capacityBytes)))
	for g := 0.0; g <= axisGiB+step/2; g += step {
		x := left + g*(1<<30)*scale
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.1f" stroke="#dddddd"></line>`, x, top-4, x, bottom)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="10" text-anchor="middle" fill="#5a5a5a">%s</text>`, x, bottom+12, strconv.FormatFloat(g, 'f', -1, 64))
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="10" text-anchor="middle" fill="#5a5a5a">GiB per GPU</text>`, left+(width-left-right)/2, bottom+26)
	for i, m := range stages {
		y := top + float64(i)*(barH+gap)
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" font-size="11" text-anchor="end" fill="#1b1b1b">stage %d</text>`, left-6, y+barH-3, m.Stage)
		x := left
		for _, part := range memoryParts {
			v := part.bytes(m)
			if v <= 0 {
				continue
			}
			w := v * scale
			fmt.Fprintf(&b, `<rect x="%.2f" y="%.1f" width="%.2f" height="%.0f" fill="%s"><title>stage %d %s: %s — %s</title></rect>`,
				x, y, w, barH, part.colour, m.Stage, part.name, gib(v), html.EscapeString(part.how))
			if w >= minLabelPx {
				fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="9" text-anchor="middle" fill="%s" aria-hidden="true">%.1f</text>`, x+w/2, y+barH-3, labelInk(part.colour), v/(1<<30))
			}
			x += w
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="10" fill="#1b1b1b">%s</text>`, x+4, y+barH-3, gib(m.PeakBytes+m.ReserveBytes))
	}
	cx := left + capacityBytes*scale
	fmt.Fprintf(&b, `<line x1="%.2f" y1="%.0f" x2="%.2f" y2="%.1f" stroke="#D55E00" stroke-width="2" stroke-dasharray="4 2"><title>GPU capacity %s</title></line>`, cx, top-4, cx, bottom, gib(capacityBytes))
	fmt.Fprintf(&b, `<text x="%.2f" y="%.1f" font-size="11" text-anchor="middle" fill="#D55E00">capacity %s</text>`, cx, top-8, gib(capacityBytes))
	b.WriteString(`</svg>`)
	return b.String()
}

// memoryLabel is the chart's text alternative: the most loaded stage against capacity.
func memoryLabel(stages []cost.Memory, capacityBytes float64) string {
	most := 0
	for i, m := range stages {
		if m.PeakBytes+m.ReserveBytes > stages[most].PeakBytes+stages[most].ReserveBytes {
			most = i
		}
	}
	if len(stages) == 0 {
		return "memory per GPU by pipeline stage"
	}
	m := stages[most]
	return fmt.Sprintf("memory per GPU by pipeline stage: %d stages, the most loaded (stage %d) needs %s of %s", len(stages), m.Stage, gib(m.PeakBytes+m.ReserveBytes), gib(capacityBytes))
}

// roundStep is the smallest of 1, 2 or 5 × 10^k at least v (a round tick step).
func roundStep(v float64) float64 {
	if !(v > 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, f := range []float64{1, 2, 5, 10} {
		if f*p >= v {
			return f * p
		}
	}
	return 10 * p
}

// labelInk is the text colour that reads on a segment of the given fill:
// white on the dark blue and green, near-black on the light colours.
func labelInk(fill string) string {
	switch fill {
	case "#0072B2", "#009E73":
		return "#ffffff"
	}
	return "#1b1b1b"
}
