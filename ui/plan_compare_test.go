package ui

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"pipeplan/app"
)

func TestCount(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{3e11, "300 B"}, {1.5e6, "1.5 M"}, {836123, "836,123"}, {12345.6, "12,346"}, {250, "250"}, {1.234, "1.23"}, {2.5e13, "25 T"}} {
		if got := count(c.v); got != c.want {
			t.Errorf("count(%g) = %q, want %q", c.v, got, c.want)
		}
	}
}

// TestRunCostAndCompare: the default plan's run is GPT-3's 300 B tokens,
// in days and GPU-hours at the planner's throughput; a price turns it into
// dollars without re-planning; a pinned candidate is compared with the
// selected one.
func TestRunCostAndCompare(t *testing.T) {
	b := &fakeBrowser{}
	a := NewApp(b, "")
	a.Start()
	c := &PlanPage{App: a}
	cost := c.runCost()
	// The default GPU's price comes from gpuprofiles, with its date.
	price, _, ok := app.GPUPrice(a.State.Plan.GPU)
	if !ok {
		t.Fatalf("no sourced price for the default GPU %s", a.State.Plan.GPU)
	}
	if len(cost) != 4 || cost[0].Value != "300 B tokens" || !strings.HasSuffix(cost[1].Value, " days") ||
		!strings.HasPrefix(cost[3].Value, "$") || !strings.Contains(cost[3].Title, fmt.Sprintf("$%.3g per GPU-hour", price)) {
		t.Fatalf("run cost = %v", cost)
	}
	if got := c.priceText(); got != strconv.FormatFloat(price, 'g', -1, 64) {
		t.Errorf("price input shows %q, want the sourced default %v", got, price)
	}
	before := a.planRun
	a.SetRunCost("price_per_gpu_hour", "2")
	if a.Err != "" || !strings.HasPrefix(c.runCost()[3].Value, "$") || a.planRun != before {
		t.Errorf("with a price: err %q, cost %v", a.Err, c.runCost())
	}
	if a.State.Plan.PricePerGPUHour != 2 {
		t.Errorf("price not in the state")
	}
	a.SetRunCost("price_per_gpu_hour", "-1")
	if !strings.HasPrefix(a.Err, "plan.price_per_gpu_hour: must be a number in [0, ") {
		t.Errorf("negative price: %q", a.Err)
	}
	if c.compare() != nil {
		t.Fatalf("a comparison before anything is pinned")
	}
	a.PinCandidate()
	a.SelectCandidate(2)
	cmp := c.compare()
	if cmp == nil || len(cmp.Rows) < 8 || cmp.Rows[4].Value == "" || !strings.HasPrefix(cmp.Pinned, "pinned: GPT-3 175B") {
		t.Fatalf("comparison = %+v", cmp)
	}
	parts := 0
	for _, row := range cmp.Rows {
		if strings.HasPrefix(row.Key, "of which ") {
			parts++
			if row.Key == "of which compute" && (!strings.HasSuffix(row.Value, " s") || !strings.HasSuffix(row.Title, " s")) {
				t.Errorf("compute row %+v, want seconds for both", row)
			}
		}
	}
	if parts < 3 {
		t.Errorf("comparison has %d step-time parts, want compute, communication and bubble at least", parts)
	}
	a.DownloadCandidatesCSV()
	csv := string(b.downloads["candidates.csv"])
	if lines := strings.Count(csv, "\n"); lines != 1+len(a.Plan.Result.Candidates)+len(a.Plan.Result.Infeasible) || !strings.HasPrefix(csv, "rank,planner,t,p,cp,ep,etp,d,") {
		t.Errorf("candidates.csv: %d lines, starts %q", lines, csv[:min(len(csv), 40)])
	}
}

// TestPlanInputErrorsInWords: a malformed number is reported in words,
// naming the field once.
func TestPlanInputErrorsInWords(t *testing.T) {
	a := NewApp(&fakeBrowser{}, "")
	a.SetPlanInput("nodes", "1.5")
	if a.Err != `plan.nodes: must be a whole number, got "1.5"` {
		t.Errorf("nodes 1.5: %q", a.Err)
	}
	a.SetPlanInput("nodes", "0")
	if strings.Count(a.Err, "plan.nodes") != 1 || strings.Contains(a.Err, "strconv") {
		t.Errorf("nodes 0: %q", a.Err)
	}
}

func TestRoundStep(t *testing.T) {
	for _, c := range []struct{ v, want float64 }{{16.1, 20}, {3, 5}, {1, 1}, {0.13, 0.2}, {45, 50}, {0, 1}} {
		if got := roundStep(c.v); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("roundStep(%g) = %g, want %g", c.v, got, c.want)
		}
	}
}
