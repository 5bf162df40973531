package ui

import (
	"fmt"
	"html"
	"strings"

	"github.com/vugu/vugu"

	"pipeplan/core/cost"
)

// breakdownColours are the Okabe–Ito colours (colour-blind safe) of the
// step-time parts, in cost.TimeBreakdown.Parts order.
var breakdownColours = []string{"#0072B2", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#999999", "#BBBBBB", "#CC79A7", "#D55E00"}

// breakdownBarSVG draws a step's time as one horizontal stacked bar of its
// non-zero parts (compute, exposed communication, bubble, optimizer), each
// with its title and, where wide enough, its seconds on it, and a legend listing every non-zero part with its
// seconds and share. It returns "" when the breakdown is empty.
func breakdownBarSVG(b cost.TimeBreakdown) string {
	parts := b.Parts()
	total := 0.0
	for _, p := range parts {
		total += p.Seconds
	}
	if !(total > 0) {
		return ""
	}
	const width, barH, rowH = 640.0, 18.0, 15.0
	const minValuePx = 56.0 // a segment narrower than this carries no value
	shown := 0
	for _, p := range parts {
		if p.Seconds > 0 {
			shown++
		}
	}
	height := barH + 12 + float64(shown)*rowH
	var s strings.Builder
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="step time by part">`, width, height, width, height)
	x, row := 0.0, 0
	for i, p := range parts {
		if p.Seconds <= 0 {
			continue
		}
		label := fmt.Sprintf("%s: %s (%s of the step)", p.Name, secs(p.Seconds), pct(p.Seconds/total))
		w := p.Seconds / total * width
		fmt.Fprintf(&s, `<rect x="%.2f" y="0" width="%.2f" height="%.0f" fill="%s"><title>%s</title></rect>`, x, w, barH, breakdownColours[i], html.EscapeString(label))
		if w >= minValuePx {
			fmt.Fprintf(&s, `<text x="%.1f" y="%.1f" font-size="10" text-anchor="middle" fill="%s" aria-hidden="true">%s</text>`, x+w/2, barH-5, labelInk(breakdownColours[i]), html.EscapeString(secs(p.Seconds)))
		}
		x += w
		y := barH + 8 + float64(row)*rowH
		fmt.Fprintf(&s, `<rect x="0" y="%.1f" width="10" height="10" fill="%s"/><text x="16" y="%.1f" font-size="11" fill="#1b1b1b">%s</text>`, y, breakdownColours[i], y+9, html.EscapeString(label))
		row++
	}
	s.WriteString(`</svg>`)
	return s.String()
}

// breakdownSVG draws the selected candidate's step-time breakdown, or
// nothing for planners without one (PipeDream, 2BW, MadPipe).
func (c *PlanPage) breakdownSVG() vugu.HTML {
	r := c.App.Plan.Result
	if r.Selected < 0 || r.Selected >= len(r.Candidates) || r.Candidates[r.Selected].Breakdown == nil {
		return vugu.HTML("")
	}
	b, m := r.Candidates[r.Selected].Breakdown, &c.App.charts
	if m.breakdownOf != b {
		m.breakdownOf, m.breakdown = b, vugu.HTML(breakdownBarSVG(*b))
	}
	return m.breakdown
}
