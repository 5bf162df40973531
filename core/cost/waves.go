package cost

import (
	"math"

	"pipeplan/core/hw"
	"pipeplan/core/model"
)

// Wave quantization. A GEMM's output is cut into tiles, one thread block
// each, and the GPU runs one wave of tiles at a time, one tile per
// streaming multiprocessor: a GEMM of 1.1 waves takes as long as one of 2,
// and a partial tile at an edge costs a whole one. NVIDIA's Matrix
// Multiplication Background User's Guide (DU-09799-001, February 2023,
// §3.1–3.2) describes both with the A100's numbers: "An NVIDIA A100 GPU
// has 108 SMs; in the particular case of 256x128 thread block tiles, it can
// execute one thread block per SM, leading to a wave size of 108 tiles".
// The model takes that tile, in whichever orientation wastes less, for
// every dense linear GEMM and the output layer on the A100 (A100SMs): the
// forward product (tokens × N), the input gradient (tokens × K) and the
// weight gradient (K × N). Their mean slowdown multiplies the forward's
// time, so the backward's two products, costed as twice the forward, get
// the sum of theirs. The routed experts (grouped GEMMs, one schedule of
// tiles over all local experts), the attention core and the router are
// left to the curve. They apply with a measured curve too
// (Options.Efficiency, from the runner's square calibration GEMMs): an
// n × n GEMM of n ≥ 8192 loses under 1 % to its waves, so its rate is
// close to a whole-wave rate; smaller ones' losses would count twice.
//
// Only on the A100: its curve was fitted with it (TestA100Fit) on Table
// 4.1 as the SC'21 scripts ran it, and Table 4.2 and Korthikanti et al.
// 2022 Table 5, held out, moved closer (the package doc). Hopper's cuBLAS
// runs other tiles and persistent kernels, and the H100's sustained
// fraction was validated without it; on the H100 rows with 132 SMs and the
// same tile the asserted dense comparison moved from a mean of +0.7 to
// −1.9 % at the same fraction, mean absolute error 3.7 → 3.9 %, and
// re-centred (0.77) its spread stayed where it was (standard deviation
// 4.40 → 4.39 %): the waves explain none of the H100 rows' scatter
// (checked 2026-11-29, not adopted).

// A100SMs is the A100's number of streaming multiprocessors, the size of
// one wave of 256×128 tiles (NVIDIA A100 Tensor Core GPU Architecture
// whitepaper; the Matrix Multiplication Background User's Guide, §3.2).
const A100SMs = 108

// waveTile is the thread-block tile of the wave model, rows × columns of
// the output.
var waveTile = [2]float64{256, 128}

// waveEfficiency returns the share of a GEMM's waves of tiles that does
// useful work, for an output of rows × cols on a GPU of sms
// multiprocessors: partial tiles and the last, partial wave count whole.
// Of the tile's two orientations, the better. An output of at most one
// wave of tiles is 1: for so small a product cuBLAS picks smaller tiles or
// splits the reduction to occupy the GPU, and the curve's latency costs
// it.
func waveEfficiency(rows, cols, sms float64) float64 {
	best := 0.0
	for _, t := range [2][2]float64{waveTile, {waveTile[1], waveTile[0]}} {
		tiles := math.Ceil(rows/t[0]) * math.Ceil(cols/t[1])
		if tiles <= sms {
			return 1
		}
		waves := math.Ceil(tiles / sms)
		best = math.Max(best, rows*cols/(waves*sms*t[0]*t[1]))
	}
	return best
}

// waveSlowdown returns the factor wave quantization multiplies a linear
// product's forward time by on a GPU of sms multiprocessors: the mean of
// 1/waveEfficiency over its forward, input-gradient and weight-gradient
// outputs. An empty shape is not slowed.
func waveSlowdown(s model.Shape, sms float64) float64 {
	if s.Rows <= 0 || s.K <= 0 || s.N <= 0 {
		return 1
	}
	return (1/waveEfficiency(s.Rows, s.N, sms) + 1/waveEfficiency(s.Rows, s.K, sms) + 1/waveEfficiency(s.K, s.N, sms)) / 3
}

// gemmWaveSlowdown returns waveSlowdown of a dense linear GEMM of shapes
// (model.GEMM.Shapes) as one GPU runs it: its tokens split over the
// context-parallel ranks, its output features over the tensor-parallel
// ones where the layer is column-parallel and its input features where it
// is row-parallel; a low-rank pair's two products weighted by their FLOPs.
// 1 where the GPU has no wave model.
func (e *evaluator) gemmWaveSlowdown(shapes [2]model.Shape, column bool) float64 {
	if e.waveSMs == 0 {
		return 1
	}
	var sum, flops float64
	for _, s := range shapes {
		s.Rows /= float64(e.cfg.CP)
		if column {
			s.N /= float64(e.cfg.TP)
		} else {
			s.K /= float64(e.cfg.TP)
		}
		f := s.Rows * s.K * s.N
		sum += f * waveSlowdown(s, e.waveSMs)
		flops += f
	}
	if flops == 0 {
		return 1
	}
	return sum / flops
}

// waveSMs returns the multiprocessors of gpu where the model quantizes its
// GEMMs into waves (A100SMs on the A100-SXM4 parts the curve was fitted
// for), else 0.
func waveSMs(gpu hw.GPU) float64 {
	if isFittedA100(gpu) {
		return A100SMs
	}
	return 0
}
