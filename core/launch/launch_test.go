package launch

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"gopkg.in/yaml.v3"

	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
	"pipeplan/modelprofiles"
)

// gptPlan is a consistent transformer plan: 24 layers, tp 2 × pp 4 × dp 2
// on 2 nodes of 8 GPUs, interleaved with v chunks, 32 microbatches of 1.
func gptPlan(t testing.TB, v int) *plan.Plan {
	t.Helper()
	p := &plan.Plan{
		Version: plan.Version, Planner: "ptdp",
		Model: plan.Model{Name: "GPT 1.3B", NumLayers: 24, Transformer: &model.Transformer{
			Layers: 24, Hidden: 2048, Heads: 16, Seq: 1024, Vocab: 51200}},
		Cluster: plan.Cluster{GPU: "nvidia-a100-sxm4-80gb", Nodes: 2, GPUsPerNode: 8},
		Execution: plan.Execution{TP: 2, PP: 4, DP: 2, Interleave: v, CP: 1, EP: 1,
			MicrobatchSize: 1, GlobalBatch: 64, Recompute: model.RecomputeFull, Schedule: schedule.OneFOneB},
		Predictions: plan.Predictions{IterationSeconds: 1, SamplesPerSecond: 64, PeakBytesPerGPU: 1e10},
	}
	if v > 1 {
		p.Execution.Schedule = schedule.Interleaved
	}
	per := 24 / (4 * v)
	for k := range 4 * v {
		p.Stages = append(p.Stages, plan.Stage{FirstLayer: k * per, LastLayer: k*per + per - 1, Replicas: 1})
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	return p
}

// inputOf is the exporters' input for p, as Artifact builds it.
func inputOf(p *plan.Plan) input {
	return input{Exec: p.Execution, Model: p.Model, Cluster: p.Cluster, Stages: p.Stages,
		Microbatches: p.Execution.Microbatches(), Image: "img"}
}

// nameList reads a testdata list: one name a line, # comments.
func nameList(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			names = append(names, line)
		}
	}
	return names
}

// keyPaths lists the dotted key paths of a decoded TOML/YAML/JSON value
// (list elements as "[]").
func keyPaths(prefix string, v any, out *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			keyPaths(p, x, out)
		}
	case []any:
		for _, x := range v {
			if _, ok := x.(map[string]any); ok {
				keyPaths(prefix+"[]", x, out)
			} else {
				*out = append(*out, prefix) // a list of scalars is one key
			}
		}
	default:
		*out = append(*out, prefix)
	}
}

// megatronFlags parses the continued lines after pretrain_gpt.py into flag → value.
func megatronFlags(t *testing.T, out string) map[string]string {
	t.Helper()
	_, rest, ok := strings.Cut(out, megatronEntry+" \\\n")
	if !ok {
		t.Fatalf("no %s in:\n%s", megatronEntry, out)
	}
	flags := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(rest), "\n") {
		f := strings.Fields(strings.TrimSuffix(strings.TrimSpace(line), "\\"))
		switch len(f) {
		case 1:
			flags[f[0]] = ""
		case 2:
			flags[f[0]] = f[1]
		default:
			t.Fatalf("line %q is not one flag", line)
		}
	}
	return flags
}

func mustExport(t *testing.T, format string, in input) string {
	t.Helper()
	out, err := export(format, in)
	if err != nil {
		t.Fatalf("%s: %v", format, err)
	}
	return out
}

