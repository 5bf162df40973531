package app

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"pipeplan/app/request"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
	"pipeplan/internal/format"
)

func TestPlanDefaultGPT3(t *testing.T) {
	res, err := Plan(context.Background(), request.Default().Plan)
	if err != nil {
		t.Fatal(err)
	}
	if res.Problem != "" || len(res.Candidates) == 0 || res.Plan == nil {
		t.Fatalf("no plan: %+v", res.Problem)
	}
	best := res.Candidates[0]
	t.Logf("best: t=%d p=%d d=%d v=%d b=%d, %.1f TFLOP/s/GPU", best.Execution.TP, best.Execution.PP, best.Execution.DP, best.Execution.Interleave, best.Execution.MicrobatchSize, best.TFLOPSPerGPU)
	if err := res.Plan.Validate(); err != nil {
		t.Errorf("exported plan invalid: %v", err)
	}
}

func TestPlanTimelineShowsSchedule(t *testing.T) {
	in := request.Default().Plan
	in.Model, in.Nodes, in.GlobalBatch = "gpt-18.4b", 32, 1024
	res, err := Plan(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Plan == nil {
		t.Fatalf("no plan: %s", res.Problem)
	}
	if !strings.HasPrefix(res.TimelineSVG, "<svg") || !strings.Contains(res.TimelineCaption, string(res.Plan.Execution.Schedule)) {
		t.Errorf("timeline = %.60q, caption %q", res.TimelineSVG, res.TimelineCaption)
	}
	if strings.Contains(res.TimelineSVG, "style=") {
		t.Errorf("timeline uses inline styles, which the site's CSP blocks")
	}
}

// TestPlanZBV plans Llama 3 8B on four stages under ZB-V: the chosen plan
// has the V's 2·pp chunks and validates, its timeline draws the V's two
// chunks a device at their own times, its step the predicted one, and its
// bubble is below the same configuration's under 1F1B.
func TestPlanZBV(t *testing.T) {
	in := request.Default().Plan
	in.Model, in.GPU, in.Nodes, in.GlobalBatch, in.Seq, in.PP, in.Schedule = "llama3-8b", "nvidia-h100-sxm5-80gb", 1, 64, 8192, 4, "zb-v"
	res, err := Plan(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Plan == nil {
		t.Fatalf("no plan: %s", res.Problem)
	}
	if err := res.Plan.Validate(); err != nil || len(res.Plan.Stages) != 8 || res.Plan.Execution.Schedule != "zb-v" {
		t.Errorf("plan: %d stages, schedule %q, validation %v", len(res.Plan.Stages), res.Plan.Execution.Schedule, err)
	}
	// Drawn with each chunk's own times, the timeline's step is the
	// predicted one.
	if !strings.Contains(res.TimelineCaption, "2 chunks in a V") || !strings.Contains(res.TimelineCaption, "weight-gradient times") || !strings.Contains(res.TimelineCaption, "as predicted") {
		t.Errorf("caption %q", res.TimelineCaption)
	}
	in.Schedule = "1f1b"
	one, err := Plan(context.Background(), in)
	if err != nil || one.Plan == nil {
		t.Fatalf("1f1b: %v", err)
	}
	if v, o := res.Plan.Predictions.BubbleFraction, one.Plan.Predictions.BubbleFraction; v >= o {
		t.Errorf("bubble: zb-v %.4f, 1f1b %.4f", v, o)
	}
	// The configuration under each schedule: the plan's own marked, its
	// time the plan's; torchtitan runs ZB-V, Megatron-LM does not.
	if len(res.Schedules) != len(comparedSchedules) {
		t.Fatalf("%d schedules compared, want %d", len(res.Schedules), len(comparedSchedules))
	}
	for _, o := range res.Schedules {
		switch {
		case o.Problem != "":
			t.Errorf("%s: %s", o.Schedule, o.Problem)
		case o.Selected != (o.Schedule == "zb-v"):
			t.Errorf("%s marked selected %v", o.Schedule, o.Selected)
		case o.Selected && o.IterationSeconds != res.Candidates[res.Selected].IterationSeconds:
			t.Errorf("zb-v: %v s compared, %v s planned", o.IterationSeconds, res.Candidates[res.Selected].IterationSeconds)
		case o.Schedule == "zb-v" && !slices.Equal(o.Engines, []string{"torchtitan"}):
			t.Errorf("zb-v runs on %v", o.Engines)
		case o.Schedule == "2bw" && !o.Asynchronous:
			t.Errorf("2bw not marked asynchronous")
		}
	}
}

// TestPlanDualPipeV plans Qwen3 30B-A3B on 16 H100 under DualPipeV (pp 4,
// ep 4 pinned, the expert exchange overlapped as its pairs allow): the
// plan has the V's 2·pp chunks and validates; compared under every
// schedule, DualPipeV's bubble is below 1F1B's and torchtitan runs it.
// With fewer microbatches than 2·pp it is refused naming the global batch.
func TestPlanDualPipeV(t *testing.T) {
	in := request.Default().Plan
	in.Model, in.GPU, in.Nodes, in.GlobalBatch, in.Seq, in.PP, in.EP, in.Schedule = "qwen3-30b-a3b", "nvidia-h100-sxm5-80gb", 2, 64, 4096, 4, 4, "dualpipe-v"
	in.OverlapEPComm = true
	res, err := Plan(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Plan == nil {
		t.Fatalf("no plan: %s", res.Problem)
	}
	if err := res.Plan.Validate(); err != nil || len(res.Plan.Stages) != 8 || res.Plan.Execution.Schedule != "dualpipe-v" || !res.Plan.Execution.Overlap.EPComm {
		t.Errorf("plan: %d stages, schedule %q, overlap %+v, validation %v", len(res.Plan.Stages), res.Plan.Execution.Schedule, res.Plan.Execution.Overlap, err)
	}
	rows := map[schedule.Kind]ScheduleOption{}
	for _, o := range res.Schedules {
		rows[o.Schedule] = o
	}
	d, one := rows[schedule.DualPipeV], rows[schedule.OneFOneB]
	if !d.Selected || d.Problem != "" || one.Problem != "" || d.BubbleSeconds >= one.BubbleSeconds || !slices.Equal(d.Engines, []string{"torchtitan"}) {
		t.Errorf("dualpipe-v %+v, 1f1b %+v: want dualpipe-v selected, less bubble, run by torchtitan", d, one)
	}
	in.GlobalBatch = 4 // 4 microbatches at most, fewer than 2·pp
	if _, err := Plan(context.Background(), in); err == nil || !strings.Contains(err.Error(), "global_batch: dualpipe-v needs at least 8 microbatches a step (2 per pipeline device × pp 4)") {
		t.Errorf("global batch 4 under dualpipe-v: %v", err)
	}
}

func TestPlanInfeasibleShowsReasons(t *testing.T) {
	in := request.Default().Plan
	in.Nodes, in.GPUsPerNode = 1, 1 // GPT-3 175B on one GPU
	res, err := Plan(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Plan != nil || res.Problem == "" || len(res.Infeasible) == 0 || res.Infeasible[0].Reason == "" {
		t.Errorf("175B on one GPU: plan %v, problem %q, %d infeasible", res.Plan != nil, res.Problem, len(res.Infeasible))
	}
}

func TestPlanRejectsProfilePlannersForTransformers(t *testing.T) {
	in := request.Default().Plan
	in.Planner = "pipedream"
	if _, err := Plan(context.Background(), in); err == nil || !strings.Contains(err.Error(), "plan.planner") {
		t.Errorf("err = %v, want one naming plan.planner", err)
	}
}

// BenchmarkPlanGPT3On1024A100 is the Plan page's re-plan: GPT-3 175B on
// 128 nodes of 8 A100s, PTD-P search plus the selected plan's timeline.
func BenchmarkPlanGPT3On1024A100(b *testing.B) {
	in := request.Default().Plan
	for b.Loop() {
		if _, err := Plan(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPlanPipeDreamVGG16 plans the VGG-16 profile on 16 V100s over 10 Gb/s
// (1.25 GB/s), the setting of the dissertation's Table 2.2, where PipeDream
// picks the 15-1 configuration. (On 32 GB V100s: with 16 GB the 15-1
// split's stashed weight versions and activations do not fit, and the
// memory-aware DP picks data parallelism.)
func TestPlanPipeDreamVGG16(t *testing.T) {
	in := request.Default().Plan
	in.Model, in.GPU, in.Nodes, in.GPUsPerNode, in.InterNodeGBps = "pd-vgg16", "nvidia-v100-sxm2-32gb", 16, 1, 1.25
	in.Planner = "pipedream"
	in.GlobalBatch = 1920 // 15 replicas × minibatch 128: one minibatch per replica
	res, err := Plan(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Plan == nil {
		t.Fatalf("no plan: %s", res.Problem)
	}
	st := res.Plan.Stages
	if len(st) != 2 || st[0].Replicas != 15 || st[1].Replicas != 1 {
		t.Errorf("stages %+v, want 15-1", st)
	}
	if res.TimelineSVG == "" || len(res.StageMemory) != len(st) {
		t.Errorf("timeline %d bytes, %d stage memories", len(res.TimelineSVG), len(res.StageMemory))
	}
}

// TestPlanProfileRowsAtThePagesBatch: every row is for the page's global
// batch; PipeDream's step is that batch at its throughput, and a partition
// whose replicas take more samples than the batch is ruled out, saying why.
func TestPlanProfileRowsAtThePagesBatch(t *testing.T) {
	in := request.Default().Plan
	in.Model, in.GPU, in.Nodes, in.GPUsPerNode, in.InterNodeGBps = "pd-vgg16", "nvidia-v100-sxm2-32gb", 16, 1, 1.25
	for _, batch := range []int{1536, 3840} {
		in.GlobalBatch = batch
		res, err := Plan(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		sawPipeDream := false
		for _, c := range res.Candidates {
			if c.GlobalBatch != batch {
				t.Errorf("B=%d: %s row is for batch %d", batch, c.Planner, c.GlobalBatch)
			}
			if got := float64(batch) / c.SamplesPerSecond; math.Abs(got-c.IterationSeconds) > 1e-9*got {
				t.Errorf("B=%d: %s row: step %g s, but batch / samples/s = %g s", batch, c.Planner, c.IterationSeconds, got)
			}
			sawPipeDream = sawPipeDream || c.Planner == plan.PlannerPipeDream
		}
		ruledOut := false
		for _, c := range res.Infeasible {
			ruledOut = ruledOut || (c.Planner == plan.PlannerPipeDream && strings.Contains(c.Reason, "needs a global batch of at least 1920"))
		}
		if batch == 1536 && (sawPipeDream || !ruledOut) {
			t.Errorf("B=1536: PipeDream's 15-1 (1920 samples per update) ranked %v, ruled out %v", sawPipeDream, ruledOut)
		}
		if batch == 3840 && !sawPipeDream {
			t.Errorf("B=3840: no PipeDream row")
		}
	}
}

// TestPlanProfileBestRanksBothPlanners checks "best" on a profile: PipeDream
// and 2BW candidates, fastest first, and a valid 2BW plan when asked for.
func TestPlanProfileBestRanksBothPlanners(t *testing.T) {
	in := request.Default().Plan
	in.Model, in.GPU, in.Nodes, in.GPUsPerNode, in.GlobalBatch = "pd-gnmt", "nvidia-v100-sxm2-32gb", 2, 8, 1024
	res, err := Plan(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, c := range res.Candidates {
		seen[c.Planner] = true
		if i > 0 && c.SamplesPerSecond > res.Candidates[i-1].SamplesPerSecond {
			t.Errorf("candidate %d (%v samples/s) ranks below a slower one", i, c.SamplesPerSecond)
		}
	}
	if !seen["pipedream"] || !seen["2bw"] {
		t.Errorf("planners among candidates: %v", seen)
	}
	in.Planner = "2bw"
	res, err = Plan(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Plan == nil || res.Plan.Planner != "2bw" || res.Plan.Execution.PP*res.Plan.Execution.DP != 16 {
		t.Fatalf("2bw plan: %+v (problem %q)", res.Plan, res.Problem)
	}
	if res.TimelineSVG == "" {
		t.Errorf("no 2bw timeline")
	}
}

func TestPlanTrainingOptionsAndCustomModel(t *testing.T) {
	in := request.Default().Plan
	in.Model, in.Custom = "custom", request.CustomModel{Layers: 24, Hidden: 2304, Heads: 24} // the 1.7B GPT of Table 4.1
	in.Nodes, in.GlobalBatch, in.Recompute, in.Seq = 4, 512, "full", 1024
	res, err := Plan(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Plan == nil {
		t.Fatalf("no plan: %s", res.Problem)
	}
	for _, c := range res.Candidates {
		if c.Execution.Recompute != "full" {
			t.Fatalf("candidate with recompute %q, want the fixed full", c.Execution.Recompute)
		}
	}
	if tr := res.Plan.Model.Transformer; tr.Layers != 24 || tr.Hidden != 2304 || tr.Seq != 1024 {
		t.Errorf("planned transformer %+v", tr)
	}
	in.Custom.Heads = 7 // 2304 is not divisible by 7
	if _, err := Plan(context.Background(), in); err == nil || !strings.Contains(err.Error(), "plan.model") {
		t.Errorf("bad custom heads: err = %v", err)
	}
}

// Every planner's candidates carry a valid execution whose schedule is a
// registered kind (MadPipe's is 1f1b-star, which it once spelled "1f1b*"),
// and an exported plan carries the selected candidate's execution.
func TestCandidateExecutionsValid(t *testing.T) {
	transformer := request.Default().Plan
	profile := request.Default().Plan
	profile.Model, profile.GPU, profile.Nodes, profile.GPUsPerNode = "pd-vgg16", "nvidia-v100-sxm2-16gb", 1, 4
	for _, in := range []request.Plan{transformer, withPlanner(profile, "pipedream"), withPlanner(profile, "2bw"), withPlanner(profile, "madpipe")} {
		res, err := Plan(context.Background(), in)
		if err != nil {
			t.Fatalf("%s on %s: %v", in.Planner, in.Model, err)
		}
		if len(res.Candidates) == 0 {
			t.Fatalf("%s on %s: no candidates (%s)", in.Planner, in.Model, res.Problem)
		}
		for i, c := range append(res.Candidates, res.Infeasible...) {
			if err := c.Execution.Validate(); err != nil {
				t.Errorf("%s candidate %d: %v", c.Planner, i, err)
			}
		}
		if res.Plan != nil && res.Plan.Execution != res.Candidates[res.Selected].Execution {
			t.Errorf("%s: plan execution %+v, selected candidate %+v", in.Planner, res.Plan.Execution, res.Candidates[res.Selected].Execution)
		}
	}
}

// withPlanner returns in with its planner set.
func withPlanner(in request.Plan, planner string) request.Plan {
	in.Planner = planner
	return in
}

// TestPlanTimelineIsTheStep checks that the default plan's timeline draws
// every microbatch and the flush, so its step is the predicted one, that
// the caption names p and v as the plan has them, and that the SVG stays
// under 100 KB, for the default GPT-3 and the largest preset.
func TestPlanTimelineIsTheStep(t *testing.T) {
	for _, mdl := range []string{"", "gpt-1t"} {
		in := request.Default().Plan
		if mdl != "" {
			in.Model = mdl
		}
		res, err := Plan(context.Background(), in)
		if err != nil || res.Plan == nil {
			t.Fatalf("%s: %v %s", in.Model, err, res.Problem)
		}
		e := res.Plan.Execution
		want := "p = " + format.Count(e.PP, "stage", "stages")
		if e.Interleave > 1 {
			want += fmt.Sprintf(" × v = %d chunks, %s", e.Interleave, format.Count(e.Microbatches(), "microbatch", "microbatches"))
		}
		if !strings.Contains(res.TimelineCaption, want) || !strings.Contains(res.TimelineCaption, "as predicted") {
			t.Errorf("%s: caption %q, want %q and the step as predicted", in.Model, res.TimelineCaption, want)
		}
		if n := len(res.TimelineSVG); n > 100<<10 {
			t.Errorf("%s: timeline SVG is %d bytes, want under 100 KB", in.Model, n)
		}
	}
}

// BenchmarkPlanPresets plans every model the Plan page offers (the
// transformer and LLM presets, the layer profiles and the custom model) as
// its default request does once the model is switched: the default
// cluster of 128 × 8 A100s, planner "best", global batch 1536. The page's
// goal is under 1 s in the tab, where wasm runs 5–8× slower than native:
// BENCHMARKS.md lists each. Besides wall time it reports the process's
// CPU time per plan (cpu-ms/op), which a loaded machine does not inflate
// (run with GOMAXPROCS=1 to leave out parallel garbage collection).
func BenchmarkPlanPresets(b *testing.B) {
	for _, m := range Models() {
		b.Run(m.ID, func(b *testing.B) {
			in := request.Default().Plan
			in.Model = m.ID
			cpu0, ok := processCPU()
			for b.Loop() {
				if _, err := Plan(context.Background(), in); err != nil {
					b.Fatal(err)
				}
			}
			if cpu1, _ := processCPU(); ok {
				b.ReportMetric(float64(cpu1-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
			}
		})
	}
}
