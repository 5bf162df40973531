package partition

import (
	"context"
	"testing"

	"pipeplan/core/cost"
	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
)

// llama405B is Llama 3.1 405B (its Hugging Face config.json; the preset
// modelprofiles/llm/llama3-405b.json) at 8K context.
var llama405B = model.Transformer{Name: "Llama 3.1 405B", Layers: 126, Hidden: 16384, Heads: 128, KVHeads: 8, FFN: 53248,
	Vocab: 128256, Seq: 8192, GatedFFN: true, UntiedEmbeddings: true, PositionEmbedding: model.PositionNone,
	Norm: model.NormRMS, Bias: model.BiasNone, NoDropout: true}

// h100Cluster returns n H100 SXM5 GPUs, 8 per node, at 50 GB/s per GPU between nodes.
func h100Cluster(tb testing.TB, n int) hw.Cluster {
	tb.Helper()
	g := hw.GPU{ID: "h100", MemoryBytes: 80 << 30, MemoryBandwidthBytesPerSec: 3.35e12,
		PeakFLOPS: map[string]float64{hw.PrecisionBF16: 989e12}, MeasuredMatmulFLOPS: map[string]float64{hw.PrecisionBF16: 794.5e12},
		IntraNode: &hw.Link{Type: "NVLink", BandwidthBytesPerSec: 450e9}, LogicalDevices: 1}
	c, err := hw.NewCluster(g, 8, n/8, 50e9)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// megatronDefaults are the execution choices Megatron-LM recommends on H100
// and the search keeps fixed: the distributed optimizer with fp32
// gradients, flash attention, sequence parallelism, every overlap.
var megatronDefaults = plan.Execution{GlobalBatch: 2048, ZeRO: 1, Optimizer: "mixed-adam-fp32-grads", FlashAttention: true,
	SequenceParallel: true, Overlap: plan.Overlap{GradReduce: true, ParamGather: true, TPComm: true}}

// appKeep is what the app keeps of a search (PTDPOptions.Keep): the 15
// candidates it shows by default (request.DefaultTop), more than the 5
// that do not fit it lists.
const appKeep = 15

// BenchmarkSearchPTDP405B16384 is the whole PTD-P search (t, p, cp and its
// communication type, d, b, v, recompute) for Llama 3.1 405B on 16,384
// H100s at batch 2048 with the distributed optimizer: keeping what the app
// keeps (shown) and every candidate (all); and as the app runs it by
// default, the ZeRO stage searched too (shown-zero); and as the app keeps
// it with ZB-V or DualPipeV pinned, every candidate's pipeline simulated
// (shown-zbv, shown-dualpipev).
func BenchmarkSearchPTDP405B16384(b *testing.B) {
	c := h100Cluster(b, 16384)
	for _, run := range []struct {
		name       string
		keep       int
		searchZeRO bool
		schedule   schedule.Kind
	}{{"shown", appKeep, false, ""}, {"all", 0, false, ""}, {"shown-zero", appKeep, true, ""}, {"shown-zbv", appKeep, false, schedule.ZBV}, {"shown-dualpipev", appKeep, false, schedule.DualPipeV}} {
		b.Run(run.name, func(b *testing.B) {
			fixed := megatronDefaults
			fixed.Schedule = run.schedule
			opt := PTDPOptions{Fixed: fixed, SearchCPComm: true, Keep: run.keep, SearchZeRO: run.searchZeRO}
			var res PTDPResult
			for b.Loop() {
				var err error
				if res, err = SearchPTDP(context.Background(), llama405B, c, opt, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(res.Evaluated), "evaluated")
		})
	}
}

// TestSearchPTDP405B checks that the search plans Llama 3.1 405B on 16,384
// H100s (126 layers: uneven pipeline splits) and reports the best
// configuration with its breakdown.
func TestSearchPTDP405B(t *testing.T) {
	res, err := SearchPTDP(context.Background(), llama405B, h100Cluster(t, 16384), PTDPOptions{Fixed: megatronDefaults}, nil)
	if err != nil {
		t.Fatal(err)
	}
	best := res.Candidates[0]
	cfg, pr := best.Config, best.Prediction
	if cfg.TP*cfg.PP*cfg.DP*cfg.CP != 16384 {
		t.Fatalf("best %+v does not use the 16384 GPUs", cfg)
	}
	t.Logf("%d fit, %d not; best t=%d cp=%d p=%d d=%d b=%d v=%d %s: %.0f model TFLOP/s/GPU, %.1f GiB; %+v",
		len(res.Candidates), len(res.Infeasible), cfg.TP, cfg.CP, cfg.PP, cfg.DP, cfg.MicrobatchSize, cfg.Interleave, cfg.Recompute,
		pr.ModelTFLOPSPerGPU, pr.Memory.PeakBytes/(1<<30), pr.Time)
}

// TestPTDPPlanEndChunks exports the Llama 3 paper's layout of 405B — 126
// layers in 16 × 8 model chunks, the first holding only the embedding and
// the last only the output layer (§3.3.2) — as a valid run plan whose end
// stages are empty, and reads it back.
func TestPTDPPlanEndChunks(t *testing.T) {
	cfg := megatronDefaults
	cfg.TP, cfg.PP, cfg.Interleave, cfg.DP, cfg.CP, cfg.MicrobatchSize = 8, 16, 8, 128, 1, 1
	p, err := PTDPPlan(llama405B, h100Cluster(t, 16384), cfg, cost.Options{})
	if err != nil {
		t.Fatal(err)
	}
	last := len(p.Stages) - 1
	if len(p.Stages) != 128 || !p.Stages[0].Empty() || !p.Stages[last].Empty() {
		t.Fatalf("want 128 stages, the first and last empty; got %d: first %+v, last %+v", len(p.Stages), p.Stages[0], p.Stages[last])
	}
	for i, s := range p.Stages[1:last] {
		if s.Empty() || s.LastLayer != s.FirstLayer {
			t.Fatalf("stages[%d] = %+v, want one layer", i+1, s)
		}
	}
	data, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plan.Parse(data); err != nil {
		t.Fatalf("the exported plan does not read back: %v", err)
	}
}
