package model

// Precision names a numeric format of weights and activations.
type Precision string

// Precisions a transformer can be trained in.
const (
	FP32 Precision = "fp32"
	FP16 Precision = "fp16"
	BF16 Precision = "bf16"
	FP8  Precision = "fp8"
)

// Position embeddings a transformer can have.
const (
	// PositionLearned is a learned absolute position embedding of s·h
	// parameters (GPT, BERT); "" means it.
	PositionLearned = "learned"
	// PositionNone has no position parameters: rotary embeddings (RoPE, as
	// Llama, Mixtral, Qwen and DeepSeek use) or none at all.
	PositionNone = "none"
)

// Norms a transformer layer can use.
const (
	// NormLayer is LayerNorm (a scale and a bias per channel); "" means it.
	NormLayer = "layernorm"
	// NormRMS is RMSNorm (a scale per channel).
	NormRMS = "rmsnorm"
)

// Linear-layer biases a transformer can have.
const (
	// BiasAll gives every linear layer a bias (GPT); "" means it.
	BiasAll = "all"
	// BiasNone has no linear biases (Llama, Mixtral, DeepSeek, Qwen3).
	BiasNone = "none"
	// BiasQKV gives only the query, key and value projections a bias (Qwen2).
	BiasQKV = "qkv"
)

// Transformer describes a decoder-only transformer by its dimensions (the
// "application" input of a plan, kept apart from execution and system
// choices as Calculon does). Symbols follow the dissertation §4.2.1:
// l layers, h hidden size, a heads, s sequence length, V vocabulary. The
// zero values of the newer fields give the GPT of §4.5.1 (multi-head
// attention, a GeLU MLP of 4h, tied embeddings, learned positions,
// LayerNorm, biases everywhere).
type Transformer struct {
	// Name is informational, e.g. "GPT-3 175B".
	Name string `json:"name,omitempty"`
	// Layers is the number of transformer layers l.
	Layers int `json:"layers"`
	// Hidden is the hidden size h.
	Hidden int `json:"hidden"`
	// Heads is the number of attention (query) heads a.
	Heads int `json:"heads"`
	// Seq is the sequence length s.
	Seq int `json:"seq"`
	// Vocab is the vocabulary size V.
	Vocab int `json:"vocab"`
	// FFN is the feed-forward inner size of the dense layers; 0 means 4h.
	FFN int `json:"ffn,omitempty"`
	// Precision is the training precision; "" means bf16.
	Precision Precision `json:"precision,omitempty"`
	// KVHeads is the number of key/value heads (grouped-query attention,
	// Ainslie et al. 2023; 1 is multi-query attention); 0 means Heads.
	KVHeads int `json:"kv_heads,omitempty"`
	// HeadDim is the size of one attention head; 0 means Hidden/Heads.
	HeadDim int `json:"head_dim,omitempty"`
	// GatedFFN makes the MLP a gated linear unit (SwiGLU, Shazeer 2020):
	// three h×f matrices (gate, up, down) instead of two.
	GatedFFN bool `json:"gated_ffn,omitempty"`
	// UntiedEmbeddings gives the output layer its own V·h weights instead
	// of sharing the input embedding's.
	UntiedEmbeddings bool `json:"untied_embeddings,omitempty"`
	// PositionEmbedding is PositionLearned ("") or PositionNone.
	PositionEmbedding string `json:"position_embedding,omitempty"`
	// Norm is NormLayer ("") or NormRMS.
	Norm string `json:"norm,omitempty"`
	// Bias is BiasAll (""), BiasNone or BiasQKV.
	Bias string `json:"bias,omitempty"`
	// NoDropout says the model trains without dropout (Llama, Mistral,
	// Qwen, DeepSeek: hidden and attention dropout 0 in their Megatron
	// recipes), so no dropout masks are stored; GPT-style models keep them.
	NoDropout bool `json:"no_dropout,omitempty"`
	// MoE, when set, makes the MLP of some layers a mixture of experts.
	MoE *MoE `json:"moe,omitempty"`
	// MLA, when set, replaces multi-head attention by DeepSeek's multi-head
	// latent attention (KVHeads and HeadDim are then unused).
	MLA *MLA `json:"mla,omitempty"`
	// SlidingWindow is the window of sliding-window attention (Mistral 7B
	// v0.1, GPT-OSS, Gemma): each query of a windowed layer attends to the
	// SlidingWindow most recent tokens, itself included; 0: none.
	SlidingWindow int `json:"sliding_window,omitempty"`
	// SlidingLayers is how many of the layers attend in that window
	// (GPT-OSS alternates windowed and full layers: half of them; Mistral
	// 7B v0.1: all); the others attend to the whole sequence. It and
	// SlidingWindow are both set or both 0.
	SlidingLayers int `json:"sliding_layers,omitempty"`
	// AttentionChunk is the chunk of chunked attention (Llama 4's
	// attention_chunk_size, 8,192): each query of a chunked layer attends
	// to the earlier tokens of its own chunk only; 0: none.
	AttentionChunk int `json:"attention_chunk,omitempty"`
	// ChunkedLayers is how many layers attend in chunks (Llama 4: those
	// with rotary embeddings, three in four); it and AttentionChunk are
	// both set or both 0.
	ChunkedLayers int `json:"chunked_layers,omitempty"`
	// QKNorm normalizes each head's query and key before the attention
	// scores (Qwen3; GLM-4.5's use_qk_norm; Megatron-Core's
	// --qk-layernorm): two norms over head_dim per layer, no GEMM work.
	QKNorm bool `json:"qk_norm,omitempty"`
	// AttentionSinks gives each attention head a learned logit in its
	// softmax's denominator (GPT-OSS; Megatron-Core's --softmax-type
	// learnable): a parameters per layer, no GEMM work.
	AttentionSinks bool `json:"attention_sinks,omitempty"`
	// MTPLayers is the depth D of multi-token prediction (DeepSeek-V3
	// §2.2; Megatron-Core's --mtp-num-layers, Hugging Face's
	// num_nextn_predict_layers): D modules after the last layer, the k-th
	// predicting the token k+1 ahead, each a projection of the normed
	// hidden state and the normed embedding of the next token (2h to h),
	// one transformer layer like the model's last, and the shared output
	// layer with its own loss. They train with the model and are dropped
	// for inference: Params and ActiveParams leave them out, as the
	// publishers' sizes do (DeepSeek-V3's 671B), MTPParams counts them.
	MTPLayers int `json:"mtp_layers,omitempty"`
	// Numerics are the settings that cost nothing here but that an
	// engine must be given to train this model and not a look-alike:
	// the rotary embedding's base and scaling, the norms' epsilon.
	Numerics Numerics `json:"numerics,omitzero"`
}

