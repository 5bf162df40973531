package model

import (
	"math"
	"strings"
	"testing"
)

// llama405b is Llama 3.1 405B (its Hugging Face config.json) at s = 8192.
var llama405b = Transformer{Layers: 126, Hidden: 16384, Heads: 128, KVHeads: 8, Seq: 8192, Vocab: 128256, FFN: 53248,
	GatedFFN: true, UntiedEmbeddings: true, PositionEmbedding: PositionNone, Norm: NormRMS, Bias: BiasNone}

// mixtral8x7b is Mixtral 8x7B at s = 4096.
var mixtral8x7b = Transformer{Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, Seq: 4096, Vocab: 32000, FFN: 14336,
	GatedFFN: true, UntiedEmbeddings: true, PositionEmbedding: PositionNone, Norm: NormRMS, Bias: BiasNone,
	MoE: &MoE{Experts: 8, TopK: 2}}

// megatronFLOPs evaluates Megatron-LM's num_floating_point_operations
// (megatron/training/training.py, 2024) literally: 12·B·s·l·h²·((1 + kv/a +
// s/h)·(a·d/h) + (f/h)·k·g + (f_s/h)·g + V/(2lh)), with shared experts of
// size f_s and, for MoE models, every layer a MoE layer.
func megatronFLOPs(t Transformer, B int) float64 {
	l, h, s, V := float64(t.Layers), float64(t.Hidden), float64(t.Seq), float64(t.Vocab)
	a, kv, d := float64(t.Heads), float64(t.KVHeadCount()), float64(t.HeadSize())
	f, k, g, fs := float64(t.FFNSize()), 1.0, 1.0, 0.0
	if t.GatedFFN {
		g = 1.5
	}
	if t.MoE != nil {
		f, k = float64(t.ExpertFFN()), float64(t.MoE.TopK)
		fs = float64(t.MoE.SharedExperts) * f
	}
	return 12 * float64(B) * s * l * h * h * ((1+kv/a+s/h)*(a*d/h) + (f/h)*k*g + (fs/h)*g + V/(2*l*h))
}

// TestModelFLOPsMegatron checks the model FLOPs (no recomputation) against
// Megatron-LM's formula for GPT, GQA + SwiGLU (Llama 3 405B) and MoE
// (Mixtral 8x7B, and with a shared expert).
func TestModelFLOPsMegatron(t *testing.T) {
	shared := mixtral8x7b
	shared.MoE = &MoE{Experts: 64, TopK: 6, FFN: 1408, SharedExperts: 2}
	for _, tr := range []Transformer{gpt(96, 12288, 96), llama405b, mixtral8x7b, shared} {
		got, want := tr.IterationFLOPs(512, RecomputeNone), megatronFLOPs(tr, 512)
		if math.Abs(got-want) > 1e-12*want {
			t.Errorf("l=%d h=%d: %g model FLOPs, Megatron's formula gives %g", tr.Layers, tr.Hidden, got, want)
		}
	}
}

// TestMTPFLOPsMegatron checks the model FLOPs with multi-token prediction
// against Megatron-LM's transformer_flops (megatron/training/training.py,
// commit 001b00c2734d8f0fad096fe48a382fedf755d321): each MTP layer counts
// as a layer of the decoder's last layer's kind, plus 3·2·(3h + 2h²) per
// token for its norms and projection, and the logits term is multiplied by
// 1 + mtp_num_layers. The model leaves out the norms' 3h (FLOPs Megatron
// counts and no GEMM runs), under 1e-5 of the total here.
func TestMTPFLOPsMegatron(t *testing.T) {
	for _, c := range []struct {
		tr  Transformer
		mtp int
	}{{llama405b, 2}, {mixtral8x7b, 1}} {
		tr := c.tr
		tr.MTPLayers = c.mtp
		deeper := c.tr
		deeper.Layers += c.mtp // the MTP layers as more layers of the last kind
		h, tokens, V := float64(tr.Hidden), 512*float64(tr.Seq), float64(tr.Vocab)
		want := megatronFLOPs(deeper, 512) + 6*tokens*float64(c.mtp)*(3*h+2*h*h)
		// megatronFLOPs(deeper) counts the logits once, over the deeper model's l:
		// its V/(2lh) term is l-independent in total, so add the MTP passes.
		want += 6 * tokens * h * V * float64(c.mtp)
		if got := tr.IterationFLOPs(512, RecomputeNone); math.Abs(got-want) > 1e-5*want {
			t.Errorf("l=%d h=%d with %d MTP layers: %g model FLOPs, Megatron's formula gives %g", tr.Layers, tr.Hidden, c.mtp, got, want)
		}
		if got, without := tr.IterationFLOPs(512, RecomputeFull), c.tr.IterationFLOPs(512, RecomputeFull); !(got > without) {
			t.Errorf("%d MTP layers: %g FLOPs with full recomputation, not above the model's %g without them", c.mtp, got, without)
		}
	}
}

