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

// GEMM is one kind of matrix multiplication in a layer's forward pass.
type GEMM struct {
	// Name says which product it is ("qkv", "attention-scores", "expert-up", ...).
	Name string
	// FLOPs is its forward work for the whole microbatch, 2·m·k·n summed
	// over its Instances.
	FLOPs float64
	// Instances is the number of equal, independent products the work is
	// split into: 1, or the routed experts E of a mixture-of-experts layer
	// (each runs its share of the tokens, topk·b·s/E with balanced routing).
	Instances int
	// Attention marks the attention core (QKᵀ and attention over V): it
	// grows with s², selective recomputation redoes it, flash attention
	// fuses it, context parallelism splits it.
	Attention bool
	// Expert marks the routed experts, which expert parallelism shards.
	Expert bool
	// Shapes are the sizes of its products for one instance, as the whole
	// microbatch runs them before tensor, context or expert parallelism
	// splits them: one product, or two for a low-rank pair such as MLA's
	// down- and up-projection (Shapes[1] zero otherwise); none for the
	// attention core, which is not a linear layer.
	Shapes [2]Shape
}

// Shape is one matrix product of a linear layer: Rows tokens of K input
// features into N output features, 2·Rows·K·N FLOPs.
type Shape struct {
	Rows, K, N float64
}

// Inputs returns the number of values of the product's activation input
// for the whole microbatch (Rows × K, summed over its shapes and
// Instances), what Transformer Engine casts to FP8 before an FP8 GEMM
// forward; 0 for the attention core.
func (g GEMM) Inputs() float64 {
	return float64(g.Instances) * (g.Shapes[0].Rows*g.Shapes[0].K + g.Shapes[1].Rows*g.Shapes[1].K)
}

// Outputs returns the number of values of its output (Rows × N, summed
// likewise): what is cast to FP8 of the output's gradient backward.
func (g GEMM) Outputs() float64 {
	return float64(g.Instances) * (g.Shapes[0].Rows*g.Shapes[0].N + g.Shapes[1].Rows*g.Shapes[1].N)
}

// ForwardGEMMs returns the matrix multiplications of layer i's forward
// pass for a microbatch of b sequences (2·m·k·n FLOPs each, dissertation
// §4.5.1), as Megatron-LM's num_floating_point_operations
// (megatron/training/training.py) counts them: the query, key/value and
// output projections (GQA shrinks the key/value ones by kv/a), the full
// (non-causal) s×s attention core (times AttentionSpan where layers attend
// in a sliding window), the MLP (three matrices when gated) or,
// in a mixture-of-experts layer, each token's TopK routed experts and the
// shared ones. Like Megatron it leaves out the router (2bshE) and, for MLA,
// counts its down- and up-projections as the matrices they are.
func (t Transformer) ForwardGEMMs(b, i int) []GEMM {
	s, h, bb := float64(t.Seq), float64(t.Hidden), float64(b)
	tok := bb * s
	a := float64(t.Heads)
	span := t.AttentionSpan()
	g := make([]GEMM, 0, 8) // at most 8 products: one allocation
	linear := func(name string, shapes ...Shape) GEMM {
		l := GEMM{Name: name, Instances: 1}
		for k, sh := range shapes {
			l.Shapes[k] = sh
			l.FLOPs += 2 * sh.Rows * sh.K * sh.N
		}
		return l
	}
	if m := t.MLA; m != nil {
		qk, v := float64(m.QKNopeHeadDim+m.QKRopeHeadDim), float64(m.VHeadDim)
		ql, kvl := float64(m.QLoraRank), float64(m.KVLoraRank)
		q := linear("q", Shape{tok, h, a * qk})
		if ql > 0 {
			q = linear("q", Shape{tok, h, ql}, Shape{tok, ql, a * qk})
		}
		down, up := kvl+float64(m.QKRopeHeadDim), a*float64(m.QKNopeHeadDim+m.VHeadDim) // the kv pair's two output widths
		g = append(g, q, linear("kv", Shape{tok, h, down}, Shape{tok, kvl, up}),
			GEMM{Name: "attention-scores", FLOPs: 2 * bb * s * s * span * a * qk, Instances: 1, Attention: true},
			GEMM{Name: "attention-values", FLOPs: 2 * bb * s * s * span * a * v, Instances: 1, Attention: true},
			linear("attention-out", Shape{tok, a * v, h}))
	} else {
		d := float64(t.HeadSize())
		q, kv := a*d, float64(t.KVHeadCount())*d
		g = append(g, linear("qkv", Shape{tok, h, q + 2*kv}),
			GEMM{Name: "attention-scores", FLOPs: 2 * bb * s * s * span * q, Instances: 1, Attention: true},
			GEMM{Name: "attention-values", FLOPs: 2 * bb * s * s * span * q, Instances: 1, Attention: true},
			linear("attention-out", Shape{tok, q, h}))
	}
	up := t.mlpMatrices() - 1 // gate and up, or up
	if !t.IsMoELayer(i) {
		f := float64(t.FFNSize())
		return append(g, linear("mlp-up", Shape{tok, h, up * f}), linear("mlp-down", Shape{tok, f, h}))
	}
	m, fe := t.MoE, float64(t.ExpertFFN())
	// Each routed expert runs its share of the tokens' topk choices.
	routed := float64(m.TopK) * tok / float64(m.Experts)
	for _, e := range []GEMM{linear("expert-up", Shape{routed, h, up * fe}), linear("expert-down", Shape{routed, fe, h})} {
		e.Instances, e.Expert = m.Experts, true
		e.FLOPs *= float64(m.Experts)
		g = append(g, e)
	}
	if m.SharedExperts > 0 {
		// The shared experts run as one MLP of their summed width
		// (Megatron-Core's SharedExpertMLP).
		shared := float64(m.SharedExperts) * fe
		g = append(g, linear("shared-up", Shape{tok, h, up * shared}), linear("shared-down", Shape{tok, shared, h}))
	}
	return g
}

