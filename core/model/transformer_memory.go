package model

// ActivationOptions are the execution choices that change how much
// activation memory a transformer layer keeps for its backward pass.
type ActivationOptions struct {
	// TP is the tensor-parallel size t (>= 1); 0 is read as 1.
	TP int
	// SequenceParallel shards the layer norm and dropout activations over the
	// t tensor-parallel GPUs along the sequence (Korthikanti et al. 2022 §4.2.2).
	SequenceParallel bool
	// Recompute is the recomputation strategy; "" is read as none.
	Recompute Recompute
	// Modules are what selective recomputation reruns (the zero set: the
	// attention core alone).
	Modules ModuleSet
	// FlashAttention fuses the attention core (Dao et al. 2022): the s×s
	// scores, softmax and its dropout mask are never stored, only the
	// output and the fp32 softmax statistics (4·a·s·b bytes).
	FlashAttention bool
	// CP is the context-parallel size (the sequence split cp ways); 0 is read as 1.
	CP int
}

// tp returns the tensor-parallel size, at least 1.
func (o ActivationOptions) tp() float64 {
	if o.TP < 1 {
		return 1
	}
	return float64(o.TP)
}

// LayerActivationBytes returns the activation memory layer 0 keeps per
// GPU for a microbatch of b sequences; see LayerActivationBytesAt.
func (t Transformer) LayerActivationBytes(b int, o ActivationOptions) float64 {
	return t.LayerActivationBytesAt(b, 0, o)
}

// LayerActivationBytesAt returns the activation memory layer i keeps per
// GPU for a microbatch of b sequences (Korthikanti et al. 2022,
// "Reducing Activation Recomputation in Large Transformer Models", §4 and
// Table 2). In 16-bit precision it is sbh(34 + 5as/h) for GPT without
// parallelism; sbh(10 + 24/t + 5as/(ht)) with tensor parallelism;
// sbh/t·(34 + 5as/h) with sequence parallelism too; selective
// recomputation drops the 5as/h term (the attention core; with
// ActivationOptions.Modules, what each named module rebuilds instead); full
// recomputation keeps only the layer input, 2sbh (2sbh/t with sequence
// parallelism). Other precisions
// scale the stored values (w bytes each) but not the 1-byte dropout masks.
// Deviations from the paper's GPT, each following what is stored: grouped
// query attention stores smaller K and V (kv/a of Q); a gated MLP stores
// three s·b·f tensors (gate, up, their product) instead of two; flash
// attention stores the softmax statistics instead of the 5as²b core; a
// mixture-of-experts layer stores, per routed copy of each token (topk),
// the expert input and its MLP intermediates, plus the shared experts'; a
// model without dropout (NoDropout) stores no masks; FP8 training
// (Transformer Engine) stores the inputs of the linear layers' weight
// gradients — both norm outputs, the MLP's second GEMM input, an extra
// copy of the projection input — in FP8 (1 byte) and the rest in bf16.
// Context parallelism divides everything by cp.
func (t Transformer) LayerActivationBytesAt(b, i int, o ActivationOptions) float64 {
	w, err := t.BytesPerValue()
	if err != nil {
		return 0
	}
	s, h, a, bb := float64(t.Seq), float64(t.Hidden), float64(t.Heads), float64(b)
	if o.CP > 1 {
		s /= float64(o.CP)
	}
	tp := o.tp()
	sp := 1.0
	if o.SequenceParallel {
		sp = tp
	}
	sbh := s * bb * h
	if o.Recompute == RecomputeFull {
		return w * sbh / sp
	}
	// wg is the width of a stored GEMM input: FP8 under Transformer Engine.
	wg, masks := w, 2.0
	if t.TrainingPrecision() == FP8 {
		wg = 1
	}
	if t.NoDropout {
		masks = 0
	}
	// Replicated without sequence parallelism: both norm inputs (2w·sbh),
	// their outputs, the QKV and MLP GEMM inputs (2wg·sbh), and the two
	// dropout masks (2·sbh).
	replicated := (2*w + 2*wg + masks) * sbh / sp
	// Split over t: Q, K, V and the projection input (4w·sbh for multi-head
	// attention; the projection keeps an FP8 copy too in FP8 training), and
	// the MLP's intermediates: the first GEMM's outputs in w, the second
	// GEMM's input in wg.
	q, kv := a*float64(t.HeadSize()), float64(t.KVHeadCount())*float64(t.HeadSize())
	if m := t.MLA; m != nil {
		q = a * float64(m.QKNopeHeadDim+m.QKRopeHeadDim)
		kv = (q + a*float64(m.VHeadDim)) / 2 // K heads are as wide as Q heads; V heads v_head_dim
	}
	split := w * s * bb * (2*q + 2*kv) / tp
	if wg < w {
		split += wg * s * bb * q / tp
	}
	// The MLP block, split over t: a dense layer's intermediates, or the
	// routed experts' inputs and intermediates (their activation's output,
	// what moe_act drops, apart) and the shared experts'.
	var dense, routed, routedAct, shared float64
	mlp := w*(t.mlpMatrices()-1) + wg // bytes per token and inner unit
	if t.IsMoELayer(i) {
		m, fe := t.MoE, float64(t.ExpertFFN())
		copies := float64(m.TopK) * s * bb
		routedAct = copies * wg * fe / tp
		routed = copies*(wg*h+(mlp-wg)*fe)/tp + routedAct
		shared = float64(m.SharedExperts) * s * bb * mlp * fe / tp
	} else {
		dense = mlp * s * bb * float64(t.FFNSize()) / tp
	}
	// The attention core: with flash attention its softmax statistics;
	// without, the softmax output, its dropout mask and output
	// ((2w+1)·as²b, 5as²b in 16-bit), split over t, and without dropout
	// the softmax output alone (w·as²b).
	core := 4 * a * s * bb / tp
	if !o.FlashAttention {
		perScore := 2*w + 1
		if t.NoDropout {
			perScore = w
		}
		core = perScore * a * s * s * bb / tp
	}
	all := replicated + split + dense + routed + shared + core
	if o.Recompute != RecomputeSelective {
		return all
	}
	// Selective recomputation drops what its modules rebuild: the core;
	// the norms' outputs (2wg·sbh); MLA's Q, K and V as its up-projections
	// give them; the dense MLP's or the whole MoE block's intermediates;
	// the routed experts' activation outputs; the shared experts'.
	m := o.Modules
	if m.Has(ModuleCoreAttn) {
		all -= core
	}
	if m.Has(ModuleLayerNorm) {
		all -= 2 * wg * sbh / sp
	}
	if m.Has(ModuleMLAUpProj) && t.MLA != nil {
		all -= w * s * bb * (q + 2*kv) / tp
	}
	switch {
	case dense > 0 && m.Has(ModuleMLP):
		all -= dense
	case dense == 0 && m.Has(ModuleMoE):
		all -= routed + shared
	default:
		if m.Has(ModuleMoEAct) {
			all -= routedAct
		}
		if m.Has(ModuleSharedExperts) {
			all -= shared
		}
	}
	return all
}

