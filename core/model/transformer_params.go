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
	opt := []struct {
		name, zero string
		v          int
	}{{"ffn", "4·hidden", t.FFN}, {"kv_heads", "heads", t.KVHeads}, {"head_dim", "hidden/heads", t.HeadDim}}
	for _, d := range opt {
		if d.v < 0 || d.v > maxDim {
			return fmt.Errorf("transformer.%s: must be in [0, %d] (0 means %s), got %d", d.name, maxDim, d.zero, d.v)
		}
	}
	if t.HeadDim == 0 && t.MLA == nil && t.Hidden%t.Heads != 0 {
		return fmt.Errorf("transformer.heads: must divide hidden %d (or set head_dim), got %d", t.Hidden, t.Heads)
	}
	if t.KVHeads > 0 && (t.KVHeads > t.Heads || t.Heads%t.KVHeads != 0) {
		return fmt.Errorf("transformer.kv_heads: must divide the %d heads, got %d", t.Heads, t.KVHeads)
	}
	if err := oneOf("position_embedding", t.PositionEmbedding, PositionLearned, PositionNone); err != nil {
		return err
	}
	if err := oneOf("norm", t.Norm, NormLayer, NormRMS); err != nil {
		return err
	}
	if err := oneOf("bias", t.Bias, BiasAll, BiasNone, BiasQKV); err != nil {
		return err
	}
	if m := t.MoE; m != nil {
		if m.Experts < 1 || m.Experts > maxDim {
			return fmt.Errorf("transformer.moe.experts: must be in [1, %d], got %d", maxDim, m.Experts)
		}
		if m.TopK < 1 || m.TopK > m.Experts {
			return fmt.Errorf("transformer.moe.topk: must be in [1, experts %d], got %d", m.Experts, m.TopK)
		}
		if m.FFN < 0 || m.FFN > maxDim {
			return fmt.Errorf("transformer.moe.ffn: must be in [0, %d] (0 means the model's ffn), got %d", maxDim, m.FFN)
		}
		if m.SharedExperts < 0 || m.SharedExperts > maxDim {
			return fmt.Errorf("transformer.moe.shared_experts: must be in [0, %d], got %d", maxDim, m.SharedExperts)
		}
		if m.FirstDense < 0 || m.FirstDense > t.Layers {
			return fmt.Errorf("transformer.moe.first_dense: must be in [0, layers %d], got %d", t.Layers, m.FirstDense)
		}
		if m.Every < 0 || m.Every > t.Layers {
			return fmt.Errorf("transformer.moe.every: must be in [0, layers %d] (0 or 1: every layer past first_dense), got %d", t.Layers, m.Every)
		}
		if m.Groups != 0 || m.GroupTopK != 0 {
			switch {
			case m.Groups < 2 || m.Groups > MaxExpertGroups || m.Experts%m.Groups != 0:
				return fmt.Errorf("transformer.moe.groups: must divide the %d experts into 2 to %d groups (0: no group limit), got %d", m.Experts, MaxExpertGroups, m.Groups)
			case m.GroupTopK < 1 || m.GroupTopK > m.Groups:
				return fmt.Errorf("transformer.moe.group_topk: must be in [1, groups %d], got %d", m.Groups, m.GroupTopK)
			case m.TopK > m.GroupTopK*(m.Experts/m.Groups):
				return fmt.Errorf("transformer.moe.group_topk: %d groups of %d experts cannot hold topk %d", m.GroupTopK, m.Experts/m.Groups, m.TopK)
			}
		}
		if t.MoELayers() < 1 {
			return fmt.Errorf("transformer.moe.every: leaves no mixture-of-experts layer among the %d layers past first_dense %d, got %d", t.Layers-m.FirstDense, m.FirstDense, m.Every)
		}
	}
	if t.SlidingWindow < 0 || t.SlidingWindow > maxDim {
		return fmt.Errorf("transformer.sliding_window: must be in [0, %d] (0: no windowed layers), got %d", maxDim, t.SlidingWindow)
	}
	if t.SlidingLayers < 0 || t.SlidingLayers > t.Layers || (t.SlidingLayers > 0) != (t.SlidingWindow > 0) {
		return fmt.Errorf("transformer.sliding_layers: must be in [1, layers %d] with a sliding_window (%d), 0 without, got %d", t.Layers, t.SlidingWindow, t.SlidingLayers)
	}
	if t.AttentionChunk < 0 || t.AttentionChunk > maxDim {
		return fmt.Errorf("transformer.attention_chunk: must be in [0, %d] (0: no chunked layers), got %d", maxDim, t.AttentionChunk)
	}
	if t.ChunkedLayers < 0 || t.ChunkedLayers+t.SlidingLayers > t.Layers || (t.ChunkedLayers > 0) != (t.AttentionChunk > 0) {
		return fmt.Errorf("transformer.chunked_layers: must be in [1, layers %d less %d windowed] with an attention_chunk (%d), 0 without, got %d", t.Layers, t.SlidingLayers, t.AttentionChunk, t.ChunkedLayers)
	}
	if t.MTPLayers < 0 || t.MTPLayers > t.Layers {
		return fmt.Errorf("transformer.mtp_layers: must be in [0, layers %d], got %d", t.Layers, t.MTPLayers)
	}
	if m := t.MLA; m != nil {
		for _, d := range []struct {
			name  string
			v, lo int
		}{{"q_lora_rank", m.QLoraRank, 0}, {"kv_lora_rank", m.KVLoraRank, 1}, {"qk_rope_head_dim", m.QKRopeHeadDim, 0},
			{"qk_nope_head_dim", m.QKNopeHeadDim, 0}, {"v_head_dim", m.VHeadDim, 1}} {
			if d.v < d.lo || d.v > maxDim {
				return fmt.Errorf("transformer.mla.%s: must be in [%d, %d], got %d", d.name, d.lo, maxDim, d.v)
			}
		}
		if m.QKRopeHeadDim+m.QKNopeHeadDim < 1 {
			return fmt.Errorf("transformer.mla.qk_nope_head_dim: the query/key head (nope %d + rope %d) must be >= 1", m.QKNopeHeadDim, m.QKRopeHeadDim)
		}
	}
	if err := t.Numerics.Validate(); err != nil {
		return err
	}
	if n := t.Numerics; t.PositionEmbedding != PositionNone && (n.RotaryBase > 0 || n.RotaryPercent > 0 || n.RopeScaling != (RopeScaling{})) {
		return fmt.Errorf("transformer.numerics.rotary_base: the model learns its positions (position_embedding %q), it has no rotary embedding to set", PositionLearned)
	}
	if _, err := t.BytesPerValue(); err != nil {
		return err
	}
	return nil
}

