package cli

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pipeplan/core/plan"
)

// gpt3Args describe GPT-3 175B (dissertation Table 4.2) on 1536 A100s.
var gpt3Args = []string{"transformer", "--layers", "96", "--hidden", "12288", "--heads", "96", "--gpus", "1536", "--batch", "1536"}

// transformerJSON runs the transformer command with --json and decodes it.
func transformerJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	var out bytes.Buffer
	if err := Run(append(args, "--json"), &out); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	var v map[string]any
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	return v
}

// first returns the first candidate of a decoded result.
func first(t *testing.T, v map[string]any) map[string]any {
	t.Helper()
	cands, _ := v["candidates"].([]any)
	if len(cands) == 0 {
		t.Fatalf("no candidates: %v", v)
	}
	return cands[0].(map[string]any)
}

func TestTransformerEvaluate(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plan.json")
	r := transformerJSON(t, append(gpt3Args, "--tp", "8", "--pp", "12", "--microbatch", "1", "--interleave", "2",
		"--recompute", "full", "--zero", "1", "--export-plan", file)...)
	v := first(t, r)
	ex := v["execution"].(map[string]any)
	if r["mode"] != "evaluate" || len(r["candidates"].([]any)) != 1 || ex["tp"] != 8.0 || ex["pp"] != 12.0 || ex["dp"] != 16.0 || ex["interleave"] != 2.0 || ex["recompute"] != "full" {
		t.Fatalf("evaluation fields: %v", v)
	}
	// Eq. 4.3 gives 174.6 billion parameters (Table 4.2); eq. 4.2 the FLOPs.
	if p := r["params"].(float64); math.Abs(p-174.6e9) > 0.05e9 {
		t.Errorf("params = %.4g, want 174.6e9", p)
	}
	l, h, s, V, B := 96.0, 12288.0, 2048.0, 51200.0, 1536.0
	if f, want := v["flops_per_iteration"].(float64), 96*B*s*l*h*h*(1+s/(6*h)+V/(16*l*h)); math.Abs(f-want) > 1e-9*want {
		t.Errorf("flops_per_iteration = %.6g, want eq. 4.2 %.6g", f, want)
	}
	// Bubble (1/v)(p−1)/m with m = B/(d·b) = 96 (§4.2.2).
	if b, want := v["bubble_fraction"].(float64), 0.5*11/96; math.Abs(b-want) > 1e-12 {
		t.Errorf("bubble_fraction = %v, want %v", b, want)
	}
	mem := v["memory"].(map[string]any)
	peak := mem["peak_bytes"].(float64)
	parts := mem["weight_bytes"].(float64) + mem["gradient_bytes"].(float64) + mem["optimizer_bytes"].(float64) + mem["activation_bytes"].(float64)
	if !(peak >= parts) || peak > 80*(1<<30) {
		t.Errorf("memory %v: peak below its parts or over 80 GiB", mem)
	}
	if tf := v["tflops_per_gpu"].(float64); !(tf > 0 && tf < 312) {
		t.Errorf("tflops_per_gpu = %v outside (0, 312)", tf)
	}
	if got := v["flops_per_iteration"].(float64) / v["iteration_seconds"].(float64) / 1536 / 1e12; math.Abs(got-v["tflops_per_gpu"].(float64)) > 1e-9*got {
		t.Errorf("tflops_per_gpu %v != flops / (n · seconds) = %v", v["tflops_per_gpu"], got)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Parse(data)
	if err != nil {
		t.Fatalf("exported plan does not parse: %v", err)
	}
	e := p.Execution
	if p.Planner != "ptdp" || e.TP != 8 || e.PP != 12 || e.DP != 16 || e.Interleave != 2 || e.CP != 1 || e.EP != 1 || len(p.Stages) != 24 ||
		p.Stages[1] != (plan.Stage{FirstLayer: 4, LastLayer: 7, Replicas: 1}) || e.Schedule != "interleaved" || e.Microbatches() != 96 ||
		len(p.Predictions.StagePeakBytes) != 12 || p.Predictions.IterationSeconds != v["iteration_seconds"] {
		t.Errorf("exported plan: %+v", p)
	}
	if p.Model.Name != "transformer l=96 h=12288 a=96" {
		t.Errorf("exported plan names the model %q, want its dimensions", p.Model.Name)
	}
}

func TestTransformerSearch(t *testing.T) {
	v := transformerJSON(t, append(gpt3Args, "--recompute", "full", "--top", "5")...)
	cands := v["candidates"].([]any)
	if v["mode"] != "search" || len(cands) != 5 || v["params"] == nil {
		t.Fatalf("search: mode %v, %d candidates", v["mode"], len(cands))
	}
	prev := 0.0
	for i, c := range cands {
		c := c.(map[string]any)
		for _, f := range []string{"flops_per_iteration", "iteration_seconds", "tflops_per_gpu", "bubble_fraction", "memory", "execution"} {
			if _, ok := c[f]; !ok {
				t.Fatalf("candidate %d lacks %s", i, f)
			}
		}
		ex := c["execution"].(map[string]any)
		for _, f := range []string{"tp", "pp", "dp", "microbatch_size", "interleave", "recompute"} {
			if _, ok := ex[f]; !ok {
				t.Errorf("candidate %d's execution lacks %s", i, f)
			}
		}
		if s := c["iteration_seconds"].(float64); s < prev {
			t.Errorf("candidate %d faster than %d", i, i-1)
		} else {
			prev = s
		}
		if ex["tp"].(float64)*ex["pp"].(float64)*ex["dp"].(float64) != 1536 || ex["recompute"] != "full" {
			t.Errorf("candidate %d: %v", i, c)
		}
	}
	// The exported plan is the best candidate's.
	if v["plan"].(map[string]any)["predictions"].(map[string]any)["iteration_seconds"] != cands[0].(map[string]any)["iteration_seconds"] {
		t.Error("the plan is not the best candidate's")
	}
	var out bytes.Buffer
	if err := Run(append(gpt3Args, "--tp", "8", "--recompute", "full"), &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"174.6", "inter-node-bandwidth 25 GB/s per GPU (the GPU's own network, gpuprofiles/network.json)", "TFLOP/s/GPU", "fits"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

func TestTransformerBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--gpus", "0"}, "--gpus: must be >= 1, got 0"},
		{[]string{"--tp", "5", "--pp", "1", "--microbatch", "1", "--interleave", "1", "--recompute", "none"}, "tp·pp·cp must divide the 1536 GPUs, got 5·1·1"},
		{[]string{"--gpus", "1920", "--tp", "5"}, "tp: must divide the 96 attention heads, got 5"},
		{[]string{"--inter-node-bandwidth", "NaN"}, "--inter-node-bandwidth (plan.inter_node_gbps): must be 0 (the GPU's own network) or in [0.001, 10000] GB/s, got NaN"},
		{[]string{"--tp", "-2"}, "--tp (plan.tp): must be in [0, 65536], got -2"},
		{[]string{"--gpus", "80000"}, "--gpus (plan.nodes): must be in [1, 4096], got 10000"},
		{[]string{"--hidden", "-1"}, "--hidden (plan.custom.hidden): must be in [1, 131072], got -1"},
		{[]string{"--hidden", "1000"}, "plan.model: transformer.heads: must divide hidden 1000 (or set head_dim), got 96"},
		{[]string{"--recompute", "half"}, "--recompute (plan.recompute): must be one of"},
		{[]string{"--gpu", "nvidia-nonexistent"}, "--gpu (plan.gpu):"},
		{[]string{"--gpus", "12"}, "--gpus: must be a multiple of --gpus-per-node 8, got 12"},
		{[]string{"--gpus", "8", "--tp", "8"}, "does not fit: the smallest configuration"},
		{[]string{"--model", "llama3-8b"}, "--layers: the model comes from --model or --hf-config"},
		{[]string{"--preset", "llama3-8b"}, "--layers: the model comes from --preset or --hf-config"},
		{[]string{"--experts", "2", "--topk", "3"}, "--topk (plan.custom.topk): must be in [1, 2], got 3"},
		{[]string{"--topk", "2"}, "--topk (plan.custom.topk): needs plan.custom.experts (a mixture of experts), got 2 with no experts"},
		{[]string{"--kv-heads", "5"}, "--kv-heads (plan.custom.kv_heads): must divide the 96 attention heads, got 5"},
		{[]string{"--experts", "2000", "--topk", "1"}, "--experts (plan.custom.experts): must be in [0, 1024], got 2000"},
		{[]string{"--shared-experts", "-1"}, "--shared-experts (plan.custom.shared_experts): must be in [0, 1024], got -1"},
		{[]string{"--experts", "8", "--topk", "2", "--expert-groups", "4", "--group-topk", "5"}, "--group-topk (plan.custom.group_topk): must be in [1, plan.custom.expert_groups 4] with groups, got 5"},
		{[]string{"--zero", "4"}, "--zero (plan.zero): must be in [0, 3], got 4"},
		{[]string{"--overlap-grad-reduce=maybe"}, "invalid boolean value"},
		{[]string{"--cp", "-1"}, "--cp (plan.cp): must be in [0, 65536], got -1"},
		{[]string{"--recompute", "selective", "--recompute-modules", "moe_act"}, "--recompute-modules (plan.recompute_modules): moe_act needs a mixture-of-experts model, and transformer l=96 h=12288 a=96 has none"},
		{[]string{"--recompute-layers", "2"}, `--recompute-layers (plan.recompute_layers): 2 layers a chunk recompute only with recompute "full", got recompute ""`},
		{[]string{"--cp-comm", "ring"}, `--cp-comm (plan.cp_comm): must be one of "p2p", "all_gather", "a2a", got "ring" (empty: searched per candidate)`},
		{[]string{"--cp-comm", "a2a+p2p"}, "--cp-comm (plan.cp_comm): hierarchical context parallelism \"a2a+p2p\" is not modelled yet"},
		{[]string{"--attention-kernel", "flash3"}, `--attention-kernel (plan.attention_kernel): must be "cudnn" or "flash2", got "flash3" (empty: cudnn)`},
		{[]string{"--ep", "2", "--tp", "8", "--pp", "12", "--microbatch", "1", "--interleave", "1", "--recompute", "full"}, "execution.ep: expert parallelism needs a mixture-of-experts model, got 2"},
	} {
		var out bytes.Buffer
		err := Run(append(append([]string{}, gpt3Args...), tc.args...), &out)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: want error containing %q, got %v", tc.args, tc.want, err)
		}
	}
	var out bytes.Buffer
	if err := Run([]string{"transformer", "--layers", "2"}, &out); err == nil || !strings.Contains(err.Error(), "--hidden: required") {
		t.Errorf("missing flags: got %v", err)
	}
}

