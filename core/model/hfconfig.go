package model

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
)

// hfConfig holds the Hugging Face config.json keys ParseHFConfig reads.
type hfConfig struct {
	ModelType          string `json:"model_type"`
	Layers             int    `json:"num_hidden_layers"`
	Hidden             int    `json:"hidden_size"`
	FFN                int    `json:"intermediate_size"`
	Heads              int    `json:"num_attention_heads"`
	KVHeads            int    `json:"num_key_value_heads"`
	HeadDim            int    `json:"head_dim"`
	Vocab              int    `json:"vocab_size"`
	MaxPositions       int    `json:"max_position_embeddings"`
	TieWordEmbeddings  *bool  `json:"tie_word_embeddings"`
	AttentionBias      bool   `json:"attention_bias"`
	LocalExperts       int    `json:"num_local_experts"`
	Experts            int    `json:"num_experts"`
	RoutedExperts      int    `json:"n_routed_experts"`
	ExpertsPerToken    int    `json:"num_experts_per_tok"`
	MoEFFN             int    `json:"moe_intermediate_size"`
	SharedExperts      int    `json:"n_shared_experts"`
	FirstKDenseReplace int    `json:"first_k_dense_replace"`
	ExpertGroups       int    `json:"n_group"`
	ExpertGroupTopK    int    `json:"topk_group"`
	QLoraRank          int    `json:"q_lora_rank"`
	KVLoraRank         int    `json:"kv_lora_rank"`
	QKRopeHeadDim      int    `json:"qk_rope_head_dim"`
	QKNopeHeadDim      int    `json:"qk_nope_head_dim"`
	VHeadDim           int    `json:"v_head_dim"`
	NextNPredictLayers int    `json:"num_nextn_predict_layers"`
	UseQKNorm          bool   `json:"use_qk_norm"`
	// The numerics (Numerics): transformers' configs before v5 give
	// rope_theta, partial_rotary_factor and rope_scaling at the top,
	// v5's in rope_parameters.
	RopeTheta           float64        `json:"rope_theta"`
	PartialRotaryFactor float64        `json:"partial_rotary_factor"`
	RopeScaling         *hfRopeScaling `json:"rope_scaling"`
	RopeParameters      *hfRopeScaling `json:"rope_parameters"`
	RMSNormEps          float64        `json:"rms_norm_eps"`
	// Interleaved expert layers: Llama 4's interleave_moe_layer_step (and
	// its moe_layers, which must agree), Qwen-MoE's decoder_sparse_step and
	// mlp_only_layers (a leading run of dense layers).
	InterleaveMoELayerStep int   `json:"interleave_moe_layer_step"`
	MoELayers              []int `json:"moe_layers"`
	DecoderSparseStep      int   `json:"decoder_sparse_step"`
	MLPOnlyLayers          []int `json:"mlp_only_layers"`
	// Llama 4: the dense layers' MLP size (intermediate_size is an
	// expert's), chunked attention on the rotary layers, the layers
	// without rotary embedding (no_rope_layers: 1 rotates, 0 not; or every
	// no_rope_layer_interval-th), the weightless query/key L2 norm, and the
	// language model's keys nested in text_config.
	IntermediateSizeMLP int             `json:"intermediate_size_mlp"`
	AttentionChunkSize  *int            `json:"attention_chunk_size"`
	NoRopeLayers        []int           `json:"no_rope_layers"`
	NoRopeLayerInterval *int            `json:"no_rope_layer_interval"`
	TextConfig          json.RawMessage `json:"text_config"`
	// Sliding-window attention: GPT-OSS names each layer's kind in
	// layer_types; Mistral windows every layer when sliding_window is set
	// (null in its later releases); Qwen2/3 only with use_sliding_window,
	// the layers after the first max_window_layers.
	SlidingWindow    *int     `json:"sliding_window"`
	LayerTypes       []string `json:"layer_types"`
	UseSlidingWindow bool     `json:"use_sliding_window"`
	MaxWindowLayers  int      `json:"max_window_layers"`
}

// hfRopeScaling is a config's rope_scaling (or v5's rope_parameters,
// which also holds rope_theta and partial_rotary_factor); older configs
// name the type "type".
type hfRopeScaling struct {
	RopeType             string  `json:"rope_type"`
	Type                 string  `json:"type"`
	Factor               float64 `json:"factor"`
	OriginalMaxPositions int     `json:"original_max_position_embeddings"`
	LowFreqFactor        float64 `json:"low_freq_factor"`
	HighFreqFactor       float64 `json:"high_freq_factor"`
	RopeTheta            float64 `json:"rope_theta"`
	PartialRotaryFactor  float64 `json:"partial_rotary_factor"`
}