// oneOf checks that v is "" or one of allowed.
func oneOf(field, v string, allowed ...string) error {
	if v == "" {
		return nil
	}
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return fmt.Errorf("transformer.%s: must be one of %v, got %q", field, allowed, v)
}

// FFNSize returns the feed-forward inner size of the dense layers: FFN, or
// 4h when FFN is 0.
func (t Transformer) FFNSize() int {
	if t.FFN == 0 {
		return 4 * t.Hidden
	}
	return t.FFN
}

// KVHeadCount returns the number of key/value heads: KVHeads, or Heads.
func (t Transformer) KVHeadCount() int {
	if t.KVHeads == 0 {
		return t.Heads
	}
	return t.KVHeads
}

// HeadSize returns the size of one attention head: HeadDim, or h/a.
func (t Transformer) HeadSize() int {
	if t.HeadDim == 0 {
		return t.Hidden / t.Heads
	}
	return t.HeadDim
}

// ExpertFFN returns the inner size of one routed or shared expert.
func (t Transformer) ExpertFFN() int {
	if t.MoE.FFN == 0 {
		return t.FFNSize()
	}
	return t.MoE.FFN
}

// IsMoELayer reports whether layer i (0-based) has a mixture-of-experts
// MLP: past the first FirstDense layers, each Every-th.
func (t Transformer) IsMoELayer(i int) bool {
	return t.MoE != nil && i >= t.MoE.FirstDense && (i+1)%t.MoE.every() == 0
}

// every is Every with its 0 read as 1.
func (m *MoE) every() int { return max(1, m.Every) }

// MoELayers returns the number of mixture-of-experts layers.
func (t Transformer) MoELayers() int {
	if t.MoE == nil {
		return 0
	}
	n := t.MoE.every()
	return t.Layers/n - t.MoE.FirstDense/n
}

