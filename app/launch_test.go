package app

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"pipeplan/app/request"
	"pipeplan/core/launch"
)

// TestPlanLaunchArtifacts: the selected plan comes with every engine's
// launch artifact. Llama 3.1 70B on 64 H100s goes to Megatron-LM with its
// architecture (grouped-query attention with 8 groups, SwiGLU, RoPE,
// RMSNorm, untied embeddings) and the plan's degrees; a layer-profile
// plan, which no engine can rebuild as a transformer, says so for each
// engine that builds one.
func TestPlanLaunchArtifacts(t *testing.T) {
	in := request.Default().Plan
	in.Model, in.GPU, in.Nodes = "llama3-70b", "nvidia-h100-sxm5-80gb", 8
	res, err := Plan(context.Background(), in)
	if err != nil || res.Plan == nil {
		t.Fatalf("plan: %v (problem %q)", err, res.Problem)
	}
	if len(res.Launch) != len(launch.Formats) {
		t.Fatalf("%d launch artifacts, want one per format %v", len(res.Launch), launch.Formats)
	}
	mega := res.Launch[0]
	e := res.Plan.Execution
	for _, want := range []string{"pretrain_gpt.py", "--group-query-attention", "--num-query-groups 8", "--swiglu", "--ffn-hidden-size 28672",
		"--position-embedding-type rope", "--normalization RMSNorm", "--untie-embeddings-and-output-weights",
		"--tensor-model-parallel-size " + strconv.Itoa(e.TP), "--pipeline-model-parallel-size " + strconv.Itoa(e.PP), "--global-batch-size " + strconv.Itoa(e.GlobalBatch)} {
		if mega.Format != "megatron" || !strings.Contains(mega.Text, want) {
			t.Errorf("%s artifact lacks %q:\n%s", mega.Format, want, mega.Text)
		}
	}
	for _, l := range res.Launch {
		if (l.Text == "") == (l.Problem == "") || l.Title == "" {
			t.Errorf("%s: text %d bytes, problem %q, title %q: want exactly one of text and problem, and a title", l.Format, len(l.Text), l.Problem, l.Title)
		}
	}

	prof := request.Default().Plan
	prof.Model, prof.Nodes = "pd-vgg16", 4
	res, err = Plan(context.Background(), prof)
	if err != nil || res.Plan == nil {
		t.Fatalf("profile plan: %v (problem %q, no export %q)", err, res.Problem, res.NoExport)
	}
	for _, l := range res.Launch {
		if l.Format == "megatron" && !strings.Contains(l.Problem, "model.transformer = absent") {
			t.Errorf("megatron of a layer profile: text %q, problem %q", short(l.Text), l.Problem)
		}
	}
}

// short is the first line of s.
func short(s string) string { first, _, _ := strings.Cut(s, "\n"); return first }
