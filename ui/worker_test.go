package ui

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"pipeplan/app"
	"pipeplan/app/request"
)

// TestRunJobPlanRoundTrip: a plan made in the worker and carried back as
// JSON is the plan the page would have made itself.
func TestRunJobPlanRoundTrip(t *testing.T) {
	in := request.Default().Plan
	in.Model, in.Nodes = "pd-vgg16", 2
	want, err := app.Plan(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	job, _ := json.Marshal(Job{Kind: JobPlan, Plan: &in})
	var last float64
	var ans JobAnswer
	if err := json.Unmarshal(RunJob(context.Background(), job, func(done, total float64) { last = done / total }), &ans); err != nil {
		t.Fatal(err)
	}
	if ans.Err != "" || ans.Plan == nil {
		t.Fatalf("answer: %+v", ans)
	}
	wantJSON, _ := json.Marshal(want)
	gotJSON, _ := json.Marshal(ans.Plan)
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("the worker's plan differs from the page's")
	}
	if !reflect.DeepEqual(ans.Plan.Plan, want.Plan) {
		t.Errorf("run plan differs after the round trip")
	}
	if last != 1 {
		t.Errorf("last progress = %v, want 1", last)
	}
}

// TestRunJobErrors: a bad job or request comes back as an error in words.
func TestRunJobErrors(t *testing.T) {
	bad := request.Default().Plan
	bad.Nodes = 0
	for _, c := range []struct {
		name string
		job  Job
	}{
		{"no request", Job{Kind: JobPlan}},
		{"bad request", Job{Kind: JobPlan, Plan: &bad}},
		{"unknown kind", Job{Kind: "train"}},
	} {
		data, _ := json.Marshal(c.job)
		var ans JobAnswer
		if err := json.Unmarshal(RunJob(context.Background(), data, func(float64, float64) {}), &ans); err != nil {
			t.Fatal(err)
		}
		if ans.Err == "" || ans.Plan != nil {
			t.Errorf("%s: answer %+v, want an error", c.name, ans)
		}
	}
}

// TestCancelDropsThePreviousResult: Cancel stops the worker and leaves no
// plan of other inputs on the page, so Export offers none.
func TestCancelDropsThePreviousResult(t *testing.T) {
	a := NewApp(&fakeBrowser{}, "")
	a.Start()
	if !(&Root{App: a}).showExport() {
		t.Fatalf("no Export for the default plan: %q", a.Plan.Err)
	}
	stopped := false
	a.Plan.Running, a.Plan.stop = true, func() { stopped = true } // a newer input's plan in a worker
	a.CancelPlan()
	if !stopped || a.Plan.Running || a.Plan.Result.Plan != nil || a.Plan.Err == "" {
		t.Errorf("after Cancel: stopped %v, running %v, plan kept %v, err %q", stopped, a.Plan.Running, a.Plan.Result.Plan != nil, a.Plan.Err)
	}
	if (&Root{App: a}).showExport() {
		t.Errorf("Export shows after Cancel")
	}
}
