package partition

import (
	"context"
	"math"
	"math/rand"
	"strings"
	"testing"

	"pipeplan/core/model"
)

// uniformBlocks is the paper's model of §3.3.3: n identical blocks whose
// time and activations grow linearly with the microbatch size.
type uniformBlocks struct {
	n                             int
	seconds, weight, stash, input float64 // per block, per sample for seconds/stash/input
}

func (u uniformBlocks) NumBlocks() int { return u.n }
func (u uniformBlocks) BlockCost(_, b int) TwoBWBlockCost {
	return TwoBWBlockCost{
		ComputeSeconds:  u.seconds * float64(b),
		WeightBytes:     u.weight,
		ActivationBytes: u.stash * float64(b),
		InputBytes:      u.input * float64(b),
	}
}

func testTwoBWOptions() TwoBWOptions {
	return TwoBWOptions{
		GPUs: 16, GPUsPerServer: 8,
		IntraServerBandwidthBytesPerSec: 150e9, InterServerBandwidthBytesPerSec: 12.5e9,
		MemoryBytes: 16 << 30, BatchSize: 512,
	}
}

// TestTwoBWMemoryFormulas checks MEMORY(.) against the closed forms of
// §3.3.3 written on the model totals |W|, |A_total(b)|, |A_input(b)|.
func TestTwoBWMemoryFormulas(t *testing.T) {
	u := uniformBlocks{n: 24, seconds: 1e-3, weight: 300e6, stash: 200e6, input: 4e6}
	opt := testTwoBWOptions()
	ev := newTwoBWEvaluator(u, opt)
	W := float64(u.n) * u.weight
	for _, p := range []int{2, 4, 8} {
		d := opt.GPUs / p
		for _, b := range []int{1, 2, 4} {
			A, Ain := float64(u.n)*u.stash*float64(b), u.input*float64(b)
			P := float64(p)
			want := map[TwoBWExecution]float64{
				TwoBWPipelined:          2*W/P + P*A/P + P*Ain,
				TwoBWPipelinedRecompute: 2*W/P + A/P + P*Ain,
				TwoBWNoPipelining:       W/P + A/P,
			}
			for e, w := range want {
				c, ok := ev.evaluate(d, p, b, e)
				if !ok {
					t.Fatalf("d=%d p=%d b=%d %v: not evaluated", d, p, b, e)
				}
				if got := c.Predictions.PeakBytesPerGPU; math.Abs(got-w) > 1e-9*w {
					t.Errorf("d=%d p=%d b=%d %v: memory %.6g, want %.6g", d, p, b, e, got, w)
				}
			}
			// Recomputation saves exactly (p−1)·|A_total(b)|/p.
			full, _ := ev.evaluate(d, p, b, TwoBWPipelined)
			rec, _ := ev.evaluate(d, p, b, TwoBWPipelinedRecompute)
			if got, w := full.Predictions.PeakBytesPerGPU-rec.Predictions.PeakBytesPerGPU, (P-1)*A/P; math.Abs(got-w) > 1e-9*w {
				t.Errorf("p=%d b=%d: recompute saves %.6g, want %.6g", p, b, got, w)
			}
		}
	}
	// Optimizer state is held once: 3 bytes per weight byte add 3|W|/p.
	opt.StateBytesPerWeightByte = 3
	withState := newTwoBWEvaluator(u, opt)
	a, _ := ev.evaluate(4, 4, 1, TwoBWPipelined)
	b, _ := withState.evaluate(4, 4, 1, TwoBWPipelined)
	if got, w := b.Predictions.PeakBytesPerGPU-a.Predictions.PeakBytesPerGPU, 3*W/4; math.Abs(got-w) > 1e-9*w {
		t.Errorf("state adds %.6g, want %.6g", got, w)
	}
}