// AttentionSpan returns the share of the full attention core a layer
// computes on average: 1, less what the SlidingLayers windowed layers
// and the ChunkedLayers chunked ones skip. A windowed layer's causal query-key pairs, s·w − w(w−1)/2 for a
// window w < s, over the s(s+1)/2 of a full causal layer; a chunked
// layer's (Llama 4), c(c+1)/2 per whole chunk of c and r(r+1)/2 for a
// last one of r tokens; the savings are spread evenly over the layers
// (GPT-OSS alternates windowed and full layers, Llama 4 puts a full one
// after three chunked, so a pipeline stage of a few layers holds about
// its share of each).
func (t Transformer) AttentionSpan() float64 {
	s, full := float64(t.Seq), float64(t.Seq)*float64(t.Seq+1)/2
	span := 1.0
	if w := float64(t.SlidingWindow); t.SlidingLayers > 0 && w < s {
		windowed := (s*w - w*(w-1)/2) / full
		span -= float64(t.SlidingLayers) / float64(t.Layers) * (1 - windowed)
	}
	if c := t.AttentionChunk; t.ChunkedLayers > 0 && c < t.Seq {
		// q whole chunks of c(c+1)/2 pairs and a last one of r tokens.
		q, r := float64(t.Seq/c), float64(t.Seq%c)
		chunked := (q*float64(c)*float64(c+1)/2 + r*(r+1)/2) / full
		span -= float64(t.ChunkedLayers) / float64(t.Layers) * (1 - chunked)
	}
	return span
}

// LayerFwdGEMMs returns the forward matrix multiplications of one dense
// GPT layer for a microbatch of b sequences (dissertation §4.5.1): the
// dense ones — QKV 6bsh², output projection 2bsh², MLP up and down 2bshf
// each — and one of the two attention-core batched products (scores QKᵀ,
// then attention over V), 2bs²h each. ForwardGEMMs generalizes it.
func (t Transformer) LayerFwdGEMMs(b int) (dense [4]float64, core float64) {
	s, h, f, bb := float64(t.Seq), float64(t.Hidden), float64(t.FFNSize()), float64(b)
	dense = [4]float64{6 * bb * s * h * h, 2 * bb * s * h * h, 2 * bb * s * h * f, 2 * bb * s * h * f}
	return dense, 2 * bb * s * s * h
}

