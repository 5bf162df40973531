package partition

import (
	"math"

	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
)

// twoBWEvaluator computes the closed-form THROUGHPUT(.) and MEMORY(.) cost
// functions of dissertation §3.3.3, caching block costs per microbatch size.
type twoBWEvaluator struct {
	m   TwoBWModel
	opt TwoBWOptions
	// prefix[b] holds prefix sums over blocks of the costs at microbatch b;
	// prefix[b][k] sums blocks [0, k). Inputs are per block, not summed.
	prefix map[int][]TwoBWBlockCost
	inputs map[int][]float64
}

func newTwoBWEvaluator(m TwoBWModel, opt TwoBWOptions) *twoBWEvaluator {
	if opt.RecomputeFactor == 0 {
		opt.RecomputeFactor = 4.0 / 3 // c_extra, §3.3.3
	}
	return &twoBWEvaluator{m: m, opt: opt, prefix: map[int][]TwoBWBlockCost{}, inputs: map[int][]float64{}}
}

// costs returns the prefix sums and the per-block input bytes at microbatch b.
func (ev *twoBWEvaluator) costs(b int) ([]TwoBWBlockCost, []float64) {
	if p, ok := ev.prefix[b]; ok {
		return p, ev.inputs[b]
	}
	n := ev.m.NumBlocks()
	p := make([]TwoBWBlockCost, n+1)
	in := make([]float64, n)
	for k := 0; k < n; k++ {
		c := ev.m.BlockCost(k, b)
		p[k+1] = TwoBWBlockCost{
			ComputeSeconds:  p[k].ComputeSeconds + c.ComputeSeconds,
			WeightBytes:     p[k].WeightBytes + c.WeightBytes,
			ActivationBytes: p[k].ActivationBytes + c.ActivationBytes,
		}
		in[k] = c.InputBytes
	}
	ev.prefix[b], ev.inputs[b] = p, in
	return p, in
}

// twoBWStageBounds splits n blocks into p contiguous stages of B/p blocks
// each (§3.3.3), as even as possible when p does not divide n.
func twoBWStageBounds(n, p int) []int {
	first := make([]int, p+1)
	for i := 0; i <= p; i++ {
		first[i] = i * n / p
	}
	return first
}

// bandwidths returns bwdth_in-pipeline(p) and bwdth_cross-pipeline(d) for
// one orientation of the d×p grid on servers of g GPUs (§3.3.3): with
// replicas innermost, a stage's d replicas share a server when d <= g and
// g is a multiple of d (the text's "d < g" would send a full server's
// all-reduce over the network); with pipelines innermost, the same holds
// for p. The hop or ring that leaves a server runs at B_low.
func (ev *twoBWEvaluator) bandwidths(d, p int, replicasInner bool) (pipeline, allReduce float64) {
	g := ev.opt.GPUsPerServer
	high, low := ev.opt.IntraServerBandwidthBytesPerSec, ev.opt.InterServerBandwidthBytesPerSec
	inner, outer := d, p
	if !replicasInner {
		inner, outer = p, d
	}
	innerBW, outerBW := low, low
	if inner <= g && g%inner == 0 {
		innerBW = high
		if inner*outer <= g {
			outerBW = high
		}
	}
	if replicasInner {
		return outerBW, innerBW
	}
	return innerBW, outerBW
}

// evaluate returns the configuration (d, p, b, e) as a candidate with its
// THROUGHPUT(.) and MEMORY(.), and false when B is not a multiple of d·b
// (or, pipelined, of N·b: 2BW needs m >= p microbatches per weight
// version, §3.1).
func (ev *twoBWEvaluator) evaluate(d, p, b int, e TwoBWExecution) (Candidate, bool) {
	B := ev.opt.BatchSize
	if B%(d*b) != 0 {
		return Candidate{}, false
	}
	m := B / (d * b) // m(b, d) = B/(d·b)
	g := m
	if e != TwoBWNoPipelining {
		if m%p != 0 {
			return Candidate{}, false
		}
		g = m / p // g = B/(N·b), Algorithm 1
	}
	pre, in := ev.costs(b)
	first := twoBWStageBounds(ev.m.NumBlocks(), p)
	c := Candidate{
		Planner: plan.PlannerTwoBW,
		Execution: plan.Execution{TP: 1, PP: p, DP: d, Interleave: 1, CP: 1, EP: 1, MicrobatchSize: b, GlobalBatch: B,
			Recompute: e.recompute(), Schedule: e.schedule()},
		Microbatches: m,
		Fits:         true,
		TwoBW:        &TwoBWDetail{Execution: e, GradientAccumulation: g},
	}
	t := 0.0
	for _, replicasInner := range []bool{true, false} {
		if s := ev.seconds(d, p, m, e, first, pre, in, replicasInner); t == 0 || s < t {
			t, c.TwoBW.IntraServerAllReduce = s, replicasInner
		}
	}
	c.Predictions = plan.Predictions{BottleneckSeconds: t, SamplesPerSecond: float64(d*b) / t}
	c.Predictions.IterationSeconds = float64(B) / c.Predictions.SamplesPerSecond
	for i := 0; i < p; i++ {
		c.Stages = append(c.Stages, plan.Stage{FirstLayer: first[i], LastLayer: first[i+1] - 1, Replicas: 1})
		mem := ev.memory(p, e, pre[first[i+1]].sub(pre[first[i]]), in[first[i]])
		c.Predictions.StagePeakBytes = append(c.Predictions.StagePeakBytes, mem)
		c.Predictions.PeakBytesPerGPU = math.Max(c.Predictions.PeakBytesPerGPU, mem)
	}
	return c, true
}

