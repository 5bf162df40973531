package launch

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"pipeplan/core/model"
	"pipeplan/core/plan"
)

// megatronEntry is the Megatron-LM training script the launchers start.
const megatronEntry = "pretrain_gpt.py"

// megatronArgs are the Megatron-LM arguments (megatron/training/arguments.py)
// of the plan: the model's architecture (attention, MLP, MoE, norms,
// embeddings), every degree, the pipeline split, the microbatching,
// recomputation, the optimizer sharding, precision and overlap, on
// synthetic data. Each flag's source is testdata/megatron-args.txt.
func megatronArgs(in input) ([]flagArg, error) {
	const engine = "megatron"
	if _, err := common(engine, in); err != nil {
		return nil, err
	}
	e := in.Exec
	t, err := transformer(engine, in)
	if err != nil {
		return nil, err
	}
	if err := pipelineSchedule(engine, e); err != nil {
		return nil, err
	}
	itoa := strconv.Itoa
	args := []flagArg{
		{"--num-layers", itoa(t.Layers)}, {"--hidden-size", itoa(t.Hidden)},
		{"--ffn-hidden-size", itoa(ffnSize(t))}, {"--num-attention-heads", itoa(t.Heads)},
		{"--seq-length", itoa(t.Seq)}, {"--max-position-embeddings", itoa(t.Seq)},
		{"--tokenizer-type", "NullTokenizer"}, {"--vocab-size", itoa(t.Vocab)}, {"--mock-data", ""},
	}
	arch, err := megatronArchitecture(engine, t, e)
	if err != nil {
		return nil, err
	}
	args = append(args, arch...)
	args = append(args,
		flagArg{"--tensor-model-parallel-size", itoa(e.TP)}, flagArg{"--pipeline-model-parallel-size", itoa(e.PP)},
		flagArg{"--context-parallel-size", itoa(e.CP)}, flagArg{"--expert-model-parallel-size", itoa(e.EP)},
		flagArg{"--micro-batch-size", itoa(e.MicrobatchSize)}, flagArg{"--global-batch-size", itoa(e.GlobalBatch)},
	)
	split, err := megatronPipelineSplit(engine, in)
	if err != nil {
		return nil, err
	}
	args = append(args, split...)
	run, err := megatronExecution(engine, t, e)
	if err != nil {
		return nil, err
	}
	return append(append(args, run...), megatronBenchmark...), nil
}

// megatronBenchmark makes the command a 100-step benchmark that starts as
// it is: Megatron-LM needs a step count and a learning rate, and evaluates
// 100 batches at the end unless told not to; it logs each step's time and
// TFLOP/s per GPU.
var megatronBenchmark = []flagArg{
	{"--train-iters", "100"}, {"--lr", "1.0e-4"}, {"--min-lr", "1.0e-5"}, {"--lr-decay-style", "cosine"},
	{"--lr-warmup-iters", "10"}, {"--weight-decay", "0.1"}, {"--clip-grad", "1.0"},
	{"--eval-iters", "0"}, {"--eval-interval", "1000"}, {"--log-interval", "1"}, {"--log-throughput", ""},
}

// megatronNote heads every Megatron-LM artifact: what it runs, what it
// leaves to the user, and the model's rotary scaling where the command
// leaves it out.
func megatronNote(in input) string {
	note := "# A 100-step benchmark on synthetic tokens. For a real run give your data and tokenizer, the step count,\n" +
		"# learning-rate schedule and initialization.\n" +
		"# Megatron-LM pads the vocabulary to a multiple of 128 × tp (NullTokenizer adds one token).\n"
	if t := in.Model.Transformer; t != nil {
		if t.Numerics.QKL2Norm {
			note += "# The model's weightless L2 norm of queries and keys (Llama 4's use_qk_norm) is not in the command.\n"
		}
		if r := t.Numerics.RopeScaling; r != (model.RopeScaling{}) && !megatronRopeScaling(r) {
			note += fmt.Sprintf("# The model's %s rope scaling (factor %g) is not in the command: Megatron-LM's flags build Llama 3.1's\n"+
				"# alone; YaRN (DeepSeek-V3, gpt-oss, Kimi K2) extends the context after pre-training.\n", r.Type, r.Factor)
		}
	}
	return note
}

