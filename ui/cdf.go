package ui

import (
	"fmt"
	"html"
	"sort"
	"strings"
)

// cdfSVG draws the empirical CDF of values as a step line (#0072B2), with
// the x axis labelled xLabel and a tooltip on each step.
func cdfSVG(values []float64, xLabel string) string {
	const width, height, left, right, top, bottom = 560.0, 240.0, 48.0, 16.0, 12.0, 40.0
	v := append([]float64(nil), values...)
	sort.Float64s(v)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="11" role="img" aria-label="CDF of %s">`, width, height, width, height, html.EscapeString(xLabel))
	if len(v) == 0 {
		b.WriteString(`</svg>`)
		return b.String()
	}
	maxV := v[len(v)-1]
	if maxV <= 0 {
		maxV = 1
	}
	px := func(x float64) float64 { return left + x/maxV*(width-left-right) }
	py := func(f float64) float64 { return height - bottom - f*(height-top-bottom) }
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#333"/>`, left, py(0), width-right, py(0))
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#333"/>`, left, py(0), left, py(1))
	for _, f := range []float64{0, 0.5, 1} {
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end">%.1f</text>`, left-4, py(f)+4, f)
	}
	for _, x := range []float64{0, maxV / 2, maxV} {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle">%.3g</text>`, px(x), py(0)+14, x)
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">%s</text>`, (left+width-right)/2, height-6, html.EscapeString(xLabel))
	var path strings.Builder
	fmt.Fprintf(&path, "M%.1f %.1f", px(0), py(0))
	for i, x := range v {
		f := float64(i+1) / float64(len(v))
		fmt.Fprintf(&path, " H%.1f V%.1f", px(x), py(f))
	}
	fmt.Fprintf(&b, `<path d="%s" fill="none" stroke="#0072B2" stroke-width="2"><title>empirical CDF over %d jobs</title></path>`, path.String(), len(v))
	b.WriteString(`</svg>`)
	return b.String()
}
