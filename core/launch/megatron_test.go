package launch

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pipeplan/core/cost"
	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
	"pipeplan/modelprofiles"
)

// presetPlan is a one-stage plan of the named LLM preset on 16 GPUs: tp 2,
// dp 8, and ep 8 when it has experts.
func presetPlan(t *testing.T, id string) *plan.Plan {
	t.Helper()
	tr, _, err := modelprofiles.Transformer(id)
	if err != nil {
		t.Fatal(err)
	}
	p := &plan.Plan{
		Version: plan.Version, Planner: "ptdp",
		Model:   plan.Model{Name: id, NumLayers: tr.Layers, Transformer: &tr},
		Cluster: plan.Cluster{GPU: "nvidia-h100-sxm5-80gb", Nodes: 2, GPUsPerNode: 8},
		Execution: plan.Execution{TP: 2, PP: 1, DP: 8, Interleave: 1, CP: 1, EP: 1, MicrobatchSize: 1, GlobalBatch: 64,
			Recompute: model.RecomputeSelective, Schedule: schedule.OneFOneB, ZeRO: 1, SequenceParallel: true,
			FlashAttention: true, Overlap: plan.Overlap{GradReduce: true, ParamGather: true, TPComm: true}},
		Stages:      []plan.Stage{{FirstLayer: 0, LastLayer: tr.Layers - 1, Replicas: 1}},
		Predictions: plan.Predictions{IterationSeconds: 1, SamplesPerSecond: 64, PeakBytesPerGPU: 1e10},
	}
	if tr.MoE != nil {
		p.Execution.EP = 8
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	return p
}

// unquote undoes shellQuote for the values megatronFlags reads.
func unquote(s string) string {
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return strings.ReplaceAll(s[1:len(s)-1], `'\''`, "'")
	}
	return s
}

// megatronParams counts the parameters of the transformer Megatron-LM's
// flags describe (total, and active per token), independently of
// core/model: embeddings, attention (grouped-query or latent), the dense
// or gated MLP, the routed and shared experts with their router, the
// norms. Biases are left out (most presets disable them; GPT-OSS's come
// to under 0.1 % of its parameters).
func megatronParams(t *testing.T, f map[string]string) (total, active float64) {
	t.Helper()
	num := func(name string, def float64) float64 {
		v, ok := f[name]
		if !ok {
			return def
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("%s %q: %v", name, v, err)
		}
		return x
	}
	has := func(name string) bool { _, ok := f[name]; return ok }
	h, heads, layers, vocab := num("--hidden-size", 0), num("--num-attention-heads", 0), num("--num-layers", 0), num("--vocab-size", 0)
	var attn float64
	if has("--multi-latent-attention") {
		qk, rope, v, kvl := num("--qk-head-dim", 128), num("--qk-pos-emb-head-dim", 64), num("--v-head-dim", 128), num("--kv-lora-rank", 32)
		if ql := num("--q-lora-rank", 0); ql > 0 {
			attn += h*ql + ql + ql*heads*(qk+rope)
		} else {
			attn += h * heads * (qk + rope)
		}
		attn += h*(kvl+rope) + kvl + kvl*heads*(qk+v) + heads*v*h
	} else {
		kv := num("--kv-channels", h/heads)
		groups := heads
		if has("--group-query-attention") {
			groups = num("--num-query-groups", 1)
		}
		attn = h*heads*kv + 2*h*groups*kv + heads*kv*h
	}
	mats := 2.0
	if has("--swiglu") {
		mats = 3
	}
	dense := mats * h * num("--ffn-hidden-size", 4*h)
	moeLayers := 0.0
	var expert, shared, router, topk float64
	if experts := num("--num-experts", 0); experts > 0 {
		moeLayers = layers
		if freq, ok := f["--moe-layer-freq"]; ok {
			kinds, err := evalLayerPattern(freq)
			if err != nil || len(kinds) != int(layers) {
				t.Fatalf("--moe-layer-freq %q: %v (%d entries, want %v layers)", freq, err, len(kinds), layers)
			}
			moeLayers = float64(strings.Count(fmt.Sprint(kinds), "1"))
		}
		expert = mats * h * num("--moe-ffn-hidden-size", 0)
		shared = mats * h * num("--moe-shared-expert-intermediate-size", 0)
		router = h * experts
		topk = num("--moe-router-topk", 2)
		total += moeLayers * (experts*expert + shared + router)
		active += moeLayers * (topk*expert + shared + router)
	}
	perLayer := attn + 2*h
	denseLayers := layers - moeLayers
	embed := vocab * h
	if has("--untie-embeddings-and-output-weights") {
		embed *= 2
	}
	common := layers*perLayer + denseLayers*dense + h + embed
	return total + common, active + common
}

