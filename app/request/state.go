// Package request is pipeplan's one request schema: every input of the
// playground's three pages and the open tab (what the URL fragment carries,
// versioned and compressed by core/plan's fragment codec, so a reload,
// back/forward or a shared link restores the same view), the bodies of the
// HTTP API and the JS API, and the CLI's flags. Each request has one set of
// defaults and one Validate, whose errors (*FieldError) name the field and
// the bad value.
package request

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"pipeplan/core/cost"
	"pipeplan/core/model"
	"pipeplan/core/plan"
)

// Tabs are the pages of the playground, in header order.
var Tabs = []string{"plan", "cluster", "cost"}

// State is the whole UI request.
type State struct {
	// Tab is the open page, one of Tabs.
	Tab string `json:"tab"`
	// Plan holds the Plan page's inputs.
	Plan Plan `json:"plan"`
	// Cluster holds the Cluster page's inputs.
	Cluster Cluster `json:"cluster"`
	// Cost holds the Cost page's inputs.
	Cost Cost `json:"cost"`
}

// Plan holds the inputs of the Plan page: the model (application), the
// cluster (system) and the training options (execution), kept apart.
type Plan struct {
	// Model is a model preset id (see app.Models), "custom" (Custom's
	// dimensions) or "hf" (the Hugging Face config.json in HFConfig).
	Model string `json:"model"`
	// HFConfig is the text of a Hugging Face config.json, read when Model
	// is "hf" (model.ParseHFConfig; the sequence length is Seq, or the
	// config's max_position_embeddings).
	HFConfig string `json:"hf_config,omitempty"`
	// GPU is a gpuprofiles id.
	GPU string `json:"gpu"`
	// Nodes is the number of servers.
	Nodes int `json:"nodes"`
	// GPUsPerNode is the number of GPUs in each server.
	GPUsPerNode int `json:"gpus_per_node"`
	// InterNodeGBps is the per-GPU network bandwidth between nodes, in GB/s
	// (10^9 bytes/s); 0 means the GPU's own figure (gpuprofiles'
	// network.json: its reference server's NICs).
	InterNodeGBps float64 `json:"inter_node_gbps"`
	// GlobalBatch is the number of samples per optimizer step.
	GlobalBatch int `json:"global_batch"`
	// Planner is the planning algorithm, one of Planners.
	Planner string `json:"planner"`
	// Selected is the rank of the candidate shown in detail (0 = the best).
	Selected int `json:"selected"`
	// Custom holds the dimensions of the "custom" model.
	Custom CustomModel `json:"custom"`
	// Seq overrides the transformer's sequence length; 0 keeps the preset's.
	Seq int `json:"seq"`
	// Precision is the training precision ("" = bf16), one of Precisions.
	Precision string `json:"precision"`
	// MTPLayers overrides the model's multi-token prediction depth
	// (model.Transformer.MTPLayers: DeepSeek-V3's config has 1), 0 to
	// MaxMTPLayers; nil keeps the model's own, 0 trains without.
	MTPLayers *int `json:"mtp_layers,omitempty"`
	// Optimizer is a core/cost optimizer name ("" = mixed-precision Adam).
	Optimizer string `json:"optimizer"`
	// ZeRO pins the ZeRO stage over the data-parallel replicas, 0–3 (1 is
	// Megatron-LM's distributed optimizer, 3 FSDP); nil (null or absent)
	// leaves it to the PTD-P search, as a degree left 0 is.
	ZeRO *int `json:"zero,omitempty"`
	// Recompute fixes activation recomputation ("" = searched), one of Recomputes.
	Recompute string `json:"recompute"`
	// RecomputeLayers, with Recompute "full", recomputes only the first
	// RecomputeLayers layers of each model chunk (plan.Execution.
	// RecomputeLayers, Megatron-LM's --recompute-method block); 0
	// recomputes every layer. A searched recomputation tries full
	// recomputation on as few layers as fit.
	RecomputeLayers int `json:"recompute_layers,omitempty"`
	// RecomputeModules, with Recompute "selective", names what it reruns,
	// comma-separated in Megatron-Core's names (plan.Execution.
	// RecomputeModules); "" is the attention core alone.
	RecomputeModules string `json:"recompute_modules,omitempty"`
	// TP, PP, Microbatch and Interleave fix the PTD-P search's tensor- and
	// pipeline-parallel sizes, microbatch size and model chunks per GPU
	// (0 = searched). With every one of them and Recompute given, the one
	// configuration is evaluated instead of searched (its layers may then
	// split unevenly and t may span nodes; CP and EP left 0 are then 1, and
	// ZeRO left nil is chosen as the search chooses it).
	TP         int `json:"tp,omitempty"`
	PP         int `json:"pp,omitempty"`
	Microbatch int `json:"microbatch,omitempty"`
	Interleave int `json:"interleave,omitempty"`
	// CP and EP fix the context-parallel (sequence split) and
	// expert-parallel (MoE models) degrees (0 = searched).
	CP int `json:"cp,omitempty"`
	EP int `json:"ep,omitempty"`
	// ETP fixes the expert-tensor-parallel degree, how many ranks split
	// each routed expert (Megatron-Core's --expert-tensor-parallel-size);
	// 0 is the default, not searched: 1 with expert parallelism, t without
	// (plan.Execution.ETP).
	ETP int `json:"etp,omitempty"`

	// CPComm pins how context parallelism exchanges keys and values,
	// Megatron-Core's --cp-comm-type: "p2p" (the ring), "all_gather" (as
	// the Llama 3 paper) or "a2a" (as DeepSpeed-Ulysses); "" searches p2p
	// and a2a per candidate with cp > 1 (partition.PTDPOptions.SearchCPComm).
	CPComm string `json:"cp_comm,omitempty"`

	// FlashAttention runs the attention core fused (no s×s scores stored,
	// the causal mask's upper blocks skipped); on by default, off
	// reproduces the dissertation's 2021 runs. The planner turns it off,
	// with a note, on GPUs older than Ampere (no bf16 tensor cores).
	FlashAttention bool `json:"flash_attention"`
	// AttentionKernel names the fused attention kernels that run the
	// core with flash attention (plan.Execution.AttentionKernel): "" or
	// "cudnn" (Transformer Engine's default on Hopper and Blackwell) or
	// "flash2" (FlashAttention-2, as PyTorch's SDPA flash backend runs it;
	// NVIDIA's 2024 H100 tables ran at about its rates).
	AttentionKernel string `json:"attention_kernel,omitempty"`
	// OverlapGradReduce, OverlapParamGather and TPCommOverlap say which
	// communication is hidden behind computation, as Megatron-LM's
	// --overlap-grad-reduce, --overlap-param-gather and --tp-comm-overlap
	// do (plan.Overlap); nil means what Megatron-LM recommends for the GPU
	// (app.DefaultOverlap).
	OverlapGradReduce  *bool `json:"overlap_grad_reduce,omitempty"`
	OverlapParamGather *bool `json:"overlap_param_gather,omitempty"`
	TPCommOverlap      *bool `json:"tp_comm_overlap,omitempty"`
	// EPDispatcher is how a mixture-of-experts model's layers exchange
	// tokens over the expert-parallel group (plan.Execution.EPDispatcher),
	// one of EPDispatchers: "" or "alltoall" (Megatron-Core's default
	// dispatcher), "deepep" (its flex dispatcher with DeepEP). Dense
	// models ignore it.
	EPDispatcher string `json:"ep_dispatcher,omitempty"`
	// OverlapEPComm hides one microbatch's expert-parallel token exchange
	// behind another's computation (plan.Overlap.EPComm, Megatron-Core's
	// --overlap-moe-expert-parallel-comm; off by default, as there). Dense
	// models ignore it.
	OverlapEPComm bool `json:"overlap_ep_comm,omitempty"`
	// FP8ParamGather keeps the linear layers' weights in FP8 when Precision
	// is fp8 (plan.Execution.FP8ParamGather, Megatron-LM's
	// --fp8-param-gather, as NVIDIA's FP8 recipes run): no bf16 copy beside
	// Transformer Engine's FP8 one. Other precisions ignore it.
	FP8ParamGather bool `json:"fp8_param_gather,omitempty"`
	// UnfusedGradAccumulation adds each microbatch's weight gradients to
	// the accumulated ones in a pass of their own, as Megatron-LM did
	// before 2022 (plan.Execution.UnfusedGradAccumulation); off, the
	// weight-gradient GEMMs accumulate in place, as Megatron-LM and
	// Transformer Engine do now.
	UnfusedGradAccumulation bool `json:"unfused_grad_accumulation,omitempty"`
	// SequenceParallel shards the layer-norm and dropout activations over
	// the tensor-parallel GPUs (Korthikanti et al. 2022, Megatron-LM's
	// --sequence-parallel); nil means on, as Megatron-LM recommends
	// wherever t > 1: the same communication volume as the tensor-parallel
	// all-reduces, less memory and elementwise work, and what
	// --tp-comm-overlap requires (UsesSequenceParallel).
	SequenceParallel *bool `json:"sequence_parallel,omitempty"`
	// AllowCrossNodeTP lets the PTD-P search put tensor parallelism across
	// nodes (by default t stays inside a server, §4.3.2).
	AllowCrossNodeTP bool `json:"allow_cross_node_tp,omitempty"`
	// Top is how many fitting candidates the result lists, fastest first
	// (0 = DefaultTop, so plans saved before it existed stay valid).
	Top int `json:"top,omitempty"`
	// ProfileOptions are the inputs only the layer-profile planners read.
	ProfileOptions
	// TrainAmount is what the whole run trains on, for its cost: tokens
	// for a transformer, samples for a layer profile (0 = the page's default).
	TrainAmount float64 `json:"train_amount,omitempty"`
	// PricePerGPUHour prices a GPU-hour in dollars for the run's cost (0 =
	// the GPU's sourced price, if there is one).
	PricePerGPUHour float64 `json:"price_per_gpu_hour,omitempty"`

	// Schedule fixes the PTD-P planner's pipeline schedule, one of
	// PTDPSchedules ("" = 1F1B, interleaved when v > 1): GPipe,
	// PipeDream-Flush (1f1b) and 2BW side by side (issue 15, §3.4.3),
	// ZB-H1 (its weight gradients filling the flush's gaps) or ZB-V (two
	// chunks a device in a V, simulated).
	Schedule string `json:"schedule,omitempty"`
	// Calibration is the text of a GEMM calibration measured on plan.gpu
	// (`runner profile --calibration`, cost.Calibration): the transformer
	// cost model then takes its efficiency curve instead of the default.
	Calibration string `json:"calibration,omitempty"`
}

