package model

import "fmt"

// Recompute is an activation-recomputation strategy (Korthikanti et al. 2022).
type Recompute string

// Recomputation strategies.
const (
	// RecomputeNone stores every activation the backward pass needs.
	RecomputeNone Recompute = "none"
	// RecomputeSelective recomputes only the attention core (QKᵀ, softmax,
	// dropout, attention over V), Korthikanti et al. 2022 §4.
	RecomputeSelective Recompute = "selective"
	// RecomputeFull stores only each layer's input and reruns its forward
	// pass before the backward pass (dissertation §4.2 / Chen et al. 2016).
	RecomputeFull Recompute = "full"
)

// ParseRecompute parses "none", "selective" or "full" ("" means none).
func ParseRecompute(s string) (Recompute, error) {
	switch r := Recompute(s); r {
	case "":
		return RecomputeNone, nil
	case RecomputeNone, RecomputeSelective, RecomputeFull:
		return r, nil
	}
	return "", fmt.Errorf("recompute: must be none, selective or full, got %q", s)
}

// LayerFwdGEMMs returns the forward matrix multiplications of one
// transformer layer for a microbatch of b sequences, in FLOPs (2·m·k·n each,
// dissertation §4.5.1): the dense ones — QKV 6bsh², output projection 2bsh²,
// MLP up and down 2bshf each — and one of the two attention-core batched
// products (scores QKᵀ, then attention over V), 2bs²h each.
func (t Transformer) LayerFwdGEMMs(b int) (dense [4]float64, core float64) {
	s, h, f, bb := float64(t.Seq), float64(t.Hidden), float64(t.FFNSize()), float64(b)
	dense = [4]float64{6 * bb * s * h * h, 2 * bb * s * h * h, 2 * bb * s * h * f, 2 * bb * s * h * f}
	return dense, 2 * bb * s * s * h
}

// LayerFwdFLOPs returns the forward FLOPs of one transformer layer for a
// microbatch of b sequences: 24bsh² + 4bs²h when f = 4h (§4.5.1).
func (t Transformer) LayerFwdFLOPs(b int) float64 {
	dense, core := t.LayerFwdGEMMs(b)
	return dense[0] + dense[1] + dense[2] + dense[3] + 2*core
}

// LayerAttentionCoreFwdFLOPs returns the forward FLOPs of the attention core
// (scores and attention over values, 4bs²h): what selective recomputation redoes.
func (t Transformer) LayerAttentionCoreFwdFLOPs(b int) float64 {
	_, core := t.LayerFwdGEMMs(b)
	return 2 * core
}

// LogitFwdFLOPs returns the forward FLOPs of the output (logit) layer for b
// sequences, 2bshV (dissertation §4.5.1).
func (t Transformer) LogitFwdFLOPs(b int) float64 {
	return 2 * float64(b) * float64(t.Seq) * float64(t.Hidden) * float64(t.Vocab)
}

// LayerTrainFLOPs returns the FLOPs of one layer's forward and backward pass
// (backward = 2 × forward) for b sequences, plus what recomputation r redoes:
// the whole forward pass (full; 96bsh²(1+s/6h) as in eq. 4.2), the attention
// core (selective) or nothing.
func (t Transformer) LayerTrainFLOPs(b int, r Recompute) float64 {
	fwd := t.LayerFwdFLOPs(b)
	switch r {
	case RecomputeFull:
		return 4 * fwd
	case RecomputeSelective:
		return 3*fwd + t.LayerAttentionCoreFwdFLOPs(b)
	}
	return 3 * fwd
}

// IterationFLOPs returns the FLOPs of one training iteration over a global
// batch of B sequences with recomputation r. With RecomputeFull it is the
// dissertation's eq. 4.2, F = 96Bslh²(1 + s/6h + V/16lh), the count behind the
// published TFLOP/s; with RecomputeNone it is the model FLOPs that MFU uses.
// The logit layer (6BshV) is never recomputed.
func (t Transformer) IterationFLOPs(B int, r Recompute) float64 {
	return float64(t.Layers)*t.LayerTrainFLOPs(B, r) + 3*t.LogitFwdFLOPs(B)
}