// TestExportMegatronRoundTrip: every degree survives as Megatron-LM's
// flags, and every flag is in Megatron-LM's arguments.py list.
func TestExportMegatronRoundTrip(t *testing.T) {
	known := nameList(t, "megatron-args.txt")
	for _, v := range []int{1, 2} {
		flags := megatronFlags(t, mustExport(t, "megatron", inputOf(gptPlan(t, v))))
		want := map[string]string{
			"--tensor-model-parallel-size": "2", "--pipeline-model-parallel-size": "4", "--context-parallel-size": "1",
			"--expert-model-parallel-size": "1", "--micro-batch-size": "1", "--global-batch-size": "64",
			"--num-layers": "24", "--hidden-size": "2048", "--num-attention-heads": "16", "--seq-length": "1024",
			"--max-position-embeddings": "1024", "--recompute-granularity": "full", "--recompute-method": "uniform", "--bf16": "",
		}
		if v == 2 {
			want["--num-layers-per-virtual-pipeline-stage"] = "3"
		}
		for k, w := range want {
			if got, ok := flags[k]; !ok || got != w {
				t.Errorf("v=%d: %s = %q (present %v), want %q", v, k, got, ok, w)
			}
		}
		for k, w := range map[string]string{"--train-iters": "100", "--lr": "1.0e-4", "--eval-iters": "0", "--log-throughput": ""} {
			if got, ok := flags[k]; !ok || got != w {
				t.Errorf("v=%d: benchmark flag %s = %q (present %v), want %q", v, k, got, ok, w)
			}
		}
		if _, ok := flags["--num-layers-per-virtual-pipeline-stage"]; ok != (v > 1) {
			t.Errorf("v=%d: virtual pipeline flag present = %v", v, ok)
		}
		for k := range flags {
			if !slices.Contains(known, k) {
				t.Errorf("%s is not in testdata/megatron-args.txt", k)
			}
		}
	}
}

// TestExportCPComm: the context-parallel communication type goes to
// Megatron-LM as --cp-comm-type (Transformer Engine's cp_comm_type
// values); torchtitan, whose context parallelism is PyTorch's ring
// attention, refuses another.
func TestExportCPComm(t *testing.T) {
	p := gptPlan(t, 1)
	p.Execution.CP, p.Execution.DP, p.Execution.CPComm = 2, 1, plan.CPCommAllGather
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := megatronFlags(t, mustExport(t, "megatron", inputOf(p)))["--cp-comm-type"]; got != "all_gather" {
		t.Errorf("--cp-comm-type = %q, want all_gather", got)
	}
	if _, err := export("torchtitan", inputOf(p)); !errors.Is(err, ErrNotExpressible) || !strings.Contains(err.Error(), "execution.cp_comm = all_gather") {
		t.Errorf("torchtitan with all_gather: %v", err)
	}
	if _, ok := megatronFlags(t, mustExport(t, "megatron", inputOf(gptPlan(t, 1))))["--cp-comm-type"]; ok {
		t.Errorf("cp 1: --cp-comm-type emitted")
	}
}