// numerics reads the rotary embedding's and the norms' settings; a
// rope_type of "default" (v5's rope_parameters for no scaling) is none.
func (c hfConfig) numerics() Numerics {
	n := Numerics{RotaryBase: c.RopeTheta, RotaryPercent: c.PartialRotaryFactor, NormEpsilon: c.RMSNormEps}
	scaling := c.RopeScaling
	if p := c.RopeParameters; p != nil {
		n.RotaryBase = cmp.Or(p.RopeTheta, n.RotaryBase)
		n.RotaryPercent = cmp.Or(p.PartialRotaryFactor, n.RotaryPercent)
		scaling = cmp.Or(scaling, p)
	}
	if r := scaling; r != nil {
		if kind := cmp.Or(r.RopeType, r.Type); kind != "" && kind != "default" {
			n.RopeScaling = RopeScaling{Type: kind, Factor: r.Factor, OriginalMaxPositions: r.OriginalMaxPositions,
				LowFreqFactor: r.LowFreqFactor, HighFreqFactor: r.HighFreqFactor}
		}
	}
	return n
}

// Hugging Face's layer_types values.
const (
	hfSlidingAttention = "sliding_attention"
	hfFullAttention    = "full_attention"
	hfChunkedAttention = "chunked_attention"
)

// hfArchitectures are the model_type values ParseHFConfig understands, all
// RMSNorm, rotary, gated-MLP decoders; qwen2 has query/key/value biases
// (glm4_moe too, with attention_bias),
// deepseek_v3 and kimi_k2 (Kimi K2: DeepSeek-V3's architecture, other
// sizes) multi-head latent attention, gpt_oss biases on every linear
// layer (its experts' too), attention sinks and windowed layers; llama4
// (its language model, in text_config) expert layers interleaved with
// dense ones, a shared expert, chunked attention.
var hfArchitectures = []string{"llama", "llama4", "llama4_text", "mistral", "mixtral", "qwen2", "qwen3", "qwen3_moe", "glm4_moe", "deepseek_v3", "kimi_k2", "gpt_oss"}

