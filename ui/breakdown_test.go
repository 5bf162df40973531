package ui

import (
	"strings"
	"testing"

	"pipeplan/core/cost"
)

// TestBreakdownBar: every non-zero part is a segment titled with its
// seconds and share, zero parts are left out, and an empty breakdown draws
// nothing.
func TestBreakdownBar(t *testing.T) {
	if got := breakdownBarSVG(cost.TimeBreakdown{}); got != "" {
		t.Errorf("empty breakdown drew %q", got)
	}
	svg := breakdownBarSVG(cost.TimeBreakdown{ComputeSeconds: 3, TensorParallelSeconds: 0.5, BubbleSeconds: 0.5})
	for _, want := range []string{"<title>compute: 3.00 s (75.0 % of the step)</title>", "exposed TP comm: 500.0 ms (12.5 % of the step)", "pipeline bubble: 500.0 ms"} {
		if !strings.Contains(svg, want) {
			t.Errorf("bar lacks %q:\n%s", want, svg)
		}
	}
	if strings.Contains(svg, "optimizer") || strings.Count(svg, "<title>") != 3 {
		t.Errorf("bar draws zero parts:\n%s", svg)
	}
	// The wide segments carry their seconds with the unit (compute: 480 px,
	// the others 80 px of the 640-px bar).
	for _, want := range []string{`aria-hidden="true">3.00 s</text>`, `aria-hidden="true">500.0 ms</text>`} {
		if !strings.Contains(svg, want) {
			t.Errorf("bar lacks the value %q on its segment", want)
		}
	}
	if narrow := breakdownBarSVG(cost.TimeBreakdown{ComputeSeconds: 100, OptimizerSeconds: 1}); strings.Contains(narrow, ">1.00 s</text>") {
		t.Errorf("a 6-px segment carries its value:\n%s", narrow)
	}
}
