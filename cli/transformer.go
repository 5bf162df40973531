package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"pipeplan/app"
	"pipeplan/app/request"
	"pipeplan/core/plan"
	"pipeplan/internal/atomicfile"
)

func init() {
	register("transformer", command{
		summary: "plan a GPT-style transformer with tensor, pipeline and data parallelism (PTD-P search, or one configuration)",
		run:     runTransformer,
	})
}

// transformerFlags maps the request fields (request.Plan) to the flags that
// set them, for error messages (plan.model is --model's only when given:
// the custom transformer's dimension errors name it too).
var transformerFlags = map[string]string{
	"plan.hf_config":   "hf-config",
	"plan.custom.name": "name", "plan.custom.layers": "layers", "plan.custom.hidden": "hidden", "plan.custom.heads": "heads",
	"plan.custom.vocab": "vocab", "plan.custom.ffn": "ffn", "plan.custom.kv_heads": "kv-heads", "plan.custom.experts": "experts",
	"plan.custom.topk": "topk", "plan.custom.moe_ffn": "moe-ffn", "plan.custom.shared_experts": "shared-experts",
	"plan.custom.expert_groups": "expert-groups", "plan.custom.group_topk": "group-topk",
	"plan.custom.sliding_window": "sliding-window", "plan.custom.sliding_layers": "sliding-layers",
	"plan.seq": "seq", "plan.precision": "precision",
	"plan.gpu": "gpu", "plan.nodes": "gpus", "plan.gpus_per_node": "gpus-per-node",
	"plan.inter_node_gbps": "inter-node-bandwidth", "plan.global_batch": "batch", "plan.tp": "tp", "plan.pp": "pp",
	"plan.cp": "cp", "plan.ep": "ep", "plan.etp": "etp", "plan.ep_dispatcher": "ep-dispatcher", "plan.overlap_ep_comm": "overlap-ep-comm", "plan.fp8_param_gather": "fp8-param-gather",
	"plan.flash_attention": "flash-attention", "plan.attention_kernel": "attention-kernel",
	"plan.microbatch": "microbatch", "plan.interleave": "interleave", "plan.recompute": "recompute", "plan.recompute_layers": "recompute-layers", "plan.recompute_modules": "recompute-modules",
	"plan.optimizer": "optimizer", "plan.zero": "zero", "plan.top": "top", "plan.mtp_layers": "mtp-layers",
	"plan.planner": "planner", "plan.schedule": "schedule",
	"plan.calibration": "calibration",
	// Context parallelism's communication type.
	"plan.cp_comm": "cp-comm",
}

// transformerDefaults explains each defaulted flag, printed with the table.
var transformerDefaults = map[string]string{
	"seq":                  "seq %d",
	"vocab":                "vocab 51200 (dissertation §4.5.1)",
	"precision":            "precision bf16",
	"gpu":                  "gpu %s",
	"gpus-per-node":        "gpus-per-node %d (DGX-class server)",
	"inter-node-bandwidth": "inter-node-bandwidth %.4g GB/s per GPU (the GPU's own network, gpuprofiles/network.json)",
	"optimizer":            "optimizer: mixed-precision Adam",
	"zero":                 "ZeRO stage searched",
	"flash-attention":      "flash attention on",
	"overlap":              "overlap %s (Megatron-LM's recommendation for the GPU)",
}

// dimensionFlags are the custom transformer's flags, which --preset and
// --hf-config replace.
var dimensionFlags = []string{"name", "layers", "hidden", "heads", "vocab", "ffn", "kv-heads", "gated-ffn",
	"untied-embeddings", "experts", "topk", "moe-ffn", "shared-experts", "expert-groups", "group-topk", "sliding-window", "sliding-layers", "attention-sinks"}

// overlapFlags are the overlap flags, each setting its request field only
// when given (else the GPU's default, app.DefaultOverlap).
var overlapFlags = []struct{ name, usage string }{
	{"overlap-grad-reduce", "overlap the data-parallel gradient reduction with the backward, in buckets (Megatron-LM's --overlap-grad-reduce; default: on)"},
	{"overlap-param-gather", "overlap the distributed optimizer's parameter all-gather with the forward (Megatron-LM's --overlap-param-gather; default: on)"},
	{"tp-comm-overlap", "overlap tensor-parallel communication with the GEMMs (Megatron-LM's --tp-comm-overlap, Transformer Engine; default: on for Hopper or newer GPUs on NVLink)"},
}

