package ui

import "testing"

// TestChartsFollowTheResult checks the Plan page's kept charts: each is
// the chart of the result on screen, drawn afresh, after a new model and a
// new selection.
func TestChartsFollowTheResult(t *testing.T) {
	a := NewApp(&fakeBrowser{}, "")
	a.Start()
	c := &PlanPage{App: a}
	var seen []string
	check := func(what string) {
		t.Helper()
		r := a.Plan.Result
		if a.Plan.Err != "" || len(r.StageMemory) == 0 {
			t.Fatalf("%s: no plan with stage memories: %s", what, a.Plan.Err)
		}
		if got, want := string(c.memorySVG()), memoryBarsSVG(r.StageMemory, r.CapacityBytes); got != want {
			t.Errorf("%s: the memory chart is not the result's", what)
		}
		b := r.Candidates[r.Selected].Breakdown
		if b == nil {
			t.Fatalf("%s: the selected candidate has no breakdown", what)
		}
		if got, want := string(c.breakdownSVG()), breakdownBarSVG(*b); got != want {
			t.Errorf("%s: the breakdown chart is not the selected candidate's", what)
		}
		seen = append(seen, string(c.memorySVG())+string(c.breakdownSVG()))
	}
	check("default")
	check("default, drawn again")
	a.SetPlanInput("model", "gpt-1.7b")
	check("GPT 1.7B")
	a.SetPlanInput("selected", "1")
	check("GPT 1.7B, second candidate")
	if seen[0] != seen[1] || seen[1] == seen[2] || seen[2] == seen[3] {
		t.Errorf("the charts did not change with the result (or changed without it)")
	}
}
