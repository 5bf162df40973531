package cost

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
	"pipeplan/modelprofiles"
)

// zbvCase is one execution under a V-shaped schedule the tests below cost.
type zbvCase struct {
	preset          string
	tp, pp, ep, gpu int
	rc              model.Recompute
	recomputeLayers int
}

var zbvCases = []zbvCase{
	{"llama3-8b", 1, 2, 1, 8, model.RecomputeNone, 0},
	{"llama3-8b", 1, 4, 1, 8, model.RecomputeFull, 0},
	{"llama3-70b", 4, 4, 1, 16, model.RecomputeNone, 0},
	{"llama3-70b", 1, 2, 1, 16, model.RecomputeNone, 0}, // steady only past 4p microbatches
	{"llama3-70b", 2, 8, 1, 16, model.RecomputeFull, 2},
	{"qwen3-30b-a3b", 1, 4, 2, 8, model.RecomputeSelective, 0},
	{"deepseek-v3", 1, 8, 8, 64, model.RecomputeFull, 0}, // MLA, first dense layers, multi-token prediction
}

// vKinds are the V-shaped schedules.
var vKinds = []schedule.Kind{schedule.ZBV, schedule.DualPipeV}

// zbvEvaluator costs c under ZB-V with m microbatches.
func zbvEvaluator(t *testing.T, c zbvCase, m int) *evaluator {
	t.Helper()
	return vEvaluator(t, schedule.ZBV, c, m)
}

// vEvaluator costs c under the V-shaped kind with m microbatches.
func vEvaluator(t *testing.T, kind schedule.Kind, c zbvCase, m int) *evaluator {
	t.Helper()
	tr, _, err := modelprofiles.Transformer(c.preset)
	if err != nil {
		t.Fatal(err)
	}
	ex := WithDefaults(plan.Execution{TP: c.tp, PP: c.pp, DP: c.gpu / (c.tp * c.pp), EP: c.ep, MicrobatchSize: 1, Recompute: c.rc, RecomputeLayers: c.recomputeLayers,
		SequenceParallel: c.tp > 1, FlashAttention: true, Schedule: kind})
	ex.GlobalBatch = ex.DP * m
	e, err := newEvaluator(tr, servers(t, "nvidia-h100-sxm5-80gb", c.gpu), ex, Options{})
	if err != nil {
		t.Fatalf("%s p%d: %v", c.preset, c.pp, err)
	}
	return e
}

// TestZBVExtrapolation checks the V's pipeline time (ZB-V's and DualPipeV's) past VSteadyFrom(p)
// microbatches, extrapolated from the steady state, against core/schedule's
// simulation of every microbatch with the same chunk costs: equal to a
// part in a billion (dense and mixture-of-experts models, full, partial
// and selective recomputation, the first device holding the embedding,
// the output layer and DeepSeek-V3's multi-token prediction; Llama 3 70B
// on two stages reaches its steady state only at 9 microbatches, past
// 4p). A wider sweep (four models, 1 to 16 stages, t 1 and 4, three
// recomputations, 9 to 400 microbatches: 2,160 cases) agreed within
// 1e-13 on 2026-11-29.
func TestZBVExtrapolation(t *testing.T) {
	for _, kind := range vKinds {
		for _, c := range zbvCases {
			from := VSteadyFrom(c.pp)
			for _, m := range []int{from - 1, from + 1, 2*from + 3, 16 * c.pp} {
				e := vEvaluator(t, kind, c, m)
				got, ok := e.vPipelineSeconds()
				s, err := schedule.Generate(kind, schedule.Options{Stages: c.pp, Microbatches: m})
				if err != nil {
					t.Fatal(err)
				}
				tl, err := schedule.Simulate(context.Background(), s, e.chunkCosts(), nil)
				if err != nil {
					t.Fatal(err)
				}
				if !ok || math.Abs(got/tl.StepSeconds-1) > 1e-9 {
					t.Errorf("%s %s t%d p%d m%d %s: pipeline %.9f s (ok %v), simulated %.9f s", kind, c.preset, c.tp, c.pp, m, c.rc, got, ok, tl.StepSeconds)
				}
			}
		}
	}
}

// TestZBVChunksMakeDevices checks the chunk costs the V is simulated with
// against the device times the rest of the model uses: a device's two
// chunks (each its own layers, counted from the chunk's split, and the
// model's ends) add up to its time per microbatch (counted from its
// layers of each kind, layerMix), and the slowest device bounds the step
// from below, m times its time.
func TestZBVChunksMakeDevices(t *testing.T) {
	for _, kind := range vKinds {
		for _, c := range zbvCases {
			m := 3 * c.pp
			e := vEvaluator(t, kind, c, m)
			costs := e.chunkCosts()
			var tMax float64
			for d := range c.pp {
				st := e.deviceSeconds(d)
				want := st.compute + st.tp + st.p2p + st.cp + st.ep + e.zero3Seconds(d, st)
				first, second := schedule.ZBVStages(c.pp, d)
				a, b := costs.Stages[first], costs.Stages[second]
				if got := a.FwdSeconds + a.BwdSeconds + b.FwdSeconds + b.BwdSeconds; math.Abs(got/want-1) > 1e-12 {
					t.Errorf("%s %s p%d device %d: chunks %d and %d take %.6f s, the device %.6f s", kind, c.preset, c.pp, d, first, second, got, want)
				}
				tMax = max(tMax, want)
			}
			if step, _ := e.vPipelineSeconds(); step < float64(m)*tMax*(1-1e-12) {
				t.Errorf("%s %s p%d m%d: pipeline %.6f s below m × the slowest device's %.6f s", kind, c.preset, c.pp, m, step, tMax)
			}
		}
	}
}

