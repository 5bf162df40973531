package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The plans of these tests are the planner's: exported from runner/testdata
// with the tiny Hugging Face configs in testdata/hf (C is "--precision fp32
// --recompute none --interleave 1 --seq 16 --batch 8 --microbatch 2"):
//
//	pipeplan transformer --hf-config hf/tiny-llama.json --gpus 4 --tp 2 --pp 2 --cp 1 --ep 1 --sequence-parallel $C --export-plan llama-tp2-sp.json
//	pipeplan transformer --hf-config hf/tiny-llama.json --gpus 4 --tp 1 --pp 2 --cp 2 --ep 1 $C --export-plan llama-cp2.json
//	pipeplan transformer --hf-config hf/tiny-moe.json --gpus 4 --tp 1 --pp 2 --cp 1 --ep 2 $C --export-plan moe-ep2.json
//	pipeplan transformer --hf-config hf/tiny-moe.json --gpus 4 --tp 2 --pp 1 --cp 2 --ep 2 --etp 2 --sequence-parallel $C --batch 4 --export-plan moe-tp2-sp-cp2-ep2.json
//	pipeplan transformer --hf-config hf/tiny-moe-grouped.json --gpus 4 --tp 1 --pp 1 --cp 2 --ep 2 $C --zero 1 --overlap-grad-reduce --export-plan moe-dp2-cp2-ep2-zero1.json
//	pipeplan transformer --hf-config hf/tiny-llama4.json --gpus 4 --tp 1 --pp 2 --cp 1 --ep 2 $C --export-plan llama4-ep2.json

// modelLossTolerance is the largest relative loss difference these tests
// accept: the runs match the unsplit reference to ~1e-7 on CPU fp32, while
// a router whose gradient misses sequence parallelism's all-reduce (a
// deliberately broken worker, tried once by hand) differs by 7e-6 and
// ring attention without the key/value gradients by 1e-3.
const modelLossTolerance = 1e-6

// TestRunConfigCarriesPlanModel: what the planner put in each plan (the
// architecture, the MoE fields and the router's group limit, cp, ep, sequence parallelism) reaches the
// worker's run.json, and ranks are laid out as rank = ((replica·stages +
// stage)·cp + cp rank)·tp + tp rank.
func TestRunConfigCarriesPlanModel(t *testing.T) {
	for _, name := range []string{"llama-tp2-sp.json", "llama-cp2.json", "moe-ep2.json", "moe-tp2-sp-cp2-ep2.json", "moe-dp2-cp2-ep2-zero1.json", "llama4-ep2.json"} {
		p := loadPlan(t, name)
		c, err := newRunConfig(p, options{device: "cpu", steps: 1, warmup: 0})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		dir := t.TempDir()
		c.OutDir = dir
		if err := writeRunDir(dir, c); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, "model.py")); err != nil {
			t.Errorf("%s: model.py not written beside worker.py: %v", name, err)
		}
		data, err := os.ReadFile(filepath.Join(dir, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		var got runConfig
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
		tr, e, m := p.Model.Transformer, p.Execution, got.Model
		if m.Hidden != tr.Hidden || m.Heads != tr.Heads || m.KVHeads != tr.KVHeads || m.FFN != tr.FFN || m.Seq != tr.Seq ||
			m.Gated != tr.GatedFFN || m.Norm != "rmsnorm" || m.Position != "rope" || m.Tied == tr.UntiedEmbeddings || m.Precision != string(tr.Precision) {
			t.Errorf("%s: run.json model %+v, plan's transformer %+v", name, m, *tr)
		}
		if moe := tr.MoE; moe != nil && (m.Experts != moe.Experts || m.TopK != moe.TopK || m.ExpertFFN != moe.FFN ||
			m.SharedExperts != moe.SharedExperts || m.FirstDense != moe.FirstDense || m.MoEEvery != moe.Every ||
			m.ExpertGroups != moe.Groups || m.GroupTopK != moe.GroupTopK) {
			t.Errorf("%s: run.json MoE fields %+v, plan's %+v", name, m, *moe)
		}
		if got.TP != e.TP || got.CP != e.CP || got.EP != e.EP || got.SequenceParallel != e.SequenceParallel || got.Replicas != e.DP {
			t.Errorf("%s: run.json tp %d cp %d ep %d sp %v replicas %d, plan %+v", name, got.TP, got.CP, got.EP, got.SequenceParallel, got.Replicas, e)
		}
		if want := e.TP * e.PP * e.DP * e.CP; len(got.Ranks) != want {
			t.Fatalf("%s: %d ranks, want tp·pp·dp·cp = %d", name, len(got.Ranks), want)
		}
		for i, r := range got.Ranks {
			if want := ((r.Replica*got.Stages+r.Stage)*got.CP+r.CPRank)*got.TP + r.TPRank; r.Rank != i || want != i {
				t.Errorf("%s: ranks[%d] = %+v, its place gives rank %d", name, i, r, want)
			}
		}
	}
}