// runTransformer turns the flags into a request.Plan (a preset, a Hugging
// Face config or the custom transformer), plans it with app.Plan (the
// page's and the API's planner) and prints the result: app.Result as JSON,
// or a table.
func runTransformer(args []string, stdout io.Writer) error {
	d := request.Default().Plan
	fs := newFlagSet("transformer")
	var preset string
	fs.StringVar(&preset, "preset", "", "model preset id (see GET /api/v1/models, e.g. llama3-405b, qwen3-30b-a3b, gpt3-175b) instead of the dimension flags")
	fs.StringVar(&preset, "model", "", "the same as --preset")
	hfConfig := fs.String("hf-config", "", "a Hugging Face config.json (Llama 2–4, Mistral, Mixtral, Qwen2/3, Qwen3-MoE, GLM-4.5, DeepSeek-V3, Kimi K2, gpt-oss) instead of the dimension flags")
	name := fs.String("name", "", "model name carried by an exported plan (default: the dimensions, e.g. \"transformer l=96 h=12288 a=96\")")
	layers := fs.Int("layers", 0, "number of transformer layers l (required without --model or --hf-config)")
	hidden := fs.Int("hidden", 0, "hidden size h (required without --model or --hf-config)")
	heads := fs.Int("heads", 0, "attention heads a (required without --model or --hf-config)")
	seq := fs.Int("seq", 0, "sequence length s (0: the preset's, 2048 for --layers/--hidden/--heads, max_position_embeddings for --hf-config)")
	vocab := fs.Int("vocab", 0, "vocabulary size V (0: 51200)")
	ffn := fs.Int("ffn", 0, "feed-forward size of the dense layers (0: 4 × hidden)")
	kvHeads := fs.Int("kv-heads", 0, "key/value heads, dividing --heads (grouped-query attention; 1: multi-query; 0: --heads)")
	gated := fs.Bool("gated-ffn", false, "gated MLP (SwiGLU: three matrices of hidden × ffn)")
	untied := fs.Bool("untied-embeddings", false, "the output layer has its own weights (not tied to the input embedding)")
	experts := fs.Int("experts", 0, "routed experts of every MLP (mixture of experts; 0: dense)")
	topk := fs.Int("topk", 0, "routed experts per token, 1 to --experts")
	moeFFN := fs.Int("moe-ffn", 0, "inner size of one expert (0: --ffn)")
	shared := fs.Int("shared-experts", 0, "shared experts every token also goes through")
	groups := fs.Int("expert-groups", 0, "routed experts split into this many equal groups, each token's experts from --group-topk of them (DeepSeek-V3's node-limited routing: 8; 0: no limit)")
	groupTopK := fs.Int("group-topk", 0, "groups each token's routed experts may come from (DeepSeek-V3: 4; with --expert-groups)")
	window := fs.Int("sliding-window", 0, "attention window of the windowed layers, in tokens (GPT-OSS: 128; needs --sliding-layers)")
	windowed := fs.Int("sliding-layers", 0, "how many layers attend in the sliding window (GPT-OSS: half of them)")
	sinks := fs.Bool("attention-sinks", false, "a learned softmax offset per attention head (GPT-OSS's sinks)")
	precision := fs.String("precision", d.Precision, "training precision: fp32, fp16, bf16 or fp8 (Transformer Engine FP8 GEMMs; empty: bf16)")
	gpuID := fs.String("gpu", d.GPU, "GPU id (see pipeplan gpus)")
	gpus := fs.Int("gpus", 0, "number of GPUs n (required)")
	perNode := fs.Int("gpus-per-node", d.GPUsPerNode, "GPUs per node: those that share NVLink (a GB200 NVL72 rack: 72)")
	interBW := fs.Float64("inter-node-bandwidth", d.InterNodeGBps*1e9, "bandwidth between nodes per GPU and direction, bytes/s (0: the GPU's own network figure)")
	batch := fs.Int("batch", 0, "global batch size B, in sequences (required)")
	tp := fs.Int("tp", d.TP, "tensor-parallel size t (omit to search)")
	pp := fs.Int("pp", d.PP, "pipeline-parallel size p (omit to search)")
	cp := fs.Int("cp", d.CP, "context-parallel size (omit to search; 1 when every other degree is given)")
	ep := fs.Int("ep", d.EP, "expert-parallel size of MoE layers (omit to search; 1 when every other degree is given)")
	etp := fs.Int("etp", d.ETP, "expert-tensor-parallel size: ranks splitting each routed expert (Megatron-Core's --expert-tensor-parallel-size; omit for the default, not searched: 1 with expert parallelism, t without)")
	// Context parallelism's communication type (Megatron-Core's --cp-comm-type).
	cpComm := fs.String("cp-comm", d.CPComm, "how context parallelism exchanges K and V: p2p (ring, overlapped with the attention), all_gather (the Llama 3 paper's, exposed) or a2a (Ulysses all-to-alls, exposed; t·cp must divide the K/V heads) (omit to search p2p and a2a per candidate with cp > 1)")
	epDispatcher := fs.String("ep-dispatcher", d.EPDispatcher, "MoE token dispatcher: alltoall (Megatron-Core's default: every routed copy sent) or deepep (the flex dispatcher with DeepEP: each token once per server); empty: alltoall")
	overlapEP := fs.Bool("overlap-ep-comm", d.OverlapEPComm, "hide one microbatch's MoE token exchange behind another's compute (Megatron-Core's --overlap-moe-expert-parallel-comm; under --schedule dualpipe-v its paired forward and backward, torchtitan's pipeline_parallel_expert_parallel_overlap)")
	micro := fs.Int("microbatch", d.Microbatch, "microbatch size b (omit to search)")
	interleave := fs.Int("interleave", d.Interleave, "model chunks per GPU v (omit to search)")
	recompute := fs.String("recompute", d.Recompute, "activation recomputation: none, selective or full (omit to search: none, selective, or full on as few layers of each model chunk as fit)")
	recomputeLayers := fs.Int("recompute-layers", d.RecomputeLayers, "with --recompute full, how many layers of each model chunk recompute, the first ones (Megatron-LM's --recompute-method block --recompute-num-layers); 0: every layer")
	recomputeModules := fs.String("recompute-modules", d.RecomputeModules, "with --recompute selective, what it reruns, comma-separated as Megatron-Core's --recompute-modules names them (core_attn, moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts); empty: core_attn")
	optimizer := fs.String("optimizer", d.Optimizer, "optimizer: mixed-adam, mixed-adam-fp32-grads, adam or sgd (empty: mixed-adam)")
	zero := fs.Int("zero", 0, "ZeRO stage over the data-parallel replicas, 0-3 (1: Megatron-LM's distributed optimizer, 3: FSDP; omit to search)")
	mtp := fs.Int("mtp-layers", 0, "multi-token prediction modules trained after the last layer (DeepSeek-V3's 1; Megatron-LM's --mtp-num-layers), 0 to train without; omit for the model's own")
	flash := fs.Bool("flash-attention", d.FlashAttention, "fused attention: no s×s scores stored, masked blocks skipped (false reproduces 2021 runs)")
	attnKernel := fs.String("attention-kernel", d.AttentionKernel, "the fused attention kernels: cudnn (Transformer Engine's on Hopper and Blackwell) or flash2 (FlashAttention-2: PyTorch's SDPA flash backend; NVIDIA's 2024 H100 runs ran at about its rates); empty: cudnn")
	gradFusion := fs.Bool("grad-accumulation-fusion", !d.UnfusedGradAccumulation, "weight-gradient GEMMs accumulate in place, as Megatron-LM and Transformer Engine do since 2022 (false: a separate accumulation pass per microbatch, as the 2021 runs)")
	overlaps := make([]*bool, len(overlapFlags))
	for i, f := range overlapFlags {
		overlaps[i] = fs.Bool(f.name, false, f.usage)
	}
	fp8Gather := fs.Bool("fp8-param-gather", d.FP8ParamGather, "with --precision fp8, keep the linear layers' weights in FP8 (Megatron-LM's --fp8-param-gather, as NVIDIA's FP8 recipes): no bf16 copy beside Transformer Engine's FP8 one")
	seqPar := fs.Bool("sequence-parallel", true, "shard layer-norm and dropout activations over the tensor-parallel GPUs (Megatron-LM's --sequence-parallel, which --tp-comm-overlap requires; false reproduces runs without it)")
	crossNode := fs.Bool("allow-cross-node-tp", d.AllowCrossNodeTP, "let the search put tensor parallelism across nodes")
	top := fs.Int("top", d.Shown(), "number of candidates to list")
	breakdown := fs.Bool("breakdown", false, "print the chosen configuration's step-time breakdown, and its step under each pipeline schedule")
	exportPlan := fs.String("export-plan", "", "write the chosen configuration as a core/plan JSON file")
	asJSON := fs.Bool("json", false, "print JSON (the same as POST /api/v1/plan) instead of a table")
	launchAs := fs.String("launch", "", "print the chosen configuration as an engine's launch artifact instead of a table: "+strings.Join(app.LaunchFormats(), ", ")+" (megatron: Megatron-LM's pretrain_gpt.py arguments with the whole architecture)")
	// The planner (issue 15: PipeDream-2BW's planner on a transformer spec).
	sched := fs.String("schedule", "", "PTD-P's pipeline schedule: gpipe, 1f1b (PipeDream-Flush), interleaved, 2bw, zb-h1 (zero-bubble: the weight gradients fill the flush), zb-v (zero-bubble, two chunks a device in a V; costed by simulating it) or dualpipe-v (DeepSeek's DualPipeV: ZB-V's V, one chunk's forward paired with the other's backward, the pairs hiding the expert all-to-all with --overlap-ep-comm; at least 2·pp microbatches) (empty: 1f1b, interleaved when --interleave > 1)")
	planner := fs.String("planner", "ptdp", "planner: ptdp (tensor × pipeline × data search, §4.3) or 2bw (PipeDream-2BW's planner, §3.3.2: width × depth, microbatch size and recomputation; --pp, --microbatch and --recompute fix its choices)")
	calibration := fs.String("calibration", "", "a GEMM calibration measured on --gpu (go run ./runner profile --calibration FILE): the cost model's GEMM efficiency curve instead of the default")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("transformer: unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *launchAs != "" && !slices.Contains(app.LaunchFormats(), *launchAs) {
		return fmt.Errorf("--launch: must be one of %s, got %q", strings.Join(app.LaunchFormats(), ", "), *launchAs)
	}
	in := d
	in.Model, in.Planner, in.Schedule = "custom", *planner, *sched
	presetFlag := "preset"
	if set["model"] {
		presetFlag = "model"
	}
	switch {
	case set["model"] && set["preset"]:
		return fmt.Errorf("--preset and --model: the same choice, give one")
	case set[presetFlag] && set["hf-config"]:
		return fmt.Errorf("--%s and --hf-config: give one, got both (%q and %q)", presetFlag, preset, *hfConfig)
	case set[presetFlag] || set["hf-config"]:
		for _, f := range dimensionFlags {
			if set[f] {
				return fmt.Errorf("--%s: the model comes from --%s or --hf-config; give dimensions only without them", f, presetFlag)
			}
		}
		in.Model = preset
		if set["hf-config"] {
			data, err := readLimited(*hfConfig, request.MaxHFConfigBytes)
			if err != nil {
				return fmt.Errorf("--hf-config: %w", err)
			}
			in.Model, in.HFConfig = request.HFModel, string(data)
		}
	default:
		for _, f := range []string{"layers", "hidden", "heads"} {
			if !set[f] {
				return fmt.Errorf("--%s: required (or give --preset or --hf-config)", f)
			}
		}
		in.Custom = request.CustomModel{Name: *name, Layers: *layers, Hidden: *hidden, Heads: *heads, Vocab: *vocab, FFN: *ffn,
			KVHeads: *kvHeads, GatedFFN: *gated, UntiedEmbeddings: *untied, Experts: *experts, TopK: *topk, MoEFFN: *moeFFN, SharedExperts: *shared,
			ExpertGroups: *groups, GroupTopK: *groupTopK, SlidingWindow: *window, SlidingLayers: *windowed, AttentionSinks: *sinks}
	}
	for _, name := range []string{"gpus", "batch"} {
		if !set[name] {
			return fmt.Errorf("--%s: required", name)
		}
	}
	if *gpus < 1 {
		return fmt.Errorf("--gpus: must be >= 1, got %d", *gpus)
	}
	if *perNode < 1 {
		return fmt.Errorf("--gpus-per-node: must be >= 1, got %d", *perNode)
	}
	*perNode = min(*perNode, *gpus)
	if *gpus%*perNode != 0 {
		return fmt.Errorf("--gpus: must be a multiple of --gpus-per-node %d, got %d", *perNode, *gpus)
	}
	in.Seq, in.Precision, in.Optimizer, in.FlashAttention = *seq, *precision, *optimizer, *flash
	in.UnfusedGradAccumulation = !*gradFusion
	if set["zero"] {
		in.ZeRO = zero
	}
	if set["mtp-layers"] {
		in.MTPLayers = mtp
	}
	for i, to := range []**bool{&in.OverlapGradReduce, &in.OverlapParamGather, &in.TPCommOverlap} {
		if set[overlapFlags[i].name] {
			*to = overlaps[i]
		}
	}
	in.GPU, in.Nodes, in.GPUsPerNode, in.InterNodeGBps = *gpuID, *gpus / *perNode, *perNode, *interBW/1e9
	in.GlobalBatch, in.TP, in.PP, in.CP, in.EP, in.ETP = *batch, *tp, *pp, *cp, *ep, *etp
	in.EPDispatcher, in.OverlapEPComm, in.FP8ParamGather = *epDispatcher, *overlapEP, *fp8Gather
	in.Microbatch, in.Interleave, in.Recompute, in.RecomputeLayers, in.RecomputeModules = *micro, *interleave, *recompute, *recomputeLayers, *recomputeModules
	in.CPComm, in.AttentionKernel = *cpComm, *attnKernel
	if set["sequence-parallel"] {
		in.SequenceParallel = seqPar
	}
	in.AllowCrossNodeTP, in.Top = *crossNode, *top
	if *calibration != "" {
		data, err := readLimited(*calibration, request.MaxCalibrationBytes)
		if err != nil {
			return fmt.Errorf("--calibration: %w", err)
		}
		in.Calibration = string(data)
	}
	res, err := app.Plan(context.Background(), in)
	if err != nil {
		if set[presetFlag] {
			err = flagError(err, map[string]string{"plan.model": presetFlag})
		}
		return flagError(err, transformerFlags)
	}
	switch {
	case *launchAs != "" && res.Problem == "":
		err = printLaunch(stdout, res, *launchAs)
	case *asJSON:
		err = writeJSON(stdout, res)
	default:
		err = printTransformer(stdout, in, res, set)
		if err == nil && *breakdown {
			err = printBreakdown(stdout, res)
		}
		if err == nil && res.Note != "" {
			_, err = fmt.Fprintln(stdout, "note:", res.Note)
		}
	}
	if err != nil {
		return err
	}
	if res.Problem != "" {
		return fmt.Errorf("transformer: %s", res.Problem)
	}
	if *exportPlan != "" {
		if res.Plan == nil {
			return fmt.Errorf("--export-plan: no plan to export: %s", res.NoExport)
		}
		data, err := res.Plan.Marshal()
		if err != nil {
			return err
		}
		return atomicfile.WriteFile(*exportPlan, data)
	}
	return nil
}