// llmArgs plan Llama 3 8B from its preset on 64 H100s.
var llmArgs = []string{"transformer", "--model", "llama3-8b", "--gpu", "nvidia-h100-sxm5-80gb", "--gpus", "64", "--batch", "128", "--seq", "8192"}

func TestTransformerPresetAndHFConfig(t *testing.T) {
	eval := []string{"--tp", "2", "--pp", "1", "--cp", "2", "--microbatch", "1", "--interleave", "1", "--recompute", "none", "--zero", "1"}
	preset := transformerJSON(t, append(llmArgs, eval...)...)
	ex := first(t, preset)["execution"].(map[string]any)
	if preset["mode"] != "evaluate" || ex["cp"] != 2.0 || ex["dp"] != 16.0 || ex["zero"] != 1.0 || ex["flash_attention"] != true {
		t.Errorf("preset evaluation: mode %v, execution %v", preset["mode"], ex)
	}
	// Llama 3 8B has 8.03 billion parameters (Meta's model card).
	if p := preset["params"].(float64); math.Abs(p-8.03e9) > 0.01e9 {
		t.Errorf("params = %.4g, want 8.03e9", p)
	}
	// The same model from its Hugging Face config gives the same answer.
	hfArgs := []string{"transformer", "--hf-config", "../modelprofiles/llm/llama3-8b.json", "--gpu", "nvidia-h100-sxm5-80gb", "--gpus", "64", "--batch", "128", "--seq", "8192"}
	hf := transformerJSON(t, append(hfArgs, eval...)...)
	if a, b := first(t, hf)["iteration_seconds"], first(t, preset)["iteration_seconds"]; a != b {
		t.Errorf("--hf-config predicts %v s, --model %v s", a, b)
	}
	// Without flash attention the s×s scores are stored: more memory.
	noFlash := transformerJSON(t, append(append(llmArgs, eval...), "--flash-attention=false")...)
	act := func(v map[string]any) float64 {
		return first(t, v)["memory"].(map[string]any)["activation_bytes"].(float64)
	}
	if act(noFlash) <= act(preset) {
		t.Errorf("activations without flash attention %v <= with %v", act(noFlash), act(preset))
	}
	var out bytes.Buffer
	if err := Run(append(llmArgs, "--model", "llama9"), &out); err == nil || !strings.Contains(err.Error(), `--model (plan.model): unknown preset "llama9"`) {
		t.Errorf("unknown --model: %v", err)
	}
	if err := Run(append(llmArgs, "--hf-config", "nonexistent.json"), &out); err == nil || !strings.Contains(err.Error(), "--model and --hf-config: give one") {
		t.Errorf("--model with --hf-config: %v", err)
	}
	if err := Run(append(hfArgs[:2], "nonexistent.json", "--gpus", "8", "--batch", "8"), &out); err == nil || !strings.Contains(err.Error(), "--hf-config: open nonexistent.json") {
		t.Errorf("missing --hf-config file: %v", err)
	}
}

