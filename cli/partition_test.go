package cli

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pipeplan/core/plan"
)

// partitionJSON runs "pipeplan partition ... --json" and decodes the output.
func partitionJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	var out bytes.Buffer
	if err := Run(append(append([]string{"partition"}, args...), "--json"), &out); err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestPartitionCommandReproducesPipeDream(t *testing.T) {
	v := partitionJSON(t, "--model", "resnet50", "--level-sizes", "4,4", "--level-bandwidths", "16e9,1.25e9", "--cost-model", "pipedream")
	if got := v["bottleneck_seconds"].(float64); math.Abs(got-0.0432084692)/0.0432084692 > 1e-9 {
		t.Errorf("bottleneck_seconds = %v, want 0.0432084692", got)
	}
	var reps []string
	for _, s := range v["stages"].([]any) {
		st := s.(map[string]any)
		reps = append(reps, strings.TrimSpace(string(mustJSON(t, st["replicas"]))))
		for _, key := range []string{"first_layer", "last_layer", "replicas"} {
			if _, ok := st[key]; !ok {
				t.Errorf("stage has no %q", key)
			}
		}
	}
	if strings.Join(reps, "-") != "8-4-4" || v["noam"].(float64) != 2 {
		t.Errorf("replicas %v, noam %v, want 8-4-4 and 2", reps, v["noam"])
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
// content and exports plans that core/plan parses back.
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
	if v["states"].(float64) != 3 || v["cost_model"] != "pipeplan" {
		t.Errorf("states %v cost model %v", v["states"], v["cost_model"])
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
		p.Predictions.BottleneckSeconds != v["bottleneck_seconds"].(float64) {
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
	v = partitionJSON(t, "--profile", graph, "--level-sizes", "2", "--straight")
	if v["states"].(float64) != 2 || len(v["stages"].([]any)) != 2 {
		t.Errorf("graph: %v", v)
	}
	var out bytes.Buffer
	err = Run([]string{"partition", "--profile", graph, "--export-plan", planPath}, &out)
	if err == nil || !strings.Contains(err.Error(), "minibatch size") {
		t.Errorf("export of a graph.txt without a minibatch size: err = %v", err)
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

func TestPartitionCommandErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{}, "need --profile FILE or --model NAME"},
		{[]string{"--model", "vgg19"}, `model "vgg19": not an embedded profile`},
		{[]string{"--model", "vgg16", "--level-sizes", "4,0", "--level-bandwidths", "1e9,1e9"}, "--level-sizes[1]: must be an integer >= 1"},
		{[]string{"--model", "vgg16", "--level-sizes", "4,4"}, "--level-bandwidths: need one bandwidth per level"},
		{[]string{"--model", "vgg16", "--level-bandwidths", "-1"}, "--level-bandwidths[0]"},
		{[]string{"--model", "vgg16", "--cost-model", "paper"}, "cost_model"},
		{[]string{"--model", "vgg16", "--algorithm", "gpipe"}, "--algorithm: must be pipedream, madpipe or 2bw"},
		{[]string{"--model", "inception_v3"}, "antichain states"},
		{[]string{"--model", "vgg16", "--memory-bytes", "1e3"}, "smallest memory that fits"},
		{[]string{"--profile", "/nonexistent/profile.json"}, "no such file"},
	} {
		err := Run(append([]string{"partition"}, c.args...), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("partition %v: err = %v, want %q", c.args, err, c.want)
		}
	}
}
