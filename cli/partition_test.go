package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pipeplan/app"
	"pipeplan/core/partition"
	"pipeplan/core/plan"
	"pipeplan/modelprofiles"
)

// partitionJSON runs "pipeplan partition ... --json" and decodes the output.
func partitionJSON(t *testing.T, args ...string) app.Result {
	t.Helper()
	var out bytes.Buffer
	if err := Run(append(append([]string{"partition"}, args...), "--json"), &out); err != nil {
		t.Fatal(err)
	}
	var v app.Result
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestPartitionCommandReproducesPipeDream checks the original optimizer's
// ResNet-50 partition on 4 servers of 4 GPUs (PipeDream's planner output).
func TestPartitionCommandReproducesPipeDream(t *testing.T) {
	v := partitionJSON(t, "--model", "resnet50", "--level-sizes", "4,4", "--level-bandwidths", "16e9,1.25e9", "--cost-model", "pipedream")
	pd := v.PipeDream
	if pd == nil {
		t.Fatalf("no pipedream partition in %+v", v)
	}
	if got := pd.BottleneckSeconds; math.Abs(got-0.0432084692)/0.0432084692 > 1e-9 {
		t.Errorf("bottleneck_seconds = %v, want 0.0432084692", got)
	}
	var reps []string
	for _, s := range pd.Stages {
		reps = append(reps, string(mustJSON(t, s.Replicas)))
	}
	if strings.Join(reps, "-") != "8-4-4" || pd.NOAM != 2 || pd.CostModel != partition.CostPipeDream {
		t.Errorf("replicas %v, noam %v, cost model %q, want 8-4-4, 2, pipedream", reps, pd.NOAM, pd.CostModel)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPartitionCommandFilesAndPlan reads a JSON profile and a graph.txt by
// content, as the page reads an upload, and exports plans that core/plan
// parses back.
func TestPartitionCommandFilesAndPlan(t *testing.T) {
	dir := t.TempDir()
	profile := filepath.Join(dir, "toy.json")
	if err := os.WriteFile(profile, []byte(`{"name":"toy","microbatch_size":32,"layers":[
		{"fwd_seconds":0.01,"bwd_seconds":0.02,"output_activation_bytes":1e6,"parameter_bytes":1e6},
		{"fwd_seconds":0.01,"bwd_seconds":0.02,"output_activation_bytes":1e6,"parameter_bytes":1e8},
		{"fwd_seconds":0.001,"bwd_seconds":0.002,"output_activation_bytes":1e3,"parameter_bytes":4e8}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	planPath := filepath.Join(dir, "plan.json")
	v := partitionJSON(t, "--profile", profile, "--level-sizes", "4", "--level-bandwidths", "1e9", "--export-plan", planPath)
	if v.Model != "toy" || v.PipeDream == nil || v.PipeDream.CostModel != partition.CostPipeplan || v.GPU != "Tesla V100 SXM2 16 GB" {
		t.Errorf("model %q gpu %q pipedream %+v", v.Model, v.GPU, v.PipeDream)
	}
	data, err := os.ReadFile(planPath)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if p.Planner != "pipedream" || p.Model.NumLayers != 3 || p.Execution.MicrobatchSize != 32 ||
		p.Predictions.BottleneckSeconds != v.PipeDream.BottleneckSeconds {
		t.Errorf("plan %+v", p)
	}
	graph := filepath.Join(dir, "graph.txt")
	raw := "a -- Input0 -- forward_compute_time=5.0, backward_compute_time=0.0, activation_size=8.0, parameter_size=0.0\n" +
		"b -- Linear -- forward_compute_time=10.0, backward_compute_time=20.0, activation_size=1000.0, parameter_size=4000.0\n" +
		"c -- Linear -- forward_compute_time=10.0, backward_compute_time=20.0, activation_size=1000.0, parameter_size=4000.0\n" +
		"\ta -- b\n\tb -- c\n"
	if err := os.WriteFile(graph, []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	v = partitionJSON(t, "--profile", graph, "--graph-microbatch", "8", "--level-sizes", "2", "--straight", "--export-plan", planPath)
	if v.PipeDream == nil || len(v.PipeDream.Stages) != 2 || v.Plan == nil || v.Plan.Execution.MicrobatchSize != 8 {
		t.Errorf("graph: %+v", v)
	}
	var out bytes.Buffer
	err = Run([]string{"partition", "--profile", graph}, &out)
	if err == nil || !strings.Contains(err.Error(), "minibatch size") {
		t.Errorf("a graph.txt without --graph-microbatch: err = %v", err)
	}
	out.Reset()
	if err := Run([]string{"partition", "--model", "vgg16", "--level-sizes", "16", "--level-bandwidths", "1.25e9", "--export-plan", planPath}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "STAGE") || !strings.Contains(out.String(), "0-30") {
		t.Errorf("table output:\n%s", out.String())
	}
	if data, err = os.ReadFile(planPath); err != nil {
		t.Fatal(err)
	}
	if p, err = plan.Parse(data); err != nil || len(p.Stages) != 2 || p.Stages[0].Replicas != 15 {
		t.Fatalf("vgg16 plan %+v, %v", p, err)
	}
	// One layer per stage, with the forward/backward split of its nodes
	// (VGG-16's profile: 233.902 ms forward, 438.633 ms backward in all).
	fwd, bwd := 0.0, 0.0
	for _, l := range p.Model.Profile.Layers {
		fwd, bwd = fwd+l.FwdSeconds, bwd+l.BwdSeconds
	}
	if math.Abs(fwd-0.233902) > 1e-9 || math.Abs(bwd-0.438633) > 1e-9 {
		t.Errorf("vgg16 plan: forward %v s, backward %v s", fwd, bwd)
	}
}

// TestPartition2BWCommand runs the 2BW planner on VGG-16 over 4×4 GPUs and
// exports the best configuration as a plan that uses every GPU.
func TestPartition2BWCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "plan.json")
	v := partitionJSON(t, "--model", "vgg16", "--algorithm", "2bw", "--level-sizes", "4,4",
		"--level-bandwidths", "16e9,1.25e9", "--memory-bytes", "16e9", "--batch", "1024", "--export-plan", out)
	if len(v.Candidates) == 0 {
		t.Fatalf("2bw: no candidates: %s", v.Problem)
	}
	for i, c := range v.Candidates {
		if got := c.Execution.DP * c.Execution.PP; c.Planner != "2bw" || got != 16 || c.Execution.GlobalBatch != 1024 {
			t.Errorf("candidate %d: %s on %d GPUs at batch %d, want 2bw on 16 at 1024", i, c.Planner, got, c.Execution.GlobalBatch)
		}
		if i > 0 && c.SamplesPerSecond > v.Candidates[i-1].SamplesPerSecond {
			t.Errorf("candidate %d (%v samples/s) ranks below a slower one", i, c.SamplesPerSecond)
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if p.Planner != "2bw" || p.Execution != v.Candidates[0].Execution {
		t.Errorf("exported plan %s %+v, want the best candidate's %+v", p.Planner, p.Execution, v.Candidates[0].Execution)
	}
	// Without --batch, B is the profiled minibatch (128) × the GPUs.
	v = partitionJSON(t, "--model", "vgg16", "--algorithm", "2bw", "--level-sizes", "4", "--level-bandwidths", "16e9", "--memory-bytes", "16e9")
	if len(v.Candidates) == 0 || v.Candidates[0].Execution.GlobalBatch != 128*4 {
		t.Errorf("default batch: %+v", v.Candidates)
	}
}

// TestPartitionMadPipeCommand compares the command with MadPipe run on
// VGG-16's chain directly.
func TestPartitionMadPipeCommand(t *testing.T) {
	args := []string{"--model", "vgg16", "--algorithm", "madpipe", "--level-sizes", "4", "--level-bandwidths", "12e9", "--memory-bytes", "12e9"}
	v := partitionJSON(t, args...)
	g, err := modelprofiles.Graph("vgg16")
	if err != nil {
		t.Fatal(err)
	}
	want, err := partition.MadPipe(context.Background(), g.Chain(), 4, 12e9, 12e9, nil)
	if err != nil {
		t.Fatal(err)
	}
	mp := v.MadPipe
	if mp == nil {
		t.Fatalf("no madpipe answer: %+v", v)
	}
	if mp.PeriodSeconds != want.PeriodSeconds || len(mp.Stages) != len(want.Stages) {
		t.Errorf("period %v s in %d stages, want MadPipe's %v s in %d", mp.PeriodSeconds, len(mp.Stages), want.PeriodSeconds, len(want.Stages))
	}
	var table bytes.Buffer
	if err := Run(append([]string{"partition"}, args...), &table); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "SPECIAL") {
		t.Errorf("table output has no SPECIAL column:\n%s", table.String())
	}
}

func TestPartitionCommandErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{}, "need --profile FILE or --model NAME"},
		{[]string{"--model", "vgg19"}, `--model (plan.model): "vgg19" is not an embedded PipeDream profile`},
		{[]string{"--model", "vgg16", "--level-sizes", "4,0", "--level-bandwidths", "1e9,1e9"}, "--level-sizes (plan.levels[1].workers): must be in [1, 65536], got 0"},
		{[]string{"--model", "vgg16", "--level-sizes", "4,x", "--level-bandwidths", "1e9,1e9"}, `--level-sizes[1]: must be an integer, got "x"`},
		{[]string{"--model", "vgg16", "--level-sizes", "4,4"}, "--level-bandwidths: need one bandwidth per level"},
		{[]string{"--model", "vgg16", "--level-bandwidths", "-1"}, "--level-bandwidths (plan.levels[0].bandwidth_bytes_per_sec): must be in [1e+06, 1e+13] bytes/s, got -1"},
		{[]string{"--model", "vgg16", "--cost-model", "paper"}, `--cost-model (plan.cost_model): must be one of ["pipeplan" "pipedream"], got "paper"`},
		{[]string{"--model", "vgg16", "--algorithm", "gpipe"}, "--algorithm (plan.planner)"},
		{[]string{"--model", "vgg16", "--gpu", "tpu"}, "--gpu (plan.gpu)"},
		{[]string{"--model", "inception_v3"}, "antichain states"},
		{[]string{"--model", "vgg16", "--memory-bytes", "1e3"}, "smallest memory that fits"},
		{[]string{"--model", "vgg16", "--memory-bytes", "-2"}, "--memory-bytes (plan.memory_bytes): must be -1 (unlimited), 0 (the GPU's capacity) or a number of bytes up to 1e+15, got -2"},
		{[]string{"--profile", "/nonexistent/profile.json"}, "no such file"},
		{[]string{"--model", "vgg16", "--algorithm", "madpipe"}, "--memory-bytes (plan.memory_bytes): MadPipe needs a memory limit per GPU, got -1 (unlimited)"},
		{[]string{"--model", "vgg16", "--algorithm", "madpipe", "--memory-bytes", "1e6"}, "needs"},
		{[]string{"--model", "vgg16", "--algorithm", "madpipe", "--memory-bytes", "1e10", "--export-plan", "x.json"}, "--export-plan: no plan to export"},
	} {
		err := Run(append([]string{"partition"}, c.args...), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("partition %v: err = %v, want %q", c.args, err, c.want)
		}
	}
}