// ParseHFConfig reads a Hugging Face config.json of one of the
// hfArchitectures (Llama 2 to 4, Mistral, Mixtral, Qwen2/3 and their
// mixtures of experts, GLM-4.5, DeepSeek-V3, Kimi K2, gpt-oss) into a
// Transformer with Seq = max_position_embeddings (set the training
// sequence length after), num_nextn_predict_layers multi-token prediction
// modules (MTPLayers; DeepSeek-V3's config has 1) and the rotary and norm
// numerics it states. Other model_type values and missing or inconsistent
// dimensions are errors naming the key.
func ParseHFConfig(data []byte) (Transformer, error) {
	var c hfConfig
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&c); err != nil {
		return Transformer{}, fmt.Errorf("hf config: %w", err)
	}
	if c.ModelType == "llama4" {
		if len(c.TextConfig) > 0 {
			// Llama 4's multimodal config: the language model is text_config.
			c = hfConfig{}
			if err := json.Unmarshal(data, &struct {
				TextConfig *hfConfig `json:"text_config"`
			}{&c}); err != nil {
				return Transformer{}, fmt.Errorf("hf config: text_config: %w", err)
			}
		}
		c.ModelType = "llama4_text"
	}
	known := false
	for _, a := range hfArchitectures {
		known = known || c.ModelType == a
	}
	if !known {
		return Transformer{}, fmt.Errorf("hf config: model_type: must be one of %v, got %q", hfArchitectures, c.ModelType)
	}
	for _, k := range []struct {
		key string
		v   int
	}{{"num_hidden_layers", c.Layers}, {"hidden_size", c.Hidden}, {"num_attention_heads", c.Heads}, {"vocab_size", c.Vocab}, {"max_position_embeddings", c.MaxPositions}} {
		if k.v < 1 {
			return Transformer{}, fmt.Errorf("hf config: %s: must be >= 1, got %d", k.key, k.v)
		}
	}
	if c.NextNPredictLayers < 0 || c.NextNPredictLayers > c.Layers {
		return Transformer{}, fmt.Errorf("hf config: num_nextn_predict_layers: must be in [0, num_hidden_layers %d], got %d", c.Layers, c.NextNPredictLayers)
	}
	t := Transformer{
		Layers: c.Layers, Hidden: c.Hidden, Heads: c.Heads, Seq: c.MaxPositions, Vocab: c.Vocab,
		FFN: c.FFN, KVHeads: c.KVHeads, HeadDim: c.HeadDim, GatedFFN: true,
		UntiedEmbeddings:  c.TieWordEmbeddings == nil || !*c.TieWordEmbeddings,
		PositionEmbedding: PositionNone, Norm: NormRMS, Bias: BiasNone, NoDropout: true,
		MTPLayers: c.NextNPredictLayers, Numerics: c.numerics(),
	}
	if c.ModelType == "qwen2" || c.AttentionBias {
		t.Bias = BiasQKV
	}
	experts := max(c.LocalExperts, c.Experts, c.RoutedExperts)
	if experts > 0 {
		t.MoE = &MoE{Experts: experts, TopK: c.ExpertsPerToken, FFN: c.MoEFFN, SharedExperts: c.SharedExperts, FirstDense: c.FirstKDenseReplace}
		if c.ExpertGroups > 1 { // n_group 1 (Kimi K2, GLM-4.5): one group, no limit
			t.MoE.Groups, t.MoE.GroupTopK = c.ExpertGroups, c.ExpertGroupTopK
		}
		if err := c.interleave(t.MoE, c.Layers); err != nil {
			return Transformer{}, err
		}
	}
	// Qwen3's layers always normalize the query and key; GLM-4.5's say so.
	t.QKNorm = c.ModelType == "qwen3" || c.ModelType == "qwen3_moe" || c.UseQKNorm
	if c.ModelType == "gpt_oss" {
		t.Bias, t.AttentionSinks = BiasAll, true
	}
	if c.ModelType == "llama4_text" {
		if err := c.llama4(&t); err != nil {
			return Transformer{}, err
		}
	}
	if err := c.slidingWindow(&t); err != nil {
		return Transformer{}, err
	}
	if c.ModelType == "deepseek_v3" || c.ModelType == "kimi_k2" {
		t.KVHeads, t.HeadDim = 0, 0
		t.MLA = &MLA{QLoraRank: c.QLoraRank, KVLoraRank: c.KVLoraRank, QKRopeHeadDim: c.QKRopeHeadDim, QKNopeHeadDim: c.QKNopeHeadDim, VHeadDim: c.VHeadDim}
	}
	if err := t.Validate(); err != nil {
		return Transformer{}, fmt.Errorf("hf config: %w", err)
	}
	return t, nil
}

// interleave sets which of the layers are mixtures of experts: every
// decoder_sparse_step-th (Qwen-MoE) or interleave_moe_layer_step-th
// (Llama 4, whose moe_layers, when given, must list the same), past
// mlp_only_layers, which must be the leading ones.
func (c hfConfig) interleave(m *MoE, layers int) error {
	if c.DecoderSparseStep < 0 || c.InterleaveMoELayerStep < 0 {
		return fmt.Errorf("hf config: decoder_sparse_step / interleave_moe_layer_step: must be >= 0, got %d / %d", c.DecoderSparseStep, c.InterleaveMoELayerStep)
	}
	m.Every = max(c.DecoderSparseStep, c.InterleaveMoELayerStep)
	for i, l := range c.MLPOnlyLayers {
		if l != i {
			return fmt.Errorf("hf config: mlp_only_layers: only a leading run of dense layers (0, 1, …) is modelled, got %v", c.MLPOnlyLayers)
		}
	}
	m.FirstDense = max(m.FirstDense, len(c.MLPOnlyLayers))
	if c.MoELayers != nil {
		t := Transformer{Layers: layers, MoE: m}
		same := len(c.MoELayers) == t.MoELayers()
		for k, l := range c.MoELayers {
			same = same && l >= 0 && l < layers && t.IsMoELayer(l) && (k == 0 || l > c.MoELayers[k-1])
		}
		if !same {
			return fmt.Errorf("hf config: moe_layers: must be the %d layers interleave_moe_layer_step %d gives, in order, got %d listed", t.MoELayers(), max(1, m.Every), len(c.MoELayers))
		}
	}
	return nil
}