// megatronRopeScaling says whether Megatron-LM's --use-rope-scaling builds
// r: Llama 3.1's scaling, whose other constants Megatron-Core fixes
// (low and high frequency factors 1 and 4 over 8,192 positions:
// RotaryEmbedding._apply_scaling, megatron/core/models/common/embeddings/
// rotary_pos_embedding.py at 00caa53).
func megatronRopeScaling(r model.RopeScaling) bool {
	stated := func(v, fixed float64) bool { return v == 0 || v == fixed }
	return r.Type == model.RopeLlama3 && r.Factor > 0 && stated(float64(r.OriginalMaxPositions), 8192) &&
		stated(r.LowFreqFactor, 1) && stated(r.HighFreqFactor, 4)
}

// megatronNumerics are the model's stated numerics as Megatron-LM's flags:
// the rotary base (an integer there), the rotating share, Llama 3.1's
// rope scaling and the norms' epsilon; unstated ones keep Megatron-LM's
// defaults.
func megatronNumerics(engine string, t *model.Transformer) ([]flagArg, error) {
	n := t.Numerics
	var args []flagArg
	if b := n.RotaryBase; b > 0 {
		if b != math.Trunc(b) || b > math.MaxInt32 {
			return nil, notExpressible(engine, "model.transformer.numerics.rotary_base", b, "Megatron-LM's --rotary-base is an integer")
		}
		args = append(args, flagArg{"--rotary-base", strconv.FormatFloat(b, 'f', 0, 64)})
	}
	if p := n.RotaryPercent; p > 0 && p < 1 {
		args = append(args, flagArg{"--rotary-percent", strconv.FormatFloat(p, 'g', -1, 64)})
	}
	if r := n.RopeScaling; megatronRopeScaling(r) {
		args = append(args, flagArg{"--use-rope-scaling", ""}, flagArg{"--rope-scaling-factor", strconv.FormatFloat(r.Factor, 'g', -1, 64)})
	}
	if e := n.NormEpsilon; e > 0 {
		args = append(args, flagArg{"--norm-epsilon", strconv.FormatFloat(e, 'g', -1, 64)})
	}
	if k := n.NoRopeEvery; k > 0 {
		args = append(args, flagArg{"--no-rope-freq", strconv.Itoa(k)})
	}
	return args, nil
}

// megatronEnv is the environment Megatron-LM asserts: one CUDA connection
// when tensor or context parallelism overlaps its communication.
func megatronEnv(e plan.Execution) []flagArg {
	if e.TP > 1 || e.CP > 1 {
		return []flagArg{{"CUDA_DEVICE_MAX_CONNECTIONS", "1"}}
	}
	return nil
}

