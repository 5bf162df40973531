package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
)

// loadPlan reads a plan from testdata.
func loadPlan(t *testing.T, name string) *plan.Plan {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRankMapping(t *testing.T) {
	p := loadPlan(t, "tiny-transformer.json") // 2 stages × dp 2
	c, err := newRunConfig(p, options{device: "cpu", steps: 3, warmup: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Comparable || c.Schedule != "1f1b" {
		t.Errorf("comparable %v, schedule %q", c.Comparable, c.Schedule)
	}
	if len(c.Ranks) != 4 || c.Replicas != 2 || c.Stages != 2 {
		t.Fatalf("got %d ranks, %d replicas, %d stages; want 4, 2, 2", len(c.Ranks), c.Replicas, c.Stages)
	}
	seen := map[[2]int]bool{}
	for i, r := range c.Ranks {
		if r.Rank != i {
			t.Errorf("ranks[%d].rank = %d", i, r.Rank)
		}
		// Pipeline neighbours are adjacent ranks: rank = replica·stages + stage (tp 1).
		if r.Rank != r.Replica*c.Stages+r.Stage || r.TPRank != 0 {
			t.Errorf("rank %d: stage %d replica %d tp rank %d breaks rank = replica·stages + stage", r.Rank, r.Stage, r.Replica, r.TPRank)
		}
		st := p.Stages[r.Stage]
		if len(r.Chunks) != 1 || r.Chunks[0] != [2]int{st.FirstLayer, st.LastLayer} {
			t.Errorf("rank %d: chunks %v, plan stage has layers %d..%d", r.Rank, r.Chunks, st.FirstLayer, st.LastLayer)
		}
		seen[[2]int{r.Stage, r.Replica}] = true
	}
	if len(seen) != 4 {
		t.Errorf("stage/replica pairs are not distinct: %v", seen)
	}
	if c.Backend != "gloo" || c.Model.Kind != "transformer" || c.Model.Hidden != 32 || c.Model.FFN != 128 ||
		c.Model.Vocab != 100 || c.Model.PaddedVocab != 100 || !c.Model.Tied || c.Model.Position != "learned" || c.Model.Norm != "layernorm" {
		t.Errorf("backend %q model %+v", c.Backend, c.Model)
	}
}

// The runner executes only registered, synchronous (flushing) kinds, and
// names the unsupported one with the supported ones when refusing it.
func TestSupportedKinds(t *testing.T) {
	for _, in := range schedule.Registry() {
		if !supported(in.Kind) {
			p := loadPlan(t, "tiny-transformer.json")
			p.Execution.Schedule = in.Kind
			_, err := newRunConfig(p, options{device: "cpu", steps: 1})
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q is not supported", in.Kind)) || !strings.Contains(err.Error(), supportedList()) {
				t.Errorf("%s: error %v, want one naming it and the supported kinds", in.Kind, err)
			}
			continue
		}
		if !in.Flushes() {
			t.Errorf("%s: the worker runs only flushing schedules, but it is supported", in.Kind)
		}
	}
	for _, k := range supportedKinds {
		if _, err := k.Info(); err != nil {
			t.Errorf("supported kind %q: %v", k, err)
		}
	}
}

// TestActionsExecutable checks each position's list as the worker executes
// it: only the virtual stages the position holds (stage + c·stages), every
// microbatch's F before its B or I, an I before its W, m of each, and one
// OPT_STEP per chunk at the end.
func TestActionsExecutable(t *testing.T) {
	for _, kind := range supportedKinds {
		file := "tiny-transformer.json"
		if kind == schedule.Interleaved {
			file = "tiny-interleaved.json"
		}
		p := loadPlan(t, file)
		p.Execution.Schedule = kind
		c, err := newRunConfig(p, options{device: "cpu", steps: 1, warmup: 0})
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if len(c.Actions) != c.Stages {
			t.Fatalf("%s: %d action lists for %d positions", kind, len(c.Actions), c.Stages)
		}
		for pos, list := range c.Actions {
			type key struct {
				kind      schedule.ActionKind
				stage, mb int
			}
			done := map[key]bool{}
			steps := 0
			for i, text := range list {
				a, err := schedule.ParseAction(text)
				if err != nil {
					t.Fatalf("%s position %d: %v", kind, pos, err)
				}
				if a.Stage%c.Stages != pos || a.Stage >= c.Stages*c.Chunks {
					t.Errorf("%s position %d: action %s of a stage it does not hold", kind, pos, text)
				}
				before := map[schedule.ActionKind]schedule.ActionKind{
					schedule.Backward: schedule.Forward, schedule.BackwardInput: schedule.Forward, schedule.BackwardWeight: schedule.BackwardInput}
				switch a.Kind {
				case schedule.Forward, schedule.Backward, schedule.BackwardInput, schedule.BackwardWeight:
					if k, ok := before[a.Kind]; ok && !done[key{k, a.Stage, a.Microbatch}] {
						t.Errorf("%s position %d: %s before its %s", kind, pos, text, k)
					}
					done[key{a.Kind, a.Stage, a.Microbatch}] = true
				case schedule.OptStep:
					steps++
					if i < len(list)-c.Chunks {
						t.Errorf("%s position %d: OPT_STEP at %d of %d", kind, pos, i, len(list))
					}
				default:
					t.Errorf("%s position %d: the worker does not execute %s", kind, pos, text)
				}
			}
			for k := range c.Chunks {
				stage := pos + k*c.Stages
				for mb := range c.Microbatches {
					full := done[key{schedule.Backward, stage, mb}]
					split := done[key{schedule.BackwardInput, stage, mb}] && done[key{schedule.BackwardWeight, stage, mb}]
					if !done[key{schedule.Forward, stage, mb}] || full == split {
						t.Errorf("%s stage %d microbatch %d: forward %v, backward %v, split backward %v", kind, stage, mb,
							done[key{schedule.Forward, stage, mb}], full, split)
					}
				}
			}
			if steps != c.Chunks {
				t.Errorf("%s position %d: %d OPT_STEPs for %d chunks", kind, pos, steps, c.Chunks)
			}
		}
	}
}

func TestRunConfigRejects(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(p *plan.Plan)
		want   string
	}{
		{"kind", func(p *plan.Plan) { p.Execution.Schedule = "2bw" }, `execution.schedule: "2bw" is not supported by the runner yet`},
		{"tp heads", func(p *plan.Plan) { p.Execution.TP = 8 }, "model.transformer.heads: 4 must be a positive multiple of execution.tp (8), which splits it"},
		{"kv heads", func(p *plan.Plan) { p.Execution.TP, p.Model.Transformer.KVHeads = 2, 1 }, "model.transformer.kv_heads: 1 must be a positive multiple of execution.tp (2)"},
		{"mla", func(p *plan.Plan) { p.Model.Transformer.MLA = &model.MLA{KVLoraRank: 8} }, "model.transformer.mla: multi-head latent attention is not run by the runner yet"},
		{"topk", func(p *plan.Plan) { p.Model.Transformer.MoE = &model.MoE{Experts: 4, TopK: 5} }, "model.transformer.moe.topk: must be in [1, experts 4], got 5"},
		{"rope", func(p *plan.Plan) {
			p.Model.Transformer.PositionEmbedding, p.Model.Transformer.HeadDim = model.PositionNone, 7
		}, "model.transformer.head_dim: rotary position embedding needs an even head size, got 7"},
		{"chunks", func(p *plan.Plan) { p.Execution.Schedule, p.Execution.Interleave = schedule.Interleaved, 2 }, "stages: interleaved with pp 2 × interleave 2 needs 4 model chunks, got 2"},
		{"cp seq", func(p *plan.Plan) { p.Execution.CP, p.Model.Transformer.Seq = 2, 6 }, "model.transformer.seq: 6 must be a multiple of 4"},
		{"ep dense", func(p *plan.Plan) { p.Execution.EP = 2 }, "execution.ep: expert parallelism (2) needs a mixture-of-experts model"},
		{"ep experts", func(p *plan.Plan) { p.Execution.EP, p.Model.Transformer.MoE = 2, &model.MoE{Experts: 3, TopK: 1} }, "execution.ep: 2 must divide model.transformer.moe.experts (3)"},
		{"ep width", func(p *plan.Plan) { p.Execution.EP, p.Model.Transformer.MoE = 4, &model.MoE{Experts: 8, TopK: 2} }, "execution.ep: 4 must divide the data × context-parallel ranks it is drawn from (2 replicas × cp 1 = 2)"},
		{"unequal replicas", func(p *plan.Plan) { p.Stages[1].Replicas = 2 }, "stages[1].replicas: the runner needs equal replicas on every stage (stage 0 has 1, got 2)"},
		{"heads", func(p *plan.Plan) { p.Model.Transformer.Heads = 5 }, "model.transformer: hidden (32) must be a positive multiple of heads (5)"},
	}
	for _, tc := range cases {
		p := loadPlan(t, "tiny-transformer.json")
		tc.mutate(p)
		_, err := newRunConfig(p, options{device: "cpu", steps: 1, warmup: 0})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

// TestScaleDown: a GPT-3-sized tp/pp/dp plan keeps its 12 stages, runs one
// replica of each, tp 2, with at most 2 layers and small dimensions.
func TestScaleDown(t *testing.T) {
	p := loadPlan(t, "tiny-transformer.json")
	p.Model.NumLayers = 96
	*p.Model.Transformer = model.Transformer{Layers: 96, Hidden: 12288, Heads: 96, Seq: 2048, Vocab: 51200}
	p.Execution.TP, p.Execution.PP, p.Execution.DP = 8, 12, 2
	p.Stages = nil
	for i := range 12 {
		p.Stages = append(p.Stages, plan.Stage{FirstLayer: 8 * i, LastLayer: 8*i + 7, Replicas: 1})
	}
	p.Cluster.Nodes = 24
	p.Execution.MicrobatchSize, p.Execution.GlobalBatch = 1, 1536 // m = 768
	c, err := newRunConfig(p, options{device: "cpu", scaleDown: true, steps: 1, warmup: 0})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Ranks) != 24 || c.Replicas != 1 || c.TP != scaleTP || !c.ScaledDown {
		t.Fatalf("%d ranks, %d replicas, tp %d, scaled down %v; want 24, 1, %d, true", len(c.Ranks), c.Replicas, c.TP, c.ScaledDown, scaleTP)
	}
	for i, r := range c.Ranks {
		if r.Chunks[0] != [2]int{2 * (i / 2), 2*(i/2) + 1} || r.TPRank != i%2 {
			t.Errorf("rank %d: chunks %v tp rank %d, want layers %d..%d on tp rank %d", i, r.Chunks, r.TPRank, 2*(i/2), 2*(i/2)+1, i%2)
		}
	}
	m := c.Model
	if m.Layers != 24 || m.Hidden > scaleHidden || m.Hidden%m.Heads != 0 || m.Heads%c.TP != 0 || m.Seq > scaleSeq || m.Vocab > scaleVocab || c.Microbatches > scaleMicrobatches {
		t.Errorf("scaled model %+v, %d microbatches", m, c.Microbatches)
	}
}

// TestProfileBottleneck: a profile layer's two Linear layers hold its
// parameter bytes in fp32, to within one bottleneck unit.
func TestProfileBottleneck(t *testing.T) {
	p := loadPlan(t, "tiny-profile.json")
	c, err := newRunConfig(p, options{device: "cpu", steps: 1, warmup: 0})
	if err != nil {
		t.Fatal(err)
	}
	if c.Model.Kind != "profile" || len(c.Model.Bottleneck) != p.Model.NumLayers {
		t.Fatalf("model %+v", c.Model)
	}
	unit := float64(2 * fp32Bytes * c.Model.Width)
	for i, k := range c.Model.Bottleneck {
		want := p.Model.Profile.Layers[i].ParameterBytes
		got := float64(k) * unit
		if want >= unit && (got > want || got <= want-unit) {
			t.Errorf("layer %d: %d·%g = %g bytes, want within %g below %g", i, k, unit, got, unit, want)
		}
		if k < 1 {
			t.Errorf("layer %d: bottleneck %d < 1", i, k)
		}
	}
}