// PTDPSchedules are the schedules Plan.Schedule takes ("" first: the default).
var PTDPSchedules = []string{"", "gpipe", "1f1b", "interleaved", "2bw", "zb-h1", "zb-v", "dualpipe-v"}

// Limits of the run-cost inputs.
const (
	MaxTrainAmount     = 1e18
	MaxPricePerGPUHour = 1e4
)

// Shown is how many fitting candidates a result lists: Top, or DefaultTop.
func (p Plan) Shown() int {
	if p.Top == 0 {
		return DefaultTop
	}
	return p.Top
}

// UsesSequenceParallel reports whether the plan shards activations over
// the tensor-parallel GPUs: SequenceParallel, on unless set off.
func (p Plan) UsesSequenceParallel() bool {
	return p.SequenceParallel == nil || *p.SequenceParallel
}

// Evaluates reports whether p fixes every PTD-P choice (degrees,
// microbatch size, interleaving, recomputation): one configuration to
// evaluate, not a search.
func (p Plan) Evaluates() bool {
	return p.TP > 0 && p.PP > 0 && p.Microbatch > 0 && p.Interleave > 0 && p.Recompute != ""
}

// FixesPTDP reports whether p fixes any choice only the PTD-P planner
// takes (a degree, sequence parallelism, cross-node tensor parallelism,
// the MoE dispatcher or its overlap, unfused gradient accumulation).
func (p Plan) FixesPTDP() bool {
	return p.TP > 0 || p.PP > 0 || p.Microbatch > 0 || p.Interleave > 0 || p.CP > 0 || p.EP > 0 || p.ETP > 0 || p.SequenceParallel != nil && *p.SequenceParallel || p.AllowCrossNodeTP ||
		p.Schedule != "" || p.EPDispatcher != "" || p.OverlapEPComm || p.UnfusedGradAccumulation
}