// recompute is the activation recomputation of the execution.
func (e TwoBWExecution) recompute() model.Recompute {
	if e == TwoBWPipelinedRecompute {
		return model.RecomputeFull
	}
	return model.RecomputeNone
}

// schedule is the pipeline schedule of the execution: 2BW when pipelined,
// else 1F1B (one microbatch at a time through the stages, gradients
// accumulated).
func (e TwoBWExecution) schedule() schedule.Kind {
	if e == TwoBWNoPipelining {
		return schedule.OneFOneB
	}
	return schedule.TwoBW
}

// sub returns the cost of blocks [j, k) from prefix sums a = pre[k], s = pre[j].
func (a TwoBWBlockCost) sub(s TwoBWBlockCost) TwoBWBlockCost {
	return TwoBWBlockCost{
		ComputeSeconds:  a.ComputeSeconds - s.ComputeSeconds,
		WeightBytes:     a.WeightBytes - s.WeightBytes,
		ActivationBytes: a.ActivationBytes - s.ActivationBytes,
	}
}

// seconds is THROUGHPUT(.)'s t of §3.3.3: per stage i the larger of
// compute (×c_extra with recomputation) plus the stage's activation and
// gradient traffic, and its share 1/m(b,d) of the ring all-reduce of its
// weight gradients, 2(d−1)/d·|W_i| bytes (PipeDream §2.4.1); summed over
// stages without pipelining, the maximum over stages with it.
func (ev *twoBWEvaluator) seconds(d, p, m int, e TwoBWExecution, first []int, pre []TwoBWBlockCost, in []float64, replicasInner bool) float64 {
	bwPipe, bwAR := ev.bandwidths(d, p, replicasInner)
	factor := 1.0
	if e == TwoBWPipelinedRecompute {
		factor = ev.opt.RecomputeFactor
	}
	var sum, worst float64
	for i := 0; i < p; i++ {
		st := pre[first[i+1]].sub(pre[first[i]])
		busy := factor * st.ComputeSeconds
		// T^comm_{j→i} = 2|A(b)|·I(p>1)/bwdth_in-pipeline(p) for each neighbour j.
		if i > 0 {
			busy += 2 * in[first[i]] / bwPipe
		}
		if i < p-1 {
			busy += 2 * in[first[i+1]] / bwPipe
		}
		allReduce := 2 * float64(d-1) / float64(d) * st.WeightBytes / bwAR
		t := math.Max(busy, allReduce/float64(m))
		sum += t
		worst = math.Max(worst, t)
	}
	if e == TwoBWNoPipelining {
		return sum
	}
	return worst
}

// memory is MEMORY(.) of §3.3.3 for one stage with weights W_i, stashed
// activations A_i(b) and input activation A_input: 2W_i + p·A_i + p·A_input
// without recomputation, 2W_i + A_i + p·A_input with it; without
// pipelining one weight version and one stash, W_i + A_i. Gradient and
// optimizer state, when given, adds StateBytesPerWeightByte·W_i.
func (ev *twoBWEvaluator) memory(p int, e TwoBWExecution, st TwoBWBlockCost, input float64) float64 {
	state := ev.opt.StateBytesPerWeightByte * st.WeightBytes
	switch e {
	case TwoBWPipelined:
		return 2*st.WeightBytes + float64(p)*st.ActivationBytes + float64(p)*input + state
	case TwoBWPipelinedRecompute:
		return 2*st.WeightBytes + st.ActivationBytes + float64(p)*input + state
	}
	return st.WeightBytes + st.ActivationBytes + state
}