// TestScaleDownKeepsCPAndEP: scaled down, a plan keeps cp (at most 2) and
// the expert parallelism its one replica's cp ranks can hold; the report's
// note says what was lowered.
func TestScaleDownKeepsCPAndEP(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cp, ep int
		note   string
	}{{"moe-tp2-sp-cp2-ep2.json", 2, 2, ""}, {"moe-ep2.json", 1, 1, "; ep 2 ran as ep 1"}} {
		p := loadPlan(t, tc.name)
		c, err := newRunConfig(p, options{device: "cpu", scaleDown: true, steps: 1, warmup: 0})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if c.Replicas != 1 || c.CP != tc.cp || c.EP != tc.ep || c.Model.Seq%(2*c.CP*c.TP) != 0 {
			t.Errorf("%s scaled down: replicas %d cp %d ep %d seq %d; want 1, %d, %d and seq a multiple of 2·cp·tp", tc.name, c.Replicas, c.CP, c.EP, c.Model.Seq, tc.cp, tc.ep)
		}
		if note := newReport(p, c, nil).Note; !strings.HasSuffix(note, "not comparable to the plan's predictions"+tc.note) {
			t.Errorf("%s: note %q does not end with %q", tc.name, note, tc.note)
		}
	}
}

// runModelE2E runs a planner-exported plan with --check and holds it to
// modelLossTolerance, besides checkTrained's checks.
func runModelE2E(t *testing.T, plan string, ranks int) *Report {
	t.Helper()
	torchPython(t)
	r := runE2E(t, "testdata/"+plan)
	checkTrained(t, r, ranks)
	if r.MaxLossRelDiff == nil || *r.MaxLossRelDiff > modelLossTolerance {
		t.Errorf("max relative loss difference %v over %g", r.MaxLossRelDiff, modelLossTolerance)
	}
	return r
}

// TestEndToEndSequenceParallel runs the Llama-style plan with tp 2 ×
// pp 2 and sequence parallelism: norms on the sequence shards, all-gather
// before the column-parallel layers, reduce-scatter after the row-parallel
// ones, half-sequence activations between the stages.
func TestEndToEndSequenceParallel(t *testing.T) {
	t.Parallel() // each a torchrun job of its own; they wait on process start-up more than on the CPU
	runModelE2E(t, "llama-tp2-sp.json", 4)
}

// TestEndToEndContextParallel runs the Llama-style plan with cp 2 × pp 2:
// the sequence in 4 chunks (rank 0 holds chunks 0 and 3, rank 1 chunks 1
// and 2), ring attention passing keys and values between the two.
func TestEndToEndContextParallel(t *testing.T) {
	t.Parallel() // each a torchrun job of its own; they wait on process start-up more than on the CPU
	runModelE2E(t, "llama-cp2.json", 4)
}

// TestEndToEndExpertParallel runs a MoE plan (4 experts, top-2, a shared
// expert, the first layer dense, tied embeddings) with dp 2 × pp 2 × ep 2:
// each replica holds 2 experts and tokens travel by all_to_all_single.
func TestEndToEndExpertParallel(t *testing.T) {
	t.Parallel() // each a torchrun job of its own; they wait on process start-up more than on the CPU
	runModelE2E(t, "moe-ep2.json", 4)
}

