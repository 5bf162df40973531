package cost

import (
	"math"
	"sort"

	"pipeplan/core/hw"
	"pipeplan/core/plan"
)

// attentionPoint is one measured causal bf16 fused-attention kernel: at a
// sequence length, its forward and backward FLOP/s (4·b·s²·heads·head_dim/2
// forward, 2.5× that backward) over the measured bf16 matmul rate of the
// GPU it ran on (hw.GPU.MeasuredMatmulFLOPS).
type attentionPoint struct {
	seq      float64
	fwd, bwd float64
}

// hopperFusedAttention and blackwellFusedAttention are the kernel
// measurements of testdata/fused_attention_kernels.json as ratios to the
// measuring GPU's matmul rate (TestFusedAttentionRatios derives them):
// cuDNN 9.1 on an H200 (16 heads, 16K tokens a kernel) and cuDNN 9.18 on a
// GB200 (batch 1, 64 query and 8 K/V heads), both head_dim 128.
var (
	hopperFusedAttention = []attentionPoint{
		{4096, 0.683, 0.558},
		{8192, 0.721, 0.583},
		{16384, 0.739, 0.626},
		{32768, 0.727, 0.629},
		{65536, 0.714, 0.634},
	}
	// hopperFlashAttention2 is FlashAttention-2 (PyTorch's SDPA flash
	// backend) measured beside hopperFusedAttention in the same run; the
	// 2024 H100 tables ran at about these rates (plan.AttentionFlash2;
	// package doc, "Long sequences").
	hopperFlashAttention2 = []attentionPoint{
		{4096, 0.395, 0.313},
		{8192, 0.409, 0.349},
		{16384, 0.409, 0.384},
		{32768, 0.435, 0.399},
		{65536, 0.431, 0.407},
	}
	blackwellFusedAttention = []attentionPoint{
		{2048, 0.561, 0.452},
		{4096, 0.712, 0.606},
		{8192, 0.858, 0.702},
		{16384, 0.903, 0.752},
		{32768, 0.925, 0.791},
	}
)

// fusedAttentionTable returns the kernel measurements that stand for a GPU's
// fused attention with the kernels plan.Execution.AttentionKernel names:
// cuDNN's, Hopper's for the H100, H200 and H800 and Blackwell's for the B200 and
// GB200; FlashAttention-2's, Hopper's only; nil for a GPU without such
// measurements.
func fusedAttentionTable(gpuID, kernel string) []attentionPoint {
	hopper, blackwell := hopperFusedAttention, blackwellFusedAttention
	if kernel == plan.AttentionFlash2 {
		hopper, blackwell = hopperFlashAttention2, nil
	}
	switch gpuID {
	case "nvidia-h100-sxm5-80gb", "nvidia-h100-pcie-80gb", "nvidia-h200-sxm-141gb", "nvidia-h800-sxm5-80gb":
		return hopper
	case "nvidia-b200-sxm", "nvidia-gb200-gpu":
		return blackwell
	}
	return nil
}

// fusedAttentionRatios returns the forward and backward rate of causal
// fused-attention kernels over sequences of seq tokens, as a fraction of
// the measuring GPU's bf16 matmul rate: the table's ratios, linear in
// log2(seq) between its points and clamped to its ends.
func fusedAttentionRatios(pts []attentionPoint, seq float64) (fwd, bwd float64) {
	if seq <= pts[0].seq {
		return pts[0].fwd, pts[0].bwd
	}
	last := pts[len(pts)-1]
	if seq >= last.seq {
		return last.fwd, last.bwd
	}
	i := sort.Search(len(pts), func(i int) bool { return pts[i].seq >= seq })
	lo, hi := pts[i-1], pts[i]
	f := (math.Log2(seq) - math.Log2(lo.seq)) / (math.Log2(hi.seq) - math.Log2(lo.seq))
	return lo.fwd + f*(hi.fwd-lo.fwd), lo.bwd + f*(hi.bwd-lo.bwd)
}

// FusedAttentionFLOPS returns the forward and backward FLOP/s of the fused
// (flash) attention core on gpu for cuDNN's kernels over seq tokens
// (AttentionKernelFLOPS with the default kernels).
func FusedAttentionFLOPS(gpu hw.GPU, seq float64) (fwd, bwd float64, ok bool) {
	return AttentionKernelFLOPS(gpu, seq, "")
}

// AttentionKernelFLOPS returns the forward and backward FLOP/s of the fused
// (flash) attention core on gpu for kernels over seq tokens, of the kind
// plan.Execution.AttentionKernel names ("" cuDNN's): the measured
// kernels' fraction of their GPU's bf16 matmul rate (fusedAttentionRatios)
// times this GPU's measured bf16 matmul rate (hw.GPU.MatmulCeiling × peak,
// DefaultMatmulCeiling where gpus.json has none). Both rates are kernels
// measured alone, so no sustained fraction is applied: that fraction
// (sustainedMatmulFraction) stands for what training GEMMs lose against
// the best GEMM of a shape sweep, where the attention kernels were
// measured at training shapes. ok is false for a GPU without attention
// measurements of that kind, whose attention core is costed at the GEMM
// curve (FlashAttention-2 is measured on Hopper only).
func AttentionKernelFLOPS(gpu hw.GPU, seq float64, kernel string) (fwd, bwd float64, ok bool) {
	pts := fusedAttentionTable(gpu.ID, kernel)
	if pts == nil {
		return 0, 0, false
	}
	peak, err := gpu.Peak(hw.PrecisionBF16)
	if err != nil {
		return 0, 0, false
	}
	measured, has := gpu.MatmulCeiling(hw.PrecisionBF16)
	if !has {
		measured = DefaultMatmulCeiling
	}
	rf, rb := fusedAttentionRatios(pts, seq)
	return rf * measured * peak, rb * measured * peak, true
}