// TestTransformerArchitectureFlags: the architecture flags reach the
// planned model (Mixtral 8x7B's dimensions give its published 46.7 B
// parameters, 12.9 B active), and --preset is --model's name in the issue.
func TestTransformerArchitectureFlags(t *testing.T) {
	eval := []string{"--gpus", "64", "--batch", "64", "--seq", "4096", "--tp", "2", "--pp", "4", "--ep", "8", "--microbatch", "1",
		"--interleave", "1", "--recompute", "full", "--zero", "1"}
	r := transformerJSON(t, append([]string{"transformer", "--layers", "32", "--hidden", "4096", "--heads", "32", "--kv-heads", "8",
		"--ffn", "14336", "--gated-ffn", "--untied-embeddings", "--vocab", "32000", "--experts", "8", "--topk", "2"}, eval...)...)
	for _, c := range []struct {
		key  string
		want float64
	}{{"params", 46.7e9}, {"active_params", 12.9e9}} {
		if got := r[c.key].(float64); math.Abs(got-c.want) > 0.005*c.want {
			t.Errorf("%s = %.4g, want %.4g", c.key, got, c.want)
		}
	}
	tr := r["transformer"].(map[string]any)
	if tr["kv_heads"] != 8.0 || tr["gated_ffn"] != true || tr["untied_embeddings"] != true || tr["moe"].(map[string]any)["topk"] != 2.0 {
		t.Errorf("transformer %v", tr)
	}
	preset, model := transformerJSON(t, append(llmArgs[:1], append([]string{"--preset"}, llmArgs[2:]...)...)...), transformerJSON(t, llmArgs...)
	if preset["params"] != model["params"] || first(t, preset)["iteration_seconds"] != first(t, model)["iteration_seconds"] {
		t.Errorf("--preset and --model plan differently")
	}
	// The overlap flags reach the execution; omitted, the GPU's default
	// (H100: all on, the tensor-parallel one where t > 1).
	off := transformerJSON(t, append(llmArgs, "--top", "1", "--overlap-grad-reduce=false", "--tp-comm-overlap=false")...)
	if o := first(t, off)["execution"].(map[string]any)["overlap"].(map[string]any); o["grad_reduce"] != false || o["param_gather"] != true || o["tp_comm"] != nil {
		t.Errorf("overlap with two flags off: %v", o)
	}
	ex := first(t, model)["execution"].(map[string]any)
	if o := ex["overlap"].(map[string]any); o["grad_reduce"] != true || o["param_gather"] != true || (o["tp_comm"] == true) != (ex["tp"].(float64) > 1) {
		t.Errorf("default overlap on H100 at t = %v: %v", ex["tp"], o)
	}
}

