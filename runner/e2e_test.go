package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"pipeplan/core/schedule"
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

// hangTimeout is the runner's --timeout in the tests: a hang detector, not
// a speed limit. On a loaded 2-core machine (load 30–40) a 2-step run's ranks
// were seen to get 2 s of CPU in 5 minutes, so it is generous.
const hangTimeout = "20m"

// runE2E runs the runner's CLI on a testdata plan with --check and --json.
func runE2E(t *testing.T, args ...string) *Report {
	t.Helper()
	r, _ := runE2ELog(t, args...)
	return r
}

// runE2ELog is runE2E, also returning the runner's log (stderr).
func runE2ELog(t *testing.T, args ...string) (*Report, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	args = append([]string{"--check", "--json", "--steps", "2", "--warmup", "1", "--timeout", hangTimeout}, args...)
	err := run(context.Background(), args, &stdout, &stderr)
	if err != nil {
		t.Fatalf("runner %v: %v\nworker output:\n%s", args, err, stderr.String())
	}
	var r Report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	return &r, stderr.String()
}

// runE2EKept is runE2E with --keep: the report and the ranks' results
// (ordered by rank), read from the run directory, which it then removes;
// the directory's run.json and worker.py stay for a further reference run
// until the test ends.
func runE2EKept(t *testing.T, args ...string) (*Report, []*rankResult, string) {
	t.Helper()
	r, log := runE2ELog(t, append([]string{"--keep"}, args...)...)
	_, after, ok := strings.Cut(log, "runner: run directory ")
	dir, _, _ := strings.Cut(after, "\n")
	if !ok || dir == "" {
		t.Fatalf("no run directory in the log:\n%s", log)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var results []*rankResult
	for rank := range r.Ranks {
		data, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("result-rank%d.json", rank)))
		if err != nil {
			t.Fatal(err)
		}
		var res rankResult
		if err := json.Unmarshal(data, &res); err != nil {
			t.Fatalf("rank %d: %v", rank, err)
		}
		results = append(results, &res)
	}
	return r, results, dir
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
// Its plan does not overlap the gradient reduction: every bucket is reduced
// after the last backward (the negative control of the overlap check of
// TestEndToEndDataParallelZeRO), and the optimizer state is whole.
func TestEndToEndPipelineMatchesReference(t *testing.T) {
	torchPython(t)
	t.Parallel() // each a torchrun job of its own; they wait on process start-up more than on the CPU
	r, results, _ := runE2EKept(t, "testdata/tiny-transformer.json")
	checkTrained(t, r, 4)
	for _, res := range results {
		if n := overlappedBuckets(t, res); n != 0 {
			t.Errorf("rank %d: %d bucket reductions launched during the backward of a plan without overlap", res.Rank, n)
		}
		if res.OptimizerStateBytes != res.ParameterBytes {
			t.Errorf("rank %d: optimizer state %v bytes for %v bytes of weights, want one momentum buffer per weight", res.Rank, res.OptimizerStateBytes, res.ParameterBytes)
		}
	}
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
	err = runTorchrun(ctx, py, dir, singleNode(len(c.Ranks)), &bytes.Buffer{})
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

// TestEndToEndInterleaved runs 4 model chunks on 2 ranks (v = 2) under
// Megatron-LM's interleaved schedule, the tied embedding split between rank
// 0's first chunk and rank 1's last: one layer a chunk, and chunks whose
// ends hold no layers — the embedding alone on rank 0's first chunk, the
// output layer and loss alone on rank 1's last, as the PTD-P search plans
// Llama 3's 126 layers on pp 16 × v 8.
func TestEndToEndInterleaved(t *testing.T) {
	torchPython(t)
	t.Parallel()
	for _, name := range []string{"tiny-interleaved.json", "tiny-end-chunks.json"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each a torchrun job of its own; they wait on process start-up more than on the CPU
			r := runE2E(t, "testdata/"+name)
			checkTrained(t, r, 2)
			if r.Schedule != "interleaved" {
				t.Errorf("schedule %q, want interleaved", r.Schedule)
			}
		})
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

// TestEndToEndZeroBubbleV runs the 4-chunk interleaved plan under ZB-V on
// its two positions: chunks placed in a V (position 0 runs the first and
// the last chunk, the embedding and the output layer; position 1 the two
// middle ones, handing the activation from one to the other on the rank
// itself), each backward split into I and W; the losses match the
// unsplit model's, each rank ran the two virtual stages of its V, and
// position 0 reports the losses.
func TestEndToEndZeroBubbleV(t *testing.T) {
	torchPython(t)
	t.Parallel()
	for _, kind := range []string{"zb-v", "dualpipe-v"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			r, results, _ := runE2EKept(t, "--schedule", kind, "testdata/tiny-interleaved.json")
			checkTrained(t, r, 2)
			if r.Schedule != kind || r.Comparable {
				t.Errorf("schedule %q comparable %v, want %s and not comparable (the plan is interleaved)", r.Schedule, r.Comparable, kind)
			}
			for rank, res := range results {
				want := map[int]bool{rank: true, 3 - rank: true}
				kinds := map[string]bool{}
				for _, a := range res.Actions {
					if !want[a.Stage] {
						t.Fatalf("rank %d ran %s of virtual stage %d, want stages %d and %d only", rank, a.Kind, a.Stage, rank, 3-rank)
					}
					kinds[a.Kind] = true
				}
				if got := len(res.Losses) > 0; got != (rank == 0) {
					t.Errorf("rank %d reports %d losses, want them on rank 0 only (the V's last stage)", rank, len(res.Losses))
				}
				// DualPipeV runs some backwards whole (its paired ones) and
				// splits others into I and W.
				if kind == "dualpipe-v" && rank == 0 && !(kinds["B"] && kinds["I"] && kinds["W"]) {
					t.Errorf("rank 0 ran %v, want whole (B) and split (I, W) backwards", kinds)
				}
			}
		})
	}
}