// TestTwoBWThroughputFormula checks THROUGHPUT(.) on two stages, where every
// stage has one neighbour, against t of §3.3.3 written out by hand.
func TestTwoBWThroughputFormula(t *testing.T) {
	u := uniformBlocks{n: 8, seconds: 2e-3, weight: 500e6, stash: 50e6, input: 8e6}
	opt := testTwoBWOptions()
	opt.BatchSize = 64
	ev := newTwoBWEvaluator(u, opt)
	const d, p, b = 8, 2, 2
	m := float64(opt.BatchSize) / (d * b)
	comp := 4 * u.seconds * b // B/p = 4 blocks per stage
	// Replicas innermost: the 8 replicas fill a server (B_high all-reduce),
	// the pipeline hop crosses servers (B_low). Pipelines innermost: the
	// 2-stage pipeline stays in a server, the all-reduce crosses servers.
	comm := func(bw float64) float64 { return 2 * u.input * b / bw }
	ar := func(bw float64) float64 { return 2 * (d - 1) / float64(d) * 4 * u.weight / bw / m }
	hi, lo := opt.IntraServerBandwidthBytesPerSec, opt.InterServerBandwidthBytesPerSec
	for _, tc := range []struct {
		e      TwoBWExecution
		factor float64
		sum    bool
	}{
		{TwoBWPipelined, 1, false},
		{TwoBWPipelinedRecompute, 4.0 / 3, false},
		{TwoBWNoPipelining, 1, true},
	} {
		stage := math.Min(
			math.Max(tc.factor*comp+comm(lo), ar(hi)),
			math.Max(tc.factor*comp+comm(hi), ar(lo)))
		want := stage
		if tc.sum {
			want = 2 * stage
		}
		c, ok := ev.evaluate(d, p, b, tc.e)
		if !ok {
			t.Fatalf("%v: not evaluated", tc.e)
		}
		if got := c.Predictions.BottleneckSeconds; math.Abs(got-want) > 1e-12*want {
			t.Errorf("%v: t = %.9g, want %.9g", tc.e, got, want)
		}
		if w, got := d*b/want, c.Predictions.SamplesPerSecond; math.Abs(got-w) > 1e-9*w {
			t.Errorf("%v: throughput %.6g, want d·b/t = %.6g", tc.e, got, w)
		}
	}
}

// bruteForceTwoBW evaluates every (d, p, b, execution) on its own and
// returns the best feasible throughput and the smallest footprint seen.
func bruteForceTwoBW(m TwoBWModel, opt TwoBWOptions) (best, smallest float64) {
	ev := newTwoBWEvaluator(m, opt)
	smallest = math.Inf(1)
	for d := 1; d <= opt.GPUs; d++ {
		for p := 1; d*p <= opt.GPUs; p++ {
			if d*p != opt.GPUs || p > m.NumBlocks() {
				continue
			}
			for b := 1; b <= opt.BatchSize; b++ { // every b, not just divisors
				for _, e := range []TwoBWExecution{TwoBWNoPipelining, TwoBWPipelined, TwoBWPipelinedRecompute} {
					if p == 1 && e != TwoBWNoPipelining {
						continue
					}
					c, ok := ev.evaluate(d, p, b, e)
					if !ok {
						continue
					}
					smallest = math.Min(smallest, c.Predictions.PeakBytesPerGPU)
					if c.Predictions.PeakBytesPerGPU <= opt.MemoryBytes {
						best = math.Max(best, c.Predictions.SamplesPerSecond)
					}
				}
			}
		}
	}
	return best, smallest
}