// CustomModel is a transformer given by its dimensions (model.Transformer's
// fields of the same names); the sequence length and precision are the
// Plan's. The zero values of the optional fields give the GPT of §4.5.1.
type CustomModel struct {
	// Name is carried by an exported plan ("" = the dimensions, e.g.
	// "transformer l=32 h=4096 a=32").
	Name   string `json:"name,omitempty"`
	Layers int    `json:"layers"`
	Hidden int    `json:"hidden"`
	Heads  int    `json:"heads"`
	// Vocab is the vocabulary size V (0 = GPT's 51200, §4.5.1).
	Vocab int `json:"vocab,omitempty"`
	// FFN is the feed-forward size of the dense layers (0 = 4 × Hidden).
	FFN int `json:"ffn,omitempty"`
	// KVHeads is the number of key/value heads, dividing Heads (grouped-query
	// attention; 1 = multi-query; 0 = Heads).
	KVHeads int `json:"kv_heads,omitempty"`
	// GatedFFN makes the MLP a gated linear unit (SwiGLU: three matrices).
	GatedFFN bool `json:"gated_ffn,omitempty"`
	// UntiedEmbeddings gives the output layer its own weights.
	UntiedEmbeddings bool `json:"untied_embeddings,omitempty"`
	// Experts is the number of routed experts of every MLP (0 = dense);
	// TopK, MoEFFN and SharedExperts need it.
	Experts int `json:"experts,omitempty"`
	// TopK is the routed experts each token goes to, 1 to Experts.
	TopK int `json:"topk,omitempty"`
	// MoEFFN is one expert's inner size (0 = FFN).
	MoEFFN int `json:"moe_ffn,omitempty"`
	// SharedExperts is the always-on experts every token also goes through.
	SharedExperts int `json:"shared_experts,omitempty"`
	// ExpertGroups and GroupTopK limit each token's routed experts to
	// GroupTopK of ExpertGroups equal groups of them (DeepSeek-V3's
	// node-limited routing: 8 and 4); both 0: no limit.
	ExpertGroups int `json:"expert_groups,omitempty"`
	GroupTopK    int `json:"group_topk,omitempty"`
	// SlidingWindow and SlidingLayers window SlidingLayers of the layers'
	// attention to the SlidingWindow most recent tokens (GPT-OSS: 128 on
	// half of them; both 0: none).
	SlidingWindow int `json:"sliding_window,omitempty"`
	SlidingLayers int `json:"sliding_layers,omitempty"`
	// AttentionSinks gives each attention head a learned softmax offset
	// (GPT-OSS).
	AttentionSinks bool `json:"attention_sinks,omitempty"`
}

