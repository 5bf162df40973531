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
}
