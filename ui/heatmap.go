package ui

import (
	"cmp"
	"fmt"
	"html"
	"math"
	"slices"
	"strings"

	"pipeplan/app"
)

// Heatmap hues at a time fraction of 1 (Okabe–Ito, colour-blind safe):
// blue for consolidated time, vermillion for unconsolidated ("spread")
// time, bluish green for time sharing GPUs with another job, grey for a
// job's total time.
var (
	heatBlue       = [3]int{0x00, 0x72, 0xB2}
	heatVermillion = [3]int{0xD5, 0x5E, 0x00}
	heatGreen      = [3]int{0x00, 0x9E, 0x73}
	heatGrey       = [3]int{0x66, 0x66, 0x66}
)

// heatmapBlock is a group of heatmap columns in one hue: their labels, each
// row's time fraction x there and the tooltip of each cell.
type heatmapBlock struct {
	labels []string
	x      [][]float64
	title  func(row, col int) string
	hue    [3]int
}

// timeBlock is a block with one column per label: each job's time fraction
// x there, at throughput t, its tooltip naming the place where[col].
func timeBlock(jobs, labels, where []string, x, t [][]float64, hue [3]int) heatmapBlock {
	return heatmapBlock{labels: labels, x: x, hue: hue, title: func(m, j int) string {
		return fmt.Sprintf("%s on %s: %.3f of its time, at %.3g steps/s there", jobs[m], where[j], x[m][j], t[m][j])
	}}
}

// heatmapSVG draws an allocation X (rows jobs, columns GPU types) as a
// single-hue (blue, colour-blind safe) heatmap with the value in each cell
// and a tooltip giving the fraction and the job's throughput there.
func heatmapSVG(jobs, types []string, x, t [][]float64) string {
	return heatmapBlocksSVG("allocation heatmap", jobs, timeBlock(jobs, types, types, x, t, heatBlue))
}

// clusterHeatmapSVG draws the Cluster page's allocation: each job's time
// per GPU type (blue); when placement-sensitive (§5.3.1) with its GPUs on
// one server, then spread over separate servers (vermillion, "v100
// (spread)"); when space sharing (§5.3.1) its time sharing GPUs with
// another job (green, "v100 (shared)"); and, with more than one block, its
// total time, at most 1.
func clusterHeatmapSVG(r app.ClusterResult) string {
	placed, shared := r.UnconsolidatedX != nil, len(r.Pairs) > 0
	var parts []string // the text alternative's description of the blocks
	where := r.WorkerTypes
	switch {
	case placed:
		parts = append(parts, "time on each GPU type with the job's GPUs on one server", "spread over servers")
		where = suffixed(r.WorkerTypes, " with its GPUs on one server")
	case shared:
		parts = append(parts, "time on each GPU type alone")
	}
	blocks := []heatmapBlock{timeBlock(r.Jobs, r.WorkerTypes, where, r.X, r.Throughputs, heatBlue)}
	if placed {
		blocks = append(blocks, timeBlock(r.Jobs, suffixed(r.WorkerTypes, " (spread)"), suffixed(r.WorkerTypes, " with its GPUs on separate servers"),
			r.UnconsolidatedX, r.UnconsolidatedThroughputs, heatVermillion))
	}
	if shared {
		parts = append(parts, "sharing GPUs with another job")
		blocks = append(blocks, sharedBlock(r))
	}
	if len(blocks) > 1 {
		parts = append(parts, "in all")
		blocks = append(blocks, totalBlock(r.Jobs, blocks))
	}
	label := "allocation heatmap"
	if parts != nil {
		label += ": " + strings.Join(parts, ", then ")
	}
	return heatmapBlocksSVG(label, r.Jobs, blocks...)
}

// suffixed appends suffix to each of names.
func suffixed(names []string, suffix string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n + suffix
	}
	return out
}

