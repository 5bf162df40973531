package model

import (
	"fmt"
	"math"
)

// maxDim bounds each transformer dimension so that products such as s·b·h·l
// stay exact in float64 and far from overflow.
const maxDim = 1 << 24

// Validate checks the dimensions; errors name the field, e.g.
// "transformer.heads: must be >= 1, got 0".
func (t Transformer) Validate() error {
	dims := []struct {
		name string
		v    int
	}{{"layers", t.Layers}, {"hidden", t.Hidden}, {"heads", t.Heads}, {"seq", t.Seq}, {"vocab", t.Vocab}}
	for _, d := range dims {
		if d.v < 1 || d.v > maxDim {
			return fmt.Errorf("transformer.%s: must be in [1, %d], got %d", d.name, maxDim, d.v)
		}
	}
	if t.FFN < 0 || t.FFN > maxDim {
		return fmt.Errorf("transformer.ffn: must be in [0, %d] (0 means 4·hidden), got %d", maxDim, t.FFN)
	}
	if t.Hidden%t.Heads != 0 {
		return fmt.Errorf("transformer.heads: must divide hidden %d, got %d", t.Hidden, t.Heads)
	}
	if _, err := t.BytesPerValue(); err != nil {
		return err
	}
	return nil
}

// FFNSize returns the feed-forward inner size: FFN, or 4h when FFN is 0.
func (t Transformer) FFNSize() int {
	if t.FFN == 0 {
		return 4 * t.Hidden
	}
	return t.FFN
}

// TrainingPrecision returns Precision, or BF16 when it is empty.
func (t Transformer) TrainingPrecision() Precision {
	if t.Precision == "" {
		return BF16
	}
	return t.Precision
}

// BytesPerValue returns the size of one weight or activation value in the
// training precision (2 for fp16/bf16), or an error for an unknown precision.
func (t Transformer) BytesPerValue() (float64, error) {
	switch t.TrainingPrecision() {
	case FP32:
		return 4, nil
	case FP16, BF16:
		return 2, nil
	case FP8:
		return 1, nil
	}
	return 0, fmt.Errorf("transformer.precision: must be one of fp32, fp16, bf16, fp8, got %q", t.Precision)
}

// LayerParams returns the parameters of one transformer layer: QKV and output
// projections 4h²+4h, MLP 2h·f+f+h, two layer norms 4h; 12h²+13h when f = 4h
// (the per-layer term of dissertation eq. 4.3).
func (t Transformer) LayerParams() float64 {
	h, f := float64(t.Hidden), float64(t.FFNSize())
	return 4*h*h + 4*h + 2*h*f + f + h + 4*h
}

// EmbeddingParams returns the token and position embedding parameters (V+s)·h
// (eq. 4.3). The output layer shares the token embedding, as in GPT.
func (t Transformer) EmbeddingParams() float64 {
	return float64(t.Vocab+t.Seq) * float64(t.Hidden)
}

// Params returns the total parameter count P = 12lh²(1 + 13/(12h) + (V+s)/(12lh))
// (dissertation eq. 4.3) for f = 4h: l layers plus the embeddings. Like eq. 4.3
// it leaves out the final layer norm (2h parameters).
func (t Transformer) Params() float64 {
	return float64(t.Layers)*t.LayerParams() + t.EmbeddingParams()
}

// TrainingDays estimates end-to-end training time in days for tokens tokens on
// gpus GPUs that each sustain flopsPerGPU FLOP/s: 8TP/(nX), dissertation eq. 4.4
// (it counts activation recomputation, as eq. 4.2 does).
func (t Transformer) TrainingDays(tokens float64, gpus int, flopsPerGPU float64) float64 {
	if gpus < 1 || !(flopsPerGPU > 0) || math.IsInf(flopsPerGPU, 0) {
		return math.Inf(1)
	}
	return 8 * tokens * t.Params() / (float64(gpus) * flopsPerGPU) / 86400
}
