package app

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"pipeplan/app/request"
)

// TestPlanMadPipeWorkBudget: ResNet-50's 176 layers on 31 GPUs are within
// MaxMadPipeLayerGPUs but took 11.8 s of CPU and 370 MB (BENCHMARKS.md,
// "Worst cases"); MadPipe's work budget now ends the search with a reason
// the page shows, and no candidate.
func TestPlanMadPipeWorkBudget(t *testing.T) {
	in := request.Default().Plan
	in.Model, in.Nodes, in.GPUsPerNode, in.Planner = "pd-resnet50", 31, 1, "madpipe"
	res, err := Plan(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"MadPipe: workers: ", "176 layers on up to 31 GPUs", "over 60 million steps, its work budget"} {
		if !strings.Contains(res.Problem, want) {
			t.Errorf("problem %q, want it to say %q", res.Problem, want)
		}
	}
	if len(res.Candidates) != 0 || res.MadPipe != nil {
		t.Errorf("%d candidates and a MadPipe view past the budget", len(res.Candidates))
	}
}

// TestScheduleWorstAcceptedAnswerSize: the largest schedule request
// accepted (interleaved, 64 stages × 128 microbatches × 8 chunks, the
// request.MaxScheduleTasks tasks) answers with one forward and one
// backward per task, in under 16 MB of JSON (the per-field limits alone
// allowed 58 MB).
func TestScheduleWorstAcceptedAnswerSize(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 131,072 actions")
	}
	in := request.Schedule{Kind: "interleaved", Stages: request.MaxStages, Microbatches: request.MaxScheduleTasks / (request.MaxStages * request.MaxChunks),
		Chunks: request.MaxChunks, FwdSeconds: 1, BwdSeconds: 2}
	tl, err := Schedule(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	rep := tl.Report()
	ops := 0
	for _, d := range rep.Devices {
		ops += len(d.Ops)
	}
	if ops < 2*request.MaxScheduleTasks {
		t.Errorf("%d actions, want at least a forward and a backward of each of %d tasks", ops, request.MaxScheduleTasks)
	}
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 16<<20 {
		t.Errorf("the answer is %d bytes of JSON, over 16 MiB", len(data))
	}
}
