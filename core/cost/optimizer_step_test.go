package cost

import (
	"math"
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/modelprofiles"
)

// TestDistributedOptimizerStepsItsShard: with ZeRO-1 (Megatron-LM's
// distributed optimizer) each of the d data-parallel ranks steps only its
// 1/d shard of the parameters, so the step's memory traffic (2·18 bytes per
// parameter with mixed precision and fp32 gradients: read and write weight,
// gradient, master weight and moments) falls by 36·P·(1 − 1/d) against
// ZeRO-0, while zeroing the whole fp32 gradient buffer (4·P, on every rank
// at both stages) and, without an overlapped reduction, dividing it by d
// before the all-reduce (8·P: read and written, Megatron-LM's
// allreduce_gradients) stay. A 1.3B GPT on one stage, bf16, 8 ranks.
func TestDistributedOptimizerStepsItsShard(t *testing.T) {
	tr := gpt(24, 2048, 16)
	c := dgxA100(t, 8)
	const d = 8
	opt := func(zero int) float64 {
		pr, err := Predict(tr, c, plan.Execution{TP: 1, PP: 1, DP: d, MicrobatchSize: 1, GlobalBatch: 8, ZeRO: zero,
			Optimizer: string(MixedAdamFP32Grads)}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return pr.Time.OptimizerSeconds
	}
	bw := c.GPU.MemoryBandwidthBytesPerSec * DefaultMemoryBandwidthEfficiency
	P := tr.Params()
	z0, z1 := opt(0), opt(1)
	if want := (36 + 4 + 8) * P / bw; math.Abs(z0-want) > 1e-9*want {
		t.Errorf("ZeRO-0 step: %.6g s, want (36 + 4 + 8) B × %.4g params at %.4g B/s = %.6g s", z0, P, bw, want)
	}
	if got, want := z0-z1, 36*P*(1-1.0/d)/bw; math.Abs(got-want) > 1e-9*want {
		t.Errorf("ZeRO-1 saves %.6g s of the step, want 36 B × (1 − 1/%d) of each parameter = %.6g s", got, d, want)
	}
}

// TestFP8ParamGatherGathersOneByte: with fp8_param_gather Megatron-LM
// all-gathers the linear layers' FP8 weights (1 byte) where it otherwise
// gathers bf16 (2 bytes); the embeddings and norms stay bf16. Llama 3 8B on
// one stage of 8 H100s (t 1), latency 0 so that a gather's time is
// proportional to its bytes: ZeRO-3's per-microbatch gathers shrink by the
// linear share of the weights, Σ LayerLinearParamsAt / (2·Params), counted
// from the model independently of the cost model; ZeRO-1's one gather
// after the step shrinks by the same bytes, one (2m)-th of ZeRO-3's saving
// (m microbatches, each gathering forward and backward).
func TestFP8ParamGatherGathersOneByte(t *testing.T) {
	tr, _, err := modelprofiles.Transformer("llama3-8b")
	if err != nil {
		t.Fatal(err)
	}
	tr.Precision = model.FP8
	tr.Seq = 4096
	c := servers(t, "nvidia-h100-sxm5-80gb", 8)
	comm := DefaultComm
	comm.LatencySeconds = 0
	const m = 4
	predict := func(zero int, gather bool) TimeBreakdown {
		pr, err := Predict(tr, c, plan.Execution{TP: 1, PP: 1, DP: 8, MicrobatchSize: 1, GlobalBatch: 8 * m, ZeRO: zero,
			Recompute: model.RecomputeFull, FP8ParamGather: gather}, Options{Comm: &comm, ReserveBytes: 1})
		if err != nil {
			t.Fatal(err)
		}
		return pr.Time
	}
	var linear float64
	for l := 0; l < tr.Layers; l++ {
		linear += tr.LayerLinearParamsAt(l)
	}
	share := linear / (2 * tr.Params())
	bf16, fp8 := predict(3, false).ZeRO3GatherSeconds, predict(3, true).ZeRO3GatherSeconds
	if got := 1 - fp8/bf16; math.Abs(got-share) > 1e-9 {
		t.Errorf("ZeRO-3 gathers: FP8 weights save %.6f of the bf16 gathers, want the linear weights' byte share %.6f", got, share)
	}
	saved := predict(1, false).DataParallelSeconds - predict(1, true).DataParallelSeconds
	if want := (bf16 - fp8) / (2 * m); math.Abs(saved-want) > 1e-9*want {
		t.Errorf("ZeRO-1 gather: FP8 weights save %.6g s, want one of ZeRO-3's 2m gathers' saving, %.6g s", saved, want)
	}
}