// readLimited reads the file at path, refusing one over limit bytes.
func readLimited(path string, limit int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > limit {
		return nil, fmt.Errorf("%s is over the limit of %d bytes", path, limit)
	}
	return data, nil
}

// flagError names the flag that set a request field a validation error
// names (flags maps fields to flags), e.g. "--tp (plan.tp): must be in
// [0, 65536], got -1"; other errors pass through.
func flagError(err error, flags map[string]string) error {
	var fe *request.FieldError
	if errors.As(err, &fe) {
		if f, ok := flags[fe.Field]; ok {
			return fmt.Errorf("--%s (%s): %s", f, fe.Field, fe.Msg)
		}
	}
	return err
}

// printLaunch prints the result's launch artifact of format, or why the
// engine cannot run the chosen configuration.
func printLaunch(w io.Writer, res app.Result, format string) error {
	for _, l := range res.Launch {
		if l.Format != format {
			continue
		}
		if l.Problem != "" {
			return fmt.Errorf("--launch %s: %s", format, l.Problem)
		}
		_, err := io.WriteString(w, l.Text)
		return err
	}
	return fmt.Errorf("--launch %s: no plan to launch: %s", format, res.NoExport)
}

// printTransformer prints the result as text: the inputs and defaults, then a table.
func printTransformer(w io.Writer, in request.Plan, res app.Result, set map[string]bool) error {
	tr := res.Transformer
	fmt.Fprintf(w, "model: %s: l=%d h=%d a=%d s=%d V=%d %s, %.1f billion parameters (eq. 4.3)",
		res.Model, tr.Layers, tr.Hidden, tr.Heads, tr.Seq, tr.Vocab, tr.TrainingPrecision(), res.Params/1e9)
	if tr.MoE != nil {
		fmt.Fprintf(w, ", %.1f billion active (%d experts, top-%d, in %d of the %d layers)", tr.ActiveParams()/1e9, tr.MoE.Experts, tr.MoE.TopK, tr.MoELayers(), tr.Layers)
	}
	if tr.ChunkedLayers > 0 {
		fmt.Fprintf(w, "; %d layers attend in chunks of %d tokens", tr.ChunkedLayers, tr.AttentionChunk)
	}
	if tr.MTPLayers > 0 {
		fmt.Fprintf(w, "; trained with %d multi-token prediction module(s) of %.1f billion more (--mtp-layers)", tr.MTPLayers, tr.MTPParams()/1e9)
	}
	fmt.Fprintln(w)
	intra := 0.0
	for _, g := range app.GPUs() {
		if g.ID == in.GPU {
			intra = g.PeerBandwidthBytesPerSec
		}
	}
	fmt.Fprintf(w, "cluster: %d × %s (%d nodes × %d), %.0f GiB each; %.4g GB/s in a node, %.4g GB/s per GPU between nodes\n",
		res.GPUs, res.GPU, in.Nodes, in.GPUsPerNode, res.CapacityBytes/(1<<30), intra/1e9, res.InterNodeBytesPerSec/1e9)
	fmt.Fprintf(w, "global batch %d; defaults: ", in.GlobalBatch)
	sep := ""
	for _, f := range overlapFlags {
		set["overlap"] = set["overlap"] || set[f.name]
	}
	for _, f := range []string{"seq", "vocab", "precision", "gpu", "gpus-per-node", "inter-node-bandwidth", "optimizer", "zero", "flash-attention", "overlap"} {
		if f == "vocab" && in.Model != "custom" {
			continue
		}
		if !set[f] {
			msg := transformerDefaults[f]
			switch f {
			case "seq":
				msg = fmt.Sprintf(msg, tr.Seq)
			case "gpu":
				msg = fmt.Sprintf(msg, in.GPU)
			case "gpus-per-node":
				msg = fmt.Sprintf(msg, in.GPUsPerNode)
			case "inter-node-bandwidth":
				msg = fmt.Sprintf(msg, res.InterNodeBytesPerSec/1e9)
			case "overlap":
				if len(res.Candidates)+len(res.Infeasible) == 0 {
					continue
				}
				msg = fmt.Sprintf(msg, overlapText(append(res.Candidates, res.Infeasible...)[0].Execution.Overlap))
			}
			fmt.Fprint(w, sep, msg)
			sep = "; "
		}
	}
	if in.Planner == "2bw" { // issue 15
		fmt.Fprintln(w, sep+"PipeDream-2BW's planner (§3.3.2): TP 1, the best microbatch and execution of each (DP, PP); memory reserve for CUDA context and fragmentation")
	} else {
		fmt.Fprintln(w, sep+"scatter/gather on (§4.4.1); memory reserve for CUDA context and fragmentation")
	}
	if res.Mode == "evaluate" {
		fmt.Fprintln(w, "evaluated the given configuration:")
		return printTransformerConfigs(w, append(res.Candidates, res.Infeasible...))
	}
	fmt.Fprintf(w, "searched %d configurations, %d fit; the fastest %d:\n", res.Evaluated, res.Feasible, len(res.Candidates))
	if err := printTransformerConfigs(w, res.Candidates); err != nil {
		return err
	}
	if len(res.Infeasible) > 0 {
		fmt.Fprintln(w, "does not fit (smallest first):")
		return printTransformerConfigs(w, res.Infeasible[:min(3, len(res.Infeasible))])
	}
	return nil
}