// TestTwoBWPlanMatchesBruteForce plans random layer profiles and checks the
// best configuration against exhaustive evaluation, and the batch identity
// B = d·b·m (= N·b·g when pipelined).
func TestTwoBWPlanMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for trial := 0; trial < 40; trial++ {
		prof := model.Profile{MicrobatchSize: 1 + rng.Intn(4)}
		for k := 0; k < 2+rng.Intn(10); k++ {
			prof.Layers = append(prof.Layers, model.Layer{
				FwdSeconds: rng.Float64() * 1e-2, BwdSeconds: rng.Float64() * 2e-2,
				OutputActivationBytes: rng.Float64() * 1e8, ParameterBytes: rng.Float64() * 1e9,
			})
		}
		pb, err := NewProfileBlocks(prof)
		if err != nil {
			t.Fatal(err)
		}
		opt := TwoBWOptions{
			GPUs: 1 << rng.Intn(4), GPUsPerServer: 1 << rng.Intn(3),
			IntraServerBandwidthBytesPerSec: 100e9, InterServerBandwidthBytesPerSec: 10e9,
			MemoryBytes: 1e9 + rng.Float64()*8e9, BatchSize: 8 << rng.Intn(4),
			StateBytesPerWeightByte: float64(rng.Intn(4)),
		}
		want, smallest := bruteForceTwoBW(pb, opt)
		cands, err := PlanTwoBW(context.Background(), pb, opt, nil)
		if want == 0 {
			if err == nil || !strings.Contains(err.Error(), "does not fit") {
				t.Errorf("trial %d: nothing fits (smallest %.4g > %.4g) but got err %v", trial, smallest, opt.MemoryBytes, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if got := cands[0].Predictions.SamplesPerSecond; got != want {
			t.Errorf("trial %d: best %.9g samples/s, brute force %.9g", trial, got, want)
		}
		for _, c := range cands {
			e := c.Execution
			if e.DP*e.MicrobatchSize*c.Microbatches != opt.BatchSize || e.Microbatches() != c.Microbatches || e.GlobalBatch != opt.BatchSize {
				t.Errorf("trial %d: %+v: d·b·m != B = %d", trial, c, opt.BatchSize)
			}
			if c.TwoBW.Execution != TwoBWNoPipelining && opt.GPUs*e.MicrobatchSize*c.TwoBW.GradientAccumulation != opt.BatchSize {
				t.Errorf("trial %d: %+v: N·b·g != B = %d", trial, c, opt.BatchSize)
			}
			if c.Predictions.PeakBytesPerGPU > opt.MemoryBytes {
				t.Errorf("trial %d: candidate over memory: %+v", trial, c)
			}
		}
	}
}

// TestTwoBWRecomputeWhenMemoryIsTight: recomputation costs c_extra, so with
// ample memory the planner never picks it, and when activation stashes do
// not fit it does (the BERT-24 rows of the 2BW paper's Table 1 show both).
func TestTwoBWRecomputeWhenMemoryIsTight(t *testing.T) {
	u := uniformBlocks{n: 24, seconds: 5e-3, weight: 100e6, stash: 400e6, input: 2e6}
	opt := testTwoBWOptions()
	opt.MemoryBytes = 1e12
	cands, err := PlanTwoBW(context.Background(), u, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cands[0].TwoBW.Execution == TwoBWPipelinedRecompute {
		t.Errorf("ample memory: picked recomputation %+v", cands[0])
	}
	opt.MemoryBytes = 4e9 // a 2-stage no-recompute stash at b=1 is 2·12·400e6 = 9.6 GB
	cands, err = PlanTwoBW(context.Background(), u, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cands[0].TwoBW.Execution != TwoBWPipelinedRecompute {
		t.Errorf("tight memory: want recomputation, got %+v", cands[0])
	}
}

// TestTwoBWNeedsPipelineWhenWeightsDoNotFit: a model whose weights exceed
// one GPU can only be planned with enough stages.
func TestTwoBWNeedsPipelineWhenWeightsDoNotFit(t *testing.T) {
	u := uniformBlocks{n: 32, seconds: 1e-3, weight: 1e9, stash: 1e6, input: 1e5}
	opt := testTwoBWOptions()
	opt.MemoryBytes = 10e9 // needs 2·32e9/p <= ~10e9: p >= 8 pipelined, p >= 4 unpipelined
	cands, err := PlanTwoBW(context.Background(), u, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cands {
		if c.Execution.PP < 4 {
			t.Errorf("candidate with %d stages cannot hold %g weight bytes: %+v", c.Execution.PP, 32e9, c)
		}
	}
}

func TestTwoBWBadInput(t *testing.T) {
	u := uniformBlocks{n: 4, seconds: 1e-3, weight: 1e6, stash: 1e6, input: 1e5}
	for _, tc := range []struct {
		edit func(*TwoBWOptions)
		want string
	}{
		{func(o *TwoBWOptions) { o.GPUs = 0 }, "gpus: must be a positive number, got 0"},
		{func(o *TwoBWOptions) { o.MemoryBytes = math.NaN() }, "memory_bytes: must be a positive number, got NaN"},
		{func(o *TwoBWOptions) { o.InterServerBandwidthBytesPerSec = -1 }, "inter_server_bandwidth_bytes_per_sec"},
		{func(o *TwoBWOptions) { o.RecomputeFactor = 0.5 }, "recompute_factor"},
		{func(o *TwoBWOptions) { o.BatchSize = 3 }, "batch_size: 3 admits no configuration on 16 GPUs"},
		{func(o *TwoBWOptions) { o.MemoryBytes = 1 }, "does not fit: the smallest configuration needs"},
	} {
		opt := testTwoBWOptions()
		tc.edit(&opt)
		_, err := PlanTwoBW(context.Background(), u, opt, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want error containing %q, got %v", tc.want, err)
		}
	}
	if _, err := NewProfileBlocks(model.Profile{MicrobatchSize: 1, Layers: []model.Layer{{FwdSeconds: math.Inf(1)}}}); err == nil ||
		!strings.Contains(err.Error(), "profile.layers[0].fwd_seconds") {
		t.Errorf("infinite layer time: got %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := PlanTwoBW(ctx, u, testTwoBWOptions(), nil); err == nil {
		t.Error("cancelled context: want error")
	}
}

func BenchmarkPlanTwoBW(b *testing.B) {
	u := uniformBlocks{n: 48, seconds: 5e-3, weight: 100e6, stash: 400e6, input: 2e6}
	opt := testTwoBWOptions()
	opt.GPUs, opt.BatchSize = 64, 1024
	for i := 0; i < b.N; i++ {
		if _, err := PlanTwoBW(context.Background(), u, opt, nil); err != nil {
			b.Fatal(err)
		}
	}
}
