package cost

import (
	"fmt"
	"math"
	"sort"
	"sync"

	"pipeplan/core/hw"
)

// EfficiencyPoint is one point of an efficiency curve: an operation of FLOPs
// floating-point operations runs at Efficiency × the GPU's peak.
type EfficiencyPoint struct {
	// FLOPs is the size of one operation (e.g. one GEMM) in FLOPs.
	FLOPs float64 `json:"flops"`
	// Efficiency is the achieved fraction of peak, in (0, 1].
	Efficiency float64 `json:"efficiency"`
}

// EfficiencyCurve maps an operation's size to the fraction of peak FLOP/s it
// achieves, as Calculon's per-processor efficiency tables do: small kernels
// are latency-bound, large GEMMs approach the measured matmul ceiling.
// Between points the efficiency is linear in log10(FLOPs); outside it is
// clamped to the end points. Points must be sorted by FLOPs.
type EfficiencyCurve struct {
	// Points are the curve's knots in increasing FLOPs.
	Points []EfficiencyPoint `json:"points"`
}

// Default curve shape: eff(x) = ceiling · x / (x + x0) with x0 = latency ·
// peak · ceiling, i.e. each operation costs a fixed launch/tail latency plus
// its FLOPs at the ceiling rate. On the A100 the dense GEMMs are besides
// quantized into waves of tiles (waves.go), which favours larger GEMMs in
// steps rather than smoothly, as the Megatron-LM README says of its H100
// weak scaling: "larger GEMMs have higher arithmetic intensity and are
// consequently more efficient to execute". The A100's sustained fraction
// is fitted with the waves on the ten Megatron-LM end-to-end runs of
// dissertation Table 4.1 (TestA100Fit); Table 4.2 and Korthikanti et al.
// 2022 are held out.
const (
	// DefaultKernelLatencySeconds is the fixed per-operation overhead of the
	// default curve.
	DefaultKernelLatencySeconds = 3e-6
	// A100SustainedMatmulFraction is the fraction of the best measured
	// matmul rate that training GEMMs of 1 TFLOP, whole waves of tiles,
	// sustain end to end on A100-SXM4 (other shapes than the benchmark's
	// best, SMs shared with communication kernels, clocks under sustained
	// load). Fitted on dissertation Table 4.1 alone (TestA100Fit: of the
	// shapes tried — latencies of 3, 10 and 20 µs, a rise of 1–8 % per
	// decade of FLOPs on top of the waves — each with its fraction on a
	// 0.0025 grid, the pair with the least mean absolute error), with those
	// 2021 runs costed as they ran: the SC'21 scripts' microbatches,
	// interleaving and data-parallel implementation, fp16 with loss
	// scaling, unfused attention, no asynchronous tensor-parallel backward,
	// unfused gradient accumulation (plan.Execution.UnfusedGradAccumulation),
	// data-parallel rings over every NIC of a server.
	A100SustainedMatmulFraction = 0.825
	// DefaultSustainedMatmulFraction is the same fraction for every other
	// GPU, without waves: 0.75, an earlier A100 fit, with which the
	// held-out H100 rows of testdata/published_runs.json were validated.
	// No H100 run was fitted.
	DefaultSustainedMatmulFraction = 0.75
	// DefaultMatmulCeiling is the measured-matmul fraction of peak assumed for
	// a GPU gpus.json has no measurement for (its README reports 51–87 %).
	DefaultMatmulCeiling = 0.8
)

// sustainedMatmulFraction returns the sustained fraction of the best
// measured matmul rate for gpu: A100SustainedMatmulFraction for the
// A100-SXM4 parts the calibration runs used (DGX A100), else
// DefaultSustainedMatmulFraction.
func sustainedMatmulFraction(gpu hw.GPU) float64 {
	if isFittedA100(gpu) {
		return A100SustainedMatmulFraction
	}
	return DefaultSustainedMatmulFraction
}

// isFittedA100 reports whether gpu is one of the A100-SXM4 parts the
// calibration runs used (DGX A100).
func isFittedA100(gpu hw.GPU) bool {
	return gpu.ID == "nvidia-a100-sxm4-40gb" || gpu.ID == "nvidia-a100-sxm4-80gb"
}

// DefaultEfficiency returns the default curve for gpu at precision p: its
// ceiling is the GPU's sustained fraction (sustainedMatmulFraction) × its measured matmul
// fraction of peak at p (A100 bf16: 271.2/312 = 87 %; H100 fp8:
// 1402.6/1979 = 71 %), or of DefaultMatmulCeiling when gpus.json has no
// measurement; its knee comes from DefaultKernelLatencySeconds. FP8 GEMMs
// sustain the same fraction of their own measured rate as 16-bit ones:
// what FP8 training loses besides is Transformer Engine's casts, costed
// apart (FP8CastBytesPerValue). It errors when the GPU has no peak at p.
func DefaultEfficiency(gpu hw.GPU, p string) (EfficiencyCurve, error) {
	peak, err := gpu.Peak(p)
	if err != nil {
		return EfficiencyCurve{}, err
	}
	measured, ok := gpu.MatmulCeiling(p)
	if !ok {
		measured = DefaultMatmulCeiling
	}
	key := [2]float64{peak, sustainedMatmulFraction(gpu) * measured}
	defaultCurves.Lock()
	defer defaultCurves.Unlock()
	if c, ok := defaultCurves.m[key]; ok {
		return c, nil
	}
	c := SaturatingEfficiency(key[0], key[1], DefaultKernelLatencySeconds)
	if len(defaultCurves.m) < maxCachedCurves {
		defaultCurves.m[key] = c
	}
	return c, nil
}

