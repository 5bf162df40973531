package app

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"pipeplan/app/request"
	"pipeplan/gpuprofiles"
)

// TestPlannedJobThroughputs checks that a planned job's row of T is the
// planner's own prediction on each GPU type (samples/s ÷ global batch) and
// that a type where the model does not fit gets 0 with the reason.
func TestPlannedJobThroughputs(t *testing.T) {
	p := request.Default().Plan
	p.Model, p.GlobalBatch = "gpt-1.7b", 64
	job, err := PlannedJob(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 1.7B parameters need ~27 GB of weights and Adam state: 16 GB GPUs
	// need two; the planner picks the smallest scale that fits.
	if job.Scale != 2 {
		t.Errorf("scale factor = %d, want 2", job.Scale)
	}
	in := request.PaperCluster()
	in.Workload, in.GPUs = request.WorkloadJobTypes, []int{8, 8, 8}
	in.Jobs = append(in.Jobs, job)
	res, err := Allocate(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	m := len(in.Jobs) - 1
	// The default bf16 falls back to what each GPU has.
	precision := map[string]string{"v100": "fp16", "p100": "fp16", "k80": "fp32"}
	for k, wt := range res.WorkerTypes {
		req := p
		req.GPU, req.Nodes, req.GPUsPerNode, req.Precision = workerGPU(t, wt), 1, job.Scale, precision[wt]
		direct, err := Plan(context.Background(), req)
		got, src := res.Throughputs[m][k], res.Sources[m][k]
		if err != nil || len(direct.Candidates) == 0 {
			if got != 0 || src == "" {
				t.Errorf("%s: infeasible (err %v, %q) but T = %v, source %q", wt, err, direct.Problem, got, src)
			}
			continue
		}
		want := direct.Candidates[0].SamplesPerSecond / 64
		if math.Abs(got-want) > 1e-12*want || !strings.Contains(src, "samples/s ÷ global batch 64") {
			t.Errorf("%s: T = %v (%q), planner gives %v steps/s", wt, got, src, want)
		}
	}
	// A V100 must beat a K80 for a transformer the planner sees through peak FLOP/s.
	if !(res.Throughputs[m][0] > res.Throughputs[m][2]) {
		t.Errorf("planned T = %v: want v100 > k80", res.Throughputs[m])
	}
	if !strings.HasPrefix(res.Sources[0][0], "Gavel's measured") {
		t.Errorf("table job source = %q", res.Sources[0][0])
	}
}

// TestPlannedJobUnconsolidated: placement-sensitive, a planned multi-GPU
// job's spread throughput is the planner's own prediction on servers of
// one GPU each (every collective over the Plan page's network), or 0 with
// the reason. At 2 GPUs GPT 1.7B needs tensor parallelism to fit a 16 GB
// GPU, which the planner keeps inside a server, so it cannot run spread; at
// 4 it pipelines over the network, slower than over NVLink on V100s. (ZeRO
// is pinned at 0: sharding the optimizer state would let it fit spread.)
func TestPlannedJobUnconsolidated(t *testing.T) {
	p := request.Default().Plan
	p.Model, p.GlobalBatch, p.ZeRO = "gpt-1.7b", 64, new(int)
	job, err := PlannedJob(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	precision := map[string]string{"v100": "fp16", "p100": "fp16", "k80": "fp32"}
	for _, scale := range []int{2, 4} {
		job.Scale = scale
		in := request.PaperCluster()
		in.Workload, in.GPUs, in.PlacementSensitive = request.WorkloadJobTypes, []int{8, 8, 8}, true
		in.Jobs = append(in.Jobs, job)
		res, err := Allocate(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		m := len(in.Jobs) - 1
		for k, wt := range res.WorkerTypes {
			req := p
			req.GPU, req.Nodes, req.GPUsPerNode, req.Precision = workerGPU(t, wt), scale, 1, precision[wt]
			direct, err := Plan(context.Background(), req)
			got, src := res.UnconsolidatedThroughputs[m][k], res.UnconsolidatedSources[m][k]
			where := fmt.Sprintf("on %d servers (25 GB/s per GPU between them)", scale)
			t.Logf("×%d %s: consolidated %.4g, spread %.4g steps/s (%s)", scale, wt, res.Throughputs[m][k], got, src)
			if err != nil || len(direct.Candidates) == 0 {
				if got != 0 || !strings.Contains(src, where) {
					t.Errorf("×%d %s: infeasible spread (err %v, %q) but %v, source %q", scale, wt, err, direct.Problem, got, src)
				}
				continue
			}
			want := direct.Candidates[0].SamplesPerSecond / 64
			if math.Abs(got-want) > 1e-12*want || !strings.Contains(src, where) {
				t.Errorf("×%d %s: spread %v (%q), planner gives %v steps/s", scale, wt, got, src, want)
			}
		}
		v100, cons := res.UnconsolidatedThroughputs[m][0], res.Throughputs[m][0]
		if scale == 2 && (v100 != 0 || !strings.Contains(res.UnconsolidatedSources[m][0], "tensor parallelism inside a server")) ||
			scale == 4 && !(v100 > 0 && v100 < cons) {
			t.Errorf("×%d v100 spread %v, consolidated %v (%s)", scale, v100, cons, res.UnconsolidatedSources[m][0])
		}
	}
}

// TestPlannedJobFitsNowhere: a model that fits no Gavel GPU at any scale
// (one layer of h = 65,536: 51.5 billion parameters that only tensor
// parallelism inside a server can split, over 100 GB per GPU at t = 8) is
// an error that names the job and each type's reason, not an all-zero row;
// so is GPT-3 175B on 8 GPUs of each type. (ZeRO is pinned at 0: ZeRO-3
// would shard the giant's weights over the replicas.)
func TestPlannedJobFitsNowhere(t *testing.T) {
	giant := request.Default().Plan
	giant.Model, giant.Custom, giant.ZeRO = "custom", request.CustomModel{Name: "giant", Layers: 1, Hidden: 65536, Heads: 512}, new(int)
	_, err := PlannedJob(context.Background(), giant, nil)
	if err == nil || !strings.Contains(err.Error(), "planned: giant: fits on no GPU type with 4096 GPUs") || !strings.Contains(err.Error(), "k80: ") {
		t.Errorf("err = %v", err)
	}
	job, err := PlannedJob(context.Background(), request.Plan{Model: "gpt-1.7b"}, nil)
	if err == nil {
		t.Fatalf("invalid plan inputs: job %+v", job)
	}
	// A shared link can carry a planned job that fits nowhere.
	p := request.Default().Plan
	in := request.PaperCluster()
	in.Workload, in.GPUs = request.WorkloadJobTypes, []int{8, 8, 8}
	in.Jobs = []request.Job{{Type: "planned: GPT-3 175B", Scale: 8, Weight: 1, Planned: &p}}
	_, err = Allocate(context.Background(), in)
	if err == nil || !strings.Contains(err.Error(), "cluster.jobs[0] (planned: GPT-3 175B)") {
		t.Errorf("err = %v", err)
	}
}

// TestPerJobStepsAndSLO: the makespan policy uses each job's own steps,
// so doubling one job's steps lowers no other job's share and the
// finish times (steps / effective throughput) come out equal (§5.4.2).
func TestPerJobStepsAndSLO(t *testing.T) {
	in := request.PaperCluster()
	in.Workload, in.GPUs, in.Policy = request.WorkloadJobTypes, []int{2, 2, 2}, "min_total_duration_perf"
	in.Jobs = in.Jobs[:3]
	if _, err := Allocate(context.Background(), in); err == nil {
		t.Fatal("makespan policy without steps: want an error")
	}
	for m := range in.Jobs {
		in.Jobs[m].Steps = 1e5 * float64(m+1)
	}
	res, err := Allocate(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	var finish []float64
	for m, e := range res.Effective {
		finish = append(finish, in.Jobs[m].Steps/e)
	}
	for m := range finish {
		if math.Abs(finish[m]-finish[0]) > 0.02*finish[0] {
			t.Errorf("finish times %v s: makespan policy should equalize them", finish)
		}
	}
	in.Jobs[0].SLOHours = -1
	if err := in.Validate(); err == nil || !strings.Contains(err.Error(), "cluster.jobs[0].slo_hours") {
		t.Errorf("negative SLO: err = %v", err)
	}
}

// TestPlannedProfileJobSaysTimesAreNotRescaled: a PipeDream profile's
// layer times were measured on one GPU; the source of its T row says so.
func TestPlannedProfileJobSaysTimesAreNotRescaled(t *testing.T) {
	p := request.Default().Plan
	p.Model = "pd-vgg16"
	job, err := PlannedJob(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := request.PaperCluster()
	in.Workload, in.GPUs, in.Jobs = request.WorkloadJobTypes, []int{8, 8, 8}, []request.Job{job}
	res, err := Allocate(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for k, src := range res.Sources[0] {
		if res.Throughputs[0][k] > 0 && !strings.Contains(src, "not rescaled") {
			t.Errorf("%s: source %q does not say the profile's times are not rescaled", res.WorkerTypes[k], src)
		}
	}
}

// BenchmarkPlannedJob is the work of "Add the Plan page's model": the
// planner on each GPU type at growing scale factors until one fits.
func BenchmarkPlannedJob(b *testing.B) {
	p := request.Default().Plan
	p.Model, p.GlobalBatch = "gpt-1.7b", 64
	for b.Loop() {
		if _, err := PlannedJob(context.Background(), p, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// workerGPU is the gpus.json id of worker type wt.
func workerGPU(t *testing.T, wt string) string {
	t.Helper()
	id, err := gpuprofiles.WorkerTypeGPU(wt)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestPlannedRunsRankOnly: a planned job's planner runs rank the same
// candidates as the Plan page, without the selected one's run plan and
// timeline (a planned job needs its throughput only), for each kind of
// planner: PTD-P, 2BW on a transformer, and the profile planners.
func TestPlannedRunsRankOnly(t *testing.T) {
	for _, tc := range []struct{ model, planner string }{{"gpt-1.7b", "ptdp"}, {"gpt-1.7b", "2bw"}, {"pd-resnet50", "best"}} {
		p := request.Default().Plan
		p.Model, p.Planner, p.GlobalBatch = tc.model, tc.planner, 64
		full, err := Plan(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		ranked, err := runPlanner(context.Background(), p, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		if full.TimelineSVG == "" || ranked.TimelineSVG != "" || ranked.Plan != nil || len(ranked.Candidates) == 0 {
			t.Fatalf("%s %s: detailed timeline %d bytes; ranked only: timeline %d bytes, plan %v, %d candidates",
				tc.model, tc.planner, len(full.TimelineSVG), len(ranked.TimelineSVG), ranked.Plan != nil, len(ranked.Candidates))
		}
		if ranked.Candidates[0].SamplesPerSecond != full.Candidates[0].SamplesPerSecond {
			t.Errorf("%s %s: ranked only %v samples/s, Plan %v", tc.model, tc.planner, ranked.Candidates[0].SamplesPerSecond, full.Candidates[0].SamplesPerSecond)
		}
	}
}
