package partition

import (
	"context"
	"math"
	"testing"

	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/gpuprofiles"
)

// FuzzSearchPTDP feeds arbitrary model dimensions, cluster shapes and fixed
// degrees to the search: it must return an error or ranked, finite
// candidates, never panic.
func FuzzSearchPTDP(f *testing.F) {
	f.Add(uint8(24), uint16(2304), uint8(24), uint16(2048), uint16(51200), uint8(32), uint8(8), uint16(512), uint8(0), uint8(0), uint8(0), uint8(0), uint8(0), false, 25e9)
	f.Add(uint8(8), uint16(1024), uint8(16), uint16(1024), uint16(32000), uint8(16), uint8(4), uint16(32), uint8(4), uint8(2), uint8(1), uint8(2), uint8(3), true, 12.5e9)
	f.Add(uint8(0), uint16(0), uint8(3), uint16(1), uint16(1), uint8(0), uint8(0), uint16(0), uint8(3), uint8(0), uint8(5), uint8(9), uint8(7), false, math.NaN())
	g, err := gpuprofiles.ByID("nvidia-a100-sxm4-80gb")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, layers uint8, hidden uint16, heads uint8, seq, vocab uint16, gpus, perNode uint8, batch uint16,
		tp, pp, mb, v, rec uint8, sp bool, interBW float64) {
		tr := model.Transformer{Layers: int(layers), Hidden: int(hidden), Heads: int(heads), Seq: int(seq), Vocab: int(vocab)}
		c := hw.Cluster{GPU: g, Levels: []hw.Level{
			{Workers: int(perNode), BandwidthBytesPerSec: 300e9},
			{Workers: int(gpus), BandwidthBytesPerSec: interBW},
		}}
		fixed := plan.Execution{
			TP: int(tp), PP: int(pp), MicrobatchSize: int(mb), Interleave: int(v), GlobalBatch: int(batch),
			SequenceParallel: sp, ScatterGather: sp,
		}
		if rec%4 != 0 {
			fixed.Recompute = []model.Recompute{"bogus", model.RecomputeNone, model.RecomputeFull}[rec%4-1]
		}
		res, err := SearchPTDP(context.Background(), tr, c, PTDPOptions{Fixed: fixed, AllowCrossNodeTP: rec%2 == 1}, nil)
		if err != nil {
			return
		}
		for i, cand := range res.Candidates {
			p := cand.Prediction
			for _, x := range []float64{p.IterationSeconds, p.TFLOPSPerGPU, p.BubbleFraction, p.Memory.PeakBytes} {
				if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
					t.Fatalf("candidate %+v: non-finite prediction %+v", cand.Config, p)
				}
			}
			if !cand.Fits || cand.Config.TP*cand.Config.PP*cand.Config.DP != c.GPUs() {
				t.Fatalf("candidate %+v: fits %v on %d GPUs", cand.Config, cand.Fits, c.GPUs())
			}
			if i > 0 && res.Candidates[i-1].Prediction.IterationSeconds > p.IterationSeconds {
				t.Fatal("candidates not sorted")
			}
		}
		for _, cand := range res.Infeasible {
			if cand.Fits || cand.Reason == "" {
				t.Fatalf("infeasible %+v without a reason", cand.Config)
			}
		}
	})
}

// FuzzPlanTwoBW feeds arbitrary cluster options and block sizes to the 2BW
// planner: an error or a configuration with finite, positive throughput
// that fits.
func FuzzPlanTwoBW(f *testing.F) {
	f.Add(uint8(24), 1e-3, 3e8, 2e8, 4e6, uint8(16), uint8(8), 150e9, 12.5e9, 16e9, uint16(512), 0.0, 0.0)
	f.Add(uint8(1), 0.0, 0.0, 0.0, 0.0, uint8(1), uint8(1), 1.0, 1.0, 1.0, uint16(1), 1.0, 3.0)
	f.Add(uint8(0), math.NaN(), -1.0, math.Inf(1), 0.0, uint8(0), uint8(0), 0.0, math.NaN(), -5.0, uint16(0), 0.5, -1.0)
	f.Fuzz(func(t *testing.T, blocks uint8, seconds, weight, stash, input float64, gpus, perServer uint8,
		high, low, memory float64, batch uint16, recompute, state float64) {
		for _, x := range []float64{seconds, weight, stash, input} {
			if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 || x > 1e15 {
				return // block costs come from validated profiles (NewProfileBlocks)
			}
		}
		u := uniformBlocks{n: int(blocks), seconds: seconds, weight: weight, stash: stash, input: input}
		opt := TwoBWOptions{
			GPUs: int(gpus), GPUsPerServer: int(perServer),
			IntraServerBandwidthBytesPerSec: high, InterServerBandwidthBytesPerSec: low,
			MemoryBytes: memory, BatchSize: int(batch), RecomputeFactor: recompute, StateBytesPerWeightByte: state,
		}
		plan, err := PlanTwoBW(context.Background(), u, opt, nil)
		if err != nil {
			return
		}
		b := plan.Best
		if math.IsNaN(b.SamplesPerSecond) || math.IsInf(b.SamplesPerSecond, 0) || b.MemoryBytes > opt.MemoryBytes || b.DataParallel*b.Stages != opt.GPUs {
			t.Fatalf("bad best configuration %+v for %+v", b, opt)
		}
	})
}