// sharedBlock is each job's time per GPU type in the co-located pairs it
// belongs to (space sharing, §5.3.1), the tooltip naming its partners.
func sharedBlock(r app.ClusterResult) heatmapBlock {
	x := make([][]float64, len(r.Jobs))
	with := make([][][]string, len(r.Jobs)) // with[m][j]: job m's partners on type j
	for m := range x {
		x[m], with[m] = make([]float64, len(r.WorkerTypes)), make([][]string, len(r.WorkerTypes))
	}
	for p, row := range r.PairX {
		pair := r.Pairs[p]
		for j, v := range row {
			if v <= 0 {
				continue
			}
			for s, m := range [2]int{pair.A, pair.B} {
				other := [2]int{pair.B, pair.A}[s]
				x[m][j] += v
				with[m][j] = append(with[m][j], fmt.Sprintf("job %d %.3f at %.3g steps/s", other, v, pair.Throughputs[j][s]))
			}
		}
	}
	return heatmapBlock{labels: suffixed(r.WorkerTypes, " (shared)"), x: x, hue: heatGreen, title: func(m, j int) string {
		t := fmt.Sprintf("%s on %s sharing its GPUs with another job: %.3f of its time", r.Jobs[m], r.WorkerTypes[j], x[m][j])
		if with[m][j] != nil {
			t += " (with " + strings.Join(with[m][j], "; ") + ")"
		}
		return t
	}}
}

// totalBlock is one column, each job's time over all the blocks' columns.
func totalBlock(jobs []string, blocks []heatmapBlock) heatmapBlock {
	x := make([][]float64, len(jobs))
	for m := range jobs {
		x[m] = []float64{0}
		for _, bk := range blocks {
			for _, v := range bk.x[m] {
				x[m][0] += v
			}
		}
	}
	return heatmapBlock{labels: []string{"total"}, x: x, hue: heatGrey, title: func(m, _ int) string {
		return fmt.Sprintf("%s: %.3f of its time in all (at most 1)", jobs[m], x[m][0])
	}}
}

// maxPairRows caps the rows of the shared-GPUs heatmap: a policy may
// spread time thinly over hundreds of pairs (min_total_duration_packed).
const maxPairRows = 24

// pairsWithTime returns the indices of the pairs that got time, the most
// time first (ties in index order).
func pairsWithTime(r app.ClusterResult) []int {
	var out []int
	total := make([]float64, len(r.PairX))
	for p, row := range r.PairX {
		for _, v := range row {
			total[p] += v
		}
		if total[p] > 0 {
			out = append(out, p)
		}
	}
	slices.SortStableFunc(out, func(a, b int) int { return cmp.Compare(total[b], total[a]) })
	return out
}

// sharedHeatmapSVG draws the time each co-located pair of jobs (space
// sharing, §5.3.1) runs on each GPU type, one row per pair that got time
// ("job 1 + job 2", green; the maxPairRows with the most), the pair's
// throughputs in the tooltips; "" when no pair got time.
func sharedHeatmapSVG(r app.ClusterResult) string {
	shown := pairsWithTime(r)
	if len(shown) == 0 {
		return ""
	}
	shown = shown[:min(len(shown), maxPairRows)]
	rows, x := make([]string, len(shown)), make([][]float64, len(shown))
	for i, p := range shown {
		rows[i], x[i] = fmt.Sprintf("job %d + job %d", r.Pairs[p].A, r.Pairs[p].B), r.PairX[p]
	}
	return heatmapBlocksSVG("shared GPUs heatmap: time each pair of jobs runs together on each GPU type", rows, heatmapBlock{
		labels: r.WorkerTypes, x: x, hue: heatGreen, title: func(i, j int) string {
			pair := r.Pairs[shown[i]]
			return fmt.Sprintf("%s and %s sharing %s: %.3f of their time, at %.3g and %.3g steps/s there", r.Jobs[pair.A], r.Jobs[pair.B], r.WorkerTypes[j], x[i][j],
				pair.Throughputs[j][0], pair.Throughputs[j][1])
		}})
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
				fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="#%02x%02x%02x" stroke="#ffffff"><title>%s</title></rect>`,
					colX[c], y, cellW, cellH, rgb[0], rgb[1], rgb[2], html.EscapeString(bk.title(m, j)))
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