// megatronArchitecture is what sets the transformer apart from Megatron-LM's
// default GPT (multi-head attention, a GeLU MLP, learned positions,
// LayerNorm, biases, tied embeddings, dropout 0.1): grouped-query or latent
// attention, the gated MLP, rotary positions, RMSNorm, the stated
// numerics (rotary base and scaling, norm epsilon), the biases, untied
// embeddings, no dropout, query/key norms, sliding-window attention and
// its sinks, multi-token prediction and the mixture of experts.
func megatronArchitecture(engine string, t *model.Transformer, e plan.Execution) ([]flagArg, error) {
	itoa := strconv.Itoa
	var args []flagArg
	if m := t.MLA; m != nil {
		args = append(args, flagArg{"--multi-latent-attention", ""})
		if m.QLoraRank > 0 {
			args = append(args, flagArg{"--q-lora-rank", itoa(m.QLoraRank)})
		}
		// Megatron-LM's --kv-lora-rank defaults to 32, so it is always given.
		args = append(args, flagArg{"--kv-lora-rank", itoa(m.KVLoraRank)},
			flagArg{"--qk-head-dim", itoa(m.QKNopeHeadDim)}, flagArg{"--qk-pos-emb-head-dim", itoa(m.QKRopeHeadDim)},
			flagArg{"--v-head-dim", itoa(m.VHeadDim)})
	} else {
		if t.KVHeads > 0 && t.KVHeads != t.Heads {
			args = append(args, flagArg{"--group-query-attention", ""}, flagArg{"--num-query-groups", itoa(t.KVHeads)})
		}
		if t.HeadDim > 0 {
			args = append(args, flagArg{"--kv-channels", itoa(t.HeadDim)})
		}
	}
	if t.GatedFFN {
		args = append(args, flagArg{"--swiglu", ""})
	}
	if t.PositionEmbedding == model.PositionNone {
		// The presets without position parameters all use rotary embeddings.
		args = append(args, flagArg{"--position-embedding-type", "rope"})
	}
	if t.Norm == model.NormRMS {
		args = append(args, flagArg{"--normalization", "RMSNorm"})
	}
	numerics, err := megatronNumerics(engine, t)
	if err != nil {
		return nil, err
	}
	args = append(args, numerics...)
	switch t.Bias {
	case model.BiasNone:
		args = append(args, flagArg{"--disable-bias-linear", ""})
	case model.BiasQKV:
		args = append(args, flagArg{"--disable-bias-linear", ""}, flagArg{"--add-qkv-bias", ""})
	}
	if t.UntiedEmbeddings {
		args = append(args, flagArg{"--untie-embeddings-and-output-weights", ""})
	}
	if t.NoDropout {
		args = append(args, flagArg{"--attention-dropout", "0"}, flagArg{"--hidden-dropout", "0"})
	}
	window, err := megatronWindow(engine, t)
	if err != nil {
		return nil, err
	}
	args = append(args, window...)
	if t.ChunkedLayers > 0 && t.AttentionChunk < t.Seq {
		return nil, notExpressible(engine, "model.transformer.chunked_layers", t.ChunkedLayers,
			fmt.Sprintf("layers attending in chunks of %d tokens over sequences of %d: this export writes no chunked attention (at sequences up to the chunk it is full attention, exported as such)", t.AttentionChunk, t.Seq))
	}
	if t.QKNorm {
		args = append(args, flagArg{"--qk-layernorm", ""})
	}
	if t.AttentionSinks {
		args = append(args, flagArg{"--softmax-type", "learnable"})
	}
	if t.MTPLayers > 0 {
		args = append(args, flagArg{"--mtp-num-layers", itoa(t.MTPLayers)})
	}
	moe, err := megatronMoE(engine, t, e)
	return append(args, moe...), err
}

// moeLayerPattern is Megatron-LM's --moe-layer-freq for t's expert layers
// (a Python list expression of 0 for dense and 1 for expert, one per
// layer), or "" when every layer is one (its default): the leading dense
// layers then, past them, each Every-th layer an expert one, run-length
// coded, the period repeated where it divides the rest ("([0]*1+[1]*1)*24"
// for Llama 4 Maverick).
func moeLayerPattern(t *model.Transformer) string {
	kinds := make([]int, t.Layers)
	all := true
	for i := range kinds {
		if t.IsMoELayer(i) {
			kinds[i] = 1
		}
		all = all && kinds[i] == 1
	}
	if all {
		return ""
	}
	runs := func(ks []int) string {
		var parts []string
		for i := 0; i < len(ks); {
			j := i
			for j < len(ks) && ks[j] == ks[i] {
				j++
			}
			parts = append(parts, fmt.Sprintf("[%d]*%d", ks[i], j-i))
			i = j
		}
		return strings.Join(parts, "+")
	}
	if n := max(1, t.MoE.Every); n > 1 && t.MoE.FirstDense%n == 0 && t.Layers%n == 0 {
		// Whole periods past the leading dense ones: repeat one.
		lead, periods := t.MoE.FirstDense, (t.Layers-t.MoE.FirstDense)/n
		pattern := fmt.Sprintf("(%s)*%d", runs(kinds[lead:lead+n]), periods)
		if lead > 0 {
			pattern = fmt.Sprintf("[0]*%d+%s", lead, pattern)
		}
		return pattern
	}
	return "(" + runs(kinds) + ")"
}