// evalLayerPattern evaluates a Megatron-LM layer pattern as its
// moe_freq_type does after checking the characters (eval of a Python list
// expression): lists of integers, "+" joining, "*n" repeating, brackets.
func evalLayerPattern(s string) ([]int, error) {
	if regexp.MustCompile(`[^,\d\[\]\(\)\+\*]`).MatchString(s) {
		return nil, fmt.Errorf("invalid pattern %q", s)
	}
	pos := 0
	var expr func() ([]int, error)
	atom := func() ([]int, error) {
		if pos >= len(s) {
			return nil, fmt.Errorf("%q ends early", s)
		}
		switch s[pos] {
		case '(':
			pos++
			v, err := expr()
			if err != nil || pos >= len(s) || s[pos] != ')' {
				return nil, fmt.Errorf("%q: unclosed ( (%v)", s, err)
			}
			pos++
			return v, nil
		case '[':
			end := strings.IndexByte(s[pos:], ']')
			if end < 0 {
				return nil, fmt.Errorf("%q: unclosed [", s)
			}
			var v []int
			for _, x := range strings.Split(s[pos+1:pos+end], ",") {
				n, err := strconv.Atoi(x)
				if err != nil {
					return nil, err
				}
				v = append(v, n)
			}
			pos += end + 1
			return v, nil
		}
		return nil, fmt.Errorf("%q: unexpected %q at %d", s, s[pos], pos)
	}
	term := func() ([]int, error) {
		v, err := atom()
		for err == nil && pos < len(s) && s[pos] == '*' {
			pos++
			end := pos
			for end < len(s) && s[end] >= '0' && s[end] <= '9' {
				end++
			}
			var n int
			if n, err = strconv.Atoi(s[pos:end]); err == nil {
				v, pos = slices.Repeat(v, n), end
			}
		}
		return v, err
	}
	expr = func() ([]int, error) {
		v, err := term()
		for err == nil && pos < len(s) && s[pos] == '+' {
			pos++
			var w []int
			if w, err = term(); err == nil {
				v = append(v, w...)
			}
		}
		return v, err
	}
	v, err := expr()
	if err == nil && pos != len(s) {
		err = fmt.Errorf("%q: trailing %q", s, s[pos:])
	}
	return v, err
}

// TestExportMegatronLayerPattern: the --moe-layer-freq pattern Megatron-LM
// evaluates marks exactly the model's expert layers — leading dense ones,
// interleaved ones (Llama 4 Maverick, Qwen-MoE's sparse step), both — and
// is left out when every layer is an expert one.
func TestExportMegatronLayerPattern(t *testing.T) {
	for _, c := range []struct{ layers, firstDense, every int }{
		{48, 0, 2}, {61, 3, 0}, {10, 3, 2}, {12, 4, 2}, {9, 2, 4}, {8, 0, 1}, {7, 0, 7},
	} {
		tr := model.Transformer{Layers: c.layers, Hidden: 64, Heads: 4, Seq: 8, Vocab: 10,
			MoE: &model.MoE{Experts: 4, TopK: 1, FirstDense: c.firstDense, Every: c.every}}
		if err := tr.Validate(); err != nil {
			t.Fatal(err)
		}
		pattern := moeLayerPattern(&tr)
		if tr.MoELayers() == tr.Layers {
			if pattern != "" {
				t.Errorf("%+v: pattern %q for all expert layers", c, pattern)
			}
			continue
		}
		kinds, err := evalLayerPattern(pattern)
		if err != nil || len(kinds) != c.layers {
			t.Fatalf("%+v: %q: %v, %d entries", c, pattern, err, len(kinds))
		}
		for i, k := range kinds {
			if (k == 1) != tr.IsMoELayer(i) {
				t.Errorf("%+v: %q marks layer %d %d, the model's expert layer %v", c, pattern, i, k, tr.IsMoELayer(i))
			}
		}
	}
	if got := moeLayerPattern(&model.Transformer{Layers: 48, MoE: &model.MoE{Experts: 4, TopK: 1, Every: 2}}); got != "([0]*1+[1]*1)*24" {
		t.Errorf("Llama 4 Maverick's pattern %q", got)
	}
}