// llama4 sets Llama 4's language model apart from Llama 3's: the dense
// layers' MLP of intermediate_size_mlp (intermediate_size is an expert's),
// one shared expert in each expert layer (Llama4TextMoe's shared_expert),
// chunked attention of attention_chunk_size (transformers' default 8,192)
// on the layers with rotary embeddings, none on every
// no_rope_layer_interval-th (default 4) or as no_rope_layers lists, and
// use_qk_norm's weightless L2 norm of queries and keys.
func (c hfConfig) llama4(t *Transformer) error {
	if c.IntermediateSizeMLP > 0 {
		t.FFN = c.IntermediateSizeMLP
	}
	if m := t.MoE; m != nil {
		m.FFN, m.SharedExperts = c.FFN, 1
		if c.IntermediateSizeMLP == 0 {
			t.FFN = c.FFN
		}
	}
	every := 4
	if c.NoRopeLayerInterval != nil {
		every = *c.NoRopeLayerInterval
	}
	if len(c.NoRopeLayers) > 0 { // transformers reads an empty list as absent
		if len(c.NoRopeLayers) != c.Layers {
			return fmt.Errorf("hf config: no_rope_layers: must give each of the num_hidden_layers %d layers, got %d", c.Layers, len(c.NoRopeLayers))
		}
		every = 0
		for i, r := range c.NoRopeLayers {
			if r == 0 && every == 0 {
				every = i + 1
			}
		}
		for i, r := range c.NoRopeLayers {
			if want := every == 0 || (i+1)%every != 0; (r != 0) != want {
				return fmt.Errorf("hf config: no_rope_layers: only every n-th layer without rotary embedding is modelled, got %v", c.NoRopeLayers)
			}
		}
	}
	if every < 0 {
		return fmt.Errorf("hf config: no_rope_layer_interval: must be >= 0 (0: every layer rotates), got %d", every)
	}
	rotary := c.Layers
	if every > 0 {
		rotary -= c.Layers / every
	}
	t.Numerics.NoRopeEvery, t.Numerics.QKL2Norm = every, c.UseQKNorm
	t.QKNorm = false // Llama 4's query/key norm has no weights
	chunk := 8192
	if c.AttentionChunkSize != nil {
		chunk = *c.AttentionChunkSize
	}
	if c.LayerTypes == nil && chunk > 0 && rotary > 0 { // layer_types, where given, named them (slidingWindow)
		t.AttentionChunk, t.ChunkedLayers = chunk, rotary
	}
	return nil
}

// slidingWindow sets t's windowed layers from the config: layer_types
// where given (every model_type; GPT-OSS alternates from a windowed first
// layer), else Mistral's sliding_window for every layer, Qwen's after the
// first max_window_layers when use_sliding_window is true.
func (c hfConfig) slidingWindow(t *Transformer) error {
	window := 0
	if c.SlidingWindow != nil {
		window = *c.SlidingWindow
	}
	n, chunked := 0, 0
	switch {
	case c.LayerTypes != nil:
		if len(c.LayerTypes) != c.Layers {
			return fmt.Errorf("hf config: layer_types: must name each of the num_hidden_layers %d layers, got %d", c.Layers, len(c.LayerTypes))
		}
		for i, k := range c.LayerTypes {
			switch k {
			case hfSlidingAttention:
				n++
			case hfChunkedAttention:
				chunked++
			case hfFullAttention:
			default:
				return fmt.Errorf("hf config: layer_types[%d]: must be %q, %q or %q, got %q", i, hfSlidingAttention, hfChunkedAttention, hfFullAttention, k)
			}
		}
	case c.ModelType == "mistral" || c.ModelType == "mixtral":
		if window > 0 {
			n = c.Layers
		}
	case c.UseSlidingWindow:
		n = max(0, c.Layers-c.MaxWindowLayers)
	}
	if chunked > 0 {
		if c.AttentionChunkSize == nil || *c.AttentionChunkSize < 1 {
			return fmt.Errorf("hf config: attention_chunk_size: must be >= 1 with %d chunked layers in layer_types", chunked)
		}
		t.AttentionChunk, t.ChunkedLayers = *c.AttentionChunkSize, chunked
	}
	if n == 0 {
		return nil
	}
	if window < 1 {
		return fmt.Errorf("hf config: sliding_window: must be >= 1 with %d windowed layers, got %d", n, window)
	}
	t.SlidingWindow, t.SlidingLayers = window, n
	return nil
}