// validateArchitecture checks what the ranges alone do not: K/V heads
// dividing the heads, and the MoE fields given only with routed experts,
// top-k within them. The ranges are checked first (Plan.Validate).
func (c CustomModel) validateArchitecture() error {
	if c.KVHeads > 0 && c.Heads > 0 && c.Heads%c.KVHeads != 0 {
		return fieldErr("plan.custom.kv_heads", "must divide the %d attention heads, got %d", c.Heads, c.KVHeads)
	}
	if (c.SlidingWindow > 0) != (c.SlidingLayers > 0) {
		return fieldErr("plan.custom.sliding_layers", "must be given with plan.custom.sliding_window, both or neither, got %d windowed layers with a window of %d tokens", c.SlidingLayers, c.SlidingWindow)
	}
	if c.Experts == 0 {
		for _, f := range []struct {
			name string
			v    int
		}{{"topk", c.TopK}, {"moe_ffn", c.MoEFFN}, {"shared_experts", c.SharedExperts}, {"expert_groups", c.ExpertGroups}, {"group_topk", c.GroupTopK}} {
			if f.v != 0 {
				return fieldErr("plan.custom."+f.name, "needs plan.custom.experts (a mixture of experts), got %d with no experts", f.v)
			}
		}
		return nil
	}
	if err := intIn("plan.custom.topk", c.TopK, 1, c.Experts); err != nil {
		return err
	}
	return c.validateGroups()
}

