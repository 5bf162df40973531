package app

import (
	"context"
	"errors"
	"strings"
	"testing"

	"pipeplan/app/request"
	"pipeplan/core/partition"
	"pipeplan/core/schedule"
	"pipeplan/modelprofiles"
)

// TestPlanMadPipe checks the Plan page's MadPipe result against the core
// planner run directly: the same period and stages, every layer on exactly
// one stage, memory within the GPU, progress reported, and no export.
func TestPlanMadPipe(t *testing.T) {
	in := request.Default().Plan
	in.Model, in.GPU, in.Nodes, in.GPUsPerNode, in.Planner = "pd-vgg16", "nvidia-v100-sxm2-16gb", 1, 4, "madpipe"
	var last float64
	res, err := PlanProgress(context.Background(), in, func(f float64) { last = f })
	if err != nil {
		t.Fatal(err)
	}
	mp := res.MadPipe
	if mp == nil || res.Plan != nil || !strings.Contains(res.NoExport, "one GPU per stage") || len(res.Candidates) != 1 {
		t.Fatalf("madpipe result: view %v, plan %v, no-export %q, %d candidates", mp, res.Plan, res.NoExport, len(res.Candidates))
	}
	if !(last > 0.2) {
		t.Errorf("last progress %v", last)
	}
	if got := res.Candidates[0].Execution.Schedule; got != schedule.OneFOneBStar {
		t.Errorf("schedule %q, want the registry's %q", got, schedule.OneFOneBStar)
	}
	g, err := modelprofiles.Graph("vgg16")
	if err != nil {
		t.Fatal(err)
	}
	prof := g.Chain()
	direct, err := partition.MadPipe(context.Background(), prof, 4, mp.BandwidthBytesPerSec, res.CapacityBytes, nil)
	if err != nil {
		t.Fatal(err)
	}
	if direct.PeriodSeconds != mp.PeriodSeconds || len(direct.Stages) != len(mp.Stages) {
		t.Errorf("period %v s, %d stages; MadPipe directly: %v s, %d stages", mp.PeriodSeconds, len(mp.Stages), direct.PeriodSeconds, len(direct.Stages))
	}
	next := 0
	for _, s := range mp.Stages {
		if s.FirstLayer != next || s.LastLayer < s.FirstLayer || s.Processor < 0 || s.Processor >= 4 {
			t.Fatalf("stages %+v do not tile the %d layers over 4 GPUs", mp.Stages, len(prof.Layers))
		}
		next = s.LastLayer + 1
	}
	if next != len(prof.Layers) {
		t.Errorf("stages end at layer %d of %d", next, len(prof.Layers))
	}
	for i, m := range mp.GPUMemoryBytes {
		if m > res.CapacityBytes {
			t.Errorf("GPU %d: %v bytes > capacity %v", i, m, res.CapacityBytes)
		}
	}
	if got, want := res.Candidates[0].SamplesPerSecond, float64(prof.MicrobatchSize)/mp.PeriodSeconds; got != want {
		t.Errorf("throughput %v, want minibatch/period %v", got, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := PlanProgress(ctx, in, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
}

// BenchmarkPlanMadPipeResNet50 is the Plan page's MadPipe run on
// ResNet-50's profile over 8 A100s (the page runs it in the background).
func BenchmarkPlanMadPipeResNet50(b *testing.B) {
	in := request.Default().Plan
	in.Model, in.Nodes, in.GPUsPerNode, in.Planner = "pd-resnet50", 1, 8, "madpipe"
	for b.Loop() {
		if _, err := Plan(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPlanMadPipeBounded: a MadPipe request over MaxMadPipeLayerGPUs (the
// shared link of the issue: ResNet-101 on 4096 × 16 GPUs, and 128 GPUs) is
// refused at once, naming the field, the product and what would plan.
func TestPlanMadPipeBounded(t *testing.T) {
	for _, c := range []struct{ nodes, perNode int }{{8, 16}, {64, 16}} {
		in := request.Default().Plan
		in.Model, in.Nodes, in.GPUsPerNode, in.Planner = "pd-resnet101", c.nodes, c.perNode, "madpipe"
		_, err := Plan(context.Background(), in)
		if err == nil || !strings.HasPrefix(err.Error(), "plan.nodes: MadPipe takes at most 5600 layers × GPUs") || !strings.Contains(err.Error(), "on at most 16 GPUs") {
			t.Errorf("%d × %d GPUs: err = %v", c.nodes, c.perNode, err)
		}
	}
}