func TestExportTorchtitanRoundTrip(t *testing.T) {
	var job struct {
		Training struct {
			LocalBatchSize  int `toml:"local_batch_size"`
			GlobalBatchSize int `toml:"global_batch_size"`
			SeqLen          int `toml:"seq_len"`
		} `toml:"training"`
		Parallelism struct {
			Replicate     int    `toml:"data_parallel_replicate_degree"`
			Shard         int    `toml:"data_parallel_shard_degree"`
			TP            int    `toml:"tensor_parallel_degree"`
			PP            int    `toml:"pipeline_parallel_degree"`
			LayersPerStep int    `toml:"pipeline_parallel_layers_per_stage"`
			FirstLess     int    `toml:"pipeline_parallel_first_stage_less_layers"`
			LastLess      int    `toml:"pipeline_parallel_last_stage_less_layers"`
			Schedule      string `toml:"pipeline_parallel_schedule"`
			Microbatch    int    `toml:"pipeline_parallel_microbatch_size"`
			CP            int    `toml:"context_parallel_degree"`
			EP            int    `toml:"expert_parallel_degree"`
		} `toml:"parallelism"`
		AC struct {
			Mode string `toml:"mode"`
		} `toml:"activation_checkpoint"`
	}
	out := mustExport(t, "torchtitan", inputOf(gptPlan(t, 2)))
	md, err := toml.Decode(out, &job)
	if err != nil {
		t.Fatalf("TOML: %v\n%s", err, out)
	}
	pa := job.Parallelism
	if pa.Replicate*pa.Shard != 2 || pa.TP != 2 || pa.PP != 4 || pa.LayersPerStep != 3 || pa.FirstLess != 0 || pa.LastLess != 0 || pa.Schedule != "Interleaved1F1B" ||
		pa.Microbatch != 1 || pa.CP != 1 || pa.EP != 1 || job.Training.GlobalBatchSize != 64 || job.Training.LocalBatchSize != 32 ||
		job.Training.SeqLen != 1024 || job.AC.Mode != "full" {
		t.Errorf("degrees do not round-trip: %+v\n%s", job, out)
	}
	known := nameList(t, "torchtitan-keys.txt")
	for _, k := range md.Keys() {
		if len(k) == 2 && !slices.Contains(known, k.String()) {
			t.Errorf("%s is not in testdata/torchtitan-keys.txt", k)
		}
	}
	for _, k := range md.Undecoded() {
		if !slices.Contains([]string{"job", "job.description", "training.mixed_precision_param"}, k.String()) {
			t.Errorf("key %s is not checked by the test", k)
		}
	}
	// FP8 through torchtitan's float8 converter, the weights gathered in
	// FP8 when FSDP shards them and the plan keeps no bf16 copy.
	fp8 := gptPlan(t, 1)
	fp8.Model.Transformer.Precision, fp8.Execution.ZeRO, fp8.Execution.FP8ParamGather = model.FP8, 3, true
	var conv struct {
		Model struct {
			Converters []string `toml:"converters"`
		} `toml:"model"`
		Float8 struct {
			AllGather bool `toml:"enable_fsdp_float8_all_gather"`
		} `toml:"float8"`
		Training struct {
			MP string `toml:"mixed_precision_param"`
		} `toml:"training"`
	}
	out = mustExport(t, "torchtitan", inputOf(fp8))
	if md, err = toml.Decode(out, &conv); err != nil || !slices.Equal(conv.Model.Converters, []string{"float8"}) || !conv.Float8.AllGather || conv.Training.MP != "bfloat16" {
		t.Errorf("fp8: %+v, %v\n%s", conv, err, out)
	}
	for _, k := range md.Keys() {
		if len(k) == 2 && !slices.Contains(known, k.String()) {
			t.Errorf("%s is not in testdata/torchtitan-keys.txt", k)
		}
	}
}

// TestExportTorchtitanZBV: a ZB-V or DualPipeV plan (two chunks a device
// in a V) goes to torchtitan as ZBVZeroBubble or DualPipeV over its 2·pp
// chunks; Megatron-LM, which has no V schedule, refuses it. With the
// expert exchange overlapped, DualPipeV's plan sets torchtitan's
// pipeline_parallel_expert_parallel_overlap and ZB-V's is refused.
func TestExportTorchtitanZBV(t *testing.T) {
	for kind, name := range map[schedule.Kind]string{schedule.ZBV: "ZBVZeroBubble", schedule.DualPipeV: "DualPipeV"} {
		p := gptPlan(t, 2)
		p.Execution.Schedule, p.Execution.Interleave = kind, 1
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		var job struct {
			Parallelism struct {
				PP            int    `toml:"pipeline_parallel_degree"`
				LayersPerStep int    `toml:"pipeline_parallel_layers_per_stage"`
				Schedule      string `toml:"pipeline_parallel_schedule"`
			} `toml:"parallelism"`
		}
		out := mustExport(t, "torchtitan", inputOf(p))
		if _, err := toml.Decode(out, &job); err != nil || job.Parallelism.Schedule != name || job.Parallelism.PP != 4 || job.Parallelism.LayersPerStep != 3 {
			t.Errorf("%s: %+v, %v\n%s", kind, job, err, out)
		}
		if _, err := export("megatron", inputOf(p)); !errors.Is(err, ErrNotExpressible) || !strings.Contains(err.Error(), string(kind)) {
			t.Errorf("megatron with %s: %v", kind, err)
		}
		// The expert exchange overlapped: torchtitan's option pairs
		// DualPipeV's forward and backward; no other schedule has it.
		p.Model.Transformer.MoE = &model.MoE{Experts: 8, TopK: 2}
		p.Execution.EP, p.Execution.Overlap.EPComm = 2, true
		out, err := export("torchtitan", inputOf(p))
		switch overlap := strings.Contains(out, "pipeline_parallel_expert_parallel_overlap = true\n"); {
		case kind == schedule.DualPipeV && (err != nil || !overlap):
			t.Errorf("%s with the expert exchange overlapped: %v\n%s", kind, err, out)
		case kind != schedule.DualPipeV && (!errors.Is(err, ErrNotExpressible) || !strings.Contains(err.Error(), "execution.overlap.ep_comm")):
			t.Errorf("%s with the expert exchange overlapped: %v, want an error naming execution.overlap.ep_comm", kind, err)
		}
	}
}

