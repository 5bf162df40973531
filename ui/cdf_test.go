package ui

import (
	"regexp"
	"slices"
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

// TestStepChartTicks checks that the x axis is ticked at round 1-2-5
// multiples up to a round end past the last value, with short labels.
func TestStepChartTicks(t *testing.T) {
	for _, c := range []struct {
		max  float64
		want []string // tick labels, in order
	}{
		{3.7, []string{"0", "1", "2", "3", "4"}},
		{0.137, []string{"0", "0.05", "0.1", "0.15"}},
		{23.4, []string{"0", "5", "10", "15", "20", "25"}},
		{1234, []string{"0", "500", "1000", "1500"}},
	} {
		svg := cdfSVG([]float64{c.max / 2, c.max}, "JCT (hours)")
		got := regexp.MustCompile(`text-anchor="middle">([^<]*)</text>`).FindAllStringSubmatch(svg, -1)
		var labels []string
		for _, g := range got[:len(got)-2] { // the last two are the axis titles
			labels = append(labels, g[1])
		}
		if !slices.Equal(labels, c.want) {
			t.Errorf("max %g: ticks %q, want %q", c.max, labels, c.want)
		}
	}
}