// EmbeddingActivationBytes returns the activation memory of the input
// embedding for b sequences: its dropout mask, sbh bytes, split over t with
// sequence parallelism (Korthikanti et al. 2022 §4.3). It lives on the first
// pipeline stage.
func (t Transformer) EmbeddingActivationBytes(b int, o ActivationOptions) float64 {
	sbh := float64(t.Seq) * float64(b) * float64(t.Hidden)
	if o.SequenceParallel {
		return sbh / o.tp()
	}
	return sbh
}

// OutputActivationBytes returns the activation memory of the output layer
// for b sequences: the final layer norm's input and the output projection's
// input (w·sbh each, split over t with sequence parallelism) and the fp32
// logits the cross-entropy keeps (4sbV/t); 4sbh/t·(1 + V/h) in 16-bit with
// sequence parallelism (Korthikanti et al. 2022 §4.3). It lives on the last
// pipeline stage.
func (t Transformer) OutputActivationBytes(b int, o ActivationOptions) float64 {
	w, err := t.BytesPerValue()
	if err != nil {
		return 0
	}
	s, h, v, bb := float64(t.Seq), float64(t.Hidden), float64(t.Vocab), float64(b)
	tp := o.tp()
	sp := 1.0
	if o.SequenceParallel {
		sp = tp
	}
	return 2*w*s*bb*h/sp + 4*s*bb*v/tp
}

// MTPActivationBytes returns the activation memory of one multi-token
// prediction module (MTPLayers) for b sequences besides its transformer
// layer (LayerActivationBytesAt of the last layer): the two normed inputs
// and their concatenation that its projection reads (4·w·sbh, split over t
// with sequence parallelism) and its own output layer's
// (OutputActivationBytes). It lives on the last pipeline stage.
func (t Transformer) MTPActivationBytes(b int, o ActivationOptions) float64 {
	w, err := t.BytesPerValue()
	if err != nil {
		return 0
	}
	sbh := float64(t.Seq) * float64(b) * float64(t.Hidden)
	if o.SequenceParallel {
		sbh /= o.tp()
	}
	return 4*w*sbh + t.OutputActivationBytes(b, o)
}