// printTransformerConfigs prints configurations as an aligned table.
func printTransformerConfigs(w io.Writer, cs []app.Candidate) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "TP\tPP\tCP\tEP\tETP\tDP\tMICROBATCH\tINTERLEAVE\tRECOMPUTE\tZERO\tITERATION s\tTFLOP/s/GPU\tMODEL TFLOP/s\tMFU\tBUBBLE\tPEAK GiB\tWEIGHTS+OPT GiB\tACTIVATIONS GiB\tNOTE")
	for _, c := range cs {
		note := "fits"
		if !c.Fits {
			note = c.Reason
		}
		if c.TwoBW != nil { // the 2BW planner's execution (issue 15)
			note += ", " + c.TwoBW.Execution.String()
		}
		m, e := c.Memory, c.Execution
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%s\t%d\t%d\t%d\t%s\t%d\t%.4g\t%.1f\t%.1f\t%.3f\t%.3f\t%.1f\t%.1f\t%.1f\t%s\n",
			e.TP, e.PP, e.CP, e.EP, expertTPText(e), e.DP, e.MicrobatchSize, e.Interleave, e.RecomputeText(), e.ZeRO, c.IterationSeconds, c.TFLOPSPerGPU, c.ModelTFLOPSPerGPU,
			c.MFU, c.BubbleFraction, m.PeakBytes/(1<<30), (m.WeightBytes+m.GradientBytes+m.OptimizerBytes+m.FP8WeightBytes)/(1<<30), m.ActivationBytes/(1<<30), note)
	}
	return tw.Flush()
}