// TestExportMegatronLlama4: Llama 4 Maverick imported from its config
// goes to Megatron-LM with its interleaved expert layers, its shared
// expert, its dense layers' size, its layers without rotary embedding
// (--no-rope-freq 4) — the parameters the flags describe are the model's
// — while its chunked attention is exported only where it is full
// attention (sequences up to the chunk) and refused above.
func TestExportMegatronLlama4(t *testing.T) {
	tr, err := model.ParseHFConfig([]byte(`{"model_type": "llama4", "text_config": {"attention_chunk_size": 8192, "head_dim": 128, "hidden_size": 5120, "interleave_moe_layer_step": 2, "intermediate_size": 8192, "intermediate_size_mlp": 16384, "max_position_embeddings": 1048576, "model_type": "llama4_text", "num_attention_heads": 40, "num_experts_per_tok": 1, "num_hidden_layers": 48, "num_key_value_heads": 8, "num_local_experts": 128, "rms_norm_eps": 1e-05, "rope_scaling": null, "rope_theta": 500000.0, "use_qk_norm": true, "vocab_size": 202048}}`))
	if err != nil {
		t.Fatal(err)
	}
	tr.Seq = 8192
	p := presetPlan(t, "llama3-8b")
	p.Model.Name, p.Model.NumLayers, p.Model.Transformer = "llama4-maverick", tr.Layers, &tr
	p.Stages = []plan.Stage{{FirstLayer: 0, LastLayer: tr.Layers - 1, Replicas: 1}}
	p.Execution.EP = 8
	out := mustExport(t, "megatron", inputOf(p))
	flags := megatronFlags(t, out)
	for k, v := range flags {
		flags[k] = unquote(v)
	}
	for k, want := range map[string]string{"--moe-layer-freq": "([0]*1+[1]*1)*24", "--no-rope-freq": "4", "--ffn-hidden-size": "16384",
		"--moe-ffn-hidden-size": "8192", "--moe-shared-expert-intermediate-size": "8192", "--num-experts": "128", "--moe-router-topk": "1"} {
		if flags[k] != want {
			t.Errorf("%s = %q, want %q", k, flags[k], want)
		}
	}
	total, active := megatronParams(t, flags)
	if r := total/tr.Params() - 1; math.Abs(r) > 0.01 {
		t.Errorf("the flags describe %.4g parameters, the model %.4g", total, tr.Params())
	}
	if r := active/tr.ActiveParams() - 1; math.Abs(r) > 0.03 {
		t.Errorf("the flags describe %.4g active parameters, the model %.4g", active, tr.ActiveParams())
	}
	if !strings.Contains(out, "L2 norm of queries and keys") {
		t.Errorf("the header does not say the query/key L2 norm is left out:\n%s", out)
	}
	tr.Seq = 16384
	if _, err := export("megatron", inputOf(p)); !errors.Is(err, ErrNotExpressible) || !strings.Contains(err.Error(), "chunked_layers") {
		t.Errorf("chunked attention over 16K: %v", err)
	}
}