// maxCachedCurves bounds defaultCurves: custom GPUs from requests each add
// one curve per precision.
const maxCachedCurves = 256

// defaultCurves caches DefaultEfficiency's curves by peak and ceiling (a
// search predicts thousands of configurations on one GPU); callers only
// read a curve's points.
var defaultCurves = struct {
	sync.Mutex
	m map[[2]float64]EfficiencyCurve
}{m: map[[2]float64]EfficiencyCurve{}}

// SaturatingEfficiency samples eff(x) = ceiling · x / (x + x0), x0 = latency ·
// peak · ceiling, at half-decades from 1e6 to 1e16 FLOPs: an operation costs
// latencySeconds plus its FLOPs at ceiling × peakFLOPS.
func SaturatingEfficiency(peakFLOPS, ceiling, latencySeconds float64) EfficiencyCurve {
	x0 := latencySeconds * peakFLOPS * ceiling
	var c EfficiencyCurve
	for e := 6.0; e <= 16; e += 0.5 {
		x := math.Pow(10, e)
		c.Points = append(c.Points, EfficiencyPoint{FLOPs: x, Efficiency: ceiling * x / (x + x0)})
	}
	return c
}

// Validate checks that the curve has points with finite positive sizes in
// strictly increasing order and efficiencies in (0, 1].
func (c EfficiencyCurve) Validate() error {
	if len(c.Points) == 0 {
		return fmt.Errorf("efficiency.points: must have at least one point, got none")
	}
	for i, p := range c.Points {
		if math.IsNaN(p.FLOPs) || math.IsInf(p.FLOPs, 0) || p.FLOPs <= 0 {
			return fmt.Errorf("efficiency.points[%d].flops: must be a finite number > 0, got %v", i, p.FLOPs)
		}
		if i > 0 && p.FLOPs <= c.Points[i-1].FLOPs {
			return fmt.Errorf("efficiency.points[%d].flops: must exceed the previous point's %v, got %v", i, c.Points[i-1].FLOPs, p.FLOPs)
		}
		if math.IsNaN(p.Efficiency) || p.Efficiency <= 0 || p.Efficiency > 1 {
			return fmt.Errorf("efficiency.points[%d].efficiency: must be in (0, 1], got %v", i, p.Efficiency)
		}
	}
	return nil
}

// At returns the efficiency of an operation of flops FLOPs. The curve must be
// valid (see Validate).
func (c EfficiencyCurve) At(flops float64) float64 {
	pts := c.Points
	if flops <= pts[0].FLOPs {
		return pts[0].Efficiency
	}
	if flops >= pts[len(pts)-1].FLOPs {
		return pts[len(pts)-1].Efficiency
	}
	i := sort.Search(len(pts), func(i int) bool { return pts[i].FLOPs >= flops })
	lo, hi := pts[i-1], pts[i]
	f := (math.Log10(flops) - math.Log10(lo.FLOPs)) / (math.Log10(hi.FLOPs) - math.Log10(lo.FLOPs))
	return lo.Efficiency + f*(hi.Efficiency-lo.Efficiency)
}

// Seconds returns the time of one operation of flops FLOPs on a device of
// peakFLOPS: flops / (peak × efficiency(flops)). Zero FLOPs take no time.
func (c EfficiencyCurve) Seconds(flops, peakFLOPS float64) float64 {
	if flops <= 0 {
		return 0
	}
	return flops / (peakFLOPS * c.At(flops))
}

// Measurement is one timed operation used to calibrate a curve.
type Measurement struct {
	// FLOPs is the operation's size.
	FLOPs float64 `json:"flops"`
	// Seconds is its measured time.
	Seconds float64 `json:"seconds"`
}

// Calibrate builds a curve from measured operations on a device of peakFLOPS:
// each distinct size becomes a point at its mean achieved efficiency
// (FLOPs / (Seconds × peak), capped at 1). Errors name the bad measurement.
func Calibrate(ms []Measurement, peakFLOPS float64) (EfficiencyCurve, error) {
	if math.IsNaN(peakFLOPS) || math.IsInf(peakFLOPS, 0) || peakFLOPS <= 0 {
		return EfficiencyCurve{}, fmt.Errorf("peak_flops: must be a finite number > 0, got %v", peakFLOPS)
	}
	sum := map[float64]float64{}
	count := map[float64]int{}
	for i, m := range ms {
		if math.IsNaN(m.FLOPs) || math.IsInf(m.FLOPs, 0) || m.FLOPs <= 0 {
			return EfficiencyCurve{}, fmt.Errorf("measurements[%d].flops: must be a finite number > 0, got %v", i, m.FLOPs)
		}
		if math.IsNaN(m.Seconds) || math.IsInf(m.Seconds, 0) || m.Seconds <= 0 {
			return EfficiencyCurve{}, fmt.Errorf("measurements[%d].seconds: must be a finite number > 0, got %v", i, m.Seconds)
		}
		sum[m.FLOPs] += math.Min(1, m.FLOPs/(m.Seconds*peakFLOPS))
		count[m.FLOPs]++
	}
	if len(sum) == 0 {
		return EfficiencyCurve{}, fmt.Errorf("measurements: need at least one, got none")
	}
	var c EfficiencyCurve
	for x, s := range sum {
		c.Points = append(c.Points, EfficiencyPoint{FLOPs: x, Efficiency: s / float64(count[x])})
	}
	sort.Slice(c.Points, func(i, j int) bool { return c.Points[i].FLOPs < c.Points[j].FLOPs })
	return c, c.Validate()
}
