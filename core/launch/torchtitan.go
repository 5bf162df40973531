package launch

import (
	"encoding/json"
	"fmt"
	"strings"

	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
)

// torchtitanSchedules maps schedule kinds to torch.distributed.pipelining's
// names. torchtitan places ZBVZeroBubble's and DualPipeV's two stages a
// rank in a V (stage_ids_this_rank, style "v"), as schedule.ZBVStages does.
var torchtitanSchedules = map[schedule.Kind]string{
	schedule.GPipe: "GPipe", schedule.OneFOneB: "1F1B", schedule.Interleaved: "Interleaved1F1B", schedule.ZBV: "ZBVZeroBubble", schedule.DualPipeV: "DualPipeV",
}

// torchtitanTOML is a torchtitan job config (torchtitan/config/job_config.py).
func torchtitanTOML(in input) (string, error) {
	const engine = "torchtitan"
	d, err := common(engine, in)
	if err != nil {
		return "", err
	}
	e := in.Exec
	t, err := transformer(engine, in)
	if err != nil {
		return "", err
	}
	if t.MTPLayers > 0 {
		return "", notExpressible(engine, "model.transformer.mtp_layers", t.MTPLayers, "this export writes no multi-token prediction setting for torchtitan; plan with MTP layers 0 to export the model without it")
	}
	if t.SlidingLayers > 0 || t.AttentionSinks {
		return "", notExpressible(engine, "model.transformer.sliding_layers", t.SlidingLayers, "this export writes no sliding-window attention or attention sinks for torchtitan (GPT-OSS's)")
	}
	if e.Recompute == model.RecomputeSelective {
		// torchtitan's "selective" checkpoints every nth block whole
		// (selective_ac_option "2", its default) or saves every other
		// matmul's output ("op"); neither is the attention-core
		// recomputation the plan was costed with.
		return "", notExpressible(engine, "execution.recompute", e.Recompute, "torchtitan's selective activation checkpointing recomputes every other block whole or every other matmul, not the attention core alone that the plan was costed with; plan with recompute none or full")
	}
	if e.RecomputeLayers > 0 {
		return "", notExpressible(engine, "execution.recompute_layers", e.RecomputeLayers, "torchtitan checkpoints every layer (full) or every n-th block (selective with an integer option), not the first layers of each pipeline stage; plan with recompute_layers 0 (every layer)")
	}
	if err := pipelineSchedule(engine, e); err != nil {
		return "", err
	}
	split, err := torchtitanPipelineSplit(engine, in.Stages)
	if err != nil {
		return "", err
	}
	if etp := e.ExpertTP(); etp != e.TP && !(e.EP > 1 && etp == 1) {
		// torchtitan's ParallelismConfig: "Currently, we only support
		// either [partial dp -> ep] etp = tp [or] [partial dp + all tp ->
		// ep] etp = 1", and the setting has no effect when ep = 1.
		return "", notExpressible(engine, "execution.etp", e.ETP, fmt.Sprintf("torchtitan's expert tensor parallelism is 1 or the tensor-parallel degree %d (with expert parallelism), the tensor-parallel degree without", e.TP))
	}
	if e.CP > 1 && e.CPComm != "" && e.CPComm != plan.CPCommP2P {
		return "", notExpressible(engine, "execution.cp_comm", e.CPComm, "torchtitan's context parallelism is PyTorch's ring attention; no other exchange is exported")
	}
	epOverlap := e.Overlap.EPComm && e.EP > 1
	if epOverlap && e.Schedule != schedule.DualPipeV {
		return "", notExpressible(engine, "execution.overlap.ep_comm", true, "torchtitan overlaps the expert all-to-all only between DualPipeV's paired forward and backward (pipeline_parallel_expert_parallel_overlap); plan with the dualpipe-v schedule, or without the overlap")
	}
	replicate, shard, reshard := d, 1, ""
	switch e.ZeRO {
	case 1:
		return "", notExpressible(engine, "execution.zero", 1, "torchtitan shards with FSDP (parameters and gradients too, zero 2 or 3), not the optimizer state alone")
	case 2:
		replicate, shard, reshard = 1, d, "never"
	case 3:
		replicate, shard = 1, d
	}
	var mp string
	switch p := precision(t); p {
	case model.BF16, model.FP8:
		mp = "bfloat16"
	case model.FP32:
		mp = "float32"
	default:
		return "", notExpressible(engine, "model.transformer.precision", p, "torchtitan's mixed_precision_param is bfloat16 or float32 (fp8 through its float8 converter)")
	}
	kind := e.Schedule
	if e.PP == 1 || kind == schedule.Interleaved && e.Interleave == 1 {
		kind = schedule.OneFOneB
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	var b strings.Builder
	b.WriteString(header(in, "#"))
	flavor, known := torchtitanFlavorOf(t)
	if !known {
		b.WriteString("# torchtitan builds the model named by [model] name/flavor: register a flavor with these dimensions.\n")
	}
	b.WriteString("# Its tensor parallelism also shards the norms' activations over the sequence (sequence parallelism).\n")
	fmt.Fprintf(&b, "[job]\ndescription = %s\n\n", q(modelLabel(in)+": "+dimensions(t)))
	fmt.Fprintf(&b, "[training]\nlocal_batch_size = %d\nglobal_batch_size = %d\nseq_len = %d\nmixed_precision_param = %s\n\n",
		e.GlobalBatch/d, e.GlobalBatch, t.Seq, q(mp))
	fmt.Fprintf(&b, "[parallelism]\ndata_parallel_replicate_degree = %d\ndata_parallel_shard_degree = %d\n", replicate, shard)
	if reshard != "" {
		fmt.Fprintf(&b, "fsdp_reshard_after_forward = %s\n", q(reshard))
	}
	fmt.Fprintf(&b, "tensor_parallel_degree = %d\npipeline_parallel_degree = %d\n", e.TP, e.PP)
	fmt.Fprintf(&b, "pipeline_parallel_layers_per_stage = %d\npipeline_parallel_first_stage_less_layers = %d\npipeline_parallel_last_stage_less_layers = %d\n", split.perStage, split.firstLess, split.lastLess)
	fmt.Fprintf(&b, "pipeline_parallel_schedule = %s\npipeline_parallel_microbatch_size = %d\n", q(torchtitanSchedules[kind]), e.MicrobatchSize)
	if epOverlap {
		b.WriteString("pipeline_parallel_expert_parallel_overlap = true\n")
	}
	fmt.Fprintf(&b, "context_parallel_degree = %d\nexpert_parallel_degree = %d\n", e.CP, e.EP)
	if e.EP > 1 && e.TP > 1 {
		// A key of torchtitan's later ParallelismConfig; before it, expert
		// parallelism drew only on the data-parallel ranks (dp2ep), the
		// experts split over tp (etp = tp).
		fmt.Fprintf(&b, "expert_tensor_parallel_degree = %d\n", e.ExpertTP())
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "[activation_checkpoint]\nmode = %s\n", q(string(e.Recompute)))
	fp8 := precision(t) == model.FP8
	if known || fp8 {
		b.WriteString("\n[model]\n")
	}
	if known {
		fmt.Fprintf(&b, "name = %s\nflavor = %s\n", q(flavor.name), q(flavor.flavor))
	}
	if fp8 {
		// torchao's Float8Linear with dynamic (current) tensorwise scaling,
		// as the cost model's FP8 is Transformer Engine's current scaling;
		// FSDP gathers the weights in FP8 where the plan keeps no bf16 copy.
		b.WriteString("converters = [\"float8\"]\n")
		if e.FP8ParamGather && e.ZeRO >= 2 {
			b.WriteString("\n[float8]\nenable_fsdp_float8_all_gather = true\nprecompute_float8_dynamic_scale_for_fsdp = true\n")
		}
	}
	return b.String(), nil
}

// torchtitanFlavor is one of torchtitan's built-in models: its [model]
// name and flavor and the architecture they build.
type torchtitanFlavor struct {
	name, flavor string
	arch         model.Transformer
}

// torchtitanFlavors are the built-in models the presets match, as
// torchtitan's model registrations build them: llama3's 8B, 70B and 405B
// (torchtitan/models/llama3/__init__.py at commits 8c6bf93e and 00f555e1,
// the MLP's size from model.py's multiple_of and ffn_dim_multiplier:
// 14336, 28672, 53248; vocabulary 128256, untied) and deepseek_v3's 671B
// (torchtitan/models/deepseek_v3/__init__.py at commits e23a9af5 and
// 7a639a0c); checked 2026-11-29. The sequence length is the job's.
var torchtitanFlavors = []torchtitanFlavor{
	{"llama3", "8B", llama3Flavor(32, 4096, 32, 14336)},
	{"llama3", "70B", llama3Flavor(80, 8192, 64, 28672)},
	{"llama3", "405B", llama3Flavor(126, 16384, 128, 53248)},
	{"deepseek_v3", "671B", model.Transformer{Layers: 61, Hidden: 7168, Heads: 128, Vocab: 129280, FFN: 18432,
		GatedFFN: true, UntiedEmbeddings: true,
		MoE: &model.MoE{Experts: 256, TopK: 8, FFN: 2048, SharedExperts: 1, FirstDense: 3, Groups: 8, GroupTopK: 4}, // n_expert_groups, n_limited_groups
		MLA: &model.MLA{QLoraRank: 1536, KVLoraRank: 512, QKRopeHeadDim: 64, QKNopeHeadDim: 128, VHeadDim: 128}}},
}

// llama3Flavor is a torchtitan llama3 flavor's architecture: 8 K/V heads
// of 128, a SwiGLU MLP, Llama 3's vocabulary, untied embeddings, rotary
// base 500,000 (rope_theta in every llama3 flavor at 8c6bf93e).
func llama3Flavor(layers, hidden, heads, ffn int) model.Transformer {
	return model.Transformer{Layers: layers, Hidden: hidden, Heads: heads, KVHeads: 8, HeadDim: 128, Vocab: 128256, FFN: ffn,
		GatedFFN: true, UntiedEmbeddings: true, Numerics: model.Numerics{RotaryBase: 500000}}
}

// torchtitanFlavorOf returns the built-in torchtitan model whose
// architecture is t's (attention, MLP, experts, vocabulary, embeddings,
// and the rotary base where both state one; norms, positions and biases
// are alike in every flavor).
func torchtitanFlavorOf(t *model.Transformer) (torchtitanFlavor, bool) {
	for _, f := range torchtitanFlavors {
		a := f.arch
		sameMoE := (a.MoE == nil) == (t.MoE == nil) && (a.MoE == nil || *a.MoE == *t.MoE)
		sameMLA := (a.MLA == nil) == (t.MLA == nil) && (a.MLA == nil || *a.MLA == *t.MLA)
		if a.Layers == t.Layers && a.Hidden == t.Hidden && a.Heads == t.Heads && a.Vocab == t.Vocab && ffnSize(&a) == ffnSize(t) &&
			a.GatedFFN == t.GatedFFN && a.UntiedEmbeddings == t.UntiedEmbeddings && sameMoE && sameMLA &&
			(t.MLA != nil || kvHeads(&a) == kvHeads(t) && headDim(&a) == headDim(t)) &&
			(a.Numerics.RotaryBase == 0 || t.Numerics.RotaryBase == 0 || a.Numerics.RotaryBase == t.Numerics.RotaryBase) {
			return f, true
		}
	}
	return torchtitanFlavor{}, false
}

// kvHeads is t's key/value heads (0 in the spec means one per query head).
func kvHeads(t *model.Transformer) int {
	if t.KVHeads == 0 {
		return t.Heads
	}
	return t.KVHeads
}

// headDim is t's head size (0 in the spec means hidden / heads).
func headDim(t *model.Transformer) int {
	if t.HeadDim == 0 {
		return t.Hidden / t.Heads
	}
	return t.HeadDim
}

// dimensions names the transformer's architecture on one line, for the
// engines that take it from code (a torchtitan flavor) to be matched.
func dimensions(t *model.Transformer) string {
	d := fmt.Sprintf("layers %d, hidden %d, heads %d, seq %d, vocab %d, ffn %d", t.Layers, t.Hidden, t.Heads, t.Seq, t.Vocab, ffnSize(t))
	if t.KVHeads > 0 && t.KVHeads != t.Heads && t.MLA == nil {
		d += fmt.Sprintf(", kv heads %d", t.KVHeads)
	}
	if t.HeadDim > 0 {
		d += fmt.Sprintf(", head dim %d", t.HeadDim)
	}
	if t.GatedFFN {
		d += ", SwiGLU"
	}
	if m := t.MLA; m != nil {
		d += fmt.Sprintf(", latent attention (q rank %d, kv rank %d, qk %d+%d rope, v %d)", m.QLoraRank, m.KVLoraRank, m.QKNopeHeadDim, m.QKRopeHeadDim, m.VHeadDim)
	}
	if t.ChunkedLayers > 0 {
		d += fmt.Sprintf(", %d layers attending in chunks of %d", t.ChunkedLayers, t.AttentionChunk)
	}
	if n := t.Numerics; n.RotaryBase > 0 {
		d += fmt.Sprintf(", rope theta %g", n.RotaryBase)
	}
	if n := t.Numerics; n.NormEpsilon > 0 {
		d += fmt.Sprintf(", norm eps %g", n.NormEpsilon)
	}
	if m := t.MoE; m != nil {
		d += fmt.Sprintf(", %d experts top %d of ffn %d", m.Experts, m.TopK, m.FFN)
		if m.SharedExperts > 0 {
			d += fmt.Sprintf(" + %d shared", m.SharedExperts)
		}
		if m.FirstDense > 0 {
			d += fmt.Sprintf(", first %d layers dense", m.FirstDense)
		}
		if m.Every > 1 {
			d += fmt.Sprintf(", experts in every %d-th layer", m.Every)
		}
		if m.Groups > 0 {
			d += fmt.Sprintf(", each token's experts in %d of %d groups", m.GroupTopK, m.Groups)
		}
	}
	return d
}

// torchtitanSplit is torchtitan's pipeline split: layers_per_stage n sets
// the stage count (the first stage counts the embedding as firstLess
// layers, the last the norm and output as lastLess), and every stage then
// holds n layers but for those (torchtitan/distributed/pipeline_parallel.py,
// pipeline_llm and generate_llm_fqn_per_model_part).
type torchtitanSplit struct{ perStage, firstLess, lastLess int }

// torchtitanPipelineSplit finds the torchtitan split that builds the
// plan's chunks: the same layers in every chunk but the first and the
// last, which may hold fewer (none: the embedding or the output alone).
func torchtitanPipelineSplit(engine string, stages []plan.Stage) (torchtitanSplit, error) {
	k := len(stages)
	first, last := chunkLayers(stages[0]), chunkLayers(stages[k-1])
	if k == 1 {
		return torchtitanSplit{perStage: first}, nil
	}
	n := max(first, last)
	if k > 2 {
		n = chunkLayers(stages[1])
		for i, s := range stages[1 : k-1] {
			if c := chunkLayers(s); c != n {
				return torchtitanSplit{}, notExpressible(engine, fmt.Sprintf("stages[%d]", i+1), fmt.Sprintf("layers %d-%d", s.FirstLayer, s.LastLayer),
					fmt.Sprintf("%d layers where stage 1 has %d; torchtitan splits the layers evenly but for fewer on the first and last stage", c, n))
			}
		}
	}
	for _, end := range []struct {
		i, layers int
	}{{0, first}, {k - 1, last}} {
		if end.layers > n || n == 0 {
			s := stages[end.i]
			return torchtitanSplit{}, notExpressible(engine, fmt.Sprintf("stages[%d]", end.i), fmt.Sprintf("layers %d-%d", s.FirstLayer, s.LastLayer),
				fmt.Sprintf("%d layers where the middle stages have %d; torchtitan gives the first and last stage fewer layers, not more", end.layers, n))
		}
	}
	return torchtitanSplit{perStage: n, firstLess: n - first, lastLess: n - last}, nil
}