// validateGroups checks the experts' group limit: none (both 0), or at
// least 2 groups dividing the experts, of which a token takes 1 to all,
// enough to hold its top-k experts.
func (c CustomModel) validateGroups() error {
	switch g := c.ExpertGroups; {
	case g == 0 && c.GroupTopK == 0:
		return nil
	case g < 2 || c.Experts%g != 0:
		return fieldErr("plan.custom.expert_groups", "must divide the %d experts into at least 2 groups (0: no group limit), got %d", c.Experts, g)
	case c.GroupTopK < 1 || c.GroupTopK > g:
		return fieldErr("plan.custom.group_topk", "must be in [1, plan.custom.expert_groups %d] with groups, got %d", g, c.GroupTopK)
	case c.TopK > c.GroupTopK*(c.Experts/g):
		return fieldErr("plan.custom.group_topk", "%d groups of %d experts cannot hold plan.custom.topk %d, got %d", c.GroupTopK, c.Experts/g, c.TopK, c.GroupTopK)
	}
	return nil
}

// Choices of the training inputs ("" first: the default).
var (
	Precisions = []string{"", "bf16", "fp16", "fp32", "fp8"}
	Optimizers = []string{"", "mixed-adam", "mixed-adam-fp32-grads", "adam", "sgd"}
	Recomputes = []string{"", "none", "selective", "full"}
	// EPDispatchers are the MoE token dispatchers core/cost models.
	EPDispatchers = []string{"", cost.EPAllToAll, cost.EPDeepEP}
)

// HFModel is the Plan's model id for a model given by its Hugging Face
// config.json (Plan.HFConfig).
const HFModel = "hf"

// Planners are the planner choices of the Plan page; "best" runs all that apply.
var Planners = []string{"best", "ptdp", "2bw", "pipedream", "madpipe"}

// Limits on numeric inputs: large enough for any real cluster, small enough
// that a hostile link cannot ask for an absurd amount of work.
const (
	MaxNodes = 4096
	// MaxGPUsPerNode is a GB200 NVL72 rack's NVLink domain, the largest
	// one GPUs share (gpuprofiles.MaxGPUsPerServer).
	MaxGPUsPerNode = 72
	// MaxGPUs bounds nodes × GPUs per node: 4,096 servers of 16.
	MaxGPUs        = 65536
	MaxGlobalBatch = 1 << 20
	MaxGBps        = 10000
	MaxSelected    = 1000
	MaxSeq         = 1 << 20
	// MaxLayers is 256, twice the deepest published dense models (126
	// layers for Llama 3 405B, 128 for the 1T GPT of PTD-P's Table 4.1):
	// the PTD-P search's work grows faster than the layers (a 1,024-layer
	// model took over 20 s on a loaded 2-core machine, 256 layers 4 s).
	MaxLayers = 256
	// MaxExperts bounds a MoE model's routed experts (DeepSeek-V3: 256).
	MaxExperts = 1024
	// MaxMTPLayers bounds the multi-token prediction depth (DeepSeek-V3
	// trains with 1; its report §5.4.2 evaluates depths 1 and 2).
	MaxMTPLayers = 8
	MaxHidden    = 1 << 17
	MaxHeads     = 1024
	MaxVocab     = 1 << 24
	MaxFFN       = 1 << 20
	MaxNameBytes = 200
	MaxTop       = 100
	// MaxHFConfigBytes bounds an inline Hugging Face config.json (real
	// ones are 1–3 KB).
	MaxHFConfigBytes = 32 << 10
	// MaxUploadedLayers bounds the layers of an uploaded profile (its
	// chain): PipeDream's DP on a chain of layers that differ at random
	// took 0.85 s of CPU at 250 layers, 6.0 s at 500 and 38 s at 1,000 on
	// 64 × 16 GPUs (BENCHMARKS.md, "Worst cases"). PipeDream's own
	// profiles have 22 to 428 layers.
	MaxUploadedLayers = 512
	// DefaultTop is how many candidates a result lists by default.
	DefaultTop = 15
	// MinGBps is the slowest network the planners accept (1 MB/s per GPU):
	// slower ones give predictions beyond float64 range.
	MinGBps = 0.001
)

