package ui

import (
	"fmt"
	"html"
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
	{"reserve", "#BBBBBB", "CUDA context, NCCL buffers and fragmentation: 1 GiB + 5 % of capacity", func(m cost.Memory) float64 { return m.ReserveBytes }},
}

// memoryBarsSVG draws one horizontal stacked bar per pipeline stage against
// the GPU's capacity line.
func memoryBarsSVG(stages []cost.Memory, capacityBytes float64) string {
	const width, left, barH, gap, top = 640.0, 70.0, 14.0, 4.0, 8.0
	maxBytes := capacityBytes
	for _, m := range stages {
		maxBytes = max(maxBytes, m.PeakBytes+m.ReserveBytes)
	}
	scale := (width - left - 10) / maxBytes
	height := top + float64(len(stages))*(barH+gap) + 24
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="memory per GPU by pipeline stage">`, width, height, width, height)
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
			x += w
		}
	}
	cx := left + capacityBytes*scale
	bottom := top + float64(len(stages))*(barH+gap)
	fmt.Fprintf(&b, `<line x1="%.2f" y1="%.0f" x2="%.2f" y2="%.1f" stroke="#D55E00" stroke-width="2" stroke-dasharray="4 2"><title>GPU capacity %s</title></line>`, cx, top-4, cx, bottom, gib(capacityBytes))
	fmt.Fprintf(&b, `<text x="%.2f" y="%.1f" font-size="11" text-anchor="end" fill="#D55E00">capacity %s</text>`, cx, bottom+14, gib(capacityBytes))
	b.WriteString(`</svg>`)
	return b.String()
}
