package cost

import (
	"math"
	"strings"
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/modelprofiles"
)

// cpEvaluator returns the evaluator of a preset at sequence seq on H100
// servers of 8 with t, cp and d = gpus/(t·cp), one stage, microbatch 1.
func cpEvaluator(t *testing.T, preset string, seq, tp, cp, gpus int, comm string, rc model.Recompute) *evaluator {
	t.Helper()
	tr, _, err := modelprofiles.Transformer(preset)
	if err != nil {
		t.Fatal(err)
	}
	tr.Seq = seq
	c := servers(t, "nvidia-h100-sxm5-80gb", gpus)
	d := gpus / (tp * cp)
	ex := plan.Execution{TP: tp, PP: 1, DP: d, CP: cp, CPComm: comm, MicrobatchSize: 1, GlobalBatch: d, Recompute: rc,
		SequenceParallel: true, FlashAttention: true}
	e, err := newEvaluator(tr, c, WithDefaults(ex), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestCPAllGather: Llama 3 405B at 128K with t 8 and cp 16 over 16
// servers (the Llama 3 paper's long-context layout): one K/V head of 128
// values per rank, so each all-gather collects 131,072 tokens × 2 × 128
// values × 2 bytes = 64 MiB over the network, three times per layer and
// microbatch (forward gather; backward gather and gradient reduce-scatter),
// four with recomputation, none of it hidden; the backward's gathered K/V
// and gradients (128 MiB) are counted in memory.
func TestCPAllGather(t *testing.T) {
	e := cpEvaluator(t, "llama3-405b", 131072, 8, 16, 128, plan.CPCommAllGather, model.RecomputeNone)
	const gathered = 131072 * 2 * 128 * 2
	if got := e.cpGatheredBytes(); got != gathered {
		t.Fatalf("gathered K/V %v bytes, want %v", got, gathered)
	}
	network := e.c.Levels[len(e.c.Levels)-1].BandwidthBytesPerSec
	if e.cpBW != network {
		t.Fatalf("cp 16 at stride 8 crosses servers: bandwidth %v, want the network's %v", e.cpBW, network)
	}
	gather := 15.0/16*gathered/(network*e.comm.BandwidthEfficiency) + 15*e.comm.LatencySeconds
	lt := e.layerSeconds(0)
	if want := 3 * gather; math.Abs(lt.cp-want) > 1e-9*want {
		t.Errorf("exposed all-gather %v s per layer, want %v s", lt.cp, want)
	}
	rec := cpEvaluator(t, "llama3-405b", 131072, 8, 16, 128, plan.CPCommAllGather, model.RecomputeSelective)
	if got, want := rec.layerSeconds(0).cp, 4*gather; math.Abs(got-want) > 1e-9*want {
		t.Errorf("recomputed attention: %v s, want %v s (one more gather)", got, want)
	}
	ring := cpEvaluator(t, "llama3-405b", 131072, 8, 16, 128, plan.CPCommP2P, model.RecomputeNone)
	if r := ring.layerSeconds(0); !(r.cp < lt.cp) || r.compute != lt.compute {
		t.Errorf("ring %v s exposed, all-gather %v s: want the ring (hidden behind the attention) lower, the compute equal", r.cp, lt.cp)
	}
	if got := e.memory(0).CommBufferBytes - ring.memory(0).CommBufferBytes; got != 2*gathered {
		t.Errorf("all-gather buffers %v bytes over the ring's, want %v", got, 2*gathered)
	}
}

// TestCPAllToAll: Llama 3 8B (32 heads, 8 K/V heads of 128) at 64K with
// cp 8 in one server: per microbatch a rank holds 8,192 tokens of Q (4,096
// values), K and V (2,048) and the output (4,096) and sends 7/8 of each
// over NVLink, forward and backward; Llama 2 7B (32 heads, K/V unshared)
// with cp 16 over two servers sends half of it over the network (the
// other 7/16 over NVLink at the same time). t·cp must divide the K/V heads.
func TestCPAllToAll(t *testing.T) {
	e := cpEvaluator(t, "llama3-8b", 65536, 1, 8, 8, plan.CPCommA2A, model.RecomputeNone)
	eff, lat := e.comm.BandwidthEfficiency, e.comm.LatencySeconds
	a2a := func(values, share, bw float64) float64 { return share*8192*values*2/(bw*eff) + float64(e.cfg.CP-1)*lat }
	pair := a2a(4096+2048, 7.0/8, e.intraBW) + a2a(4096, 7.0/8, e.intraBW)
	if got, want := e.layerSeconds(0).cp, 2*pair; math.Abs(got-want) > 1e-9*want {
		t.Errorf("a2a in one server: %v s, want %v s", got, want)
	}
	across := cpEvaluator(t, "llama2-7b", 65536, 1, 16, 16, plan.CPCommA2A, model.RecomputeNone)
	net := across.cpBW
	a2a = func(values, share, bw float64) float64 { return share*4096*values*2/(bw*eff) + 15*lat }
	pair = a2a(4096+8192, 8.0/16, net) + a2a(4096, 8.0/16, net)
	if got, want := across.layerSeconds(0).cp, 2*pair; math.Abs(got-want) > 1e-9*want {
		t.Errorf("a2a over two servers: %v s, want %v s (half over the network)", got, want)
	}
	ex := WithDefaults(e.cfg)
	ex.TP, ex.CP, ex.DP = 2, 8, 1
	ex.GlobalBatch = 1
	if err := Validate(e.tr, servers(t, "nvidia-h100-sxm5-80gb", 16), ex); err == nil || !strings.Contains(err.Error(), "execution.cp_comm: a2a needs the 32 attention heads and 8 K/V heads to split over tp·cp = 2·8") {
		t.Errorf("a2a with t·cp = 16 > 8 K/V heads: %v", err)
	}
}

// TestCPCommDefault: "" is the ring, the same prediction as "p2p"; an
// unknown type is an error naming the field and the value.
func TestCPCommDefault(t *testing.T) {
	a := cpEvaluator(t, "llama3-8b", 65536, 1, 8, 8, "", model.RecomputeNone).predict(true)
	b := cpEvaluator(t, "llama3-8b", 65536, 1, 8, 8, plan.CPCommP2P, model.RecomputeNone).predict(true)
	if a.IterationSeconds != b.IterationSeconds || a.Memory.PeakBytes != b.Memory.PeakBytes {
		t.Errorf(`cp_comm "" %v s, %v B; "p2p" %v s, %v B: want equal`, a.IterationSeconds, a.Memory.PeakBytes, b.IterationSeconds, b.Memory.PeakBytes)
	}
	e := cpEvaluator(t, "llama3-8b", 65536, 1, 8, 8, "", model.RecomputeNone)
	ex := WithDefaults(e.cfg)
	ex.CPComm = "ring"
	if err := Validate(e.tr, e.c, ex); err == nil || !strings.Contains(err.Error(), `execution.cp_comm: must be one of "p2p", "all_gather", "a2a"`) || !strings.Contains(err.Error(), `got "ring"`) {
		t.Errorf("cp_comm ring: %v", err)
	}
}

// TestRingDominatesAllGather: in this cost model the ring (p2p) is never
// slower than the all-gather and never needs more memory: its cp − 1
// steps move what a ring all-gather moves, with the same per-step
// latency, and only what the attention does not hide is exposed, where
// the all-gather is exposed in full (forward; backward gather and
// reduce-scatter; once more when recomputed) and holds the gathered K/V
// and gradients. The PTD-P search relies on it to leave all_gather out
// of the searched types (partition's cpComms); a change to the model
// that lets the all-gather win must fail here. Checked over dense, GQA,
// MLA and MoE presets, sequence 8K–128K, t 1–8, cp 2–16 inside and
// across servers, microbatch 1–2 and every recomputation.
func TestRingDominatesAllGather(t *testing.T) {
	checked := 0
	for _, preset := range []string{"llama3-8b", "llama3-405b", "deepseek-v3", "mixtral-8x7b", "qwen3-30b-a3b"} {
		tr, _, err := modelprofiles.Transformer(preset)
		if err != nil {
			t.Fatal(err)
		}
		for _, seq := range []int{8192, 32768, 131072} {
			for _, tp := range []int{1, 2, 8} {
				for _, cp := range []int{2, 4, 16} {
					for _, b := range []int{1, 2} {
						for _, rc := range []model.Recompute{model.RecomputeNone, model.RecomputeSelective, model.RecomputeFull} {
							tr.Seq = seq
							gpus := max(8, tp*cp)
							c := servers(t, "nvidia-h100-sxm5-80gb", gpus)
							d := gpus / (tp * cp)
							predict := func(comm string) Prediction {
								ex := plan.Execution{TP: tp, PP: 1, DP: d, CP: cp, CPComm: comm, MicrobatchSize: b, GlobalBatch: 2 * d * b, Recompute: rc,
									SequenceParallel: true, FlashAttention: true, ZeRO: 1, Overlap: plan.Overlap{GradReduce: true, ParamGather: true, TPComm: true}}
								pr, err := Predict(tr, c, ex, Options{})
								if err != nil {
									t.Fatalf("%s seq %d t %d cp %d: %v", preset, seq, tp, cp, err)
								}
								return pr
							}
							ring, gather := predict(plan.CPCommP2P), predict(plan.CPCommAllGather)
							if ring.IterationSeconds > gather.IterationSeconds || ring.Memory.PeakBytes > gather.Memory.PeakBytes {
								t.Errorf("%s seq %d t %d cp %d b %d %s: ring %.6g s, %.4g B; all-gather %.6g s, %.4g B: the ring must be no slower and no larger",
									preset, seq, tp, cp, b, rc, ring.IterationSeconds, ring.Memory.PeakBytes, gather.IterationSeconds, gather.Memory.PeakBytes)
							}
							checked++
						}
					}
				}
			}
		}
	}
	t.Logf("%d configurations checked", checked)
}