// Default is the state of a fresh page: GPT-3 175B on 1024 A100s (128 nodes
// of 8), the configuration of the dissertation's Table 4.1 / Figure 4.1 row,
// with flash attention and the GPU's own network bandwidth between nodes.
func Default() State {
	return State{
		Tab: "plan",
		Plan: Plan{
			Model:          "gpt3-175b",
			GPU:            "nvidia-a100-sxm4-80gb",
			Nodes:          128,
			GPUsPerNode:    8,
			GlobalBatch:    1536,
			Planner:        "best",
			Custom:         CustomModel{Layers: 32, Hidden: 4096, Heads: 32},
			FlashAttention: true,
		},
		Cluster: DefaultCluster(),
		Cost:    DefaultCost(),
	}
}

// Validate checks the state's shape (not whether presets exist, which the
// engine checks) and returns the first problem naming the field and value.
func (s State) Validate() error {
	if !slices.Contains(Tabs, s.Tab) {
		return fieldErr("tab", "must be one of %v, got %q", Tabs, s.Tab)
	}
	if err := s.Plan.Validate(); err != nil {
		return err
	}
	if err := s.Cluster.Validate(); err != nil {
		return err
	}
	return s.Cost.Validate()
}

// Validate checks the Plan page's inputs; errors name the field and value.
func (p Plan) Validate() error {
	if p.Model == "" || !utf8.ValidString(p.Model) {
		return fieldErr("plan.model", "must name a model preset, got %q", p.Model)
	}
	if p.GPU == "" || !utf8.ValidString(p.GPU) {
		return fieldErr("plan.gpu", "must name a GPU profile, got %q", p.GPU)
	}
	if err := intIn("plan.nodes", p.Nodes, 1, MaxNodes); err != nil {
		return err
	}
	if err := intIn("plan.gpus_per_node", p.GPUsPerNode, 1, MaxGPUsPerNode); err != nil {
		return err
	}
	if n := p.Nodes * p.GPUsPerNode; n > MaxGPUs {
		return fieldErr("plan.nodes", "%d nodes × %d GPUs = %d GPUs, over the %d a plan may take", p.Nodes, p.GPUsPerNode, n, MaxGPUs)
	}
	if err := intIn("plan.global_batch", p.GlobalBatch, 1, MaxGlobalBatch); err != nil {
		return err
	}
	if p.InterNodeGBps != 0 && !(p.InterNodeGBps >= MinGBps && p.InterNodeGBps <= MaxGBps) {
		return fieldErr("plan.inter_node_gbps", "must be 0 (the GPU's own network) or in [%g, %d] GB/s, got %v", MinGBps, MaxGBps, p.InterNodeGBps)
	}
	if (p.Model == HFModel) != (p.HFConfig != "") {
		return fieldErr("plan.hf_config", "must be given exactly when plan.model is %q, got %d bytes for model %q", HFModel, len(p.HFConfig), p.Model)
	}
	if len(p.HFConfig) > MaxHFConfigBytes {
		return fieldErr("plan.hf_config", "must be at most %d bytes, got %d", MaxHFConfigBytes, len(p.HFConfig))
	}
	for _, f := range []struct{ name, v string }{{"plan.hf_config", p.HFConfig}, {"plan.custom.name", p.Custom.Name}} {
		if !utf8.ValidString(f.v) {
			return fieldErr(f.name, "must be UTF-8 text, got %q", clip(f.v))
		}
	}
	if err := p.validateCalibration(); err != nil {
		return err
	}
	if !slices.Contains(Planners, p.Planner) {
		return fieldErr("plan.planner", "must be one of %v, got %q", Planners, p.Planner)
	}
	if err := intIn("plan.selected", p.Selected, 0, MaxSelected); err != nil {
		return err
	}
	for _, f := range []struct {
		name      string
		v, lo, hi int
	}{
		{"plan.custom.layers", p.Custom.Layers, 1, MaxLayers}, {"plan.custom.hidden", p.Custom.Hidden, 1, MaxHidden},
		{"plan.custom.heads", p.Custom.Heads, 1, MaxHeads}, {"plan.custom.vocab", p.Custom.Vocab, 0, MaxVocab},
		{"plan.custom.ffn", p.Custom.FFN, 0, MaxFFN}, {"plan.custom.kv_heads", p.Custom.KVHeads, 0, p.Custom.Heads},
		{"plan.custom.experts", p.Custom.Experts, 0, MaxExperts}, {"plan.custom.moe_ffn", p.Custom.MoEFFN, 0, MaxFFN},
		{"plan.custom.shared_experts", p.Custom.SharedExperts, 0, MaxExperts}, {"plan.seq", p.Seq, 0, MaxSeq},
		{"plan.custom.expert_groups", p.Custom.ExpertGroups, 0, MaxExperts}, {"plan.custom.group_topk", p.Custom.GroupTopK, 0, MaxExperts},
		{"plan.custom.sliding_window", p.Custom.SlidingWindow, 0, MaxSeq}, {"plan.custom.sliding_layers", p.Custom.SlidingLayers, 0, max(p.Custom.Layers, 0)},
		{"plan.tp", p.TP, 0, MaxGPUs}, {"plan.pp", p.PP, 0, MaxLayers},
		{"plan.microbatch", p.Microbatch, 0, MaxGlobalBatch}, {"plan.interleave", p.Interleave, 0, MaxLayers},
		{"plan.cp", p.CP, 0, MaxGPUs}, {"plan.ep", p.EP, 0, MaxGPUs}, {"plan.etp", p.ETP, 0, MaxGPUs},
		{"plan.recompute_layers", p.RecomputeLayers, 0, MaxLayers}, {"plan.top", p.Top, 0, MaxTop},
	} {
		if err := intIn(f.name, f.v, f.lo, f.hi); err != nil {
			return err
		}
	}
	if err := p.Custom.validateArchitecture(); err != nil {
		return err
	}
	if err := plan.CheckCPComm(p.CPComm); err != nil {
		return &FieldError{Field: "plan.cp_comm", Msg: err.Error() + " (empty: searched per candidate)"}
	}
	if err := plan.CheckAttentionKernel(p.AttentionKernel); err != nil {
		return &FieldError{Field: "plan.attention_kernel", Msg: err.Error() + " (empty: cudnn)"}
	}
	if p.TPCommOverlap != nil && *p.TPCommOverlap && !p.UsesSequenceParallel() {
		// Megatron-LM's arguments.py: "Tensor parallel communication/GEMM
		// overlap can happen only when sequence parallelism is enabled".
		return fieldErr("plan.tp_comm_overlap", "needs sequence parallelism (Megatron-LM overlaps tensor-parallel communication only with it), got tp_comm_overlap true with sequence_parallel false")
	}
	if p.RecomputeLayers > 0 && p.Recompute != string(model.RecomputeFull) {
		return fieldErr("plan.recompute_layers", "%d layers a chunk recompute only with recompute %q, got recompute %q", p.RecomputeLayers, model.RecomputeFull, p.Recompute)
	}
	if p.RecomputeModules != "" {
		if p.Recompute != string(model.RecomputeSelective) {
			return fieldErr("plan.recompute_modules", "%q recompute only with recompute %q, got recompute %q", p.RecomputeModules, model.RecomputeSelective, p.Recompute)
		}
		if len(p.RecomputeModules) > MaxNameBytes {
			return fieldErr("plan.recompute_modules", "must be at most %d bytes, got %d", MaxNameBytes, len(p.RecomputeModules))
		}
		if _, err := model.ParseRecomputeModules(p.RecomputeModules); err != nil {
			return &FieldError{Field: "plan.recompute_modules", Msg: strings.TrimPrefix(err.Error(), "recompute_modules: ")}
		}
	}
	if p.ZeRO != nil {
		if err := intIn("plan.zero", *p.ZeRO, 0, 3); err != nil {
			return err
		}
	}
	if p.MTPLayers != nil {
		if err := intIn("plan.mtp_layers", *p.MTPLayers, 0, MaxMTPLayers); err != nil {
			return err
		}
	}
	if len(p.Custom.Name) > MaxNameBytes {
		return fieldErr("plan.custom.name", "must be at most %d bytes, got %d", MaxNameBytes, len(p.Custom.Name))
	}
	for _, f := range []struct {
		name   string
		v, max float64
	}{{"plan.train_amount", p.TrainAmount, MaxTrainAmount}, {"plan.price_per_gpu_hour", p.PricePerGPUHour, MaxPricePerGPUHour}} {
		if !(f.v >= 0 && f.v <= f.max) {
			return fmt.Errorf("%s: must be a number in [0, %g], got %v", f.name, f.max, f.v)
		}
	}
	for _, f := range []struct {
		name, v string
		list    []string
	}{{"plan.precision", p.Precision, Precisions}, {"plan.optimizer", p.Optimizer, Optimizers}, {"plan.recompute", p.Recompute, Recomputes},
		{"plan.schedule", p.Schedule, PTDPSchedules}, {"plan.ep_dispatcher", p.EPDispatcher, EPDispatchers}} {
		if !slices.Contains(f.list, f.v) {
			return fieldErr(f.name, "must be one of %q, got %q", f.list, f.v)
		}
	}
	return p.ProfileOptions.validate(p.Planner)
}