// TestMoEActiveParams checks that a MoE model's active parameters count
// only topk of its experts and that the FLOPs follow the active ones: per
// token, 6·(active non-embedding parameters) plus the attention core and
// the logits (biases and norms aside, none here).
func TestMoEActiveParams(t *testing.T) {
	tr := mixtral8x7b
	expert := 3 * 4096.0 * 14336
	if d := tr.Params() - tr.ActiveParams(); math.Abs(d-32*6*expert) > 1 {
		t.Errorf("total − active = %g, want 32 layers × 6 idle experts × %g", d, expert)
	}
	tokens := 512 * float64(tr.Seq)
	core := 12 * tokens * float64(tr.Seq) * 4096 * 32
	perLayerActive := tr.ActiveLayerParamsAt(0) - 2*4096 - 4096*8 // norms and router do no GEMM work
	want := 6*tokens*perLayerActive*32 + core + 6*tokens*4096*32000
	if got := tr.IterationFLOPs(512, RecomputeNone); math.Abs(got-want) > 1e-9*want {
		t.Errorf("MoE FLOPs %g, want 6·N_active·tokens + attention + logits = %g", got, want)
	}
}

// TestFirstDenseLayers checks DeepSeek-style leading dense layers.
func TestFirstDenseLayers(t *testing.T) {
	tr := mixtral8x7b
	tr.MoE = &MoE{Experts: 8, TopK: 2, FirstDense: 2}
	if tr.IsMoELayer(1) || !tr.IsMoELayer(2) || tr.MoELayers() != 30 {
		t.Errorf("first_dense 2: layer 1 MoE %v, layer 2 MoE %v, %d MoE layers", tr.IsMoELayer(1), tr.IsMoELayer(2), tr.MoELayers())
	}
	if tr.LayerParamsAt(0) != tr.LayerParams() {
		t.Errorf("dense layer 0 has %g parameters, want LayerParams %g", tr.LayerParamsAt(0), tr.LayerParams())
	}
}

// TestFlashAttentionMemory checks that flash attention drops the s² term.
func TestFlashAttentionMemory(t *testing.T) {
	tr := llama405b
	o := ActivationOptions{TP: 8, SequenceParallel: true}
	sel := o
	sel.Recompute = RecomputeSelective
	fa := o
	fa.FlashAttention = true
	none, s, f := tr.LayerActivationBytes(1, o), tr.LayerActivationBytes(1, sel), tr.LayerActivationBytes(1, fa)
	if !(f < none) || f-s != 4*128*8192/8 {
		t.Errorf("flash attention keeps %g bytes, selective %g, none %g: want selective + the softmax statistics", f, s, none)
	}
	cp := fa
	cp.CP = 2
	if got := tr.LayerActivationBytes(1, cp); math.Abs(got-f/2) > 1e-9*f {
		t.Errorf("cp=2 keeps %g bytes, want half of %g", got, f)
	}
}

// TestUnfusedAttentionScoresMemory checks the s×s scores an unfused
// attention core stores per layer (what selective recomputation drops):
// the softmax output, dropout mask and dropout output, 5 bytes per score
// in 16-bit (Korthikanti et al. 2022, eq. 1's 5as/h term); without
// dropout (Llama 3) only the softmax output, 2 bytes.
func TestUnfusedAttentionScoresMemory(t *testing.T) {
	o := ActivationOptions{TP: 8, SequenceParallel: true}
	sel := o
	sel.Recompute = RecomputeSelective
	noDropout := llama405b
	noDropout.NoDropout = true
	for _, tc := range []struct {
		name     string
		tr       Transformer
		perScore float64
	}{
		{"GPT, dropout", Transformer{Layers: 48, Hidden: 6144, Heads: 64, Seq: 2048, Vocab: 51200}, 5},
		{"Llama 3 405B, no dropout", noDropout, 2},
	} {
		scores := float64(tc.tr.Heads) * float64(tc.tr.Seq) * float64(tc.tr.Seq) / 8
		if got := tc.tr.LayerActivationBytes(1, o) - tc.tr.LayerActivationBytes(1, sel); math.Abs(got-tc.perScore*scores) > 1e-9*got {
			t.Errorf("%s: the attention core stores %.4g bytes, want %.0f per score (%.4g)", tc.name, got, tc.perScore, tc.perScore*scores)
		}
	}
}

// TestParseHFConfigErrors checks that bad configs name the key.
func TestParseHFConfigErrors(t *testing.T) {
	for _, c := range []struct{ json, want string }{
		{`{"model_type": "gpt2"}`, "model_type"},
		{`{"model_type": "llama", "num_hidden_layers": 0}`, "num_hidden_layers"},
		{`{"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 3, "vocab_size": 10, "max_position_embeddings": 8}`, "kv_heads"},
		{`{"model_type": "mixtral", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "max_position_embeddings": 8, "num_local_experts": 8, "num_experts_per_tok": 9}`, "moe.topk"},
		{`{"model_type": "deepseek_v3", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "max_position_embeddings": 8, "kv_lora_rank": 8, "v_head_dim": 16, "qk_nope_head_dim": 16, "num_nextn_predict_layers": -1}`, "num_nextn_predict_layers"},
		{`{"model_type": "deepseek_v3", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "max_position_embeddings": 8, "kv_lora_rank": 8, "v_head_dim": 16, "qk_nope_head_dim": 16, "num_nextn_predict_layers": 3}`, "num_nextn_predict_layers"},
		{`{"model_type": "deepseek_v3", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "max_position_embeddings": 8, "kv_lora_rank": 8, "v_head_dim": 16, "qk_nope_head_dim": 16, "n_routed_experts": 8, "num_experts_per_tok": 4, "n_group": 4, "topk_group": 1}`, "moe.group_topk"},
		{`{"model_type": "deepseek_v3", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "max_position_embeddings": 8, "kv_lora_rank": 8, "v_head_dim": 16, "qk_nope_head_dim": 16, "n_routed_experts": 8, "num_experts_per_tok": 2, "n_group": 3, "topk_group": 1}`, "moe.groups"},
		{`[`, "hf config"},
	} {
		if _, err := ParseHFConfig([]byte(c.json)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error naming %s", c.json, err, c.want)
		}
	}
}

