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
	job, err := PlannedJob(ctx, small)
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
	in := request.DefaultCluster()
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
