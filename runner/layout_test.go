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
		// Pipeline neighbours are adjacent ranks: rank = replica·stages + stage.
		if r.Rank != r.Replica*c.Stages+r.Stage {
			t.Errorf("rank %d: stage %d replica %d breaks rank = replica·stages + stage", r.Rank, r.Stage, r.Replica)
		}
		st := p.Stages[r.Stage]
		if r.FirstLayer != st.FirstLayer || r.LastLayer != st.LastLayer {
			t.Errorf("rank %d: layers %d..%d, plan stage has %d..%d", r.Rank, r.FirstLayer, r.LastLayer, st.FirstLayer, st.LastLayer)
		}
		seen[[2]int{r.Stage, r.Replica}] = true
	}
	if len(seen) != 4 {
		t.Errorf("stage/replica pairs are not distinct: %v", seen)
	}
	if c.Backend != "gloo" || c.Model.Kind != "transformer" || c.Model.Hidden != 32 || c.Model.FFN != 128 {
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

// TestActionsExecutable checks each stage's list as the worker executes it:
// only its own stage, every microbatch's F before its B, m of each, one
// OPT_STEP last.
func TestActionsExecutable(t *testing.T) {
	for _, kind := range supportedKinds {
		p := loadPlan(t, "tiny-transformer.json")
		p.Execution.Schedule = kind
		c, err := newRunConfig(p, options{device: "cpu", steps: 1, warmup: 0})
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Actions) != c.Stages {
			t.Fatalf("%s: %d action lists for %d stages", kind, len(c.Actions), c.Stages)
		}
		for s, list := range c.Actions {
			done := map[schedule.ActionKind]map[int]bool{schedule.Forward: {}, schedule.Backward: {}}
			for i, text := range list {
				a, err := schedule.ParseAction(text)
				if err != nil {
					t.Fatalf("%s stage %d: %v", kind, s, err)
				}
				if a.Stage != s {
					t.Errorf("%s stage %d: action %s of another stage", kind, s, text)
				}
				switch a.Kind {
				case schedule.Forward:
					done[a.Kind][a.Microbatch] = true
				case schedule.Backward:
					if !done[schedule.Forward][a.Microbatch] {
						t.Errorf("%s stage %d: %s before its forward", kind, s, text)
					}
					done[a.Kind][a.Microbatch] = true
				case schedule.OptStep:
					if i != len(list)-1 {
						t.Errorf("%s stage %d: OPT_STEP at %d of %d", kind, s, i, len(list))
					}
				default:
					t.Errorf("%s stage %d: the worker does not execute %s", kind, s, text)
				}
			}
			if len(done[schedule.Forward]) != c.Microbatches || len(done[schedule.Backward]) != c.Microbatches {
				t.Errorf("%s stage %d: %d forwards and %d backwards, want %d each", kind, s,
					len(done[schedule.Forward]), len(done[schedule.Backward]), c.Microbatches)
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
		{"kind", func(p *plan.Plan) { p.Execution.Schedule = "zb-h1" }, `execution.schedule: "zb-h1" is not supported by the runner yet`},
		{"tp", func(p *plan.Plan) { p.Execution.TP = 2 }, "execution.tp: tensor parallelism (2) is not supported by the runner yet; use --scale-down"},
		{"cp", func(p *plan.Plan) { p.Execution.CP = 2 }, "execution.cp: context parallelism (2) is not supported by the runner yet"},
		{"ep", func(p *plan.Plan) { p.Execution.EP = 2 }, "execution.ep: expert parallelism (2) is not supported by the runner yet"},
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
// replica of each with at most 2 layers and small dimensions.
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
	if _, err := newRunConfig(p, options{device: "cpu", steps: 1, warmup: 0}); err == nil {
		t.Fatal("a tp 8 plan ran without --scale-down")
	}
	c, err := newRunConfig(p, options{device: "cpu", scaleDown: true, steps: 1, warmup: 0})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Ranks) != 12 || c.Replicas != 1 || !c.ScaledDown {
		t.Fatalf("%d ranks, %d replicas, scaled down %v; want 12, 1, true", len(c.Ranks), c.Replicas, c.ScaledDown)
	}
	for i, r := range c.Ranks {
		if r.FirstLayer != 2*i || r.LastLayer != 2*i+1 {
			t.Errorf("rank %d: layers %d..%d, want %d..%d", i, r.FirstLayer, r.LastLayer, 2*i, 2*i+1)
		}
	}
	m := c.Model
	if m.Layers != 24 || m.Hidden > scaleHidden || m.Hidden%m.Heads != 0 || m.Seq > scaleSeq || c.Microbatches > scaleMicrobatches {
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