func TestExportDeepSpeedRoundTrip(t *testing.T) {
	p := gptPlan(t, 1)
	out := mustExport(t, "deepspeed", inputOf(p))
	var cfg map[string]any
	if err := json.Unmarshal([]byte(out), &cfg); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	var paths []string
	keyPaths("", cfg, &paths)
	known := nameList(t, "deepspeed-keys.txt")
	for _, k := range paths {
		if !slices.Contains(known, k) {
			t.Errorf("%s is not in testdata/deepspeed-keys.txt", k)
		}
	}
	num := func(path string) float64 {
		var v any = cfg
		for k := range strings.SplitSeq(path, ".") {
			v = v.(map[string]any)[k]
		}
		f, _ := v.(float64)
		return f
	}
	// DeepSpeed: train_batch_size = micro × accumulation × dp, dp = world / (pp × tp).
	if num("train_batch_size") != 64 || num("train_micro_batch_size_per_gpu") != 1 || num("gradient_accumulation_steps") != 32 ||
		num("pipeline.stages") != 4 || num("tensor_parallel.autotp_size") != 2 || num("pipeline.activation_checkpoint_interval") != 1 {
		t.Errorf("degrees do not round-trip:\n%s", out)
	}
}

func TestExportLaunchersRoundTrip(t *testing.T) {
	in := inputOf(gptPlan(t, 1))
	torchrunKnown := nameList(t, "torchrun-args.txt")
	checkTorchrun := func(args []string) {
		t.Helper()
		got := map[string]string{}
		for _, a := range args {
			name, val, _ := strings.Cut(a, "=")
			if !slices.Contains(torchrunKnown, name) {
				t.Errorf("%s is not in testdata/torchrun-args.txt", name)
			}
			got[name] = val
		}
		if got["--nnodes"] != "2" || got["--nproc_per_node"] != "8" {
			t.Errorf("torchrun does not start 2 × 8 ranks: %v", got)
		}
	}
	for _, format := range []string{"torchrun", "slurm"} {
		out := mustExport(t, format, in)
		line := out[strings.Index(out, "torchrun "):]
		line = line[:strings.Index(line, " "+megatronEntry)]
		checkTorchrun(strings.Fields(line)[1:])
		if flags := megatronFlags(t, out); flags["--tensor-model-parallel-size"] != "2" || flags["--pipeline-model-parallel-size"] != "4" {
			t.Errorf("%s: megatron degrees lost: %v", format, flags)
		}
		if format == "slurm" {
			known := nameList(t, "sbatch-options.txt")
			for line := range strings.SplitSeq(out, "\n") {
				if opt, ok := strings.CutPrefix(line, "#SBATCH "); ok {
					name, _, _ := strings.Cut(opt, "=")
					if !slices.Contains(known, name) {
						t.Errorf("%s is not in testdata/sbatch-options.txt", name)
					}
				}
			}
			if !strings.Contains(out, "#SBATCH --nodes=2\n") || !strings.Contains(out, "#SBATCH --gpus-per-node=8\n") {
				t.Errorf("sbatch script does not ask for 2 nodes × 8 GPUs:\n%s", out)
			}
		}
	}

	out := mustExport(t, "k8s", in)
	var job map[string]any
	if err := yaml.Unmarshal([]byte(out), &job); err != nil {
		t.Fatalf("YAML: %v\n%s", err, out)
	}
	var paths []string
	keyPaths("", job, &paths)
	known := nameList(t, "pytorchjob-keys.txt")
	for _, k := range paths {
		if !slices.Contains(known, k) {
			t.Errorf("%s is not in testdata/pytorchjob-keys.txt", k)
		}
	}
	var typed struct {
		Kind string `yaml:"kind"`
		Spec struct {
			NprocPerNode string `yaml:"nprocPerNode"`
			Replicas     map[string]struct {
				Replicas int `yaml:"replicas"`
				Template struct {
					Spec struct {
						Containers []struct {
							Args      []string `yaml:"args"`
							Resources struct {
								Limits map[string]int `yaml:"limits"`
							} `yaml:"resources"`
						} `yaml:"containers"`
					} `yaml:"spec"`
				} `yaml:"template"`
			} `yaml:"pytorchReplicaSpecs"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal([]byte(out), &typed); err != nil {
		t.Fatal(err)
	}
	master, worker := typed.Spec.Replicas["Master"], typed.Spec.Replicas["Worker"]
	if typed.Kind != "PyTorchJob" || typed.Spec.NprocPerNode != "8" || master.Replicas+worker.Replicas != 2 {
		t.Fatalf("manifest does not hold 2 pods × 8 GPUs: %+v", typed)
	}
	c := worker.Template.Spec.Containers[0]
	if c.Resources.Limits["nvidia.com/gpu"] != 8 {
		t.Errorf("worker GPUs: %v", c.Resources.Limits)
	}
	i := slices.Index(c.Args, megatronEntry)
	checkTorchrun(c.Args[:i])
	if j := slices.Index(c.Args, "--pipeline-model-parallel-size"); j < 0 || c.Args[j+1] != "4" {
		t.Errorf("worker args lose pp: %v", c.Args)
	}
}

// TestExportRefusesWhatEnginesCannotRun: each refusal names the field and value.
func TestExportRefusesWhatEnginesCannotRun(t *testing.T) {
	twoBW := gptPlan(t, 1)
	twoBW.Execution.Schedule = schedule.TwoBW
	gpipe := gptPlan(t, 1)
	gpipe.Execution.Schedule = schedule.GPipe
	uneven := gptPlan(t, 1)
	uneven.Stages[0].LastLayer, uneven.Stages[1].FirstLayer = 6, 7
	replicated := gptPlan(t, 1)
	replicated.Execution.DP = 1
	replicated.Stages[0].Replicas, replicated.Stages[1].Replicas, replicated.Stages[2].Replicas, replicated.Stages[3].Replicas = 3, 1, 2, 2
	fp16 := gptPlan(t, 1)
	fp16.Model.Transformer.Precision = model.FP16
	noSP := gptPlan(t, 1)
	noSP.Execution.Overlap.TPComm = true
	fp8Gather := gptPlan(t, 1)
	fp8Gather.Model.Transformer.Precision, fp8Gather.Execution.FP8ParamGather = model.FP8, true
	selective := gptPlan(t, 1)
	selective.Execution.Recompute = model.RecomputeSelective
	someLayers := gptPlan(t, 1)
	someLayers.Execution.RecomputeLayers = 2 // of full recomputation
	fp16Experts := presetPlan(t, "mixtral-8x7b")
	fp16Experts.Model.Transformer.Precision = model.FP16
	for _, c := range []struct {
		format string
		p      *plan.Plan
		want   string
	}{
		{"megatron", twoBW, "execution.schedule = 2bw"},
		{"slurm", twoBW, "execution.schedule = 2bw"},
		{"torchtitan", twoBW, "execution.schedule = 2bw"},
		{"megatron", gpipe, "execution.schedule = gpipe"},
		{"deepspeed", gptPlan(t, 2), "execution.interleave = 2"},
		{"torchtitan", uneven, "stages[2] = layers 12-17"},
		{"deepspeed", uneven, "stages[1] = layers 7-11"},
		{"k8s", replicated, "stages[1].replicas = 1"},
		{"torchtitan", fp16, "model.transformer.precision = fp16"},
		{"torchtitan", selective, "execution.recompute = selective"},
		{"deepspeed", selective, "execution.recompute = selective"},
		{"torchtitan", someLayers, "execution.recompute_layers = 2"},
		{"deepspeed", someLayers, "execution.recompute_layers = 2"},
		{"megatron", noSP, "execution.overlap.tp_comm = true"}, // Megatron-LM overlaps TP communication only with sequence parallelism
		{"megatron", fp8Gather, "execution.fp8_param_gather = true"},
		{"megatron", fp16Experts, "model.transformer.precision = fp16"},
	} {
		in := inputOf(c.p)
		if c.p == replicated {
			in.Cluster.Nodes = 2 // 8 stage replicas × tp 2
		}
		_, err := export(c.format, in)
		if !errors.Is(err, ErrNotExpressible) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s of a %s plan: got %v, want an error naming %q", c.format, c.p.Execution.Schedule, err, c.want)
		}
	}
	if _, err := export("fairseq", inputOf(gptPlan(t, 1))); err == nil || !strings.Contains(err.Error(), `--format: must be one of`) {
		t.Errorf("unknown format: %v", err)
	}
}

// torchtitanStages is the transformer layers of each pipeline stage that
// torchtitan builds from its settings, as pipeline_llm and
// generate_llm_fqn_per_model_part (torchtitan/distributed/
// pipeline_parallel.py at commit 02ef790c79614758f85880e173d2338d7de502a3)
// compute: ceil((L + a + b)/n) stages, divisible by pp; each (L + a + b)
// divided evenly, the first stages taking the remainder; the first stage's
// share less a for the embedding, the last's less b for the norm and output.
func torchtitanStages(layers, perStage, firstLess, lastLess, pp int) ([]int, error) {
	effective := layers + firstLess + lastLess
	stages := (effective + perStage - 1) / perStage
	if stages%pp != 0 {
		return nil, fmt.Errorf("torchtitan: %d virtual stages not divisible by pp %d", stages, pp)
	}
	if stages == 1 {
		return []int{layers}, nil
	}
	per, extra := effective/stages, effective%stages
	if per == 0 || firstLess > per || lastLess > per {
		return nil, fmt.Errorf("torchtitan: %d stages of %d effective layers, weights %d and %d", stages, effective, firstLess, lastLess)
	}
	out := make([]int, stages)
	left := layers
	for i := range out {
		n := per
		if i < extra {
			n++
		}
		switch i {
		case 0:
			n -= firstLess
		case stages - 1:
			n -= lastLess
		}
		n = min(n, left)
		out[i], left = n, left-n
	}
	return out, nil
}

// TestExportTorchtitanSplit: the pipeline settings the torchtitan TOML
// carries make torchtitan build the plan's chunks — an even split, ends
// with fewer layers, and Llama 3's 126 layers on 128 chunks whose ends hold
// the embedding and the output alone — where torchtitan's defaults (one
// layer less at each end) would not.
func TestExportTorchtitanSplit(t *testing.T) {
	ends := gptPlan(t, 1) // 5, 7, 7, 5 layers
	ends.Stages[0].LastLayer, ends.Stages[1].FirstLayer, ends.Stages[1].LastLayer, ends.Stages[2].FirstLayer = 4, 5, 11, 12
	ends.Stages[2].LastLayer, ends.Stages[3].FirstLayer = 18, 19
	llama := presetPlan(t, "llama3-405b")
	llama.Cluster.Nodes = 128
	llama.Execution.TP, llama.Execution.PP, llama.Execution.DP, llama.Execution.Interleave = 8, 16, 8, 8
	llama.Execution.Schedule, llama.Execution.ZeRO, llama.Execution.Overlap.ParamGather = schedule.Interleaved, 0, false
	llama.Execution.Recompute = model.RecomputeFull // torchtitan has no attention-core recomputation
	llama.Stages = []plan.Stage{{FirstLayer: 0, LastLayer: -1, Replicas: 1}}
	for l := range 126 {
		llama.Stages = append(llama.Stages, plan.Stage{FirstLayer: l, LastLayer: l, Replicas: 1})
	}
	llama.Stages = append(llama.Stages, plan.Stage{FirstLayer: 126, LastLayer: 125, Replicas: 1})
	for _, c := range []struct {
		name string
		p    *plan.Plan
	}{{"even, interleaved", gptPlan(t, 2)}, {"fewer at the ends", ends}, {"llama3-405b pp16 v8", llama}} {
		if err := c.p.Validate(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var job struct {
			Parallelism struct {
				PP        int `toml:"pipeline_parallel_degree"`
				PerStage  int `toml:"pipeline_parallel_layers_per_stage"`
				FirstLess int `toml:"pipeline_parallel_first_stage_less_layers"`
				LastLess  int `toml:"pipeline_parallel_last_stage_less_layers"`
			} `toml:"parallelism"`
		}
		out := mustExport(t, "torchtitan", inputOf(c.p))
		if _, err := toml.Decode(out, &job); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		pa := job.Parallelism
		want := make([]int, len(c.p.Stages))
		for k, s := range c.p.Stages {
			want[k] = chunkLayers(s)
		}
		if got, err := torchtitanStages(c.p.Model.Transformer.Layers, pa.PerStage, pa.FirstLess, pa.LastLess, pa.PP); err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: torchtitan builds %v (%v), the plan %v", c.name, got, err, want)
		}
		// torchtitan's defaults, one layer less at each end, would not.
		if got, err := torchtitanStages(c.p.Model.Transformer.Layers, pa.PerStage, 1, 1, pa.PP); err == nil && slices.Equal(got, want) && (pa.FirstLess != 1 || pa.LastLess != 1) {
			t.Errorf("%s: torchtitan's defaults build the plan's chunks too (%v): the test cannot tell", c.name, got)
		}
	}
}

// TestExportMegatronEnvironment: every artifact that starts Megatron-LM
// sets CUDA_DEVICE_MAX_CONNECTIONS=1 where Megatron-LM asserts it (tensor
// or context parallelism), and only there.
func TestExportMegatronEnvironment(t *testing.T) {
	tp1 := gptPlan(t, 1)
	tp1.Execution.TP, tp1.Execution.DP = 1, 4
	for _, c := range []struct {
		p    *plan.Plan
		want bool
	}{{gptPlan(t, 1), true}, {tp1, false}} {
		for _, format := range []string{"megatron", "torchrun", "slurm", "k8s"} {
			out := mustExport(t, format, inputOf(c.p))
			set := strings.Contains(out, "export CUDA_DEVICE_MAX_CONNECTIONS=1\n") ||
				strings.Contains(out, "- name: \"CUDA_DEVICE_MAX_CONNECTIONS\"\n                  value: \"1\"")
			if set != c.want {
				t.Errorf("%s, tp %d: CUDA_DEVICE_MAX_CONNECTIONS=1 set %v, want %v:\n%s", format, c.p.Execution.TP, set, c.want, out)
			}
		}
	}
}

// TestExportTorchtitanFlavors: a preset torchtitan builds in (Llama 3
// 8B/70B/405B, DeepSeek-V3 671B) is named by its [model] name and flavor,
// so the TOML runs as it is; any other model asks for a flavor of its
// dimensions to be registered. A model with multi-token prediction is
// refused (the export writes no MTP), so DeepSeek-V3 is exported without
// its module; so is one with windowed layers (GPT-OSS).
func TestExportTorchtitanFlavors(t *testing.T) {
	want := map[string][2]string{"llama3-8b": {"llama3", "8B"}, "llama3-70b": {"llama3", "70B"}, "llama3-405b": {"llama3", "405B"}, "deepseek-v3": {"deepseek_v3", "671B"}}
	for _, llm := range modelprofiles.LLMs() {
		p := presetPlan(t, llm.ID)
		p.Execution.ZeRO, p.Execution.Overlap.ParamGather = 3, true // torchtitan shards with FSDP
		p.Execution.Recompute = model.RecomputeFull                 // and has no attention-core recomputation
		if p.Model.Transformer.MTPLayers > 0 {
			if _, err := Artifact("torchtitan", p, ""); !errors.Is(err, ErrNotExpressible) || !strings.Contains(err.Error(), "mtp_layers") {
				t.Errorf("%s with %d MTP layers: %v, want not expressible naming mtp_layers", llm.ID, p.Model.Transformer.MTPLayers, err)
			}
			p.Model.Transformer.MTPLayers = 0
		}
		if tr := p.Model.Transformer; tr.SlidingLayers > 0 {
			if _, err := Artifact("torchtitan", p, ""); !errors.Is(err, ErrNotExpressible) || !strings.Contains(err.Error(), "sliding_layers") {
				t.Errorf("%s with %d windowed layers: %v, want not expressible naming sliding_layers", llm.ID, tr.SlidingLayers, err)
			}
			continue
		}
		var job struct {
			Model struct {
				Name   string `toml:"name"`
				Flavor string `toml:"flavor"`
			} `toml:"model"`
		}
		out := mustExport(t, "torchtitan", inputOf(p))
		if _, err := toml.Decode(out, &job); err != nil {
			t.Fatalf("%s: %v", llm.ID, err)
		}
		w, builtIn := want[llm.ID]
		if got := [2]string{job.Model.Name, job.Model.Flavor}; got != w || builtIn == strings.Contains(out, "register a flavor") {
			t.Errorf("%s: [model] %q %q, want %q (built in %v):\n%s", llm.ID, got[0], got[1], w, builtIn, out)
		}
	}
}

// TestExportTorchtitanFlavorRotaryBase: Llama 3 8B's dimensions with
// another rotary base than torchtitan's llama3 flavors' (500,000) are not
// that flavor: the TOML asks for a flavor to be registered, and names the
// base.
func TestExportTorchtitanFlavorRotaryBase(t *testing.T) {
	p := presetPlan(t, "llama3-8b")
	p.Execution.ZeRO, p.Execution.Overlap.ParamGather, p.Execution.Recompute = 3, true, model.RecomputeFull
	for _, c := range []struct {
		base     float64
		register bool
	}{{0, false}, {500000, false}, {10000, true}} {
		p.Model.Transformer.Numerics.RotaryBase = c.base
		out := mustExport(t, "torchtitan", inputOf(p))
		if got := strings.Contains(out, "register a flavor"); got != c.register {
			t.Errorf("rotary base %g: asks for a flavor %v, want %v:\n%s", c.base, got, c.register, out)
		}
		if named := strings.Contains(out, "rope theta"); named != (c.base > 0) {
			t.Errorf("rotary base %g: named in the description %v:\n%s", c.base, named, out)
		}
	}
}

// TestEngineSchedules checks Engines against the exporters: each engine's
// artifact is written for the pipelined plan under every schedule it
// lists, and refused, naming execution.schedule (or the interleave it
// cannot run), under every other synchronous one; torchtitan has a name
// for each of its.
func TestEngineSchedules(t *testing.T) {
	for _, en := range Engines {
		for _, in := range schedule.Registry() {
			if !in.Flushes() || in.Kind == schedule.OneFOneBStar {
				continue // 1F1B* needs its groups; the asynchronous kinds are refused apart
			}
			p := gptPlan(t, 1)
			p.Execution.Schedule = in.Kind
			if in.VShaped || in.Chunked {
				p = gptPlan(t, 2)
				p.Execution.Schedule = in.Kind
				if in.VShaped {
					p.Execution.Interleave = 1
				}
			}
			if err := p.Validate(); err != nil {
				t.Fatalf("%s: %v", in.Kind, err)
			}
			_, err := export(en.ID, inputOf(p))
			runs := slices.Contains(en.Schedules, in.Kind)
			refused := err != nil && (strings.Contains(err.Error(), "execution.schedule") || strings.Contains(err.Error(), "execution.interleave"))
			if runs && err != nil || !runs && !refused {
				t.Errorf("%s under %s: listed %v, export error %v", en.ID, in.Kind, runs, err)
			}
			if runs && en.ID == "torchtitan" && torchtitanSchedules[in.Kind] == "" {
				t.Errorf("torchtitan: no name for %s", in.Kind)
			}
		}
	}
}