// megatronWindow is sliding-window attention as Megatron-Core runs it:
// --window-size "(w,0)" as Megatron-Bridge's GPT-OSS provider sets it for
// Hugging Face's window w (Megatron-Core then attends w+1 tokens, the
// query's own and w before it, one more than Hugging Face's mask), on
// every layer or, with --window-attn-skip-freq 2, on every other one from
// the first (Megatron-Core's layer_number % 2 != 0, 1-indexed), as GPT-OSS
// alternates them. The model records how many layers are windowed, not
// which, so any other count is not exported.
func megatronWindow(engine string, t *model.Transformer) ([]flagArg, error) {
	if t.SlidingLayers == 0 {
		return nil, nil
	}
	args := []flagArg{{"--window-size", fmt.Sprintf("(%d,0)", t.SlidingWindow)}}
	switch {
	case t.SlidingLayers == t.Layers:
		return args, nil
	case t.Layers%2 == 0 && 2*t.SlidingLayers == t.Layers:
		return append(args, flagArg{"--window-attn-skip-freq", "2"}), nil
	}
	return nil, notExpressible(engine, "model.transformer.sliding_layers", t.SlidingLayers,
		fmt.Sprintf("of %d layers: the model records how many layers are windowed, not which; Megatron-LM's pattern is exported for all of them or every other one (GPT-OSS)", t.Layers))
}

// megatronMoE is the mixture of experts as Megatron-Core runs it: the
// experts, their size, the shared experts (one total size), the leading
// dense layers as a layer pattern, the router's group limit, the expert tensor parallelism
// (plan.Execution.ExpertTP: with expert parallelism 1 unless the plan
// says otherwise, where Megatron-Core's own default would be t) and the
// token dispatcher.
func megatronMoE(engine string, t *model.Transformer, e plan.Execution) ([]flagArg, error) {
	m := t.MoE
	if m == nil {
		return nil, nil
	}
	itoa := strconv.Itoa
	args := []flagArg{{"--num-experts", itoa(m.Experts)}, {"--moe-router-topk", itoa(m.TopK)}}
	expertFFN := m.FFN
	if expertFFN == 0 {
		expertFFN = ffnSize(t)
	}
	args = append(args, flagArg{"--moe-ffn-hidden-size", itoa(expertFFN)})
	if m.SharedExperts > 0 {
		args = append(args, flagArg{"--moe-shared-expert-intermediate-size", itoa(m.SharedExperts * expertFFN)})
	}
	if pattern := moeLayerPattern(t); pattern != "" {
		args = append(args, flagArg{"--moe-layer-freq", pattern})
	}
	if m.Groups > 0 {
		args = append(args, flagArg{"--moe-router-num-groups", itoa(m.Groups)}, flagArg{"--moe-router-group-topk", itoa(m.GroupTopK)})
	}
	switch precision(t) {
	case model.BF16, model.FP8:
		args = append(args, flagArg{"--moe-grouped-gemm", ""})
	case model.FP16:
		if e.EP > 1 {
			return nil, notExpressible(engine, "model.transformer.precision", model.FP16, "Megatron-LM's expert parallelism does not train in fp16")
		}
	}
	if e.EP > 1 || e.ETP > 0 {
		args = append(args, flagArg{"--expert-tensor-parallel-size", itoa(e.ExpertTP())})
	}
	switch e.EPDispatcher {
	case "deepep":
		args = append(args, flagArg{"--moe-token-dispatcher-type", "flex"}, flagArg{"--moe-enable-deepep", ""})
	default:
		args = append(args, flagArg{"--moe-token-dispatcher-type", "alltoall"})
	}
	if e.Overlap.EPComm {
		args = append(args, flagArg{"--overlap-moe-expert-parallel-comm", ""})
	}
	return args, nil
}

