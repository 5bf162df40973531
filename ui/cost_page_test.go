package ui

import (
	"strings"
	"testing"

	"pipeplan/app"
)

// TestCostPageTodaysGPUs: with the Cluster page on H100, MI300X and L4 the
// Cost page prices those three (the 2026 on-demand list by default); the
// spot list lacks the L4, whose price then comes from the on-demand list
// and the page says so; an edited price makes the list custom and sticks.
func TestCostPageTodaysGPUs(t *testing.T) {
	a := NewApp(&fakeBrowser{}, "")
	a.Start()
	types := []string{"nvidia-h100-sxm5-80gb", "amd-mi300x", "nvidia-l4"}
	a.State.Cluster.Workload, a.State.Cluster.WorkerTypes, a.State.Cluster.GPUs = "job-types", types, []int{8, 8, 8}
	c := &CostPage{App: a}
	if got := c.workerTypes(); strings.Join(got, ",") != strings.Join(types, ",") {
		t.Fatalf("Cost page types %v, want the Cluster page's %v", got, types)
	}
	a.SetCostPreset("gpu-clouds-spot-2026")
	if a.Err != "" || len(a.State.Cost.Prices) != 3 {
		t.Fatalf("spot list: err %q, prices %v", a.Err, a.State.Cost.Prices)
	}
	var od, spot app.PricePreset
	for _, p := range c.presets() {
		switch p.ID {
		case "specialty-clouds-2026":
			od = p
		case "gpu-clouds-spot-2026":
			spot = p
		}
	}
	want := []float64{spot.Prices[0], spot.Prices[1], od.Prices[2]}
	for j, w := range want {
		if w <= 0 || a.State.Cost.Prices[j] != w {
			t.Errorf("%s: price %v, want %v", types[j], a.State.Cost.Prices[j], w)
		}
	}
	if src := c.presetSource(); !strings.Contains(src, "no price for nvidia-l4") {
		t.Errorf("source %q does not say the L4 price comes from elsewhere", src)
	}
	a.SetCostPrice(2, "0.5")
	if a.Err != "" || a.State.Cost.Preset != "custom" || c.price(2) != "0.5" {
		t.Errorf("edited L4 price: err %q, preset %q, shown %q", a.Err, a.State.Cost.Preset, c.price(2))
	}
	a.SetCostPrice(7, "1")
	if !strings.Contains(a.Err, "cost.prices") {
		t.Errorf("price of a GPU type the page lacks: error %q", a.Err)
	}
}