// TestZBVLayout checks where a V puts the model's ends: the output layer on
// the first device with the embedding, so a tied word embedding is held
// once (the parameters over the devices add up to the model's, where 1F1B
// on more than one stage keeps a copy on its last) and needs no all-reduce
// between stages; the first device runs the output layer (the layers are
// eight a device either way) and holds it. DualPipeV's V is ZB-V's.
func TestZBVLayout(t *testing.T) {
	tr, _, err := modelprofiles.Transformer("llama3-8b")
	if err != nil {
		t.Fatal(err)
	}
	tr.UntiedEmbeddings = false
	const tp, pp = 2, 4
	word := float64(tr.Vocab) * float64(tr.Hidden)
	for _, k := range []schedule.Kind{schedule.ZBV, schedule.DualPipeV, schedule.OneFOneB} {
		v := k != schedule.OneFOneB
		ex := WithDefaults(plan.Execution{TP: tp, PP: pp, DP: 1, MicrobatchSize: 1, GlobalBatch: 16, SequenceParallel: true, FlashAttention: true, Schedule: k})
		e, err := newEvaluator(tr, servers(t, "nvidia-h100-sxm5-80gb", 8), ex, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var params float64
		for d := range pp {
			dense, _ := e.weightParams(d)
			params += dense * tp
		}
		want, out := tr.Params(), pp-1
		if v {
			out = 0
		} else {
			want += word // the last stage's copy
		}
		if math.Abs(params/want-1) > 1e-9 {
			t.Errorf("%s: the devices hold %.6g parameters, want %.6g", k, params, want)
		}
		if got := e.outputDevice(); got != out {
			t.Errorf("%s: output layer on device %d, want %d", k, got, out)
		}
		_, emb, _ := e.dataParallelSeconds(0)
		if (emb > 0) == v {
			t.Errorf("%s: the embedding's all-reduce takes %v s on device 0", k, emb)
		}
		mem0, mem1 := e.memory(out), e.memory(1)
		if v && mem0.ActivationBytes <= 0 {
			t.Errorf("%s: device 0 stores %v bytes of activations", k, mem0.ActivationBytes)
		}
		if st0, st1 := e.deviceSeconds(out), e.deviceSeconds(1); math.Abs(st0.compute-st1.compute-e.logitSeconds()) > 1e-12 || mem1.WeightBytes >= mem0.WeightBytes {
			t.Errorf("%s: the output layer's device %d computes %.4f s (the layer %.4f s) and holds %.3g weight bytes, device 1 %.4f s and %.3g", k, out, st0.compute, e.logitSeconds(), mem0.WeightBytes, st1.compute, mem1.WeightBytes)
		}
	}
}

// TestVChunkLayers checks the V's layer split for every model of 1 to 200
// layers on every p the cost model allows (2p <= layers + 2): it tiles
// the layers, only the model's end chunks are ever empty, the devices but
// the first differ by at most one layer, and the first, which holds the
// embedding and the output layer, holds the fewest, at most two fewer.
// Where at most two chunks are short they are the model's ends, as
// torchtitan splits (first_ and last_stage_less_layers).
func TestVChunkLayers(t *testing.T) {
	for l := 1; l <= 200; l++ {
		for p := 1; 2*p <= MaxChunks(l); p++ {
			out := VChunkLayers(l, p)
			sum, short := 0, 0
			for k, n := range out {
				sum += n
				if n < 0 || (n == 0 && k != 0 && k != 2*p-1) {
					t.Fatalf("l=%d p=%d: chunk %d has %d layers: %v", l, p, k, n, out)
				}
				if n < slices.Max(out) {
					short++
				}
			}
			dev := make([]int, p)
			for d := range p {
				a, b := schedule.ZBVStages(p, d)
				dev[d] = out[a] + out[b]
			}
			rest := dev[min(1, p-1):]
			if sum != l || slices.Max(rest)-slices.Min(rest) > 1 || dev[0] != slices.Min(dev) || slices.Max(dev)-dev[0] > 2 {
				t.Fatalf("l=%d p=%d: chunks %v (sum %d), devices %v", l, p, out, sum, dev)
			}
			if p > 1 && short <= 2 && short > 0 && (out[0] == slices.Max(out) || (short == 2 && out[2*p-1] == slices.Max(out))) {
				t.Fatalf("l=%d p=%d: %d short chunks, not the ends: %v", l, p, short, out)
			}
		}
	}
}

// TestZBVBubble checks that ZB-V fills what 1F1B leaves idle: on the same
// devices and m >= 2p microbatches, its pipeline bubble (the step past m
// times the slowest device's time) is below 1F1B's and ZB-H1's.
func TestZBVBubble(t *testing.T) {
	for _, c := range zbvCases[:5] {
		m := 4 * c.pp
		e := zbvEvaluator(t, c, m)
		v := e.predict(false).Time.BubbleSeconds
		for _, k := range []schedule.Kind{schedule.OneFOneB, schedule.ZBH1} {
			ex := e.cfg
			ex.Schedule = k
			o, err := newEvaluator(e.tr, e.c, ex, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if b := o.predict(false).Time.BubbleSeconds; v >= b {
				t.Errorf("%s p%d m%d: ZB-V bubble %.4f s, %s %.4f s", c.preset, c.pp, m, v, k, b)
			}
		}
	}
}

// TestZBVBounds checks what Validate refuses of a V: more chunks than the
// layers allow (2p > layers + 2), and a pipeline past what the model
// simulates (MaxSimulatedStageMicrobatches: p × min(m, 4p)); each error
// names the field and the numbers.
func TestZBVBounds(t *testing.T) {
	tr, _, err := modelprofiles.Transformer("llama3-8b")
	if err != nil {
		t.Fatal(err)
	}
	ex := plan.Execution{TP: 1, PP: 32, DP: 1, MicrobatchSize: 1, GlobalBatch: 64, Schedule: schedule.ZBV}
	if err := Validate(tr, servers(t, "nvidia-h100-sxm5-80gb", 32), ex); err == nil || !strings.Contains(err.Error(), "execution.pp: pp × 2 chunks per device must be <= the 32 layers + 2") {
		t.Errorf("zb-v on 32 stages of 32 layers: %v", err)
	}
	tr.Layers = 300
	ex.PP, ex.GlobalBatch = 136, 1000
	if Simulable(ex.PP, 1000) || !Simulable(ex.PP, 120) {
		t.Errorf("Simulable(136, 1000) %v, (136, 120) %v", Simulable(ex.PP, 1000), Simulable(ex.PP, 120))
	}
	if err := Validate(tr, servers(t, "nvidia-h100-sxm5-80gb", 136), ex); err == nil || !strings.Contains(err.Error(), "execution.pp: zb-v is costed by simulating its schedule, at most 65536 stage-microbatches") || !strings.Contains(err.Error(), "got pp 136 × 544") {
		t.Errorf("zb-v on 136 stages, 1,000 microbatches: %v", err)
	}
}

// TestDualPipeV checks what DualPipeV changes from ZB-V's V in the cost
// model: not the expert exchange, which its pairs hide only where the
// engine overlaps them (Overlap.EPComm, as for any schedule: a mixture of
// experts' all-to-all equals ZB-V's with the overlap and without); one
// chunk activation more a device (2p + 1 against 2p); and a microbatch a
// stage, which Validate asks of the global batch by name.
func TestDualPipeV(t *testing.T) {
	for _, c := range zbvCases {
		m := 4 * c.pp
		for _, overlap := range []bool{false, true} {
			predict := func(kind schedule.Kind) (*evaluator, Prediction) {
				e := vEvaluator(t, kind, c, m)
				if overlap {
					ex := e.cfg
					ex.Overlap.EPComm = true
					var err error
					if e, err = newEvaluator(e.tr, e.c, ex, Options{}); err != nil {
						t.Fatal(err)
					}
				}
				return e, e.predict(false)
			}
			de, d := predict(schedule.DualPipeV)
			ze, z := predict(schedule.ZBV)
			if got, want := d.Time.ExpertParallelSeconds, z.Time.ExpertParallelSeconds; math.Abs(got-want) > 1e-9*want {
				t.Errorf("%s p%d overlap %v: dualpipe-v's all-to-all %.6f s, zb-v's %.6f s", c.preset, c.pp, overlap, got, want)
			}
			da, za := de.memory(c.pp-1).ActivationBytes, ze.memory(c.pp-1).ActivationBytes
			if want := za * float64(2*c.pp+1) / float64(2*c.pp); c.rc != model.RecomputeFull && math.Abs(da/want-1) > 0.02 {
				t.Errorf("%s p%d: the last device stashes %.4g bytes under dualpipe-v, %.4g under zb-v: want about (2p+1)/2p of it, %.4g", c.preset, c.pp, da, za, want)
			}
		}
	}
	tr, _, err := modelprofiles.Transformer("llama3-8b")
	if err != nil {
		t.Fatal(err)
	}
	ex := plan.Execution{TP: 1, PP: 4, DP: 2, MicrobatchSize: 1, GlobalBatch: 14, Schedule: schedule.DualPipeV}
	if err := Validate(tr, servers(t, "nvidia-h100-sxm5-80gb", 8), ex); err == nil || !strings.Contains(err.Error(), "execution.global_batch: dualpipe-v needs at least 8 microbatches a step") || !strings.Contains(err.Error(), "got 7") {
		t.Errorf("dualpipe-v on 4 stages, 7 microbatches: %v", err)
	}
}