// expertTPText is the ETP column: the expert-tensor-parallel degree, "-"
// without expert parallelism where none is set (the experts, if any,
// split over t like a dense MLP).
func expertTPText(e plan.Execution) string {
	if e.EP <= 1 && e.ETP == 0 {
		return "-"
	}
	return strconv.Itoa(e.ExpertTP())
}

// overlapText says which communication o overlaps, e.g. "grad reduce,
// param gather on, TP comm off".
func overlapText(o plan.Overlap) string {
	onOff := map[bool]string{true: "on", false: "off"}
	return fmt.Sprintf("grad reduce %s, param gather %s, TP comm %s", onOff[o.GradReduce], onOff[o.ParamGather], onOff[o.TPComm])
}

// printBreakdown prints the selected candidate's step time split into its
// parts (cost.TimeBreakdown.Parts), with each part's share.
func printBreakdown(w io.Writer, res app.Result) error {
	if len(res.Candidates) == 0 || res.Candidates[res.Selected].Breakdown == nil {
		return nil
	}
	c := res.Candidates[res.Selected]
	fmt.Fprintf(w, "step time of the chosen configuration, %.4g s:\n", c.IterationSeconds)
	tw := newTable(w)
	fmt.Fprintln(tw, "PART\tSECONDS\tSHARE")
	for _, p := range c.Breakdown.Parts() {
		fmt.Fprintf(tw, "%s\t%.4g\t%.1f %%\n", p.Name, p.Seconds, 100*p.Seconds/c.IterationSeconds)
	}
	if err := tw.Flush(); err != nil || len(res.Schedules) == 0 {
		return err
	}
	fmt.Fprintln(w, "the chosen configuration under each pipeline schedule (* its own):")
	tw = newTable(w)
	fmt.Fprintln(tw, "SCHEDULE\tCHUNKS/GPU\tITERATION s\tTOKENS/s\tBUBBLE s\tPEAK GiB\tENGINES\tNOTE")
	for _, o := range res.Schedules {
		name := string(o.Schedule)
		if o.Selected {
			name += " *"
		}
		if o.Problem != "" {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t-\t%s\t%s\n", name, o.ChunksText(), o.EnginesText(), o.Note())
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%.4g\t%.0f\t%.4g\t%.1f\t%s\t%s\n", name, o.ChunksText(), o.IterationSeconds, o.TokensPerSec, o.BubbleSeconds, o.PeakBytes/(1<<30), o.EnginesText(), o.Note())
	}
	return tw.Flush()
}
