package main

import (
	"os"
	"reflect"
	"slices"
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

// The runner executes every registered kind and refuses an unknown one,
// naming the kinds it runs.
func TestSupportedKinds(t *testing.T) {
	for _, in := range schedule.Registry() {
		if !supported(in.Kind) {
			t.Errorf("%s is registered but not supported", in.Kind)
		}
	}
	p := loadPlan(t, "tiny-transformer.json")
	_, err := newRunConfig(p, options{device: "cpu", steps: 1, schedule: "no-such-kind"})
	if err == nil || !strings.Contains(err.Error(), `--schedule: "no-such-kind" is not supported`) || !strings.Contains(err.Error(), supportedList()) {
		t.Errorf("error %v, want one naming the kind and the supported kinds", err)
	}
}

// kindPlan is a testdata plan each kind runs as its own.
func kindPlan(t *testing.T, kind schedule.Kind) *plan.Plan {
	t.Helper()
	file := map[schedule.Kind]string{schedule.Interleaved: "tiny-interleaved.json", schedule.OneFOneBRR: "tiny-1f1b-rr.json",
		schedule.OneFOneBStar: "tiny-star.json"}[kind]
	if file == "" {
		file = "tiny-transformer.json"
	}
	p := loadPlan(t, file)
	p.Execution.Schedule = kind
	return p
}

// TestActionsExecutable checks each rank's list as the worker executes it:
// only the virtual stages the rank holds (stage + c·stages), every
// microbatch's F before its B or I, an I before its W, each microbatch the
// rank runs exactly once (all m per step, or 1F1B-RR's k mod r = replica
// over the whole run), and one OPT_STEP per chunk at the end of a flushing
// schedule's list, none in an asynchronous one's.
func TestActionsExecutable(t *testing.T) {
	for _, kind := range supportedKinds {
		p := kindPlan(t, kind)
		c, err := newRunConfig(p, options{device: "cpu", steps: 2, warmup: 1, scaleDown: kind == schedule.OneFOneBStar})
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		info, _ := kind.Info()
		if c.Batches != map[bool]int{true: 1, false: 3}[info.Flushes()] {
			t.Errorf("%s: one list runs %d batches", kind, c.Batches)
		}
		for _, rk := range c.Ranks {
			list := c.Actions[rk.Device]
			type key struct {
				kind      schedule.ActionKind
				stage, mb int
			}
			done := map[key]int{}
			steps := 0
			for i, text := range list {
				a, err := schedule.ParseAction(text)
				if err != nil {
					t.Fatalf("%s rank %d: %v", kind, rk.Rank, err)
				}
				if a.Stage%c.Stages != rk.Stage || a.Stage >= c.Stages*c.Chunks {
					t.Errorf("%s rank %d: action %s of a stage it does not hold", kind, rk.Rank, text)
				}
				before := map[schedule.ActionKind]schedule.ActionKind{
					schedule.Backward: schedule.Forward, schedule.BackwardInput: schedule.Forward, schedule.BackwardWeight: schedule.BackwardInput}
				switch a.Kind {
				case schedule.Forward, schedule.Backward, schedule.BackwardInput, schedule.BackwardWeight:
					if k, ok := before[a.Kind]; ok && done[key{k, a.Stage, a.Microbatch}] == 0 {
						t.Errorf("%s rank %d: %s before its %s", kind, rk.Rank, text, k)
					}
					done[key{a.Kind, a.Stage, a.Microbatch}]++
				case schedule.OptStep:
					steps++
					if i < len(list)-c.Chunks {
						t.Errorf("%s rank %d: OPT_STEP at %d of %d", kind, rk.Rank, i, len(list))
					}
				default:
					t.Errorf("%s rank %d: the worker does not execute %s", kind, rk.Rank, text)
				}
			}
			for k := range c.Chunks {
				stage := rk.Stage + k*c.Stages
				for mb := range c.Microbatches * c.Batches {
					want := 1
					if c.StageReplicas != nil && mb%c.StageReplicas[rk.Stage] != rk.Replica {
						want = 0
					}
					full := done[key{schedule.Backward, stage, mb}]
					split := min(done[key{schedule.BackwardInput, stage, mb}], done[key{schedule.BackwardWeight, stage, mb}])
					if done[key{schedule.Forward, stage, mb}] != want || full+split != want {
						t.Errorf("%s rank %d stage %d microbatch %d: forward %d, backward %d, split backward %d, want %d", kind, rk.Rank, stage, mb,
							done[key{schedule.Forward, stage, mb}], full, split, want)
					}
				}
			}
			if want := map[bool]int{true: c.Chunks, false: 0}[info.Flushes()]; steps != want {
				t.Errorf("%s rank %d: %d OPT_STEPs, want %d", kind, rk.Rank, steps, want)
			}
		}
	}
}

// TestRoundRobinRanks: a 2-1 plan under 1F1B-RR runs 3 ranks, stage 0's
// two replicas each with its own list, the global batch admitted round-robin.
func TestRoundRobinRanks(t *testing.T) {
	c, err := newRunConfig(loadPlan(t, "tiny-1f1b-rr.json"), options{device: "cpu", steps: 2, warmup: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := []rankInfo{{Rank: 0, Stage: 0, Replica: 0, Device: 0}, {Rank: 1, Stage: 0, Replica: 1, Device: 1}, {Rank: 2, Stage: 1, Replica: 0, Device: 2}}
	if len(c.Ranks) != len(want) || c.Replicas != 1 || !slices.Equal(c.StageReplicas, []int{2, 1}) || c.Microbatches != 4 || c.Versioning != "stashed" {
		t.Fatalf("ranks %+v, replicas %d, stage replicas %v, m %d, versioning %s", c.Ranks, c.Replicas, c.StageReplicas, c.Microbatches, c.Versioning)
	}
	for i, w := range want {
		r := c.Ranks[i]
		if r.Rank != w.Rank || r.Stage != w.Stage || r.Replica != w.Replica || r.Device != w.Device {
			t.Errorf("ranks[%d] = %+v, want %+v", i, r, w)
		}
	}
}

func TestRunConfigRejects(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(p *plan.Plan)
		want   string
	}{
		{"kind", func(p *plan.Plan) { p.Execution.Schedule = "2bw-ish" }, `execution.schedule: "2bw-ish" is not supported by the runner yet`},
		{"2bw m < p", func(p *plan.Plan) { p.Execution.Schedule, p.Execution.GlobalBatch = schedule.TwoBW, 4 }, "schedule: microbatches: 2bw needs m >= stages (2), got 1"},
		{"zero 2", func(p *plan.Plan) { p.Execution.ZeRO = 2 }, "execution.zero: stage 2 (sharded gradients or parameters) is not run by the runner yet"},
		{"star transformer", func(p *plan.Plan) { p.Execution.Schedule = schedule.OneFOneBStar }, "1f1b-star: the groups come from a layer profile's times"},
		{"rr tied", func(p *plan.Plan) { p.Execution.Schedule, p.Stages[0].Replicas = schedule.OneFOneBRR, 2 }, "stages[1].replicas: a tied embedding's two copies update together, so 1F1B-RR needs as many replicas on the last stage as on the first (2), got 1"},
		{"tp heads", func(p *plan.Plan) { p.Execution.TP = 8 }, "model.transformer.heads: 4 must be a positive multiple of execution.tp (8), which splits it"},
		{"kv heads", func(p *plan.Plan) { p.Execution.TP, p.Model.Transformer.KVHeads = 2, 1 }, "model.transformer.kv_heads: 1 must be a positive multiple of execution.tp (2)"},
		{"mla", func(p *plan.Plan) { p.Model.Transformer.MLA = &model.MLA{KVLoraRank: 8} }, "model.transformer.mla: multi-head latent attention is not run by the runner yet"},
		{"mtp", func(p *plan.Plan) { p.Model.Transformer.MTPLayers = 1 }, "model.transformer.mtp_layers: multi-token prediction is not run by the runner yet"},
		{"sliding window", func(p *plan.Plan) { p.Model.Transformer.SlidingWindow, p.Model.Transformer.SlidingLayers = 128, 1 }, "model.transformer.sliding_layers: sliding-window attention is not run by the runner yet"},
		{"chunked attention", func(p *plan.Plan) { p.Model.Transformer.AttentionChunk, p.Model.Transformer.ChunkedLayers = 2, 1 }, "model.transformer.chunked_layers: chunked attention (chunks of 2 tokens) is not run by the runner"},
		{"topk", func(p *plan.Plan) { p.Model.Transformer.MoE = &model.MoE{Experts: 4, TopK: 5} }, "model.transformer.moe.topk: must be in [1, experts 4], got 5"},
		{"rope", func(p *plan.Plan) {
			p.Model.Transformer.PositionEmbedding, p.Model.Transformer.HeadDim = model.PositionNone, 7
		}, "model.transformer.head_dim: rotary position embedding needs an even head size, got 7"},
		{"chunks", func(p *plan.Plan) { p.Execution.Schedule, p.Execution.Interleave = schedule.Interleaved, 2 }, "stages: interleaved with pp 2 × interleave 2 needs 4 model chunks, got 2"},
		{"cp seq", func(p *plan.Plan) { p.Execution.CP, p.Model.Transformer.Seq = 2, 6 }, "model.transformer.seq: 6 must be a multiple of 4"},
		{"ep dense", func(p *plan.Plan) { p.Execution.EP = 2 }, "execution.ep: expert parallelism (2) needs a mixture-of-experts model"},
		{"ep experts", func(p *plan.Plan) { p.Execution.EP, p.Model.Transformer.MoE = 2, &model.MoE{Experts: 3, TopK: 1} }, "execution.ep: 2 must divide model.transformer.moe.experts (3)"},
		{"ep width", func(p *plan.Plan) { p.Execution.EP, p.Model.Transformer.MoE = 4, &model.MoE{Experts: 8, TopK: 2} }, "execution.ep: 4 must divide the data × context-parallel ranks it is drawn from (2 replicas × cp 1 = 2)"},
		{"etp folded", func(p *plan.Plan) { p.Execution.TP, p.Execution.EP = 2, 2 }, "execution.etp: the runner splits each expert over the 2 tensor-parallel ranks and draws expert parallelism from the data × context-parallel ranks (etp = tp = 2); this plan has etp 1"},
		{"cp all_gather", func(p *plan.Plan) { p.Execution.CP, p.Execution.CPComm = 2, plan.CPCommAllGather }, `execution.cp_comm: "all_gather" is not run by the runner yet`},
		{"recompute modules", func(p *plan.Plan) {
			p.Execution.Recompute, p.Execution.RecomputeModules = model.RecomputeSelective, "core_attn,mlp"
		}, `execution.recompute_modules: the runner's selective recomputation reruns the attention core alone (core_attn); this plan has "core_attn,mlp"`},
		{"cp rr", func(p *plan.Plan) { p.Execution.Schedule, p.Execution.CP = schedule.OneFOneBRR, 2 }, "execution.cp: context parallelism (2) under 1f1b-rr (round-robin stage replicas) is not supported by the runner"},
		{"ep pipedream replicas", func(p *plan.Plan) {
			p.Execution.Schedule, p.Execution.EP, p.Stages[0].Replicas = schedule.PipeDream, 2, 2
		}, "execution.ep: expert parallelism (2) under 1f1b-rr (round-robin stage replicas) is not supported by the runner"},
		{"unequal replicas", func(p *plan.Plan) { p.Stages[1].Replicas = 2 }, "stages[1].replicas: 1f1b needs equal replicas on every stage (stage 0 has 1, got 2); unequal replication runs under 1f1b-rr or pipedream"},
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

// TestStarGroups: tiny-star.json's stages each load 0.006 s (two layers of
// 1 ms forward + 2 ms backward); its period of 0.008 s fits one stage per
// group, so MadPipe's groups from the last stage are 2, 1 and the first
// stage warms up with one forward.
func TestStarGroups(t *testing.T) {
	c, err := newRunConfig(loadPlan(t, "tiny-star.json"), options{device: "cpu", scaleDown: true, steps: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Actions[0][:2]; !slices.Equal(got, []string{"0F0", "0F1"}) || c.Actions[1][1] != "1B0" {
		t.Errorf("1F1B* lists %v, want stage 0 to warm up with 1 forward and stage 1 with none", c.Actions)
	}
	g, err := starGroups(loadPlan(t, "tiny-star.json"), 2)
	if err != nil || !slices.Equal(g, []int{2, 1}) {
		t.Errorf("groups %v, %v; want [2 1]", g, err)
	}
}

// A V-shaped kind (zb-v) runs a plan's stages as 2·pp chunks in model
// order, position r holding stages r and 2·pp−1−r; an odd number of stages
// is refused naming the field and the count.
func TestZBVPlacement(t *testing.T) {
	p := loadPlan(t, "tiny-interleaved.json")
	c, err := newRunConfig(p, options{device: "cpu", steps: 1, schedule: "zb-v"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Stages != 2 || c.Chunks != 2 || !slices.Equal(c.ChunkPositions, []int{0, 1, 1, 0}) {
		t.Fatalf("stages %d chunks %d placed %v, want 2, 2, [0 1 1 0]", c.Stages, c.Chunks, c.ChunkPositions)
	}
	for _, r := range c.Ranks {
		first, last := p.Stages[r.Stage], p.Stages[3-r.Stage]
		want := [][2]int{{first.FirstLayer, first.LastLayer}, {last.FirstLayer, last.LastLayer}}
		if !reflect.DeepEqual(r.Chunks, want) {
			t.Errorf("rank %d (position %d): chunks %v, want stages %d and %d: %v", r.Rank, r.Stage, r.Chunks, r.Stage, 3-r.Stage, want)
		}
	}
	for vs, want := range []int{0, 1, 1, 0} {
		if got := c.position(vs); got != want || c.virtualStage(want, vs/2) != vs {
			t.Errorf("virtual stage %d: position %d, want %d (and back)", vs, got, want)
		}
	}
	// A plan made for zb-v (pp 2, its 2·pp chunks) runs the same, under its
	// own schedule.
	v := *p
	v.Execution.Schedule, v.Execution.Interleave = schedule.ZBV, 1
	if err := v.Validate(); err != nil {
		t.Fatalf("the plan under zb-v: %v", err)
	}
	if c, err := newRunConfig(&v, options{device: "cpu", steps: 1}); err != nil || c.Stages != 2 || c.Chunks != 2 || !slices.Equal(c.ChunkPositions, []int{0, 1, 1, 0}) {
		t.Errorf("a zb-v plan: %+v, %v", c, err)
	}
	p.Stages = p.Stages[:3]
	if _, err := newRunConfig(p, options{device: "cpu", steps: 1, schedule: "zb-v"}); err == nil || !strings.Contains(err.Error(), "stages:") || !strings.Contains(err.Error(), "3 stages") {
		t.Errorf("3 stages under zb-v: error %v, want one naming stages and the count", err)
	}
}

// Scaled down to fewer experts, the router's group limit keeps groups
// dividing them and holding the top-k, or goes where fewer than 2 remain.
func TestScaledGroups(t *testing.T) {
	for _, c := range []struct{ groups, topk, experts, k, wantG, wantT int }{
		{8, 4, 256, 8, 8, 4}, // unchanged
		{8, 4, 8, 8, 8, 8},   // one expert a group: all groups to hold 8
		{8, 4, 6, 2, 6, 4},   // 6 groups of 1, 4 of them
		{4, 1, 4, 2, 4, 2},   // groups of 1 cannot hold 2 experts in 1
		{2, 1, 1, 1, 0, 0},   // one expert: no groups
	} {
		if g, k := scaledGroups(c.groups, c.topk, c.experts, c.k); g != c.wantG || k != c.wantT {
			t.Errorf("scaledGroups(%d, %d, %d experts, top %d) = %d, %d; want %d, %d", c.groups, c.topk, c.experts, c.k, g, k, c.wantG, c.wantT)
		}
	}
}