// TestExportMegatronArchitecture: each preset's Megatron-LM command line
// describes the published model. The parameters counted from the flags
// alone (megatronParams, independently of core/model) match the model's
// own counts, which modelprofiles' TestLLMParamsMatchPublished holds to
// the publishers' figures; a missing or wrong flag (no --swiglu, no query
// groups, the experts' size, the dense layers) would move them by far
// more than the tolerance; every flag is one of Megatron-LM's.
func TestExportMegatronArchitecture(t *testing.T) {
	known := nameList(t, "megatron-args.txt")
	for _, llm := range modelprofiles.LLMs() {
		p := presetPlan(t, llm.ID)
		flags := megatronFlags(t, mustExport(t, "megatron", inputOf(p)))
		for k, v := range flags {
			if !slices.Contains(known, k) {
				t.Errorf("%s: %s is not in testdata/megatron-args.txt", llm.ID, k)
			}
			flags[k] = unquote(v)
		}
		total, active := megatronParams(t, flags)
		tr := p.Model.Transformer
		if _, qk := flags["--qk-layernorm"]; qk != tr.QKNorm {
			t.Errorf("%s: --qk-layernorm given %v, the model's query/key norms %v", llm.ID, qk, tr.QKNorm)
		}
		if r := total/tr.Params() - 1; math.Abs(r) > 0.01 {
			t.Errorf("%s: the flags describe %.4g parameters, the model %.4g (%+.2f%%)", llm.ID, total, tr.Params(), 100*r)
		}
		if r := active/tr.ActiveParams() - 1; math.Abs(r) > 0.03 {
			t.Errorf("%s: the flags describe %.4g active parameters, the model %.4g (%+.2f%%)", llm.ID, active, tr.ActiveParams(), 100*r)
		}
		if tr := presetPlan(t, llm.ID).Model.Transformer; tr.MoE != nil {
			for k, want := range map[string]string{"--expert-tensor-parallel-size": "1", "--moe-token-dispatcher-type": "alltoall", "--expert-model-parallel-size": "8"} {
				if flags[k] != want {
					t.Errorf("%s: %s = %q, want %q", llm.ID, k, flags[k], want)
				}
			}
		}
	}
	// The execution's choices beyond the degrees.
	p := presetPlan(t, "deepseek-v3")
	p.Model.Transformer.Precision = model.FP8
	p.Execution.FP8ParamGather, p.Execution.EPDispatcher, p.Execution.Overlap.EPComm = true, "deepep", true
	p.Execution.AttentionKernel = plan.AttentionFlash2
	flags := megatronFlags(t, mustExport(t, "megatron", inputOf(p)))
	for k, want := range map[string]string{
		"--fp8-format": "hybrid", "--fp8-recipe": "tensorwise", "--fp8-param-gather": "", "--bf16": "",
		"--moe-token-dispatcher-type": "flex", "--moe-enable-deepep": "", "--overlap-moe-expert-parallel-comm": "",
		"--attention-backend": "flash", "--tp-comm-overlap": "", "--sequence-parallel": "", "--moe-grouped-gemm": "",
		"--moe-layer-freq": "'([0]*3+[1]*58)'", "--kv-lora-rank": "512", "--q-lora-rank": "1536",
		"--moe-router-num-groups": "8", "--moe-router-group-topk": "4",
	} {
		if got, ok := flags[k]; !ok || got != want {
			t.Errorf("deepseek-v3 fp8: %s = %q (present %v), want %q", k, got, ok, want)
		}
	}
}

// expandLayout expands a --pipeline-model-parallel-layout string as
// Megatron-Core's PipelineParallelLayerLayout.parse_str_to_list does:
// commas dropped, "(group)*n" then "x*n" repeated, stages split by "|".
func expandLayout(s string) []string {
	s = strings.ReplaceAll(s, ",", "")
	for _, re := range []*regexp.Regexp{regexp.MustCompile(`\(([^)]+)\)\*(\d+)`), regexp.MustCompile(`(.)\*(\d+)`)} {
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			g := re.FindStringSubmatch(m)
			n, _ := strconv.Atoi(g[2])
			return strings.Repeat(g[1], n)
		})
	}
	return strings.Split(s, "|")
}

