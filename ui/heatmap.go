package ui

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// Heatmap hues at a time fraction of 1 (Okabe–Ito, colour-blind safe):
// blue for consolidated time, vermillion for unconsolidated ("spread") time.
var (
	heatBlue       = [3]int{0x00, 0x72, 0xB2}
	heatVermillion = [3]int{0xD5, 0x5E, 0x00}
)

// heatmapBlock is a group of heatmap columns in one hue: their labels, how
// a tooltip names each (where), and each job's time fraction x and
// throughput t there.
type heatmapBlock struct {
	labels, where []string
	x, t          [][]float64
	hue           [3]int
}

// heatmapSVG draws an allocation X (rows jobs, columns GPU types) as a
// single-hue (blue, colour-blind safe) heatmap with the value in each cell
// and a tooltip giving the fraction and the job's throughput there.
func heatmapSVG(jobs, types []string, x, t [][]float64) string {
	return heatmapBlocksSVG("allocation heatmap", jobs, heatmapBlock{labels: types, where: types, x: x, t: t, hue: heatBlue})
}

// placedHeatmapSVG draws a placement-sensitive allocation (§5.3.1): each
// job's time per GPU type with its GPUs on one server (X, blue), then with
// them spread over separate servers (ux, vermillion, columns "v100
// (spread)"), at throughputs t and ut.
func placedHeatmapSVG(jobs, types []string, x, ux, t, ut [][]float64) string {
	spread := make([]string, len(types))
	one, apart := make([]string, len(types)), make([]string, len(types))
	for j, wt := range types {
		spread[j] = wt + " (spread)"
		one[j] = wt + " with its GPUs on one server"
		apart[j] = wt + " with its GPUs on separate servers"
	}
	return heatmapBlocksSVG("allocation heatmap: time on each GPU type with the job's GPUs on one server, then spread over servers", jobs,
		heatmapBlock{labels: types, where: one, x: x, t: t, hue: heatBlue},
		heatmapBlock{labels: spread, where: apart, x: ux, t: ut, hue: heatVermillion})
}

// heatmapBlocksSVG draws blocks of columns side by side, a gap between
// blocks, each cell shaded from white to its block's hue by the fraction.
func heatmapBlocksSVG(label string, jobs []string, blocks ...heatmapBlock) string {
	const left, top, cellW, cellH, gap = 230.0, 28.0, 100.0, 26.0, 12.0
	cols := 0
	for _, bk := range blocks {
		cols += len(bk.labels)
	}
	width := left + cellW*float64(cols) + gap*float64(len(blocks)-1) + 10
	height := top + cellH*float64(len(jobs)) + 10
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12" role="img" aria-label="%s">`,
		width, height, width, height, html.EscapeString(label))
	// colX[i] is the left edge of the i-th column over all blocks.
	var colX []float64
	x := left
	for _, bk := range blocks {
		for range bk.labels {
			colX = append(colX, x)
			x += cellW
		}
		x += gap
	}
	c := 0
	for _, bk := range blocks {
		for _, l := range bk.labels {
			fmt.Fprintf(&b, `<text x="%.0f" y="18" text-anchor="middle" font-weight="bold">%s</text>`, colX[c]+cellW/2, html.EscapeString(l))
			c++
		}
	}
	for m, name := range jobs {
		y := top + cellH*float64(m)
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end">%s</text>`, left-8, y+cellH/2+4, html.EscapeString(name))
		c = 0
		for _, bk := range blocks {
			for j := range bk.labels {
				v := bk.x[m][j]
				var rgb [3]int
				for i, h := range bk.hue {
					rgb[i] = 255 - int(v*float64(255-h))
				}
				fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="#%02x%02x%02x" stroke="#ffffff"><title>%s on %s: %.3f of its time, at %.3g steps/s there</title></rect>`,
					colX[c], y, cellW, cellH, rgb[0], rgb[1], rgb[2], html.EscapeString(name), html.EscapeString(bk.where[j]), v, bk.t[m][j])
				fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="middle" fill="%s">%.2f</text>`, colX[c]+cellW/2, y+cellH/2+4, inkOn(rgb), v)
				c++
			}
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// inkOn picks the text colour, near-black or white, with the higher WCAG
// contrast ratio on the background rgb.
func inkOn(rgb [3]int) string {
	lum := 0.0
	for i, w := range [3]float64{0.2126, 0.7152, 0.0722} {
		c := float64(rgb[i]) / 255
		if c <= 0.04045 {
			c /= 12.92
		} else {
			c = math.Pow((c+0.055)/1.055, 2.4)
		}
		lum += w * c
	}
	// #1b1b1b has relative luminance 0.011; white 1.
	if (1+0.05)/(lum+0.05) > (lum+0.05)/(0.011+0.05) {
		return "#ffffff"
	}
	return "#1b1b1b"
}