// LayerFwdFLOPs returns the forward FLOPs of layer i for a microbatch of b
// sequences: 24bsh² + 4bs²h for a GPT layer with f = 4h (§4.5.1).
func (t Transformer) LayerFwdFLOPs(b, i int) float64 {
	var n float64
	for _, g := range t.ForwardGEMMs(b, i) {
		n += g.FLOPs
	}
	return n
}

// LayerAttentionCoreFwdFLOPs returns the forward FLOPs of layer i's
// attention core (scores and attention over values, 4bs²h for GPT): what
// selective recomputation redoes.
func (t Transformer) LayerAttentionCoreFwdFLOPs(b, i int) float64 {
	var n float64
	for _, g := range t.ForwardGEMMs(b, i) {
		if g.Attention {
			n += g.FLOPs
		}
	}
	return n
}

// LogitFwdFLOPs returns the forward FLOPs of the output (logit) layer for b
// sequences, 2bshV (dissertation §4.5.1).
func (t Transformer) LogitFwdFLOPs(b int) float64 {
	return 2 * float64(b) * float64(t.Seq) * float64(t.Hidden) * float64(t.Vocab)
}

// LayerTrainFLOPs returns the FLOPs of layer i's forward and backward pass
// (backward = 2 × forward) for b sequences, plus what recomputation r redoes:
// the whole forward pass (full; 96bsh²(1+s/6h) as in eq. 4.2), the attention
// core (selective) or nothing.
func (t Transformer) LayerTrainFLOPs(b, i int, r Recompute) float64 {
	fwd := t.LayerFwdFLOPs(b, i)
	switch r {
	case RecomputeFull:
		return 4 * fwd
	case RecomputeSelective:
		return 3*fwd + t.LayerAttentionCoreFwdFLOPs(b, i)
	}
	return 3 * fwd
}

// MTPFwdFLOPs returns the forward FLOPs of one multi-token prediction
// module (MTPLayers) for b sequences: its 2h-to-h projection (2bs·2h·h),
// its transformer layer (LayerFwdFLOPs of the last layer's kind) and its
// own pass through the output layer (LogitFwdFLOPs).
func (t Transformer) MTPFwdFLOPs(b int) float64 {
	h := float64(t.Hidden)
	return 2*float64(b)*float64(t.Seq)*2*h*h + t.LayerFwdFLOPs(b, t.Layers-1) + t.LogitFwdFLOPs(b)
}

// IterationFLOPs returns the FLOPs of one training iteration over a global
// batch of B sequences with recomputation r. With RecomputeFull it is the
// dissertation's eq. 4.2, F = 96Bslh²(1 + s/6h + V/16lh), the count behind the
// published TFLOP/s; with RecomputeNone it is the model FLOPs that MFU uses.
// The logit layer (6BshV) is never recomputed.
//
// With RecomputeNone it is Megatron-LM's num_floating_point_operations:
// 12·B·s·l·h²·((1 + kv/a + s/h)·(a·d/h) + (f/h)·k·g + (f_s/h)·g + V/(2lh)),
// g = 3/2 for a gated MLP, k routed experts per token, f_s the shared ones.
//
// Each multi-token prediction module adds its forward and backward
// (3·MTPFwdFLOPs) and what r recomputes of its transformer layer.
func (t Transformer) IterationFLOPs(B int, r Recompute) float64 {
	n := t.sumLayers(func(i int) float64 { return t.LayerTrainFLOPs(B, i, r) }) + 3*t.LogitFwdFLOPs(B)
	if t.MTPLayers > 0 {
		last := t.Layers - 1
		mtp := 3*t.MTPFwdFLOPs(B) + t.LayerTrainFLOPs(B, last, r) - 3*t.LayerFwdFLOPs(B, last)
		n += float64(t.MTPLayers) * mtp
	}
	return n
}
