package cost

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/gpuprofiles"
)

// attentionKernels is testdata/fused_attention_kernels.json: the tables
// the model's fused-attention ratios are derived from.
type attentionKernels struct {
	Tables []struct {
		ID     string `json:"id"`
		Family string `json:"family"`
		Kernel string `json:"kernel"` // plan.Execution.AttentionKernel ("": cuDNN)
		GPU    string `json:"gpu"`
		Rows   []struct {
			Seq float64 `json:"seq"`
			Fwd float64 `json:"fwd_tflops"`
			Bwd float64 `json:"bwd_tflops"`
		} `json:"rows"`
		Source string `json:"source"`
	} `json:"tables"`
}

// loadAttentionKernels reads testdata/fused_attention_kernels.json.
func loadAttentionKernels(t *testing.T) attentionKernels {
	t.Helper()
	data, err := os.ReadFile("testdata/fused_attention_kernels.json")
	if err != nil {
		t.Fatal(err)
	}
	var k attentionKernels
	if err := json.Unmarshal(data, &k); err != nil {
		t.Fatal(err)
	}
	if len(k.Tables) != 3 {
		t.Fatalf("%d tables, want cuDNN's on Hopper and Blackwell and FlashAttention-2's on Hopper", len(k.Tables))
	}
	return k
}

// measuredBF16Matmul returns gpu's measured bf16 matmul FLOP/s as the
// model reads it (DefaultMatmulCeiling of peak where gpus.json has none).
func measuredBF16Matmul(t *testing.T, gpu hw.GPU) float64 {
	t.Helper()
	peak, err := gpu.Peak(hw.PrecisionBF16)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := gpu.MatmulCeiling(hw.PrecisionBF16)
	if !ok {
		m = DefaultMatmulCeiling
	}
	return m * peak
}

// TestFusedAttentionRatios derives every point of hopperFusedAttention,
// hopperFlashAttention2 and blackwellFusedAttention from the stored kernel
// measurements: each
// row's forward and backward TFLOP/s over the measured bf16 matmul rate of
// the family's reference GPU (the H100 SXM's 794.5 TFLOP/s for the H200
// rows, gpus.json having no separate H200 bf16 row; the GB200's own), to
// three decimals. It then checks that FusedAttentionFLOPS reproduces each
// measured row on the GPU it ran on within 1 %.
func TestFusedAttentionRatios(t *testing.T) {
	ref := map[string]string{"hopper": "nvidia-h100-sxm5-80gb", "blackwell": "nvidia-gb200-gpu"}
	tables := map[[2]string][]attentionPoint{
		{"hopper", ""}: hopperFusedAttention, {"hopper", plan.AttentionFlash2}: hopperFlashAttention2, {"blackwell", ""}: blackwellFusedAttention}
	for _, tab := range loadAttentionKernels(t).Tables {
		pts, ok := tables[[2]string{tab.Family, tab.Kernel}]
		if !ok {
			t.Fatalf("%s: unknown family %q", tab.ID, tab.Family)
		}
		if len(pts) != len(tab.Rows) {
			t.Fatalf("%s: %d rows, the model's table has %d points", tab.ID, len(tab.Rows), len(pts))
		}
		refGPU, err := gpuprofiles.ByID(ref[tab.Family])
		if err != nil {
			t.Fatal(err)
		}
		matmul := measuredBF16Matmul(t, refGPU) / 1e12
		gpu, err := gpuprofiles.ByID(tab.GPU)
		if err != nil {
			t.Fatal(err)
		}
		if got := fusedAttentionTable(gpu.ID, tab.Kernel); len(got) == 0 || &got[0] != &pts[0] {
			t.Errorf("%s: %s does not use the %s table", tab.ID, gpu.ID, tab.Family)
		}
		for i, r := range tab.Rows {
			p := pts[i]
			if p.seq != r.Seq || math.Abs(p.fwd-r.Fwd/matmul) > 5e-4 || math.Abs(p.bwd-r.Bwd/matmul) > 5e-4 {
				t.Errorf("%s seq %v: model point {%v %v %v}, measured %.3f and %.3f of %.1f TFLOP/s",
					tab.ID, r.Seq, p.seq, p.fwd, p.bwd, r.Fwd/matmul, r.Bwd/matmul, matmul)
			}
			fwd, bwd, ok := AttentionKernelFLOPS(gpu, r.Seq, tab.Kernel)
			if !ok {
				t.Fatalf("%s: no fused attention rate for %s", tab.ID, gpu.ID)
			}
			if math.Abs(fwd/1e12/r.Fwd-1) > 0.01 || math.Abs(bwd/1e12/r.Bwd-1) > 0.01 {
				t.Errorf("%s seq %v on %s: %.0f and %.0f TFLOP/s, measured %.0f and %.0f",
					tab.ID, r.Seq, gpu.ID, fwd/1e12, bwd/1e12, r.Fwd, r.Bwd)
			}
		}
	}
	// Between points the ratio is linear in log2(seq); outside, clamped.
	f, b := fusedAttentionRatios(hopperFusedAttention, math.Sqrt(4096*8192))
	if math.Abs(f-(0.683+0.721)/2) > 1e-12 || math.Abs(b-(0.558+0.583)/2) > 1e-12 {
		t.Errorf("between 4K and 8K: %v, %v", f, b)
	}
	if f, b := fusedAttentionRatios(hopperFusedAttention, 1024); f != 0.683 || b != 0.558 {
		t.Errorf("below the table: %v, %v", f, b)
	}
	a100, err := gpuprofiles.ByID("nvidia-a100-sxm4-80gb")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := FusedAttentionFLOPS(a100, 8192); ok {
		t.Error("A100: no fused attention measurements stored, want the GEMM curve")
	}
	b200, err := gpuprofiles.ByID("nvidia-b200-sxm")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := AttentionKernelFLOPS(b200, 8192, plan.AttentionFlash2); ok {
		t.Error("B200: no FlashAttention-2 table stored, want the GEMM curve")
	}
}

