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
)

// hfArchitectures are the model_type values ParseHFConfig understands, all
// RMSNorm, rotary, gated-MLP decoders; qwen2 has query/key/value biases
// (glm4_moe too, with attention_bias),
// deepseek_v3 and kimi_k2 (Kimi K2: DeepSeek-V3's architecture, other
// sizes) multi-head latent attention, gpt_oss biases on every linear
// layer (its experts' too), attention sinks and windowed layers.
var hfArchitectures = []string{"llama", "mistral", "mixtral", "qwen2", "qwen3", "qwen3_moe", "glm4_moe", "deepseek_v3", "kimi_k2", "gpt_oss"}

// ParseHFConfig reads a Hugging Face config.json of a Llama, Mistral,
// Mixtral, Qwen2, Qwen3(-MoE) or DeepSeek-V3 model into a Transformer with
// Seq = max_position_embeddings (set the training sequence length after)
// and num_nextn_predict_layers multi-token prediction modules (MTPLayers;
// DeepSeek-V3's config has 1).
// Other model_type values and missing or inconsistent dimensions are
// errors naming the key.
func ParseHFConfig(data []byte) (Transformer, error) {
	var c hfConfig
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&c); err != nil {
		return Transformer{}, fmt.Errorf("hf config: %w", err)
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
	}
	// Qwen3's layers always normalize the query and key; GLM-4.5's say so.
	t.QKNorm = c.ModelType == "qwen3" || c.ModelType == "qwen3_moe" || c.UseQKNorm
	if c.ModelType == "gpt_oss" {
		t.Bias, t.AttentionSinks = BiasAll, true
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

// slidingWindow sets t's windowed layers from the config: layer_types
// where given (every model_type; GPT-OSS alternates from a windowed first
// layer), else Mistral's sliding_window for every layer, Qwen's after the
// first max_window_layers when use_sliding_window is true.
func (c hfConfig) slidingWindow(t *Transformer) error {
	window := 0
	if c.SlidingWindow != nil {
		window = *c.SlidingWindow
	}
	n := 0
	switch {
	case c.LayerTypes != nil:
		if len(c.LayerTypes) != c.Layers {
			return fmt.Errorf("hf config: layer_types: must name each of the num_hidden_layers %d layers, got %d", c.Layers, len(c.LayerTypes))
		}
		for i, k := range c.LayerTypes {
			switch k {
			case hfSlidingAttention:
				n++
			case hfFullAttention:
			default:
				return fmt.Errorf("hf config: layer_types[%d]: must be %q or %q, got %q", i, hfSlidingAttention, hfFullAttention, k)
			}
		}
	case c.ModelType == "mistral" || c.ModelType == "mixtral":
		if window > 0 {
			n = c.Layers
		}
	case c.UseSlidingWindow:
		n = max(0, c.Layers-c.MaxWindowLayers)
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