// TestEndToEndInterleavedExperts runs a Llama-4-like plan (expert layers
// every other layer, each with a shared expert, dense layers of another
// size) with dp 2 × pp 2 × ep 2: each stage holds one dense and one
// expert layer.
func TestEndToEndInterleavedExperts(t *testing.T) {
	t.Parallel() // each a torchrun job of its own; they wait on process start-up more than on the CPU
	runModelE2E(t, "llama4-ep2.json", 4)
}

// TestEndToEndMoEAllDegrees runs the MoE model with tp 2 (sequence
// parallel) × cp 2, ep 2 drawn from the cp ranks: every parallel dimension
// inside a layer at once.
func TestEndToEndMoEAllDegrees(t *testing.T) {
	t.Parallel() // each a torchrun job of its own; they wait on process start-up more than on the CPU
	runModelE2E(t, "moe-tp2-sp-cp2-ep2.json", 4)
}

// TestEndToEndExpertParallelZeROOverlap runs the MoE model with dp 2 × cp 2
// × ep 2 (pp 1), ZeRO-1 and the gradient reduction overlapped (the last
// MoE plan listed above; its router limits each token's two experts to one
// of two groups, the experts of one rank): the dense parameters' buckets reduce over the
// four dp × cp ranks, each expert's over the two ranks holding it, both
// launched by the backward's hooks. Momentum is sharded over each bucket's
// own group, so a rank holds more than a quarter of its weights' momentum
// (experts sharded 2 ways) and less than half (the dense part 4 ways);
// bucketing experts with the dense parameters would sum different experts'
// gradients and miss the reference.
func TestEndToEndExpertParallelZeROOverlap(t *testing.T) {
	torchPython(t)
	t.Parallel() // each a torchrun job of its own; they wait on process start-up more than on the CPU
	r, results, _ := runE2EKept(t, "testdata/moe-dp2-cp2-ep2-zero1.json")
	checkTrained(t, r, 4)
	if r.MaxLossRelDiff == nil || *r.MaxLossRelDiff > modelLossTolerance {
		t.Errorf("max relative loss difference %v over %g", r.MaxLossRelDiff, modelLossTolerance)
	}
	for _, res := range results {
		if n := overlappedBuckets(t, res); n < 2 {
			t.Errorf("rank %d: %d bucket reductions overlapped the backward over 2 steps, want at least one per step", res.Rank, n)
		}
		if s, p := res.OptimizerStateBytes, res.ParameterBytes; !(s > p/4+64 && s < p/2) {
			t.Errorf("rank %d: optimizer state %v bytes for %v bytes of weights, want between a quarter and a half", res.Rank, s, p)
		}
	}
}

// TestEndToEndAsynchronousModelParallel runs asynchronous schedules on the
// model-parallel plans: 2BW on the MoE model with tp 2 · SP × cp 2 × ep 2,
// PipeDream's weight stashing on cp 2 × pp 2. The weight versions swap the
// experts', router's and norms' parameters like any other; each matches
// the one-process reference of its schedule's semantics and not synchronous
// training.
func TestEndToEndAsynchronousModelParallel(t *testing.T) {
	torchPython(t)
	for _, tc := range []struct{ kind, plan string }{{"2bw", "moe-tp2-sp-cp2-ep2.json"}, {"pipedream", "llama-cp2.json"}} {
		t.Run(tc.kind, func(t *testing.T) {
			t.Parallel() // each a torchrun job of its own; they wait on process start-up more than on the CPU
			r, _, dir := runE2EKept(t, "--schedule", tc.kind, "testdata/"+tc.plan)
			checkTrained(t, r, 4)
			if r.MaxLossRelDiff == nil || *r.MaxLossRelDiff > modelLossTolerance {
				t.Errorf("max relative loss difference %v over %g", r.MaxLossRelDiff, modelLossTolerance)
			}
			checkAsynchronous(t, r, dir)
		})
	}
}