func TestTransformerBreakdown(t *testing.T) {
	var out bytes.Buffer
	if err := Run(append(llmArgs, "--top", "1", "--breakdown"), &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Llama 3.1 8B", "step time of the chosen configuration", "compute", "exposed TP comm", "exposed DP comm", "pipeline bubble", "optimizer", "%"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--breakdown output lacks %q:\n%s", want, out.String())
		}
	}
	// The parts sum to the step time (JSON: breakdown in seconds).
	c := first(t, transformerJSON(t, append(llmArgs, "--top", "1")...))
	sum := 0.0
	for _, v := range c["breakdown"].(map[string]any) {
		sum += v.(float64)
	}
	if it := c["iteration_seconds"].(float64); math.Abs(sum-it) > 1e-9*it {
		t.Errorf("breakdown sums to %v s, iteration %v s", sum, it)
	}
}

// TestTransformerFP8ExpertsCaveat: a MoE plan trained in FP8 says that
// its prediction is uncertain (the published runs of that kind took
// 0.80× to 1.8× the predicted step time, core/cost), in the text output and in the JSON
// candidate; the same plan in BF16 carries no caveat.
func TestTransformerFP8ExpertsCaveat(t *testing.T) {
	args := []string{"transformer", "--model", "qwen3-30b-a3b", "--gpu", "nvidia-h100-sxm5-80gb", "--gpus", "16", "--batch", "512", "--seq", "4096",
		"--tp", "1", "--pp", "1", "--ep", "8", "--microbatch", "1", "--interleave", "1", "--recompute", "full", "--zero", "1"}
	var out bytes.Buffer
	if err := Run(append(args, "--precision", "fp8"), &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "\nnote: ") || !strings.Contains(out.String(), "prediction is uncertain: mixture of experts trained in FP8") {
		t.Errorf("FP8: no caveat in\n%s", out.String())
	}
	if c, _ := first(t, transformerJSON(t, append(args, "--precision", "fp8")...))["caveat"].(string); !strings.Contains(c, "the predicted step time") {
		t.Errorf("FP8: JSON caveat %q", c)
	}
	bf16 := transformerJSON(t, append(args, "--precision", "bf16")...)
	note, _ := bf16["note"].(string)
	if c, ok := first(t, bf16)["caveat"]; ok || strings.Contains(note, "uncertain") {
		t.Errorf("BF16: caveat %v, note %q", c, note)
	}
}