// overlappedBuckets counts, over a rank's measured steps, the gradient
// bucket reductions launched before the step's last backward ended: those
// a hook launched from inside the backward.
func overlappedBuckets(t *testing.T, res *rankResult) int {
	t.Helper()
	lastB := map[int]float64{}
	for _, a := range res.Actions {
		if a.Kind == "B" || a.Kind == "W" {
			lastB[a.Step] = max(lastB[a.Step], a.End)
		}
	}
	n := 0
	for _, a := range res.Actions {
		if a.Kind == "REDUCE_GRAD" && a.Start < lastB[a.Step] {
			n++
		}
	}
	return n
}

// TestEndToEndDataParallelZeRO runs pp 2 × dp 2 with ZeRO-1 and the
// gradient reduction overlapped: the weights' gradients in DDP's buckets
// (1 MiB first, a layer of hidden 256 holds 3 MiB), each bucket's
// reduction launched by the hooks while the last backward still runs, the
// momentum buffers sharded over the two replicas and the updated shards
// all-gathered; the losses match the one-process model.
func TestEndToEndDataParallelZeRO(t *testing.T) {
	torchPython(t)
	t.Parallel() // each a torchrun job of its own; they wait on process start-up more than on the CPU
	r, results, _ := runE2EKept(t, "testdata/tiny-dp2-zero1.json")
	checkTrained(t, r, 4)
	for _, res := range results {
		if n := overlappedBuckets(t, res); n < 2 {
			t.Errorf("rank %d: %d bucket reductions overlapped the backward over 2 steps, want at least one per step", res.Rank, n)
		}
		// Each replica holds half the momentum, up to the padding of its buckets to a multiple of dp.
		if d := 2*res.OptimizerStateBytes - res.ParameterBytes; d < 0 || d > 64 {
			t.Errorf("rank %d: optimizer state %v bytes for %v bytes of weights, want half (ZeRO-1 over dp 2)", res.Rank, res.OptimizerStateBytes, res.ParameterBytes)
		}
	}
}

