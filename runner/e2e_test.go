package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// torchPython returns a python with torch, skipping the test when there is
// none outside CI; in CI (env CI set) a missing torch is a failure.
func torchPython(t *testing.T) string {
	t.Helper()
	py, err := findPython(context.Background(), defaultPythons, importsTorch)
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("end-to-end runner test needs torch: %v", err)
		}
		t.Fatalf("CI must have torch for the runner's end-to-end test (apt-get install python3-torch): %v", err)
	}
	return py
}

// runE2E runs the runner's CLI on a testdata plan with --check and --json.
func runE2E(t *testing.T, args ...string) *Report {
	t.Helper()
	var stdout, stderr bytes.Buffer
	args = append([]string{"--check", "--json", "--steps", "2", "--warmup", "1", "--timeout", "5m"}, args...)
	err := run(context.Background(), args, &stdout, &stderr)
	if err != nil {
		t.Fatalf("runner %v: %v\nworker output:\n%s", args, err, stderr.String())
	}
	var r Report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	return &r
}

// checkTrained: the pipelined losses match the unpipelined reference (run
// checks that), and they fall over the 3 steps (the optimizer step ran).
func checkTrained(t *testing.T, r *Report, ranks int) {
	t.Helper()
	if r.Ranks != ranks || len(r.PerRank) != ranks {
		t.Fatalf("%d ranks reported, want %d", len(r.PerRank), ranks)
	}
	if len(r.Losses) != 3 || len(r.ReferenceLosses) != 3 || r.MaxLossRelDiff == nil || *r.MaxLossRelDiff > cpuLossTolerance {
		t.Fatalf("losses %v vs reference %v (max rel. diff %v)", r.Losses, r.ReferenceLosses, r.MaxLossRelDiff)
	}
	if !(r.Losses[2] < r.Losses[0]) {
		t.Errorf("loss did not fall over 3 steps: %v", r.Losses)
	}
	if !(r.IterationSeconds.Median > 0) || !(r.SamplesPerSecond > 0) {
		t.Errorf("no timing: %+v, %v samples/s", r.IterationSeconds, r.SamplesPerSecond)
	}
	for _, k := range r.PerRank {
		if !(k.PeakMemoryBytes > 0) {
			t.Errorf("rank %d: peak memory %v", k.Rank, k.PeakMemoryBytes)
		}
	}
}

// TestEndToEndPipelineMatchesReference runs a 2-stage × 2-replica 1F1B
// transformer plan through real torchrun with gloo on 4 CPU processes.
func TestEndToEndPipelineMatchesReference(t *testing.T) {
	torchPython(t)
	t.Parallel() // each a torchrun job of its own; they wait on process start-up more than on the CPU
	r := runE2E(t, "testdata/tiny-transformer.json")
	checkTrained(t, r, 4)
	if r.SamplesPerStep != 16 || r.Comparable || !strings.Contains(r.Note, "the run used the CPU, not the plan's 4 × A100") {
		t.Errorf("samples per step %d (want 16), comparable %v (a CPU run of an A100 plan is not), note %q", r.SamplesPerStep, r.Comparable, r.Note)
	}
}

// TestEndToEndScaleDownProfile runs a layer-profile GPipe plan scaled down.
func TestEndToEndScaleDownProfile(t *testing.T) {
	torchPython(t)
	t.Parallel() // each a torchrun job of its own; they wait on process start-up more than on the CPU
	r := runE2E(t, "--scale-down", "testdata/tiny-profile.json")
	checkTrained(t, r, 2)
	if r.Comparable {
		t.Error("a scaled-down run claims comparable timing")
	}
}

// TestEndToEndWorkerFailure makes rank 1 meet an action it cannot execute:
// the error names rank 1 and shows its last lines.
func TestEndToEndWorkerFailure(t *testing.T) {
	py := torchPython(t)
	c, err := newRunConfig(loadPlan(t, "tiny-profile.json"), options{device: "cpu", scaleDown: true, steps: 1, warmup: 0})
	if err != nil {
		t.Fatal(err)
	}
	c.Actions[1][0] = "1X0"
	dir := t.TempDir()
	c.OutDir = dir
	if err := writeRunDir(dir, c); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err = launch(ctx, py, dir, singleNode(len(c.Ranks)), &bytes.Buffer{})
	if err == nil {
		t.Fatal("a worker with a bad action list succeeded")
	}
	if msg := err.Error(); !strings.Contains(msg, "rank 1 exited with code 1; its last stderr lines:") ||
		!strings.Contains(msg, `[rank 1] ValueError: action '1X0': the runner executes only F, B, I, W and OPT_STEP`) {
		t.Errorf("error does not show rank 1's failure:\n%s", msg)
	}
}

// TestEndToEndTensorParallel runs a Llama-style plan (grouped-query
// attention, SwiGLU, RMSNorm, rotary positions, untied embeddings, a
// vocabulary of 101 padded to 102) with tp 2 × pp 2 under 1F1B on 4 CPU
// processes: column/row-parallel blocks, a vocabulary-parallel embedding
// and cross-entropy, against the unsplit model with torch's cross-entropy.
func TestEndToEndTensorParallel(t *testing.T) {
	torchPython(t)
	t.Parallel() // each a torchrun job of its own; they wait on process start-up more than on the CPU
	r := runE2E(t, "testdata/tiny-llama-tp2.json")
	checkTrained(t, r, 4)
	for _, k := range r.PerRank {
		if k.TPRank != k.Rank%2 || k.Stage != k.Rank/2 {
			t.Errorf("rank %d: stage %d tp rank %d, want stage %d tp rank %d", k.Rank, k.Stage, k.TPRank, k.Rank/2, k.Rank%2)
		}
	}
}

// TestEndToEndInterleaved runs 4 one-layer chunks on 2 ranks (v = 2) under
// Megatron-LM's interleaved schedule, the tied embedding split between rank
// 0's first chunk and rank 1's last.
func TestEndToEndInterleaved(t *testing.T) {
	torchPython(t)
	t.Parallel() // each a torchrun job of its own; they wait on process start-up more than on the CPU
	r := runE2E(t, "testdata/tiny-interleaved.json")
	checkTrained(t, r, 2)
	if r.Schedule != "interleaved" {
		t.Errorf("schedule %q, want interleaved", r.Schedule)
	}
}

// TestEndToEndZeroBubble runs the tp 2 × pp 2 plan under ZB-H1: each
// backward split into an input-gradient step (I) and a later weight-gradient
// step (W), the tensor-parallel all-reduces in both.
func TestEndToEndZeroBubble(t *testing.T) {
	torchPython(t)
	t.Parallel() // each a torchrun job of its own; they wait on process start-up more than on the CPU
	r := runE2E(t, "--schedule", "zb-h1", "testdata/tiny-llama-tp2.json")
	checkTrained(t, r, 4)
	if r.Schedule != "zb-h1" || r.Comparable {
		t.Errorf("schedule %q comparable %v, want zb-h1 and not comparable (the plan is 1f1b)", r.Schedule, r.Comparable)
	}
}