// TestTransformerCPComm: --cp-comm reaches the execution (JSON cp_comm)
// and the breakdown: Llama 3 8B at 64K with cp 8 in a server exposes more
// context-parallel time all-gathering K and V than passing them round the
// ring; omitted, the type is searched and the execution names the faster
// of p2p and a2a; a2a beyond the 8 K/V heads is an error naming the field.
func TestTransformerCPComm(t *testing.T) {
	args := []string{"transformer", "--model", "llama3-8b", "--gpu", "nvidia-h100-sxm5-80gb", "--gpus", "8", "--batch", "8", "--seq", "65536",
		"--tp", "1", "--pp", "1", "--cp", "8", "--microbatch", "1", "--interleave", "1", "--recompute", "full"}
	exposed, step := map[string]float64{}, map[string]float64{}
	for _, comm := range []string{"p2p", "all_gather", "a2a"} {
		c := first(t, transformerJSON(t, append(args, "--cp-comm", comm)...))
		if got := c["execution"].(map[string]any)["cp_comm"]; got != comm {
			t.Errorf("--cp-comm %s: execution cp_comm %v", comm, got)
		}
		exposed[comm] = c["breakdown"].(map[string]any)["context_parallel_seconds"].(float64)
		step[comm] = c["iteration_seconds"].(float64)
	}
	if !(exposed["all_gather"] > exposed["p2p"]) {
		t.Errorf("exposed CP seconds %v: want all_gather's above p2p's", exposed)
	}
	searched := first(t, transformerJSON(t, args...))
	want := "p2p"
	if step["a2a"] < step["p2p"] {
		want = "a2a"
	}
	if got := searched["execution"].(map[string]any)["cp_comm"]; got != want || searched["iteration_seconds"].(float64) != step[want] {
		t.Errorf("--cp-comm omitted: cp_comm %v in %v s; want %s (step times %v)", got, searched["iteration_seconds"], want, step)
	}
	var out bytes.Buffer
	bad := append(append([]string{}, args...), "--cp-comm", "a2a", "--tp", "2", "--gpus", "16")
	if err := Run(bad, &out); err == nil || !strings.Contains(err.Error(), "cp_comm: a2a needs the 32 attention heads and 8 K/V heads to split over tp·cp = 2·8") {
		t.Errorf("a2a at t·cp = 16: %v", err)
	}
}