// LayerOfEachKind returns one layer index of each kind of layer the model
// has, the first of each: dense (a dense model's only kind) and mixture of
// experts. Layers of one kind are alike.
func (t Transformer) LayerOfEachKind() []int {
	if t.MoE == nil {
		return []int{0}
	}
	n := t.MoE.every()
	moe := (t.MoE.FirstDense/n+1)*n - 1 // the first past FirstDense; Validate keeps it a layer
	if t.MoE.FirstDense > 0 || n > 1 {
		return []int{0, moe} // layer 0 is dense
	}
	return []int{moe}
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
// FP8 training as Transformer Engine does it runs the linear layers' GEMMs
// in FP8 but keeps weights, activations between kernels and communication
// in bf16, so it also counts 2 bytes.
func (t Transformer) BytesPerValue() (float64, error) {
	switch t.TrainingPrecision() {
	case FP32:
		return 4, nil
	case FP16, BF16, FP8:
		return 2, nil
	}
	return 0, fmt.Errorf("transformer.precision: must be one of fp32, fp16, bf16, fp8, got %q", t.Precision)
}

// mlpMatrices returns the number of h×f matrices of one MLP: 3 gated, 2 not.
func (t Transformer) mlpMatrices() float64 {
	if t.GatedFFN {
		return 3
	}
	return 2
}

// AttentionParams returns the parameters of one layer's attention block:
// the query, key, value and output projections and their biases. For
// multi-head attention with f = 4h it is 4h²+4h (eq. 4.3); with grouped
// query attention the key and value projections shrink to h·kv·d each; with
// MLA it counts the down- and up-projections and the latent norms
// (DeepSeek-V2 §2.1.2); attention sinks add one per head, query/key norms
// two of head_dim.
func (t Transformer) AttentionParams() float64 {
	return t.attentionProjectionParams() + t.sinkParams()
}

// sinkParams returns the attention parameters of one layer besides the
// projections: its sinks, a per head, and its query and key norms (QKNorm),
// one scale per head channel each.
func (t Transformer) sinkParams() float64 {
	var n float64
	if t.AttentionSinks {
		n += float64(t.Heads)
	}
	if t.QKNorm {
		n += 2 * float64(t.HeadSize())
	}
	return n
}

// attentionProjectionParams is AttentionParams without sinkParams.
func (t Transformer) attentionProjectionParams() float64 {
	h := float64(t.Hidden)
	if m := t.MLA; m != nil {
		a, qk := float64(t.Heads), float64(m.QKNopeHeadDim+m.QKRopeHeadDim)
		ql, kvl := float64(m.QLoraRank), float64(m.KVLoraRank)
		q := h * a * qk
		if ql > 0 {
			q = h*ql + ql + ql*a*qk
		}
		kv := h*(kvl+float64(m.QKRopeHeadDim)) + kvl + kvl*a*float64(m.QKNopeHeadDim+m.VHeadDim)
		return q + kv + a*float64(m.VHeadDim)*h
	}
	q := float64(t.Heads) * float64(t.HeadSize())
	kv := float64(t.KVHeadCount()) * float64(t.HeadSize())
	w := 2*h*q + 2*h*kv
	switch t.Bias {
	case "", BiasAll:
		w += q + 2*kv + h
	case BiasQKV:
		w += q + 2*kv
	}
	return w
}

// denseMLPParams returns the parameters of an MLP of inner size f.
func (t Transformer) denseMLPParams(f float64) float64 {
	h := float64(t.Hidden)
	w := t.mlpMatrices() * h * f
	if t.Bias == "" || t.Bias == BiasAll {
		w += (t.mlpMatrices()-1)*f + h
	}
	return w
}

// normParams returns the parameters of one normalization over h channels.
func (t Transformer) normParams() float64 {
	if t.Norm == NormRMS {
		return float64(t.Hidden)
	}
	return 2 * float64(t.Hidden)
}

// LayerParams returns the parameters of one dense transformer layer:
// attention, MLP and two norms; 12h²+13h for GPT (the per-layer term of
// dissertation eq. 4.3).
func (t Transformer) LayerParams() float64 {
	return t.AttentionParams() + t.denseMLPParams(float64(t.FFNSize())) + 2*t.normParams()
}

// ExpertParams returns the parameters of one routed expert's MLP.
func (t Transformer) ExpertParams() float64 {
	if t.MoE == nil {
		return 0
	}
	return t.denseMLPParams(float64(t.ExpertFFN()))
}

// LayerParamsAt returns the parameters of layer i: a dense layer's, or for
// a mixture-of-experts layer the attention, the norms, every routed and
// shared expert, and the router (h·E).
func (t Transformer) LayerParamsAt(i int) float64 {
	return t.layerParamsAt(i, false)
}

// LayerLinearParamsAt returns the weights of layer i's linear layers, the
// GEMMs Transformer Engine runs in FP8 (ForwardGEMMs' products other than
// the attention core): LayerParamsAt without the two norms, the attention
// sinks and query/key norms and a mixture-of-experts layer's router, which
// stay in bf16.
// Biases and MLA's latent norms are counted with their projections (under
// 0.01 % of them).
func (t Transformer) LayerLinearParamsAt(i int) float64 {
	n := t.LayerParamsAt(i) - 2*t.normParams() - t.sinkParams()
	if t.IsMoELayer(i) {
		n -= float64(t.Hidden) * float64(t.MoE.Experts)
	}
	return n
}

// ActiveLayerParamsAt returns the parameters of layer i one token uses:
// LayerParamsAt with only its TopK routed experts counted.
func (t Transformer) ActiveLayerParamsAt(i int) float64 {
	return t.layerParamsAt(i, true)
}

// layerParamsAt implements LayerParamsAt and ActiveLayerParamsAt.
func (t Transformer) layerParamsAt(i int, active bool) float64 {
	if !t.IsMoELayer(i) {
		return t.LayerParams()
	}
	m := t.MoE
	routed := float64(m.Experts)
	if active {
		routed = float64(m.TopK)
	}
	experts := (routed + float64(m.SharedExperts)) * t.ExpertParams()
	return t.AttentionParams() + 2*t.normParams() + experts + float64(t.Hidden)*float64(m.Experts)
}

// EmbeddingParams returns the token embedding V·h plus, with learned
// positions, s·h (eq. 4.3), and the separate output layer V·h when the
// embeddings are untied. Tied, as in GPT, the output layer shares the token
// embedding.
func (t Transformer) EmbeddingParams() float64 {
	n := float64(t.Vocab) * float64(t.Hidden)
	if t.UntiedEmbeddings {
		n *= 2
	}
	if t.PositionEmbedding != PositionNone {
		n += float64(t.Seq) * float64(t.Hidden)
	}
	return n
}

// Params returns the total parameter count: every layer plus the
// embeddings; for GPT P = 12lh²(1 + 13/(12h) + (V+s)/(12lh)) (dissertation
// eq. 4.3). Like eq. 4.3 it leaves out the final norm (h or 2h parameters,
// under 0.001 % of any preset).
func (t Transformer) Params() float64 {
	return t.EmbeddingParams() + t.sumLayers(t.LayerParamsAt)
}

// MTPLayerParams returns the parameters of one multi-token prediction
// module (MTPLayers) besides the embedding and output layer it shares with
// the model: its projection from 2h to h (no bias), the norms of its two
// inputs and of its output, and its transformer layer, of the kind of the
// model's last layer (Megatron-Core builds it from the decoder's layer
// spec; DeepSeek-V3's is a mixture-of-experts layer).
func (t Transformer) MTPLayerParams() float64 {
	h := float64(t.Hidden)
	return 2*h*h + 3*t.normParams() + t.LayerParamsAt(t.Layers-1)
}

// MTPParams returns the parameters of the multi-token prediction modules,
// MTPLayers × MTPLayerParams: what training holds beyond Params.
func (t Transformer) MTPParams() float64 {
	return float64(t.MTPLayers) * t.MTPLayerParams()
}

// sumLayers returns the sum of f over the layers, f evaluated once per kind
// of layer: the dense ones (all, or a MoE model's first FirstDense and
// those Every skips) and the mixture-of-experts ones, which are alike
// within their kind.
func (t Transformer) sumLayers(f func(i int) float64) float64 {
	var n float64
	for _, i := range t.LayerOfEachKind() {
		count := t.MoELayers()
		if !t.IsMoELayer(i) {
			count = t.Layers - count
		}
		n += float64(count) * f(i)
	}
	return n
}

// ActiveParams returns the parameters one token uses: Params with only
// TopK routed experts per mixture-of-experts layer; Params for dense models.
func (t Transformer) ActiveParams() float64 {
	return t.EmbeddingParams() + t.sumLayers(t.ActiveLayerParamsAt)
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
