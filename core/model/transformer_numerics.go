package model

import (
	"fmt"
	"math"
	"regexp"
)

// Numerics are a model's numerical settings that change no FLOP, byte or
// second of the cost model but that a training engine must be given to
// build the model the preset or config names: its rotary position
// embedding and its norms' epsilon, as Hugging Face's config.json states
// them. The zero value means "not stated": the engine's defaults apply
// (Megatron-LM's rotary base 10,000 and epsilon 1e-5).
type Numerics struct {
	// RotaryBase is the rotary embedding's base θ (Hugging Face's
	// rope_theta: Llama 3 500,000, Qwen3 1,000,000; Megatron-LM's
	// --rotary-base); 0: not stated.
	RotaryBase float64 `json:"rotary_base,omitempty"`
	// RotaryPercent is the share of each query/key head that rotates
	// (partial_rotary_factor: GLM-4.5's 0.5; --rotary-percent); 0: all.
	RotaryPercent float64 `json:"rotary_percent,omitempty"`
	// RopeScaling is the config's rescaling of the rotary frequencies
	// (rope_scaling); the zero value: none.
	RopeScaling RopeScaling `json:"rope_scaling,omitzero"`
	// NormEpsilon is the norms' epsilon (rms_norm_eps; --norm-epsilon); 0:
	// not stated.
	NormEpsilon float64 `json:"norm_epsilon,omitempty"`
	// NoRopeEvery leaves the rotary embedding out of every NoRopeEvery-th
	// layer (Llama 4's no_rope_layer_interval 4: layers 4, 8, …;
	// Megatron-LM's --no-rope-freq); 0: every layer rotates.
	NoRopeEvery int `json:"no_rope_every,omitempty"`
	// QKL2Norm scales each head's query and key to unit length, without
	// weights (Llama 4 Scout's use_qk_norm, on its rotary layers).
	QKL2Norm bool `json:"qk_l2_norm,omitempty"`
}

// RopeScaling is a rescaling of the rotary frequencies.
type RopeScaling struct {
	// Type is Hugging Face's rope_type: RopeLlama3 (Llama 3.1's, which
	// Megatron-LM builds with --use-rope-scaling), RopeYaRN (a context
	// extension applied after pre-training: DeepSeek-V3 §4.3, gpt-oss,
	// Kimi K2) or another of its names, kept as stated.
	Type string `json:"type"`
	// Factor is the scaling factor (--rope-scaling-factor for
	// RopeLlama3); 0: not stated.
	Factor float64 `json:"factor"`
	// OriginalMaxPositions is the context the scaling extends from
	// (original_max_position_embeddings); 0: not stated.
	OriginalMaxPositions int `json:"original_max_positions,omitempty"`
	// LowFreqFactor and HighFreqFactor bound the wavelengths RopeLlama3
	// rescales (low_freq_factor, high_freq_factor: 1 and 4 in Llama
	// 3.1); 0: not stated.
	LowFreqFactor  float64 `json:"low_freq_factor,omitempty"`
	HighFreqFactor float64 `json:"high_freq_factor,omitempty"`
}

// Rotary scaling types (Hugging Face's rope_type names).
const (
	RopeLlama3 = "llama3"
	RopeYaRN   = "yarn"
)

// ropeTypeName is what a scaling type may be: Hugging Face's names are
// lower-case words, and the type is written into launch scripts' comments.
var ropeTypeName = regexp.MustCompile(`^[a-z0-9_]{1,32}$`)

// Validate checks the numerics: finite, positive where stated, a
// rotating share in (0, 1], a stated scaling factor of at least 1.
func (n Numerics) Validate() error {
	for _, f := range []struct {
		name   string
		v, max float64
	}{{"rotary_base", n.RotaryBase, 1e12}, {"rotary_percent", n.RotaryPercent, 1}, {"norm_epsilon", n.NormEpsilon, 1}} {
		if math.IsNaN(f.v) || f.v < 0 || f.v > f.max {
			return fmt.Errorf("transformer.numerics.%s: must be in [0, %g] (0: not stated), got %g", f.name, f.max, f.v)
		}
	}
	if n.NoRopeEvery < 0 || n.NoRopeEvery > maxDim {
		return fmt.Errorf("transformer.numerics.no_rope_every: must be in [0, %d] (0: every layer rotates), got %d", maxDim, n.NoRopeEvery)
	}
	if n.RotaryBase > 0 && n.RotaryBase < 1 {
		return fmt.Errorf("transformer.numerics.rotary_base: must be >= 1 when stated, got %g", n.RotaryBase)
	}
	if r := n.RopeScaling; r != (RopeScaling{}) {
		if !ropeTypeName.MatchString(r.Type) {
			return fmt.Errorf("transformer.numerics.rope_scaling.type: must be 1 to 32 lower-case letters, digits or _, got %q", r.Type)
		}
		if math.IsNaN(r.Factor) || r.Factor != 0 && (r.Factor < 1 || r.Factor > 1e4) {
			return fmt.Errorf("transformer.numerics.rope_scaling.factor: must be in [1, 10000] (0: not stated), got %g", r.Factor)
		}
		for _, f := range []struct {
			name string
			v    float64
		}{{"low_freq_factor", r.LowFreqFactor}, {"high_freq_factor", r.HighFreqFactor}} {
			if math.IsNaN(f.v) || f.v < 0 || f.v > 1e4 {
				return fmt.Errorf("transformer.numerics.rope_scaling.%s: must be in [0, 10000] (0: not stated), got %g", f.name, f.v)
			}
		}
		if r.OriginalMaxPositions < 0 || r.OriginalMaxPositions > maxDim {
			return fmt.Errorf("transformer.numerics.rope_scaling.original_max_positions: must be in [0, %d] (0: not stated), got %d", maxDim, r.OriginalMaxPositions)
		}
	}
	return nil
}