// syncMargin is how much an asynchronous schedule's losses must differ from
// synchronous training's (relative): ten times the tolerance of --check.
const syncMargin = 10 * cpuLossTolerance

// checkAsynchronous is the negative control of an asynchronous run (its
// --check passed against its own semantics): the same model trained
// synchronously in one process (worker.py --reference --synchronous, in
// the kept run directory) gives losses more than syncMargin away.
func checkAsynchronous(t *testing.T, r *Report, dir string) {
	t.Helper()
	cmd := exec.Command(torchPython(t), "worker.py", "--config", "run.json", "--reference", "--synchronous")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("synchronous reference: %v\n%s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sync struct{ Losses []float64 }
	if err := json.Unmarshal(data, &sync); err != nil || len(sync.Losses) != len(r.Losses) {
		t.Fatalf("synchronous reference %s: %v", data, err)
	}
	diff := 0.0
	for i, l := range r.Losses {
		diff = max(diff, math.Abs(l-sync.Losses[i])/sync.Losses[i])
	}
	if diff <= syncMargin {
		t.Errorf("%s losses %v are within %.3g of synchronous training's %v: the weight versions made no difference", r.Schedule, r.Losses, diff, sync.Losses)
	}
}

// checkVersions: each rank held as many weight versions as core/schedule's
// closed form says for its stage (Kind.InFlight).
func checkVersions(t *testing.T, kind schedule.Kind, results []*rankResult, stages, m int) {
	t.Helper()
	for _, res := range results {
		_, want, err := kind.InFlight(stages, res.Stage, m, 1)
		if err != nil {
			t.Fatal(err)
		}
		if res.WeightVersions != want {
			t.Errorf("%s rank %d (stage %d): held %d weight versions, want %d", kind, res.Rank, res.Stage, res.WeightVersions, want)
		}
	}
}

// TestEndToEndTwoBW runs PipeDream-2BW on 2 stages, m = 4, over 3 batches
// in one action list (no flush): its losses match W(t+1) = W(t) −
// ν∇f(W(t−1)) computed in one process, batches 0 and 1 both see W(0) (same
// data: the same loss), each stage holds 2 versions, and synchronous
// training differs.
func TestEndToEndTwoBW(t *testing.T) {
	torchPython(t)
	t.Parallel() // each a torchrun job of its own; they wait on process start-up more than on the CPU
	r, results, dir := runE2EKept(t, "testdata/tiny-2bw.json")
	checkTrained(t, r, 2)
	if r.Losses[1] != r.Losses[0] {
		t.Errorf("batch 1 ran on weights other than W(0): losses %v", r.Losses)
	}
	checkVersions(t, schedule.TwoBW, results, 2, 4)
	checkAsynchronous(t, r, dir)
}

// TestEndToEndPipeDream runs PipeDream's weight stashing on 2 stages: every
// microbatch a minibatch, stage 0 one update behind (it holds 2 versions,
// stage 1 one), matching the one-process rule of the dissertation §2.4.3
// and not synchronous training.
func TestEndToEndPipeDream(t *testing.T) {
	torchPython(t)
	t.Parallel() // each a torchrun job of its own; they wait on process start-up more than on the CPU
	r, results, dir := runE2EKept(t, "testdata/tiny-pipedream.json")
	checkTrained(t, r, 2)
	checkVersions(t, schedule.PipeDream, results, 2, 4)
	checkAsynchronous(t, r, dir)
}

// TestEndToEndPipeDreamVerticalSync: with vertical sync every stage uses the
// input stage's version of a microbatch, sent along with its activation.
func TestEndToEndPipeDreamVerticalSync(t *testing.T) {
	torchPython(t)
	t.Parallel() // each a torchrun job of its own; they wait on process start-up more than on the CPU
	r, _, dir := runE2EKept(t, "--vertical-sync", "testdata/tiny-pipedream.json")
	checkTrained(t, r, 2)
	checkAsynchronous(t, r, dir)
}

// TestEndToEndRoundRobin runs PipeDream's 2-1 configuration under 1F1B-RR:
// stage 0 replicated twice, fed microbatches round-robin, its replicas
// averaging each round's gradients; stage 1 alone.
func TestEndToEndRoundRobin(t *testing.T) {
	torchPython(t)
	t.Parallel() // each a torchrun job of its own; they wait on process start-up more than on the CPU
	r, results, dir := runE2EKept(t, "testdata/tiny-1f1b-rr.json")
	checkTrained(t, r, 3)
	for i, res := range results {
		if wantStage, wantReplica := i/2, i%2; res.Stage != wantStage || res.Replica != wantReplica {
			t.Errorf("rank %d: stage %d replica %d, want %d and %d", i, res.Stage, res.Replica, wantStage, wantReplica)
		}
	}
	checkAsynchronous(t, r, dir)
}

// TestEndToEndStar runs MadPipe's 1F1B* on a profile plan whose period
// (0.008 s) puts its two stages in groups 2 and 1: synchronous, so it
// matches the one-process model.
func TestEndToEndStar(t *testing.T) {
	torchPython(t)
	t.Parallel() // each a torchrun job of its own; they wait on process start-up more than on the CPU
	r := runE2E(t, "--scale-down", "testdata/tiny-star.json")
	checkTrained(t, r, 2)
	if r.Schedule != "1f1b-star" {
		t.Errorf("schedule %q", r.Schedule)
	}
}

// TestEndToEndRecompute runs plans with activation recomputation: the
// Llama-style tp 2 × pp 2 plan under 1F1B recomputing the first layer of
// each stage's two (full, --recompute-method block) or the attention cores
// (selective), and the 2BW plan recomputing every layer, whose recomputed
// forwards must read the weight version their forward ran with. Each
// trains as its reference does, and each rank's counts of forward passes
// show the recomputation: per chunk forward, 2 layers and 2 attention
// cores without it; 3 and 3 recomputing one layer; 2 and 4 recomputing the
// cores; 4 and 4 recomputing both layers.
func TestEndToEndRecompute(t *testing.T) {
	torchPython(t)
	t.Parallel()
	for _, c := range []struct {
		plan, recompute string
		ranks, steps    int
		layers, cores   int // per chunk forward
	}{
		{"tiny-llama-tp2.json", `"recompute": "full", "recompute_layers": 1,`, 4, 2, 3, 3},
		{"tiny-llama-tp2.json", `"recompute": "selective",`, 4, 2, 2, 4},
		// Enough batches that the weights a backward recomputes with tell
		// the version of its forward from the newest one.
		{"tiny-2bw.json", `"recompute": "full",`, 2, 5, 4, 4},
	} {
		t.Run(c.plan+" "+c.recompute, func(t *testing.T) {
			t.Parallel() // each a torchrun job of its own
			data, err := os.ReadFile(filepath.Join("testdata", c.plan))
			if err != nil {
				t.Fatal(err)
			}
			text := strings.Replace(string(data), `"recompute": "none",`, c.recompute, 1)
			if text == string(data) {
				t.Fatalf("%s has no recompute none to replace", c.plan)
			}
			path := filepath.Join(t.TempDir(), c.plan)
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			r, results, _ := runE2EKept(t, "--steps", strconv.Itoa(c.steps), path)
			if r.Ranks != c.ranks || len(r.Losses) != c.steps+1 || r.MaxLossRelDiff == nil || *r.MaxLossRelDiff > cpuLossTolerance {
				t.Fatalf("%d ranks (want %d), losses %v vs reference %v (max rel. diff %v)", r.Ranks, c.ranks, r.Losses, r.ReferenceLosses, r.MaxLossRelDiff)
			}
			for _, res := range results {
				f := res.Forwards
				if f.Chunk == 0 || f.Layer != c.layers*f.Chunk || f.AttentionCore != c.cores*f.Chunk {
					t.Errorf("rank %d: %d chunk, %d layer and %d attention-core forwards; want %d and %d of the latter per chunk forward", res.Rank, f.Chunk, f.Layer, f.AttentionCore, c.layers, c.cores)
				}
			}
		})
	}
}
