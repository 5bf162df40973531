package ui

import (
	"fmt"
	"html"
	"math"
	"sort"
	"strconv"
	"strings"

	"pipeplan/core/gavel"
)

// cdfSVG draws the empirical CDF of values as a step line, with the x axis
// labelled xLabel and a tooltip on the line.
func cdfSVG(values []float64, xLabel string) string {
	v := append([]float64(nil), values...)
	sort.Float64s(v)
	ys := make([]float64, len(v))
	for i := range v {
		ys[i] = float64(i+1) / float64(len(v))
	}
	end := 0.0
	if len(v) > 0 {
		end = v[len(v)-1]
	}
	return stepSVG(v, ys, end, xLabel, "fraction of jobs", "CDF of "+xLabel, fmt.Sprintf("empirical CDF over %d jobs", len(v)))
}

// utilizationSVG draws a simulation's utilization over time (hours) as a
// step line: each interval at its busy share of the cluster's GPU-time.
func utilizationSVG(samples []gavel.UtilizationSample) string {
	xs, ys := make([]float64, len(samples)), make([]float64, len(samples))
	end := 0.0
	for i, s := range samples {
		xs[i], ys[i], end = s.StartSeconds/3600, s.Utilization, s.EndSeconds/3600
	}
	return stepSVG(xs, ys, end, "simulated time (hours)", "GPU utilization", "cluster utilization over time",
		"busy GPU-time ÷ available GPU-time per interval")
}

// stepSVG draws y in [0, 1] as a step function of x (#0072B2): from (0, 0)
// it steps to ys[i] at xs[i] (xs ascending, from 0) and runs to xEnd, on
// axes with round ticks (x in 1-2-5 steps to a round end, y in fifths).
func stepSVG(xs, ys []float64, xEnd float64, xLabel, yLabel, ariaLabel, title string) string {
	const width, height, left, right, top, bottom = 560.0, 240.0, 48.0, 16.0, 12.0, 40.0
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="11" role="img" aria-label="%s">`, width, height, width, height, html.EscapeString(ariaLabel))
	if len(xs) == 0 {
		b.WriteString(`</svg>`)
		return b.String()
	}
	// The x axis runs to a round number past xEnd, ticked in 1-2-5 steps
	// (about five ticks); the y axis in fifths.
	step := roundStep(xEnd / 5)
	maxX := math.Ceil(xEnd/step-1e-9) * step
	if maxX <= 0 {
		maxX = step
	}
	px := func(x float64) float64 { return left + x/maxX*(width-left-right) }
	py := func(f float64) float64 { return height - bottom - f*(height-top-bottom) }
	for q := 0; q <= 5; q++ {
		f := float64(q) / 5
		if q > 0 {
			fmt.Fprintf(&b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#e4e4e4"/>`, left, py(f), width-right, py(f))
		}
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end">%.1f</text>`, left-4, py(f)+4, f)
	}
	for q := 0; float64(q)*step <= maxX*(1+1e-9); q++ {
		x := float64(q) * step
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#333"/><text x="%.1f" y="%.0f" text-anchor="middle">%s</text>`,
			px(x), py(0), px(x), py(0)+4, px(x), py(0)+16, strconv.FormatFloat(x, 'g', 4, 64))
	}
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#333"/>`, left, py(0), width-right, py(0))
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#333"/>`, left, py(0), left, py(1))
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">%s</text>`, (left+width-right)/2, height-6, html.EscapeString(xLabel))
	fmt.Fprintf(&b, `<text transform="translate(12 %.0f) rotate(-90)" text-anchor="middle">%s</text>`, (py(0)+py(1))/2, html.EscapeString(yLabel))
	var path strings.Builder
	fmt.Fprintf(&path, "M%.1f %.1f", px(0), py(0))
	for i, x := range xs {
		fmt.Fprintf(&path, " H%.1f V%.1f", px(x), py(ys[i]))
	}
	fmt.Fprintf(&path, " H%.1f", px(xEnd))
	fmt.Fprintf(&b, `<path d="%s" fill="none" stroke="#0072B2" stroke-width="2"><title>%s</title></path>`, path.String(), html.EscapeString(title))
	b.WriteString(`</svg>`)
	return b.String()
}
