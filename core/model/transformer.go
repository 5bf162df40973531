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

// Transformer describes a GPT-style transformer by its dimensions (the
// "application" input of a plan, kept apart from execution and system
// choices as Calculon does). Symbols follow the dissertation §4.2.1:
// l layers, h hidden size, a heads, s sequence length, V vocabulary.
type Transformer struct {
	// Name is informational, e.g. "GPT-3 175B".
	Name string `json:"name,omitempty"`
	// Layers is the number of transformer layers l.
	Layers int `json:"layers"`
	// Hidden is the hidden size h.
	Hidden int `json:"hidden"`
	// Heads is the number of attention heads a.
	Heads int `json:"heads"`
	// Seq is the sequence length s.
	Seq int `json:"seq"`
	// Vocab is the vocabulary size V.
	Vocab int `json:"vocab"`
	// FFN is the feed-forward inner size; 0 means 4h.
	FFN int `json:"ffn,omitempty"`
	// Precision is the training precision; "" means bf16.
	Precision Precision `json:"precision,omitempty"`
}
