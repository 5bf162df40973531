package launch

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
)

// flagArg is one command-line flag and its value ("" for a switch).
type flagArg struct{ name, value string }

// shellArgs renders args one per continued line.
func shellArgs(args []flagArg, indent string) string {
	var b strings.Builder
	for i, a := range args {
		b.WriteString(indent + a.name)
		if a.value != "" {
			b.WriteString(" " + shellQuote(a.value))
		}
		if i < len(args)-1 {
			b.WriteString(" \\")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// shellQuote single-quotes s for a POSIX shell unless it is only letters,
// digits and characters the shell takes literally.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.,:/=+-@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// header is the comment every artifact starts with: what the plan is.
func header(in input, prefix string) string {
	e := in.Exec
	return fmt.Sprintf("%s %s: tp %d, pp %d, dp %d, interleave %d, cp %d, ep %d; microbatch %d × %d per step, global batch %d; schedule %s, recompute %s, zero %d (exported by pipeplan)\n",
		prefix, modelLabel(in), e.TP, e.PP, e.DP*in.Stages[0].Replicas, e.Interleave, e.CP, e.EP,
		in.Microbatches, e.MicrobatchSize, e.GlobalBatch, e.Schedule, e.Recompute, e.ZeRO)
}

// modelLabel names the model on one line (control characters removed).
func modelLabel(in input) string {
	name := in.Model.Name
	if name == "" {
		name = "(unnamed model)"
	}
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, name)
}

// megatronCommand is the Megatron-LM training command of one rank.
func megatronCommand(in input, args []flagArg) string {
	return header(in, "#") + megatronEntry + " \\\n" + shellArgs(args, "  ")
}

// torchrunArgs launches nodes × GPUs-per-node ranks through a c10d rendezvous at endpoint.
func torchrunArgs(in input, id, endpoint string) []flagArg {
	return []flagArg{
		{"--nnodes", strconv.Itoa(in.Cluster.Nodes)}, {"--nproc_per_node", strconv.Itoa(in.Cluster.GPUsPerNode)},
		{"--rdzv_id", id}, {"--rdzv_backend", "c10d"}, {"--rdzv_endpoint", endpoint},
	}
}

// eqArgs renders flags as --name=value.
func eqArgs(args []flagArg) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a.name + "=" + a.value
	}
	return out
}

// torchrunCommand is the command to run on every node (each with the same
// rendezvous endpoint, MASTER_ADDR:MASTER_PORT of the first node).
func torchrunCommand(in input, args []flagArg) string {
	launcher := eqArgs(torchrunArgs(in, "pipeplan", "${MASTER_ADDR}:${MASTER_PORT:-29500}"))
	return header(in, "#") + "# run on each of the nodes, with MASTER_ADDR set to the first node's address\n" +
		"torchrun " + strings.Join(launcher, " ") + " " + megatronEntry + " \\\n" + shellArgs(args, "  ")
}

// jobName is a lowercase [a-z0-9-] name for the plan's job.
func jobName(in input) string {
	var b strings.Builder
	for _, r := range strings.ToLower(in.Model.Name) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	name := strings.Trim("pipeplan-"+b.String(), "-")
	if len(name) > 63 {
		name = strings.TrimRight(name[:63], "-")
	}
	return name
}

// sbatchScript is a Slurm batch script: one task per node running torchrun.
func sbatchScript(in input, args []flagArg) string {
	var b strings.Builder
	b.WriteString("#!/bin/bash\n")
	for _, o := range []flagArg{{"--job-name", jobName(in)}, {"--nodes", strconv.Itoa(in.Cluster.Nodes)},
		{"--ntasks-per-node", "1"}, {"--gpus-per-node", strconv.Itoa(in.Cluster.GPUsPerNode)}, {"--exclusive", ""}} {
		b.WriteString("#SBATCH " + o.name)
		if o.value != "" {
			b.WriteString("=" + o.value)
		}
		b.WriteString("\n")
	}
	b.WriteString(header(in, "#"))
	b.WriteString("MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n")
	launcher := eqArgs(torchrunArgs(in, "$SLURM_JOB_ID", "$MASTER_ADDR:29500"))
	b.WriteString("srun torchrun " + strings.Join(launcher, " ") + " " + megatronEntry + " \\\n")
	b.WriteString(shellArgs(args, "  "))
	return b.String()
}

// pytorchJobYAML is a Kubeflow PyTorchJob (kubeflow.org/v1): a Master and
// nodes−1 Workers, each a pod with the node's GPUs running torchrun.
func pytorchJobYAML(in input, args []flagArg) (string, error) {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	cmdArgs := eqArgs(torchrunArgs(in, "pipeplan", "$(MASTER_ADDR):$(MASTER_PORT)"))
	cmdArgs = append(cmdArgs, megatronEntry)
	for _, a := range args {
		cmdArgs = append(cmdArgs, a.name)
		if a.value != "" {
			cmdArgs = append(cmdArgs, a.value)
		}
	}
	var b strings.Builder
	b.WriteString(header(in, "#"))
	fmt.Fprintf(&b, "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: %s\nspec:\n  nprocPerNode: %s\n  pytorchReplicaSpecs:\n",
		q(jobName(in)), q(strconv.Itoa(in.Cluster.GPUsPerNode)))
	replica := func(kind string, n int) {
		fmt.Fprintf(&b, "    %s:\n      replicas: %d\n      restartPolicy: OnFailure\n      template:\n        spec:\n          containers:\n", kind, n)
		fmt.Fprintf(&b, "            - name: pytorch\n              image: %s\n              command: [\"torchrun\"]\n              args:\n", q(in.Image))
		for _, a := range cmdArgs {
			fmt.Fprintf(&b, "                - %s\n", q(a))
		}
		fmt.Fprintf(&b, "              resources:\n                limits:\n                  nvidia.com/gpu: %d\n", in.Cluster.GPUsPerNode)
	}
	replica("Master", 1)
	if in.Cluster.Nodes > 1 {
		replica("Worker", in.Cluster.Nodes-1)
	}
	return b.String(), nil
}