// FuzzParseHFConfig checks that any input parses to a valid transformer or
// an error, never a panic.
func FuzzParseHFConfig(f *testing.F) {
	f.Add([]byte(`{"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "max_position_embeddings": 8}`))
	f.Add([]byte(`{"model_type": "deepseek_v3", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "max_position_embeddings": 8, "kv_lora_rank": 8, "v_head_dim": 4, "qk_nope_head_dim": 4, "n_routed_experts": 4, "num_experts_per_tok": 2}`))
	f.Add([]byte(`{"model_type": "deepseek_v3", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "max_position_embeddings": 8, "kv_lora_rank": 8, "v_head_dim": 4, "qk_nope_head_dim": 4, "n_routed_experts": 4, "num_experts_per_tok": 2, "num_nextn_predict_layers": 1}`))
	f.Add([]byte(`{"model_type": "glm4_moe", "num_hidden_layers": 3, "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32, "vocab_size": 10, "max_position_embeddings": 8, "attention_bias": true, "n_routed_experts": 4, "num_experts_per_tok": 2, "first_k_dense_replace": 1, "num_nextn_predict_layers": 1}`))
	f.Add([]byte(`{"model_type": "deepseek_v3", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "max_position_embeddings": 8, "kv_lora_rank": 8, "v_head_dim": 4, "qk_nope_head_dim": 4, "n_routed_experts": 8, "num_experts_per_tok": 2, "n_group": 4, "topk_group": 2}`))
	f.Add([]byte(`{"model_type": "kimi_k2", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "max_position_embeddings": 8, "kv_lora_rank": 8, "v_head_dim": 4, "qk_nope_head_dim": 4, "n_routed_experts": 6, "num_experts_per_tok": 2, "first_k_dense_replace": 1}`))
	f.Add([]byte(`{"model_type": "gpt_oss", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "max_position_embeddings": 8, "num_local_experts": 4, "num_experts_per_tok": 2, "sliding_window": 4, "layer_types": ["sliding_attention", "full_attention"]}`))
	f.Add([]byte(`{"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "max_position_embeddings": 8, "rope_theta": 500000.0, "rms_norm_eps": 1e-05, "rope_scaling": {"factor": 8.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"}}`))
	f.Add([]byte(`{"model_type": "qwen3", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "max_position_embeddings": 8, "rope_parameters": {"rope_type": "yarn", "rope_theta": 1e6, "factor": 4, "partial_rotary_factor": 0.5}}`))
	f.Add([]byte(llama4Maverick))
	f.Add([]byte(`{"model_type": "llama4", "text_config": {"num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "max_position_embeddings": 8, "num_local_experts": 4, "num_experts_per_tok": 1, "interleave_moe_layer_step": 2, "moe_layers": [1, 3], "attention_chunk_size": 4, "layer_types": ["chunked_attention", "chunked_attention", "chunked_attention", "full_attention"]}}`))
	f.Add([]byte(`{"model_type": "qwen3_moe", "num_hidden_layers": 8, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "max_position_embeddings": 8, "num_experts": 4, "num_experts_per_tok": 2, "decoder_sparse_step": 2, "mlp_only_layers": [0, 1]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ParseHFConfig(data)
		if err == nil {
			if err := tr.Validate(); err != nil {
				t.Fatalf("parsed an invalid transformer: %v", err)
			}
			_ = tr.IterationFLOPs(1, RecomputeSelective) + tr.ActiveParams() + tr.MTPParams()
		}
	})
}

// TestLlama405BLayerStash recounts, tensor by tensor, what Megatron-Core
// with Transformer Engine stashes for one Llama 3 405B layer (bf16, RMSNorm
// fused into the following GEMM, flash attention, sequence parallelism over
// t = 8, no dropout), per token: both norm inputs and outputs, sharded by
// t with sequence parallelism (4·2h); Q, K, V after RoPE and the attention
// output, which is also the projection's input (2·(2q + 2kv)), split by t;
// the flash-attention log-sum-exp (4 bytes per head); the SwiGLU's two FC1
// outputs of size f and FC2's input (3·2f), split by t.
func TestLlama405BLayerStash(t *testing.T) {
	tr := Transformer{Layers: 126, Hidden: 16384, Heads: 128, KVHeads: 8, FFN: 53248, GatedFFN: true, Seq: 8192, Vocab: 128256, NoDropout: true, Norm: NormRMS}
	h, q, kv, f, a, tp := 16384.0, 16384.0, 1024.0, 53248.0, 128.0, 8.0
	want := 8192 * (4*2*h/tp + 2*(2*q+2*kv)/tp + 4*a/tp + 3*2*f/tp)
	got := tr.LayerActivationBytesAt(1, 0, ActivationOptions{TP: 8, SequenceParallel: true, FlashAttention: true, Recompute: RecomputeNone})
	if math.Abs(got-want) > 1e-9*want {
		t.Errorf("one layer stashes %.4g bytes, the tensor list gives %.4g", got, want)
	}
}

// TestGEMMOperands checks each linear GEMM's shapes against its FLOPs and
// its operand counts against the tokens: a product of r rows, k inputs and
// n outputs has 2·r·k·n FLOPs, r·k input and r·n output values; each
// product runs the microbatch's b·s tokens (the routed experts, topk·b·s
// spread evenly over them; the shared experts as one MLP of their summed
// width); the attention core has no shape.
func TestGEMMOperands(t *testing.T) {
	shared := mixtral8x7b
	shared.MoE = &MoE{Experts: 64, TopK: 6, FFN: 1408, SharedExperts: 2}
	for _, tr := range []Transformer{gpt(96, 12288, 96), llama405b, mixtral8x7b, shared, deepseekLike} {
		tok := 2 * float64(tr.Seq)
		for _, g := range tr.ForwardGEMMs(2, tr.Layers-1) {
			if g.Attention {
				if g.Shapes != [2]Shape{} {
					t.Errorf("%s: attention core with shapes %v", g.Name, g.Shapes)
				}
				continue
			}
			var flops, in, out float64
			for _, sh := range g.Shapes {
				flops += 2 * sh.Rows * sh.K * sh.N * float64(g.Instances)
				in += sh.K
				out += sh.N
			}
			rows := tok
			if g.Expert {
				rows = float64(tr.MoE.TopK) * tok
			}
			if math.Abs(g.FLOPs-flops) > 1e-9*flops {
				t.Errorf("l=%d %s: %g FLOPs, shapes give %g", tr.Layers, g.Name, g.FLOPs, flops)
			}
			if g.Inputs() != rows*in || g.Outputs() != rows*out {
				t.Errorf("l=%d %s: operands %g, %g; want %g, %g", tr.Layers, g.Name, g.Inputs(), g.Outputs(), rows*in, rows*out)
			}
		}
	}
}

// TestAttentionSpanBruteForce counts, pair by pair, the query-key pairs a
// causal layer attends to with and without a sliding window (a query at
// position i sees keys max(0, i−w+1) to i) and checks AttentionSpan, the
// windowed layers' share averaged over all layers, and that the attention
// core's FLOPs shrink by it while the rest of the layer does not.
func TestAttentionSpanBruteForce(t *testing.T) {
	for _, c := range []struct{ s, w, windowed, layers int }{{16, 4, 1, 2}, {37, 5, 3, 4}, {64, 64, 2, 2}, {64, 100, 1, 1}, {50, 1, 5, 5}} {
		var full, win int
		for i := range c.s {
			full += i + 1
			win += i - max(0, i-c.w+1) + 1
		}
		want := 1 - float64(c.windowed)/float64(c.layers)*(1-float64(win)/float64(full))
		tr := gpt(c.layers, 64, 4)
		tr.Seq, tr.SlidingWindow, tr.SlidingLayers = c.s, c.w, c.windowed
		if err := tr.Validate(); err != nil {
			t.Fatal(err)
		}
		if got := tr.AttentionSpan(); math.Abs(got-want) > 1e-12 {
			t.Errorf("s=%d w=%d, %d of %d layers windowed: span %v, counted %v", c.s, c.w, c.windowed, c.layers, got, want)
		}
		plain := tr
		plain.SlidingWindow, plain.SlidingLayers = 0, 0
		core, plainCore := tr.LayerAttentionCoreFwdFLOPs(2, 0), plain.LayerAttentionCoreFwdFLOPs(2, 0)
		rest, plainRest := tr.LayerFwdFLOPs(2, 0)-core, plain.LayerFwdFLOPs(2, 0)-plainCore
		if math.Abs(core-want*plainCore) > 1e-9*plainCore || math.Abs(rest-plainRest) > 1e-9*plainRest {
			t.Errorf("s=%d w=%d: core %g of %g, the rest %g of %g", c.s, c.w, core, plainCore, rest, plainRest)
		}
	}
	bad := gpt(4, 64, 4)
	bad.SlidingWindow = 128
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "sliding_layers") {
		t.Errorf("a window without windowed layers: %v, want an error naming sliding_layers", err)
	}
}

// TestParseHFConfigQKNorm: Qwen3's layers always normalize the query and
// key, GLM-4.5's when use_qk_norm says so, Llama's never; the norms add
// two of head_dim per layer to the attention.
func TestParseHFConfigQKNorm(t *testing.T) {
	const dims = `"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "head_dim": 32, "vocab_size": 10, "max_position_embeddings": 8`
	for _, c := range []struct {
		json string
		want bool
	}{
		{`{"model_type": "qwen3", ` + dims + `}`, true},
		{`{"model_type": "glm4_moe", ` + dims + `, "use_qk_norm": true}`, true},
		{`{"model_type": "glm4_moe", ` + dims + `, "use_qk_norm": false}`, false},
		{`{"model_type": "llama", ` + dims + `}`, false},
	} {
		tr, err := ParseHFConfig([]byte(c.json))
		if err != nil {
			t.Fatal(err)
		}
		plain := tr
		plain.QKNorm = false
		if tr.QKNorm != c.want || tr.AttentionParams()-plain.AttentionParams() != map[bool]float64{true: 64, false: 0}[c.want] {
			t.Errorf("%s: qk norm %v, attention %v against %v without", c.json, tr.QKNorm, tr.AttentionParams(), plain.AttentionParams())
		}
	}
}

// TestParseHFConfigSlidingWindow: GPT-OSS's layer_types name its windowed
// layers (half of them, with every linear layer biased and attention
// sinks); Mistral's sliding_window windows every layer, null none; Qwen's
// windows the layers past max_window_layers only with use_sliding_window,
// so Qwen2.5's unused sliding_window 131072 windows nothing.
func TestParseHFConfigSlidingWindow(t *testing.T) {
	const dims = `"num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "max_position_embeddings": 8`
	for _, c := range []struct {
		json           string
		window, layers int
	}{
		{`{"model_type": "gpt_oss", ` + dims + `, "sliding_window": 128, "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"]}`, 128, 2},
		{`{"model_type": "mistral", ` + dims + `, "sliding_window": 4096}`, 4096, 4},
		{`{"model_type": "mistral", ` + dims + `, "sliding_window": null}`, 0, 0},
		{`{"model_type": "qwen2", ` + dims + `, "sliding_window": 131072, "use_sliding_window": false, "max_window_layers": 1}`, 0, 0},
		{`{"model_type": "qwen2", ` + dims + `, "sliding_window": 32, "use_sliding_window": true, "max_window_layers": 1}`, 32, 3},
		{`{"model_type": "qwen3", ` + dims + `, "layer_types": ["full_attention", "full_attention", "full_attention", "full_attention"]}`, 0, 0},
	} {
		tr, err := ParseHFConfig([]byte(c.json))
		if err != nil {
			t.Fatalf("%s: %v", c.json, err)
		}
		if tr.SlidingWindow != c.window || tr.SlidingLayers != c.layers {
			t.Errorf("%s: window %d on %d layers, want %d on %d", c.json, tr.SlidingWindow, tr.SlidingLayers, c.window, c.layers)
		}
		if oss := strings.Contains(c.json, "gpt_oss"); oss != (tr.AttentionSinks && tr.Bias == BiasAll) {
			t.Errorf("%s: sinks %v, bias %q", c.json, tr.AttentionSinks, tr.Bias)
		}
	}
	for _, c := range []struct{ json, want string }{
		{`{"model_type": "gpt_oss", ` + dims + `, "sliding_window": 128, "layer_types": ["sliding_attention"]}`, "layer_types"},
		{`{"model_type": "gpt_oss", ` + dims + `, "sliding_window": 128, "layer_types": ["sliding_attention", "local", "full_attention", "full_attention"]}`, "layer_types[1]"},
		{`{"model_type": "gpt_oss", ` + dims + `, "layer_types": ["sliding_attention", "full_attention", "full_attention", "full_attention"]}`, "sliding_window"},
	} {
		if _, err := ParseHFConfig([]byte(c.json)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %s", c.json, err, c.want)
		}
	}
}

// TestParseHFConfigNumerics: the rotary base, rotating share, scaling and
// norm epsilon come from the keys transformers writes — at the top before
// v5 (the scaling's type as rope_type, or type in older configs such as
// DeepSeek-V3's), in rope_parameters since — and cost nothing; a scaling
// type that could not go into a launch script's comment is an error
// naming the key.
func TestParseHFConfigNumerics(t *testing.T) {
	const dims = `"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "max_position_embeddings": 8`
	for _, c := range []struct {
		json string
		want Numerics
	}{
		{`{"model_type": "llama", ` + dims + `}`, Numerics{}},
		{`{"model_type": "llama", ` + dims + `, "rope_theta": 500000.0, "rms_norm_eps": 1e-05, "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"}}`,
			Numerics{RotaryBase: 500000, NormEpsilon: 1e-5, RopeScaling: RopeScaling{Type: RopeLlama3, Factor: 8, OriginalMaxPositions: 8192, LowFreqFactor: 1, HighFreqFactor: 4}}},
		{`{"model_type": "deepseek_v3", ` + dims + `, "kv_lora_rank": 8, "v_head_dim": 16, "qk_nope_head_dim": 16, "rope_theta": 10000, "rms_norm_eps": 1e-06, "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096, "type": "yarn"}}`,
			Numerics{RotaryBase: 10000, NormEpsilon: 1e-6, RopeScaling: RopeScaling{Type: RopeYaRN, Factor: 40, OriginalMaxPositions: 4096}}},
		{`{"model_type": "glm4_moe", ` + dims + `, "partial_rotary_factor": 0.5, "rope_theta": 1000000, "rope_scaling": null}`,
			Numerics{RotaryBase: 1e6, RotaryPercent: 0.5}},
		{`{"model_type": "qwen3", ` + dims + `, "rms_norm_eps": 1e-06, "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0}}`,
			Numerics{RotaryBase: 1e6, NormEpsilon: 1e-6}},
		{`{"model_type": "llama", ` + dims + `, "rope_parameters": {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 32.0, "original_max_position_embeddings": 8192}}`,
			Numerics{RotaryBase: 500000, RopeScaling: RopeScaling{Type: RopeLlama3, Factor: 32, OriginalMaxPositions: 8192}}},
	} {
		tr, err := ParseHFConfig([]byte(c.json))
		if err != nil {
			t.Fatalf("%s: %v", c.json, err)
		}
		if tr.Numerics != c.want {
			t.Errorf("%s: numerics %+v, want %+v", c.json, tr.Numerics, c.want)
		}
		plain := tr
		plain.Numerics = Numerics{}
		if tr.Params() != plain.Params() || tr.IterationFLOPs(1, RecomputeNone) != plain.IterationFLOPs(1, RecomputeNone) {
			t.Errorf("%s: the numerics changed the parameters or FLOPs", c.json)
		}
	}
	for _, c := range []struct{ json, want string }{
		{`{"model_type": "llama", ` + dims + `, "rope_scaling": {"rope_type": "llama3\n rm -rf /", "factor": 8}}`, "rope_scaling.type"},
		{`{"model_type": "llama", ` + dims + `, "rope_scaling": {"rope_type": "linear", "factor": 0.5}}`, "rope_scaling.factor"},
		{`{"model_type": "llama", ` + dims + `, "rope_theta": -1}`, "rotary_base"},
		{`{"model_type": "llama", ` + dims + `, "partial_rotary_factor": 2}`, "rotary_percent"},
		{`{"model_type": "llama", ` + dims + `, "rms_norm_eps": 3}`, "norm_epsilon"},
	} {
		if _, err := ParseHFConfig([]byte(c.json)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error naming %s", c.json, err, c.want)
		}
	}
	learned := Transformer{Layers: 2, Hidden: 64, Heads: 4, Seq: 8, Vocab: 10, Numerics: Numerics{RotaryBase: 10000}}
	if err := learned.Validate(); err == nil || !strings.Contains(err.Error(), "rotary_base") {
		t.Errorf("rotary base on learned positions: %v", err)
	}
}

// TestChunkedAttentionSpanBruteForce counts, pair by pair, the causal
// query-key pairs of chunked layers (a query attends to the earlier tokens
// of its own chunk), beside windowed ones, and checks AttentionSpan's
// closed form and that a chunk as long as the sequence changes nothing.
func TestChunkedAttentionSpanBruteForce(t *testing.T) {
	for _, c := range []struct{ s, chunk, chunked, w, windowed, layers int }{
		{16, 4, 3, 0, 0, 4}, {37, 5, 2, 0, 0, 3}, {40, 8, 1, 3, 1, 4}, {64, 64, 2, 0, 0, 2}, {10, 100, 1, 0, 0, 1}, {33, 1, 5, 0, 0, 5},
	} {
		var full, chunked, win int
		for i := range c.s {
			full += i + 1
			chunked += i%c.chunk + 1
			win += i - max(0, i-c.w+1) + 1
		}
		want := 1 - float64(c.chunked)/float64(c.layers)*(1-float64(chunked)/float64(full))
		if c.windowed > 0 {
			want -= float64(c.windowed) / float64(c.layers) * (1 - float64(win)/float64(full))
		}
		tr := gpt(c.layers, 64, 4)
		tr.Seq, tr.AttentionChunk, tr.ChunkedLayers, tr.SlidingWindow, tr.SlidingLayers = c.s, c.chunk, c.chunked, c.w, c.windowed
		if err := tr.Validate(); err != nil {
			t.Fatal(err)
		}
		if got := tr.AttentionSpan(); math.Abs(got-want) > 1e-12 {
			t.Errorf("%+v: span %v, counted %v", c, got, want)
		}
	}
	for _, bad := range []struct{ chunk, chunked, windowed int }{{8, 0, 0}, {0, 2, 0}, {8, 3, 2}, {-1, 0, 0}} {
		tr := gpt(4, 64, 4)
		tr.AttentionChunk, tr.ChunkedLayers = bad.chunk, bad.chunked
		if bad.windowed > 0 {
			tr.SlidingWindow, tr.SlidingLayers = 4, bad.windowed
		}
		if err := tr.Validate(); err == nil || !strings.Contains(err.Error(), "attention_chunk") && !strings.Contains(err.Error(), "chunked_layers") {
			t.Errorf("%+v: %v, want an error naming the chunked attention", bad, err)
		}
	}
}

// TestInterleavedMoELayers checks, layer by layer, which layers are
// mixtures of experts past FirstDense with Every (Llama 4 Maverick's
// every other layer from the second; Qwen-MoE's decoder_sparse_step), and
// that the counts the model sums by kind (parameters, active parameters,
// FLOPs) equal the brute-force sums over the layers.
func TestInterleavedMoELayers(t *testing.T) {
	for _, c := range []struct{ layers, firstDense, every int }{
		{48, 0, 2}, {48, 0, 1}, {48, 0, 0}, {61, 3, 1}, {10, 3, 2}, {10, 4, 3}, {7, 0, 7}, {9, 2, 4},
	} {
		tr := gpt(c.layers, 64, 4)
		tr.MoE = &MoE{Experts: 8, TopK: 2, FFN: 32, SharedExperts: 1, FirstDense: c.firstDense, Every: c.every}
		if err := tr.Validate(); err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		n := max(1, c.every)
		var moe int
		var params, active, flops float64
		for i := range c.layers {
			want := i >= c.firstDense && (i+1)%n == 0
			if tr.IsMoELayer(i) != want {
				t.Errorf("%+v: layer %d a mixture of experts %v, want %v", c, i, tr.IsMoELayer(i), want)
			}
			if want {
				moe++
			}
			params += tr.LayerParamsAt(i)
			active += tr.ActiveLayerParamsAt(i)
			flops += tr.LayerFwdFLOPs(1, i)
		}
		if tr.MoELayers() != moe {
			t.Errorf("%+v: %d expert layers, counted %d", c, tr.MoELayers(), moe)
		}
		if got := tr.Params() - tr.EmbeddingParams(); math.Abs(got-params) > 1e-9*params {
			t.Errorf("%+v: layer parameters %v, summed %v", c, got, params)
		}
		if got := tr.ActiveParams() - tr.EmbeddingParams(); math.Abs(got-active) > 1e-9*active {
			t.Errorf("%+v: active layer parameters %v, summed %v", c, got, active)
		}
		if got := tr.sumLayers(func(i int) float64 { return tr.LayerFwdFLOPs(1, i) }); math.Abs(got-flops) > 1e-9*flops {
			t.Errorf("%+v: forward FLOPs %v, summed %v", c, got, flops)
		}
	}
	tr := gpt(10, 64, 4)
	tr.MoE = &MoE{Experts: 8, TopK: 2, FirstDense: 8, Every: 4}
	if err := tr.Validate(); err == nil || !strings.Contains(err.Error(), "moe.every") {
		t.Errorf("no expert layer left: %v, want an error naming moe.every", err)
	}
}

// llama4Maverick is Llama 4 Maverick's language model as NVIDIA's
// TensorRT-LLM tests copy its config.json (tests/unittest/_torch/modeling/
// test_modeling_llama4.py, LLAMA_4_MAVERICK_TWO_LAYER_CONFIG) with the 48
// layers the copy says it reduced to 2 and without the no_rope_layer_interval
// it added for them (Llama4TextConfig's default 4); llama4Scout Scout's, as
// a test mirroring unsloth/Llama-4-Scout-17B-16E's text_config copies it.
const (
	llama4Maverick = `{"model_type": "llama4", "text_config": {"attention_bias": false, "attention_chunk_size": 8192, "head_dim": 128, "hidden_act": "silu", "hidden_size": 5120, "interleave_moe_layer_step": 2, "intermediate_size": 8192, "intermediate_size_mlp": 16384, "max_position_embeddings": 1048576, "model_type": "llama4_text", "num_attention_heads": 40, "num_experts_per_tok": 1, "num_hidden_layers": 48, "num_key_value_heads": 8, "num_local_experts": 128, "rms_norm_eps": 1e-05, "rope_scaling": null, "rope_theta": 500000.0, "use_qk_norm": false, "vocab_size": 202048}}`
	llama4Scout    = `{"model_type": "llama4", "text_config": {"attention_bias": false, "attention_chunk_size": 8192, "head_dim": 128, "hidden_size": 5120, "intermediate_size": 8192, "intermediate_size_mlp": 16384, "max_position_embeddings": 262144, "no_rope_layers": [], "num_attention_heads": 40, "num_experts_per_tok": 1, "num_hidden_layers": 48, "num_key_value_heads": 8, "num_local_experts": 16, "rms_norm_eps": 1e-5, "rope_scaling": {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"}, "rope_theta": 500000.0, "use_qk_norm": true, "vocab_size": 202048, "interleave_moe_layer_step": 1, "tie_word_embeddings": false}}`
)

// TestParseHFConfigLlama4: Llama 4's language model (text_config) has
// expert layers every interleave_moe_layer_step-th, each with one shared
// expert of intermediate_size, dense layers of intermediate_size_mlp,
// chunked attention on the three in four layers that rotate, and the
// parameter counts Meta's model card states (github.com/meta-llama/
// llama-models, models/llama4/MODEL_CARD.md: Scout 17B activated of 109B,
// Maverick 17B of 400B; the totals are rounded and count the vision
// encoder, which is not modelled, so within 1.5 %). layer_types, which
// newer configs write, name the chunked layers the same.
func TestParseHFConfigLlama4(t *testing.T) {
	for _, c := range []struct {
		name             string
		json             string
		experts, every   int
		total, active    float64
		qkL2Norm, scaled bool
	}{
		{"maverick", llama4Maverick, 128, 2, 400e9, 17e9, false, false},
		{"scout", llama4Scout, 16, 1, 109e9, 17e9, true, true},
	} {
		tr, err := ParseHFConfig([]byte(c.json))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		m := tr.MoE
		if m == nil || m.Experts != c.experts || m.TopK != 1 || m.FFN != 8192 || m.SharedExperts != 1 || max(1, m.Every) != c.every || tr.FFN != 16384 {
			t.Fatalf("%s: moe %+v, dense ffn %d", c.name, m, tr.FFN)
		}
		if tr.AttentionChunk != 8192 || tr.ChunkedLayers != 36 || tr.Numerics.NoRopeEvery != 4 || tr.Numerics.QKL2Norm != c.qkL2Norm || tr.QKNorm {
			t.Errorf("%s: chunk %d over %d layers, no rope every %d, qk l2 norm %v, qk norm %v", c.name, tr.AttentionChunk, tr.ChunkedLayers, tr.Numerics.NoRopeEvery, tr.Numerics.QKL2Norm, tr.QKNorm)
		}
		if (tr.Numerics.RopeScaling.Type == RopeLlama3) != c.scaled {
			t.Errorf("%s: rope scaling %+v", c.name, tr.Numerics.RopeScaling)
		}
		if got := tr.Params(); math.Abs(got/c.total-1) > 0.015 {
			t.Errorf("%s: %.4g parameters, Meta states %.4g", c.name, got, c.total)
		}
		if got := tr.ActiveParams(); math.Abs(got/c.active-1) > 0.015 {
			t.Errorf("%s: %.4g active, Meta states %.4g", c.name, got, c.active)
		}
		tr.Seq = 4096 // within a chunk, chunked attention is full attention
		if tr.AttentionSpan() != 1 {
			t.Errorf("%s: span %v at 4K", c.name, tr.AttentionSpan())
		}
	}
	types := strings.Repeat(`"chunked_attention", "chunked_attention", "chunked_attention", "full_attention", `, 12)
	withTypes := strings.Replace(llama4Maverick, `"attention_bias": false,`, `"attention_bias": false, "layer_types": [`+strings.TrimSuffix(types, ", ")+`],`, 1)
	tr, err := ParseHFConfig([]byte(withTypes))
	if err != nil || tr.ChunkedLayers != 36 || tr.AttentionChunk != 8192 {
		t.Errorf("layer_types: %v, chunked %d of %d", err, tr.ChunkedLayers, tr.AttentionChunk)
	}
	for _, c := range []struct{ edit, want string }{
		{`"interleave_moe_layer_step": 2, "moe_layers": [0, 2],`, "moe_layers"},
		{`"interleave_moe_layer_step": 2, "no_rope_layers": [1, 0, 1],`, "no_rope_layers"},
		{`"interleave_moe_layer_step": 2, "no_rope_layers": [` + strings.TrimSuffix(strings.Repeat("1, 1, 0, 0, ", 12), ", ") + `],`, "no_rope_layers"},
	} {
		bad := strings.Replace(llama4Maverick, `"interleave_moe_layer_step": 2,`, c.edit, 1)
		if _, err := ParseHFConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %s", c.edit, err, c.want)
		}
	}
	// A model shallower than the NoPE interval (the default 4) rotates in
	// every layer, as transformers builds it.
	small := `{"model_type": "llama4_text", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "max_position_embeddings": 8, "num_local_experts": 4, "num_experts_per_tok": 1, "interleave_moe_layer_step": 2, "moe_layers": [1]}`
	if tr, err := ParseHFConfig([]byte(small)); err != nil || tr.ChunkedLayers != 2 || tr.MoELayers() != 1 {
		t.Errorf("two layers under the default interval: %v, %d chunked, %d expert layers", err, tr.ChunkedLayers, tr.MoELayers())
	}
	if _, err := ParseHFConfig([]byte(strings.Replace(small, `"moe_layers": [1]`, `"moe_layers": [1, 1]`, 1))); err == nil || !strings.Contains(err.Error(), "moe_layers") {
		t.Errorf("moe_layers listing a layer twice: %v", err)
	}
	qwen := `{"model_type": "qwen3_moe", "num_hidden_layers": 8, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "max_position_embeddings": 8, "num_experts": 4, "num_experts_per_tok": 2, "decoder_sparse_step": 2, "mlp_only_layers": [0, 1]}`
	if tr, err := ParseHFConfig([]byte(qwen)); err != nil || tr.MoE.Every != 2 || tr.MoE.FirstDense != 2 || tr.MoELayers() != 3 {
		t.Errorf("qwen decoder_sparse_step 2 past 2 dense layers: %v, %+v", err, tr.MoE)
	}
	if _, err := ParseHFConfig([]byte(strings.Replace(qwen, `[0, 1]`, `[3]`, 1))); err == nil || !strings.Contains(err.Error(), "mlp_only_layers") {
		t.Errorf("mlp_only_layers [3]: %v", err)
	}
}

// TestHFExpertGroups reads the router's group limit: DeepSeek-V3's
// n_group 8 and topk_group 4, and none for Kimi K2's single group.
func TestHFExpertGroups(t *testing.T) {
	for _, c := range []struct {
		json         string
		groups, topk int
	}{
		{`{"model_type": "deepseek_v3", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "max_position_embeddings": 8, "kv_lora_rank": 8, "v_head_dim": 16, "qk_nope_head_dim": 16, "n_routed_experts": 256, "num_experts_per_tok": 8, "n_group": 8, "topk_group": 4}`, 8, 4},
		{`{"model_type": "kimi_k2", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "max_position_embeddings": 8, "kv_lora_rank": 8, "v_head_dim": 16, "qk_nope_head_dim": 16, "n_routed_experts": 384, "num_experts_per_tok": 8, "n_group": 1, "topk_group": 1}`, 0, 0},
	} {
		tr, err := ParseHFConfig([]byte(c.json))
		if err != nil {
			t.Fatal(err)
		}
		if tr.MoE.Groups != c.groups || tr.MoE.GroupTopK != c.topk {
			t.Errorf("%.40s: groups %d, group top-k %d; want %d, %d", c.json, tr.MoE.Groups, tr.MoE.GroupTopK, c.groups, c.topk)
		}
	}
}
