package ui

import (
	"strings"
	"testing"

	"pipeplan/core/gavel"
)

// TestStepCharts checks the drawn paths: one horizontal and one vertical
// step per point, at the right heights, and the axis ending at the last x.
func TestStepCharts(t *testing.T) {
	cdf := cdfSVG([]float64{3, 1, 2, 4}, "JCT (hours)")
	// y of 1/4, 2/4, 3/4, 1 on an axis from 200 px (0) up to 12 px (1).
	for _, want := range []string{"V153.0", "V106.0", "V59.0", "V12.0", "over 4 jobs", `aria-label="CDF of JCT (hours)"`, ">fraction of jobs</text>"} {
		if !strings.Contains(cdf, want) {
			t.Errorf("CDF SVG lacks %q:\n%s", want, cdf)
		}
	}
	util := utilizationSVG([]gavel.UtilizationSample{
		{StartSeconds: 0, EndSeconds: 3600, Utilization: 0.5},
		{StartSeconds: 3600, EndSeconds: 7200, Utilization: 1},
	})
	// Steps to 0.5 at 0 h and to 1 at 1 h (x = 48 + 1/2 × 496), running to 2 h (x = 544).
	if !strings.Contains(util, "M48.0 200.0 H48.0 V106.0 H296.0 V12.0 H544.0") {
		t.Errorf("utilization path wrong:\n%s", util)
	}
	if empty := utilizationSVG(nil); strings.Contains(empty, "<path") {
		t.Errorf("an empty series draws a line: %s", empty)
	}
}
