package ui

import (
	"testing"
)

// TestPlanPageCPComm: the CP communication select appears only when the
// sequence is split (cp pinned above 1, or a shown candidate with cp > 1);
// a choice reaches the plan, and the summary names it.
func TestPlanPageCPComm(t *testing.T) {
	b := &fakeBrowser{}
	a := NewApp(b, "")
	a.Start()
	c := &PlanPage{App: a}
	if c.showCPComm() {
		t.Fatalf("default GPT-3 plan (cp %d): the CP communication select is shown", a.Plan.Result.Candidates[0].Execution.CP)
	}
	a.SetPlanInput("model", "llama3-8b")
	for _, in := range [][2]string{{"nodes", "1"}, {"global_batch", "8"}, {"seq", "65536"}, {"cp", "8"}, {"cp_comm", "all_gather"}} {
		if a.SetPlanInput(in[0], in[1]); a.Err != "" {
			t.Fatalf("%s = %s: %s", in[0], in[1], a.Err)
		}
	}
	if !c.showCPComm() || a.State.Plan.CPComm != "all_gather" {
		t.Fatalf("cp 8: select shown %v, cp_comm %q", c.showCPComm(), a.State.Plan.CPComm)
	}
	if a.Plan.Err != "" || len(a.Plan.Result.Candidates) == 0 {
		t.Fatalf("plan: %q, %d candidates", a.Plan.Err, len(a.Plan.Result.Candidates))
	}
	if got := a.Plan.Result.Candidates[a.Plan.Result.Selected].Execution.CPComm; got != "all_gather" {
		t.Errorf("the shown candidate's cp_comm is %q", got)
	}
	found := false
	for _, row := range c.summary() {
		found = found || row.Key == "context parallelism" && row.Value == "all-gather K/V (Llama 3), exposed"
	}
	if !found {
		t.Errorf("summary lacks the context-parallel communication: %v", c.summary())
	}
}