// torchtitanSchedules maps schedule kinds to torch.distributed.pipelining's names.
var torchtitanSchedules = map[schedule.Kind]string{
	schedule.GPipe: "GPipe", schedule.OneFOneB: "1F1B", schedule.Interleaved: "Interleaved1F1B",
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
	if err := pipelineSchedule(engine, e, schedule.GPipe, schedule.OneFOneB, schedule.Interleaved); err != nil {
		return "", err
	}
	split, err := torchtitanPipelineSplit(engine, in.Stages)
	if err != nil {
		return "", err
	}
	if e.CP > 1 && e.CPComm != "" && e.CPComm != plan.CPCommP2P {
		return "", notExpressible(engine, "execution.cp_comm", e.CPComm, "torchtitan's context parallelism is PyTorch's ring attention; no other exchange is exported")
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
	b.WriteString("# torchtitan builds the model named by [model] name/flavor: register a flavor with these dimensions.\n")
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
	fmt.Fprintf(&b, "context_parallel_degree = %d\nexpert_parallel_degree = %d\n\n", e.CP, e.EP)
	fmt.Fprintf(&b, "[activation_checkpoint]\nmode = %s\n", q(string(e.Recompute)))
	if precision(t) == model.FP8 {
		// torchao's Float8Linear with dynamic (current) tensorwise scaling,
		// as the cost model's FP8 is Transformer Engine's current scaling;
		// FSDP gathers the weights in FP8 where the plan keeps no bf16 copy.
		b.WriteString("\n[model]\nconverters = [\"float8\"]\n")
		if e.FP8ParamGather && e.ZeRO >= 2 {
			b.WriteString("\n[float8]\nenable_fsdp_float8_all_gather = true\nprecompute_float8_dynamic_scale_for_fsdp = true\n")
		}
	}
	return b.String(), nil
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
	if m := t.MoE; m != nil {
		d += fmt.Sprintf(", %d experts top %d of ffn %d", m.Experts, m.TopK, m.FFN)
		if m.SharedExperts > 0 {
			d += fmt.Sprintf(" + %d shared", m.SharedExperts)
		}
		if m.FirstDense > 0 {
			d += fmt.Sprintf(", first %d layers dense", m.FirstDense)
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

// deepspeedJSON is a DeepSpeed config (deepspeed.ai/docs/config-json):
// batch sizes, ZeRO, precision, the pipeline engine's stages and AutoTP.
func deepspeedJSON(in input) (string, error) {
	const engine = "deepspeed"
	d, err := common(engine, in)
	if err != nil {
		return "", err
	}
	e := in.Exec
	switch {
	case e.Interleave > 1:
		return "", notExpressible(engine, "execution.interleave", e.Interleave, "DeepSpeed's pipeline engine runs one chunk per stage")
	case e.CP > 1:
		return "", notExpressible(engine, "execution.cp", e.CP, "context parallelism is not a DeepSpeed config setting")
	case e.EP > 1:
		return "", notExpressible(engine, "execution.ep", e.EP, "expert parallelism is set on the model's MoE layers in code, not in the config")
	case e.SequenceParallel:
		return "", notExpressible(engine, "execution.sequence_parallel", true, "Megatron-style sequence parallelism is not a DeepSpeed config setting")
	case e.Recompute == model.RecomputeSelective:
		return "", notExpressible(engine, "execution.recompute", e.Recompute, "DeepSpeed checkpoints whole layers (pipeline.activation_checkpoint_interval)")
	case e.Overlap.ParamGather:
		return "", notExpressible(engine, "execution.overlap.param_gather", true, "not a DeepSpeed config setting")
	}
	if err := pipelineSchedule(engine, e, schedule.OneFOneB); err != nil {
		return "", err
	}
	// The layer split is PipelineModule's partition_method, set in code;
	// only an even one ("uniform") goes without saying.
	if _, err := layersPerChunk(engine, in); err != nil {
		return "", err
	}
	interval := 0
	if e.Recompute == model.RecomputeFull {
		interval = 1
	}
	cfg := map[string]any{
		"train_batch_size":               e.GlobalBatch,
		"train_micro_batch_size_per_gpu": e.MicrobatchSize,
		"gradient_accumulation_steps":    e.GlobalBatch / (d * e.MicrobatchSize),
		"zero_optimization":              map[string]any{"stage": e.ZeRO, "overlap_comm": e.Overlap.GradReduce},
		"pipeline":                       map[string]any{"stages": e.PP, "activation_checkpoint_interval": interval},
		"tensor_parallel":                map[string]any{"autotp_size": e.TP},
	}
	if t := in.Model.Transformer; t != nil {
		switch p := precision(t); p {
		case model.BF16:
			cfg["bf16"] = map[string]any{"enabled": true}
		case model.FP16:
			cfg["fp16"] = map[string]any{"enabled": true}
		case model.FP32:
		default:
			return "", notExpressible(engine, "model.transformer.precision", p, "DeepSpeed's config sets bf16 or fp16")
		}
	}
	out, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return "", err
	}
	return string(out) + "\n", nil
}
