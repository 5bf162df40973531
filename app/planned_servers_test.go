package app

import (
	"context"
	"strings"
	"testing"

	"pipeplan/app/request"
)

// TestPlannedJobSpansServers: GPT 18.4B fits on no 8-GPU server of Gavel's
// types, so the planned job's scale factor is its GPU count across
// servers, beyond Gavel's 8, and the smallest power of two that fits. GPT-3
// 175B on 512 H100s gets the planner's throughput on 64 servers of 8, and
// on 512 separate servers when spread. Scales that do not fill servers are
// rejected, naming them.
func TestPlannedJobSpansServers(t *testing.T) {
	ctx := context.Background()
	small := request.Default().Plan
	small.Model = "gpt-18.4b"
	job, err := PlannedJob(ctx, small, nil)
	if err != nil {
		t.Fatal(err)
	}
	if job.Scale <= 8 {
		t.Errorf("GPT 18.4B planned at %d GPUs, want more than one 8-GPU server", job.Scale)
	}
	if _, err := PlannedThroughput(ctx, small, job.Scale/2, nil); err == nil {
		t.Errorf("GPT 18.4B fits at %d GPUs, but was planned at %d", job.Scale/2, job.Scale)
	}
	p := request.Default().Plan
	in := request.PaperCluster()
	in.Workload, in.GPUs, in.Jobs = request.WorkloadJobTypes, []int{4096, 4096, 4096}, []request.Job{job}
	if err := in.Validate(); err != nil {
		t.Errorf("the planned job of %d GPUs: %v", job.Scale, err)
	}
	const h100 = "nvidia-h100-sxm5-80gb"
	got, err := PlannedThroughput(ctx, p, 512, []string{h100})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		nodes, perNode int
		got            float64
	}{{64, 8, got.StepsPerSecond[0]}, {512, 1, got.UnconsolidatedStepsPerSecond[0]}} {
		req := p
		req.GPU, req.Nodes, req.GPUsPerNode = h100, c.nodes, c.perNode
		res, err := Plan(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		want := 0.0
		if len(res.Candidates) > 0 {
			want = res.Candidates[0].SamplesPerSecond / float64(p.GlobalBatch)
		}
		if c.got != want {
			t.Errorf("512 H100s on %d servers: %v steps/s, the planner predicts %v", c.nodes, c.got, want)
		}
	}
	if got.StepsPerSecond[0] == 0 {
		t.Error("GPT-3 175B does not fit on 512 H100s (64 servers)")
	}
	if _, err := PlannedThroughput(ctx, p, 12, []string{h100}); err == nil || !strings.Contains(err.Error(), "12 GPUs do not fill servers of 8") {
		t.Errorf("scale 12 on servers of 8: error %v", err)
	}
	bad := in
	bad.Jobs = []request.Job{{Type: "A3C", Scale: 16, Weight: 1}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "cluster.jobs[0].scale: must be 1, 2, 4 or 8") {
		t.Errorf("a Gavel job type at 16 GPUs: error %v", err)
	}
}

// TestAllocateOnTodaysGPUs: a cluster of V100s and H100s (any gpus.json id
// is a worker type). Gavel measured ResNet-50 on the V100 only, so its H100
// throughput is 0 and says so; the planned BERT-large job gets the
// planner's throughput on both; the policy solves; a Gavel job type on
// H100s alone, an unknown GPU and a repeated type are errors naming them.
func TestAllocateOnTodaysGPUs(t *testing.T) {
	ctx := context.Background()
	const h100 = "nvidia-h100-sxm5-80gb"
	p := request.Default().Plan
	p.Model, p.GlobalBatch = "bert-large", 512
	in := request.PaperCluster()
	in.Workload, in.WorkerTypes, in.GPUs = request.WorkloadJobTypes, []string{"v100", h100}, []int{4, 4}
	in.Jobs = []request.Job{{Type: "ResNet-50 (batch size 64)", Scale: 1, Weight: 1}, {Type: "planned: BERT-large", Scale: 2, Weight: 1, Planned: &p}}
	res, err := Allocate(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Throughputs[0][1] != 0 || !strings.Contains(res.Sources[0][1], "Gavel measured ResNet-50 (batch size 64) only on") {
		t.Errorf("ResNet-50 on the H100: %v steps/s, %q", res.Throughputs[0][1], res.Sources[0][1])
	}
	want, err := PlannedThroughput(ctx, p, 2, in.WorkerTypes)
	if err != nil {
		t.Fatal(err)
	}
	for k := range in.WorkerTypes {
		if res.Throughputs[1][k] != want.StepsPerSecond[k] {
			t.Errorf("BERT-large on %s: %v steps/s, the planner predicts %v", in.WorkerTypes[k], res.Throughputs[1][k], want.StepsPerSecond[k])
		}
	}
	if res.Effective[0] <= 0 || res.Effective[1] <= 0 {
		t.Errorf("effective throughputs %v: every job should run", res.Effective)
	}
	for _, c := range []struct {
		types []string
		jobs  []request.Job
		want  string
	}{
		{[]string{h100}, in.Jobs[:1], "Gavel measured it only on"},
		{[]string{"v100", "nvidia-h900"}, in.Jobs, `cluster.worker_types[1]: worker type "nvidia-h900"`},
		{[]string{h100, h100}, in.Jobs, `cluster.worker_types[1]: "nvidia-h100-sxm5-80gb" is listed twice`},
	} {
		bad := in
		bad.WorkerTypes, bad.Jobs, bad.GPUs = c.types, c.jobs, make([]int, len(c.types))
		for i := range bad.GPUs {
			bad.GPUs[i] = 4
		}
		if _, err := Allocate(ctx, bad); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("types %v: error %v, want %q", c.types, err, c.want)
		}
	}
}