// TestExportMegatronLayout: an uneven split goes to Megatron-LM as a
// pipeline layout that Megatron-Core reads back as the plan's chunks — pp·v
// stages in model order, each with the plan's layers, the embedding first
// and the loss last, empty end chunks included — and an even one as the
// degrees alone.
func TestExportMegatronLayout(t *testing.T) {
	llama := presetPlan(t, "llama3-405b") // 126 layers
	llama.Cluster.Nodes = 128
	llama.Execution.TP, llama.Execution.PP, llama.Execution.DP, llama.Execution.Interleave = 8, 16, 8, 8
	llama.Execution.Schedule = schedule.Interleaved
	llama.Stages = []plan.Stage{{FirstLayer: 0, LastLayer: -1, Replicas: 1}}
	for l := range 126 {
		llama.Stages = append(llama.Stages, plan.Stage{FirstLayer: l, LastLayer: l, Replicas: 1})
	}
	llama.Stages = append(llama.Stages, plan.Stage{FirstLayer: 126, LastLayer: 125, Replicas: 1})
	uneven := gptPlan(t, 1)
	uneven.Stages[0].LastLayer, uneven.Stages[1].FirstLayer = 4, 5 // 5, 7, 6, 6 layers
	for _, c := range []struct {
		name string
		p    *plan.Plan
	}{{"llama3-405b pp16 v8, empty end chunks", llama}, {"gpt 1f1b 5-7-6-6", uneven}} {
		if err := c.p.Validate(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		flags := megatronFlags(t, mustExport(t, "megatron", inputOf(c.p)))
		layout, ok := flags["--pipeline-model-parallel-layout"]
		if !ok {
			t.Fatalf("%s: no layout in %v", c.name, flags)
		}
		if _, ok := flags["--num-layers-per-virtual-pipeline-stage"]; ok {
			t.Errorf("%s: the layout and --num-layers-per-virtual-pipeline-stage both given (Megatron-LM allows one)", c.name)
		}
		stages := expandLayout(unquote(layout))
		e := c.p.Execution
		if len(stages) != e.PP*e.Interleave {
			t.Fatalf("%s: layout %s has %d stages, want pp·v = %d", c.name, layout, len(stages), e.PP*e.Interleave)
		}
		for k, st := range stages {
			want := strings.Repeat("t", chunkLayers(c.p.Stages[k]))
			if k == 0 {
				want = "E" + want
			}
			if k == len(stages)-1 {
				want += "L"
			}
			if st != want {
				t.Errorf("%s: stage %d of %s is %q, want %q", c.name, k, layout, st, want)
			}
		}
	}
	even := megatronFlags(t, mustExport(t, "megatron", inputOf(gptPlan(t, 2))))
	if _, ok := even["--pipeline-model-parallel-layout"]; ok {
		t.Errorf("an even split exported with a layout: %v", even)
	}
}

// TestExportMegatronMTPLayout: DeepSeek-V3 with its multi-token prediction
// module, split as the cost model splits it (cost.SplitLayers), goes to
// Megatron-LM as --mtp-num-layers 1 and the very layouts Megatron-Bridge's
// DeepSeek-V3 performance configs give (scripts/performance/configs/
// deepseek/deepseek_workload_base_configs.py, commit
// 042641823051ce167c52b0ae289941a227c11535): "Et*4|(t*4|)*14tmL" on 16
// stages and "Et|(tt|)*30mL" on 16 × 2 chunks, the "m" after every decoder
// layer in the last chunk, as Megatron-Core's layout validation requires.
func TestExportMegatronMTPLayout(t *testing.T) {
	for _, c := range []struct {
		pp, v int
		want  string
	}{{16, 1, "Et*4|(t*4|)*14tmL"}, {16, 2, "Et|(tt|)*30mL"}} {
		p := presetPlan(t, "deepseek-v3")
		if p.Model.Transformer.MTPLayers != 1 {
			t.Fatalf("deepseek-v3 preset: %d MTP layers, want DeepSeek-V3's 1", p.Model.Transformer.MTPLayers)
		}
		p.Cluster.Nodes = 32
		p.Execution.TP, p.Execution.PP, p.Execution.DP, p.Execution.Interleave = 1, c.pp, 256/c.pp, c.v
		if c.v > 1 {
			p.Execution.Schedule = schedule.Interleaved
		}
		p.Execution.SequenceParallel, p.Execution.Overlap.TPComm = false, false
		p.Stages = nil
		first := 0
		for _, n := range cost.SplitLayers(*p.Model.Transformer, c.pp*c.v) {
			p.Stages = append(p.Stages, plan.Stage{FirstLayer: first, LastLayer: first + n - 1, Replicas: 1})
			first += n
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("pp %d v %d: %v", c.pp, c.v, err)
		}
		flags := megatronFlags(t, mustExport(t, "megatron", inputOf(p)))
		if got := flags["--mtp-num-layers"]; got != "1" {
			t.Errorf("pp %d v %d: --mtp-num-layers %q, want 1", c.pp, c.v, got)
		}
		got := unquote(flags["--pipeline-model-parallel-layout"])
		if !slices.Equal(expandLayout(got), expandLayout(c.want)) {
			t.Errorf("pp %d v %d: layout %s, Megatron-Bridge's %s", c.pp, c.v, got, c.want)
		}
	}
}

// TestExportMegatronWindow: GPT-OSS goes to Megatron-LM as Megatron-Bridge's
// GPT-OSS provider runs it — --window-size "(128,0)", a window on every
// other layer from the first (--window-attn-skip-freq 2), learnable softmax
// offsets for its sinks, biases kept — a model windowed on every layer
// without the skip frequency, and one whose windowed layers are neither
// all nor every other one is refused, naming the field.
func TestExportMegatronWindow(t *testing.T) {
	oss := megatronFlags(t, mustExport(t, "megatron", inputOf(presetPlan(t, "gpt-oss-120b"))))
	for k, want := range map[string]string{"--window-size": "(128,0)", "--window-attn-skip-freq": "2", "--softmax-type": "learnable"} {
		if got := unquote(oss[k]); got != want {
			t.Errorf("gpt-oss-120b: %s %q, want %q", k, got, want)
		}
	}
	if _, ok := oss["--disable-bias-linear"]; ok {
		t.Errorf("gpt-oss-120b: biases disabled; its linear layers have them")
	}
	all := presetPlan(t, "llama3-8b")
	all.Model.Transformer.SlidingWindow, all.Model.Transformer.SlidingLayers = 4096, all.Model.Transformer.Layers
	flags := megatronFlags(t, mustExport(t, "megatron", inputOf(all)))
	if _, skip := flags["--window-attn-skip-freq"]; unquote(flags["--window-size"]) != "(4096,0)" || skip {
		t.Errorf("every layer windowed: %v", flags)
	}
	some := presetPlan(t, "llama3-8b")
	some.Model.Transformer.SlidingWindow, some.Model.Transformer.SlidingLayers = 4096, 3
	if _, err := Artifact("megatron", some, ""); !errors.Is(err, ErrNotExpressible) || !strings.Contains(err.Error(), "sliding_layers") {
		t.Errorf("3 of 32 layers windowed: %v, want not expressible naming sliding_layers", err)
	}
}

// TestExportMegatronNumerics: a model's stated numerics reach Megatron-LM
// — the rotary base as the integer its --rotary-base takes, the rotating
// share, Llama 3.1's rope scaling (whose other constants Megatron-Core
// fixes at Llama 3.1's), the norms' epsilon — and unstated ones leave
// Megatron-LM's defaults; a scaling Megatron-LM's flags cannot build
// (YaRN, or Llama 3.1's with other constants) is said in the header, a
// fractional base is refused naming the field.
func TestExportMegatronNumerics(t *testing.T) {
	llama31 := model.Numerics{RotaryBase: 500000, NormEpsilon: 1e-5,
		RopeScaling: model.RopeScaling{Type: model.RopeLlama3, Factor: 8, OriginalMaxPositions: 8192, LowFreqFactor: 1, HighFreqFactor: 4}}
	yarn := model.Numerics{RotaryBase: 10000, NormEpsilon: 1e-6, RopeScaling: model.RopeScaling{Type: model.RopeYaRN, Factor: 40, OriginalMaxPositions: 4096}}
	otherLlama := llama31
	otherLlama.RopeScaling.OriginalMaxPositions = 4096
	for _, c := range []struct {
		name     string
		numerics model.Numerics
		want     map[string]string
		note     bool
	}{
		{"unstated", model.Numerics{}, map[string]string{}, false},
		{"llama 3.1", llama31, map[string]string{"--rotary-base": "500000", "--norm-epsilon": "1e-05", "--use-rope-scaling": "", "--rope-scaling-factor": "8"}, false},
		{"partial", model.Numerics{RotaryBase: 1e6, RotaryPercent: 0.5}, map[string]string{"--rotary-base": "1000000", "--rotary-percent": "0.5"}, false},
		{"yarn", yarn, map[string]string{"--rotary-base": "10000", "--norm-epsilon": "1e-06"}, true},
		{"llama3 scaling from 4K", otherLlama, map[string]string{"--rotary-base": "500000", "--norm-epsilon": "1e-05"}, true},
	} {
		p := presetPlan(t, "llama3-8b")
		p.Model.Transformer.Numerics = c.numerics
		out := mustExport(t, "megatron", inputOf(p))
		flags := megatronFlags(t, out)
		for _, k := range []string{"--rotary-base", "--rotary-percent", "--use-rope-scaling", "--rope-scaling-factor", "--norm-epsilon"} {
			got, set := flags[k]
			want, wantSet := c.want[k]
			if set != wantSet || got != want {
				t.Errorf("%s: %s = %q (set %v), want %q (set %v)", c.name, k, got, set, want, wantSet)
			}
		}
		if note := strings.Contains(out, "rope scaling (factor"); note != c.note {
			t.Errorf("%s: header says the scaling is left out: %v, want %v:\n%s", c.name, note, c.note, out)
		}
	}
	p := presetPlan(t, "llama3-8b")
	p.Model.Transformer.Numerics = model.Numerics{RotaryBase: 10000.5}
	if _, err := export("megatron", inputOf(p)); !errors.Is(err, ErrNotExpressible) || !strings.Contains(err.Error(), "numerics.rotary_base") {
		t.Errorf("fractional rotary base: %v", err)
	}
}

// TestExportMegatronPresetNumerics: the presets' numerics as their
// configs state them reach the command (Llama 3.1 405B's base and
// scaling, GLM-4.5's half-rotating heads, Qwen3's epsilon), and
// DeepSeek-V3's YaRN is named in the header, not built.
func TestExportMegatronPresetNumerics(t *testing.T) {
	for _, c := range []struct {
		id   string
		want map[string]string
		yarn bool
	}{
		{"llama3-405b", map[string]string{"--rotary-base": "500000", "--use-rope-scaling": "", "--rope-scaling-factor": "8", "--norm-epsilon": "1e-05"}, false},
		{"glm-4.5", map[string]string{"--rotary-base": "1000000", "--rotary-percent": "0.5", "--norm-epsilon": "1e-05"}, false},
		{"qwen3-30b-a3b", map[string]string{"--rotary-base": "1000000", "--norm-epsilon": "1e-06"}, false},
		{"deepseek-v3", map[string]string{"--rotary-base": "10000", "--norm-epsilon": "1e-06"}, true},
		{"llama2-7b", map[string]string{"--norm-epsilon": "1e-05"}, false},
	} {
		out := mustExport(t, "megatron", inputOf(presetPlan(t, c.id)))
		flags := megatronFlags(t, out)
		for k, want := range c.want {
			if got, set := flags[k]; !set || got != want {
				t.Errorf("%s: %s = %q (set %v), want %q", c.id, k, got, set, want)
			}
		}
		if _, set := flags["--use-rope-scaling"]; set != (c.want["--rope-scaling-factor"] != "") {
			t.Errorf("%s: --use-rope-scaling set %v", c.id, set)
		}
		if yarn := strings.Contains(out, "yarn rope scaling (factor"); yarn != c.yarn {
			t.Errorf("%s: header names the YaRN scaling %v, want %v", c.id, yarn, c.yarn)
		}
	}
}

// TestExportExpertTP: the plan's expert tensor parallelism reaches
// Megatron-LM (--expert-tensor-parallel-size, written whenever it is not
// Megatron-Core's own default of t without expert parallelism) and
// torchtitan (expert_tensor_parallel_degree, which takes 1 or tp with
// expert parallelism); torchtitan refuses any other, naming the field.
func TestExportExpertTP(t *testing.T) {
	p := presetPlan(t, "qwen3-235b-a22b")
	p.Execution.TP, p.Execution.DP, p.Execution.EP = 4, 4, 4 // 16 GPUs: etp 4 × ep 4
	p.Execution.ETP = 4
	if got := megatronFlags(t, mustExport(t, "megatron", inputOf(p)))["--expert-tensor-parallel-size"]; got != "4" {
		t.Errorf("etp 4: --expert-tensor-parallel-size %q, want 4", got)
	}
	p.Execution.ETP = 0
	if got := megatronFlags(t, mustExport(t, "megatron", inputOf(p)))["--expert-tensor-parallel-size"]; got != "1" {
		t.Errorf("etp unset with ep 4: --expert-tensor-parallel-size %q, want 1 (the folding default)", got)
	}
	p.Execution.Recompute, p.Execution.ZeRO = model.RecomputeFull, 3 // what torchtitan exports
	for etp, want := range map[int]string{0: "expert_tensor_parallel_degree = 1\n", 4: "expert_tensor_parallel_degree = 4\n"} {
		p.Execution.ETP = etp
		if out := mustExport(t, "torchtitan", inputOf(p)); !strings.Contains(out, want) {
			t.Errorf("torchtitan, etp %d: no %q in\n%s", etp, want, out)
		}
	}
	p.Execution.ETP = 2
	if _, err := export("torchtitan", inputOf(p)); !errors.Is(err, ErrNotExpressible) || !strings.Contains(err.Error(), "execution.etp = 2") {
		t.Errorf("torchtitan, etp 2 with tp 4: %v, want a refusal naming execution.etp", err)
	}
}

// TestExportMegatronRecomputeLayers: full recomputation of every layer is
// Megatron-LM's uniform method over groups of one layer; of the first N
// layers of each chunk, its block method with N.
func TestExportMegatronRecomputeLayers(t *testing.T) {
	p := gptPlan(t, 2)
	for n, want := range map[int][2]string{0: {"uniform", "1"}, 2: {"block", "2"}} {
		p.Execution.RecomputeLayers = n
		flags := megatronFlags(t, mustExport(t, "megatron", inputOf(p)))
		if flags["--recompute-granularity"] != "full" || flags["--recompute-method"] != want[0] || flags["--recompute-num-layers"] != want[1] {
			t.Errorf("recompute_layers %d: --recompute-granularity %q --recompute-method %q --recompute-num-layers %q, want full %s %s",
				n, flags["--recompute-granularity"], flags["--recompute-method"], flags["--recompute-num-layers"], want[0], want[1])
		}
	}
}

// TestExportMegatronRecomputeModules: selective recomputation's modules
// go to Megatron-LM as --recompute-modules with one argument each
// (argparse's nargs='*'), in Megatron-Core's order, after
// --recompute-granularity selective.
func TestExportMegatronRecomputeModules(t *testing.T) {
	p := presetPlan(t, "qwen3-235b-a22b")
	p.Execution.TP, p.Execution.DP, p.Execution.EP = 4, 4, 4
	p.Execution.Recompute, p.Execution.RecomputeModules = model.RecomputeSelective, "layernorm,moe_act"
	out := mustExport(t, "megatron", inputOf(p))
	if !strings.Contains(out, "--recompute-granularity selective \\\n  --recompute-modules moe_act \\\n  layernorm") {
		t.Errorf("no --recompute-granularity selective --recompute-modules moe_act layernorm in\n%s", out)
	}
	yaml := mustExport(t, "k8s", inputOf(p))
	if !strings.Contains(yaml, "\"--recompute-modules\"\n") || !strings.Contains(yaml, "\"moe_act\"\n") || !strings.Contains(yaml, "\"layernorm\"\n") {
		t.Errorf("the PyTorchJob's args lack --recompute-modules moe_act layernorm as three arguments:\n%s", yaml)
	}
}