// DecodePlan decodes and validates a JSON Plan (the body of POST
// /api/v1/plan and of the JS API's pipeplan.plan): fields the object omits
// keep the Plan page's defaults; unknown fields, trailing data and a body
// over MaxBodyBytes are errors.
func DecodePlan(data []byte) (Plan, error) {
	p := Default().Plan
	if err := decodeStrict(data, MaxBodyBytes, "plan", &p); err != nil {
		return p, err
	}
	return p, p.Validate()
}

// Encode returns the URL fragment (without '#') for s.
func Encode(s State) (string, error) {
	if err := s.Validate(); err != nil {
		return "", err
	}
	return plan.EncodeFragment(s)
}

// Decode parses a URL fragment (with or without '#'). An empty fragment is
// the default state, and fields a fragment omits (one made before they
// existed) keep their defaults. On any error it returns the default state
// and the error, so the page can show the error and still render.
func Decode(fragment string) (State, error) {
	if fragment == "" || fragment == "#" {
		return Default(), nil
	}
	s := Default()
	if err := plan.DecodeFragment(fragment, &s); err != nil {
		return Default(), fmt.Errorf("shared link: %w", err)
	}
	if err := s.Validate(); err != nil {
		return Default(), fmt.Errorf("shared link: %w", err)
	}
	return s, nil
}

func intIn(field string, v, lo, hi int) error {
	if v < lo || v > hi {
		return fieldErr(field, "must be in [%d, %d], got %d", lo, hi, v)
	}
	return nil
}