// MoE describes mixture-of-experts MLP layers (Shazeer et al. 2017;
// Mixtral, Qwen-MoE and DeepSeek-MoE style): each token goes through TopK
// of Experts routed experts plus SharedExperts always-on ones.
type MoE struct {
	// Experts is the number of routed experts E.
	Experts int `json:"experts"`
	// TopK is the number of routed experts each token is sent to.
	TopK int `json:"topk"`
	// FFN is the inner size of one expert's MLP; 0 means the model's FFN size.
	FFN int `json:"ffn,omitempty"`
	// SharedExperts is the number of shared experts every token goes
	// through (DeepSeek-MoE), each of inner size FFN.
	SharedExperts int `json:"shared_experts,omitempty"`
	// FirstDense is the number of leading layers that keep a dense MLP of
	// the model's FFN size (DeepSeek-V3's first_k_dense_replace).
	FirstDense int `json:"first_dense,omitempty"`
	// Every interleaves dense and expert layers: past FirstDense, only the
	// layers whose 1-based number is a multiple of Every are mixtures of
	// experts, the others dense (Llama 4 Maverick's
	// interleave_moe_layer_step 2: layers 2, 4, …; Qwen-MoE's
	// decoder_sparse_step); 0 or 1: every layer past FirstDense.
	Every int `json:"every,omitempty"`
	// Groups and GroupTopK limit a token's routed experts to GroupTopK of
	// Groups equal, contiguous groups of them (DeepSeek-V3 §2.1.2's
	// node-limited routing, n_group 8 and topk_group 4: with a group a
	// server, each token reaches at most 4 servers; Megatron-Core's
	// --moe-router-num-groups and --moe-router-group-topk); 0: no limit.
	Groups    int `json:"groups,omitempty"`
	GroupTopK int `json:"group_topk,omitempty"`
}

// MaxExpertGroups bounds MoE.Groups (DeepSeek-V3 has 8), and with it the
// work of costing a group-limited dispatch.
const MaxExpertGroups = 1024

// MLA describes multi-head latent attention (DeepSeek-V2 §2.1, DeepSeek-V3
// §2.1.1): queries and keys/values pass through low-rank latent vectors,
// and a decoupled rotary part of the query/key head.
type MLA struct {
	// QLoraRank is the query latent size d_c'; 0 projects queries directly.
	QLoraRank int `json:"q_lora_rank,omitempty"`
	// KVLoraRank is the key/value latent size d_c.
	KVLoraRank int `json:"kv_lora_rank"`
	// QKRopeHeadDim is the rotary part of a query/key head d_h^R.
	QKRopeHeadDim int `json:"qk_rope_head_dim"`
	// QKNopeHeadDim is the non-rotary part of a query/key head d_h.
	QKNopeHeadDim int `json:"qk_nope_head_dim"`
	// VHeadDim is the size of a value head.
	VHeadDim int `json:"v_head_dim"`
}