// megatronPipelineSplit is how Megatron-LM splits the layers over the
// pipeline: an even split (the same layers in every model chunk) by
// degree alone, with --num-layers-per-virtual-pipeline-stage when
// interleaved; any other by --pipeline-model-parallel-layout, which
// names each chunk's layers (megatronLayout).
func megatronPipelineSplit(engine string, in input) ([]flagArg, error) {
	e := in.Exec
	if len(in.Stages) != e.PP*e.Interleave {
		return nil, notExpressible(engine, "stages", len(in.Stages), fmt.Sprintf("%d model chunks where the pipeline has pp %d × interleave %d", len(in.Stages), e.PP, e.Interleave))
	}
	n := chunkLayers(in.Stages[0])
	even := n > 0
	for _, s := range in.Stages {
		even = even && chunkLayers(s) == n
	}
	switch {
	case even && e.Interleave > 1:
		return []flagArg{{"--num-layers-per-virtual-pipeline-stage", strconv.Itoa(n)}}, nil
	case even:
		return nil, nil
	}
	mtp := 0
	if t := in.Model.Transformer; t != nil {
		mtp = t.MTPLayers
	}
	return []flagArg{{"--pipeline-model-parallel-layout", megatronLayout(in.Stages, mtp)}}, nil
}

// chunkLayers is the number of transformer layers of a stage (0 when Empty).
func chunkLayers(s plan.Stage) int { return max(0, s.LastLayer-s.FirstLayer+1) }

// megatronLayout writes the stages as Megatron-Core's pipeline layout
// (megatron/core/transformer/pipeline_parallel_layer_layout.py): chunks
// in model order split by "|", chunk k on pipeline rank k mod pp as the
// plan orders them; "E" the embedding on the first, "L" the loss (with the
// output layer) on the last, after the mtp multi-token prediction modules,
// one "m" each (the layout must name them all, after every decoder layer,
// in the last chunk of a rank other than the first: the last chunk of the
// last rank, where core/cost costs them); "t*n" n transformer layers; runs
// of equal chunks are written once as "(chunk|)*r".
func megatronLayout(stages []plan.Stage, mtp int) string {
	chunks := make([]string, len(stages))
	for k, s := range stages {
		var b strings.Builder
		if k == 0 {
			b.WriteString("E")
		}
		switch n := chunkLayers(s); n {
		case 0:
		case 1:
			b.WriteString("t")
		default:
			fmt.Fprintf(&b, "t*%d", n)
		}
		if k == len(stages)-1 {
			b.WriteString(strings.Repeat("m", mtp) + "L")
		}
		chunks[k] = b.String()
	}
	var b strings.Builder
	for k := 0; k < len(chunks); {
		r := 1
		for k+r < len(chunks)-1 && chunks[k+r] == chunks[k] {
			r++
		}
		switch {
		case r > 1:
			fmt.Fprintf(&b, "(%s|)*%d", chunks[k], r)
		case k < len(chunks)-1:
			b.WriteString(chunks[k] + "|")
		default:
			b.WriteString(chunks[k])
		}
		k += r
	}
	return b.String()
}