// TestTransformerAttentionKernel: --attention-kernel reaches the execution
// (JSON attention_kernel) and the prediction: Llama 3 8B at 32K on one
// H100 server, whose step the attention core dominates, runs slower with
// FlashAttention-2's kernels than with cuDNN's (the default).
func TestTransformerAttentionKernel(t *testing.T) {
	args := []string{"transformer", "--model", "llama3-8b", "--gpu", "nvidia-h100-sxm5-80gb", "--gpus", "8", "--batch", "8", "--seq", "32768",
		"--tp", "1", "--pp", "1", "--cp", "8", "--microbatch", "1", "--interleave", "1", "--recompute", "full", "--cp-comm", "p2p"}
	step := map[string]float64{}
	for _, k := range []string{"", "cudnn", "flash2"} {
		c := first(t, transformerJSON(t, append(args, "--attention-kernel", k)...))
		got, _ := c["execution"].(map[string]any)["attention_kernel"].(string)
		if got != k {
			t.Errorf("--attention-kernel %q: execution attention_kernel %q", k, got)
		}
		step[k] = c["iteration_seconds"].(float64)
	}
	if step[""] != step["cudnn"] || !(step["flash2"] > 1.2*step["cudnn"]) {
		t.Errorf("step seconds by kernel %v: want cudnn the default and flash2 over 20 %% slower at 32K", step)
	}
}

// TestTransformerLaunch: --launch prints the chosen configuration as an
// engine's launch artifact — Megatron-LM's arguments with Llama 3's
// architecture and the pipeline layout of its 126 layers on 16 stages —
// and refuses an unknown engine, or one that cannot run the plan, naming
// the flag.
func TestTransformerLaunch(t *testing.T) {
	args := []string{"transformer", "--model", "llama3-405b", "--gpu", "nvidia-h100-sxm5-80gb", "--gpus", "2048", "--batch", "512",
		"--tp", "8", "--pp", "16", "--cp", "1", "--microbatch", "1", "--interleave", "8", "--recompute", "none"}
	var out bytes.Buffer
	if err := Run(append(args, "--launch", "megatron"), &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pretrain_gpt.py \\\n", "--num-query-groups 8", "--swiglu", "--tensor-model-parallel-size 8", "--pipeline-model-parallel-size 16", "--pipeline-model-parallel-layout '"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--launch megatron lacks %q:\n%s", want, out.String())
		}
	}
	for format, want := range map[string]string{
		"fairseq":   `--launch: must be one of megatron, torchrun, slurm, k8s, torchtitan, deepspeed, got "fairseq"`,
		"deepspeed": "--launch deepspeed: deepspeed: not expressible: execution.interleave = 8",
	} {
		if err := Run(append(args, "--launch", format), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--launch %s: got %v, want %q", format, err, want)
		}
	}
}

// TestTransformerRecomputeLayers: --recompute-layers pins how many layers
// of each chunk recompute; the evaluation carries it, and the step sits
// between recomputing none and every layer in time, peak memory and
// hardware FLOP/s (model FLOP/s count no recomputation).
func TestTransformerRecomputeLayers(t *testing.T) {
	base := []string{"transformer", "--model", "llama3-70b", "--gpu", "nvidia-h100-sxm5-80gb", "--gpus", "64", "--batch", "128", "--seq", "8192", "--cp", "1", "--zero", "1", "--tp", "8", "--pp", "2", "--microbatch", "1", "--interleave", "1"}
	at := func(extra ...string) map[string]any {
		return first(t, transformerJSON(t, append(append([]string{}, base...), extra...)...))
	}
	none, all, some := at("--recompute", "none"), at("--recompute", "full"), at("--recompute", "full", "--recompute-layers", "10")
	if got := some["execution"].(map[string]any)["recompute_layers"]; got != 10.0 {
		t.Fatalf("execution.recompute_layers %v, want 10", got)
	}
	step := func(c map[string]any) float64 { return c["iteration_seconds"].(float64) }
	peak := func(c map[string]any) float64 { return c["memory"].(map[string]any)["peak_bytes"].(float64) }
	if !(step(none) < step(some) && step(some) < step(all)) || !(peak(none) > peak(some) && peak(some) > peak(all)) {
		t.Errorf("steps %.3f / %.3f / %.3f s and peaks %.4g / %.4g / %.4g B recomputing none / 10 layers a chunk / all: want both in between",
			step(none), step(some), step(all), peak(none), peak(some), peak(all))
	}
	if hw, m := some["hardware_tflops_per_gpu"].(float64), some["model_tflops_per_gpu"].(float64); !(hw > m) {
		t.Errorf("hardware %.1f TFLOP/s not above model %.1f with 10 layers recomputing", hw, m)
	}
}
