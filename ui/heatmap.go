package ui

import (
	"fmt"
	"html"
	"strings"
)

// heatmapSVG draws an allocation X (rows jobs, columns GPU types) as a
// single-hue (blue, colour-blind safe) heatmap with the value in each cell
// and a tooltip giving the fraction and the job's throughput there.
func heatmapSVG(jobs, types []string, x, t [][]float64) string {
	const left, top, cellW, cellH = 230.0, 28.0, 90.0, 26.0
	width := left + cellW*float64(len(types)) + 10
	height := top + cellH*float64(len(jobs)) + 10
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12" role="img" aria-label="allocation heatmap">`, width, height, width, height)
	for j, wt := range types {
		fmt.Fprintf(&b, `<text x="%.0f" y="18" text-anchor="middle" font-weight="bold">%s</text>`, left+cellW*(float64(j)+0.5), html.EscapeString(wt))
	}
	for m, name := range jobs {
		y := top + cellH*float64(m)
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end">%s</text>`, left-8, y+cellH/2+4, html.EscapeString(name))
		for j := range types {
			v := x[m][j]
			// Interpolate white → #0072B2 by the time fraction.
			r, g, bl := 255-int(v*(255-0x00)), 255-int(v*(255-0x72)), 255-int(v*(255-0xB2))
			ink := "#1b1b1b"
			if v > 0.55 {
				ink = "#ffffff"
			}
			cx := left + cellW*float64(j)
			fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="#%02x%02x%02x" stroke="#ffffff"><title>%s on %s: %.3f of its time, at %.3g steps/s there</title></rect>`,
				cx, y, cellW, cellH, r, g, bl, html.EscapeString(name), html.EscapeString(types[j]), v, t[m][j])
			fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="middle" fill="%s">%.2f</text>`, cx+cellW/2, y+cellH/2+4, ink, v)
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}