// TestFusedAttentionCore: Llama 3 8B at 8K on one H100 with flash
// attention costs the attention core at the measured kernels' rates —
// forward 4·s²·h/2 FLOPs at 0.721, backward 2.5× those at 0.583 of the
// measured bf16 matmul rate — where the GEMM curve charged both at its
// ceiling; the rest of the layer is unchanged, and without flash
// attention (the unfused 2021–2022 runs) nothing changes.
func TestFusedAttentionCore(t *testing.T) {
	e := cpEvaluator(t, "llama3-8b", 8192, 1, 1, 8, "", model.RecomputeNone)
	gemm := *e
	gemm.attnFwd, gemm.attnBwd = 0, 0
	flops := 4 * 8192.0 * 8192 * 4096 / 2
	matmul := measuredBF16Matmul(t, e.c.GPU)
	fwd, bwd := flops/(0.721*matmul), 2.5*flops/(0.583*matmul)
	curve := e.wideCurve.Seconds(flops/2, e.wide) * 2 // the scores' and the values' GEMMs
	want := fwd + bwd - 3.5*curve
	if got := e.layerSeconds(0).compute - gemm.layerSeconds(0).compute; math.Abs(got-want) > 1e-6*want {
		t.Errorf("fused attention adds %v s to the layer, want %v s (forward %v, backward %v, GEMM curve %v)", got, want, fwd, bwd, 3.5*curve)
	}
	if got := e.layerSeconds(0).fwd - gemm.layerSeconds(0).fwd; math.Abs(got-(fwd-curve)) > 1e-6*fwd {
		t.Errorf("forward: %v s more, want %v s", got, fwd-curve)
	}
	unfused := *e
	unfused.cfg.FlashAttention = false
	unfusedGEMM := gemm
	unfusedGEMM.cfg.FlashAttention = false
	if a, b := unfused.layerSeconds(0), unfusedGEMM.layerSeconds(0); a != b {
		t.Errorf("unfused attention: %+v, want %+v", a, b)
	}
}