// megatronExecution is how the plan runs beyond its degrees:
// recomputation, the optimizer's sharding, overlap, the attention kernels,
// gradient accumulation and precision.
func megatronExecution(engine string, t *model.Transformer, e plan.Execution) ([]flagArg, error) {
	var args []flagArg
	if e.CP > 1 && e.CPComm != "" {
		args = append(args, flagArg{"--cp-comm-type", e.CPComm}) // Transformer Engine's cp_comm_type values
	}
	if e.SequenceParallel {
		args = append(args, flagArg{"--sequence-parallel", ""})
	}
	switch {
	case e.Recompute == model.RecomputeFull && e.RecomputeLayers > 0:
		// The first N layers of each (virtual) pipeline stage.
		args = append(args, flagArg{"--recompute-granularity", "full"}, flagArg{"--recompute-method", "block"}, flagArg{"--recompute-num-layers", strconv.Itoa(e.RecomputeLayers)})
	case e.Recompute == model.RecomputeFull:
		args = append(args, flagArg{"--recompute-granularity", "full"}, flagArg{"--recompute-method", "uniform"}, flagArg{"--recompute-num-layers", "1"})
	case e.Recompute == model.RecomputeSelective:
		args = append(args, flagArg{"--recompute-granularity", "selective"})
		if e.RecomputeModules != "" {
			modules, _ := model.ParseRecomputeModules(e.RecomputeModules) // plan validation checked them
			args = append(args, listFlag("--recompute-modules", modules.Names()...)...)
		}
	}
	switch e.ZeRO {
	case 1:
		args = append(args, flagArg{"--use-distributed-optimizer", ""})
	case 2:
		args = append(args, flagArg{"--use-megatron-fsdp", ""}, flagArg{"--data-parallel-sharding-strategy", "optim_grads"})
	case 3:
		args = append(args, flagArg{"--use-megatron-fsdp", ""}, flagArg{"--data-parallel-sharding-strategy", "optim_grads_params"})
	}
	if e.Overlap.GradReduce {
		args = append(args, flagArg{"--overlap-grad-reduce", ""})
	}
	if e.Overlap.ParamGather {
		if e.ZeRO == 0 {
			return nil, notExpressible(engine, "execution.overlap.param_gather", true, "parameters are gathered only when sharded (zero >= 1)")
		}
		args = append(args, flagArg{"--overlap-param-gather", ""})
	}
	if e.Overlap.TPComm && e.TP > 1 {
		if !e.SequenceParallel {
			return nil, notExpressible(engine, "execution.overlap.tp_comm", true, "Megatron-LM overlaps tensor-parallel communication only with sequence parallelism")
		}
		args = append(args, flagArg{"--tp-comm-overlap", ""})
	}
	switch {
	case !e.FlashAttention:
		args = append(args, flagArg{"--attention-backend", "unfused"})
	case e.AttentionKernel == plan.AttentionFlash2:
		args = append(args, flagArg{"--attention-backend", "flash"})
	default:
		args = append(args, flagArg{"--attention-backend", "fused"}) // cuDNN's fused attention
	}
	if e.UnfusedGradAccumulation {
		args = append(args, flagArg{"--no-gradient-accumulation-fusion", ""})
	}
	switch p := precision(t); p {
	case model.BF16:
		args = append(args, flagArg{"--bf16", ""})
	case model.FP8:
		// Transformer Engine's FP8 GEMMs (E4M3 forward, E5M2 gradients) with
		// per-tensor current scaling, BF16 elsewhere.
		args = append(args, flagArg{"--bf16", ""}, flagArg{"--fp8-format", "hybrid"}, flagArg{"--fp8-recipe", "tensorwise"})
		if e.FP8ParamGather {
			if e.ZeRO == 0 {
				return nil, notExpressible(engine, "execution.fp8_param_gather", true, "Megatron-LM gathers FP8 parameters only when they are sharded (zero >= 1)")
			}
			args = append(args, flagArg{"--fp8-param-gather", ""})
		}
	case model.FP16:
		args = append(args, flagArg{"--fp16", ""})
	case model.FP32:
	default:
		return nil, notExpressible(engine, "model.transformer.precision", p, "only bf16, fp8, fp16 and fp32 are exported")
	}
	return args, nil
}
