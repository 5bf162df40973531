package plan

import (
	"fmt"
	"slices"
	"strings"

	"pipeplan/core/model"
	"pipeplan/core/schedule"
)

// Execution is how a model runs on a cluster: the parallel degrees, the
// microbatching, the schedule, activation recomputation and how optimizer
// state and communication are handled. It is the one description of an
// execution that the cost model, the planners, the application layer, the
// exported plan and the runner share; the model (application) and the
// cluster (system) are kept apart from it (DESIGN.md).
type Execution struct {
	// TP is the tensor-parallel degree t.
	TP int `json:"tp"`
	// PP is the pipeline-parallel degree p (stages in one device chain).
	PP int `json:"pp"`
	// DP is the data-parallel degree d. With PipeDream's replicated stages
	// the per-stage replica counts live in the plan's stages and DP is 1.
	DP int `json:"dp"`
	// Interleave is the number of model chunks v per device of the
	// interleaved schedule (1 = none; a V-shaped schedule's two are its
	// own: Chunks).
	Interleave int `json:"interleave"`
	// CP is the context-parallel degree (the sequence split across GPUs; 1 = none).
	CP int `json:"cp"`
	// CPComm is how context-parallel attention exchanges keys and values,
	// as Megatron-Core's --cp-comm-type (Transformer Engine's cp_comm_type)
	// chooses: "" or "p2p" passes K/V chunks round a ring, overlapped with
	// the attention blocks; "all_gather" gathers the whole sequence's K/V
	// before the attention (the Llama 3 paper's §3.3.2), exposed; "a2a"
	// trades sequence for heads with all-to-alls (DeepSpeed-Ulysses),
	// exposed. One of CPComms. Sources: Transformer Engine's
	// transformer_engine/pytorch/attention/dot_product_attention/
	// context_parallel.py (AttnFuncWithCPAndKVP2P, …KVAllGather, …QKVOA2A)
	// and Megatron-Bridge's table of the types ("Async / Overlap": p2p yes,
	// all_gather no, a2a n/a; https://docs.nvidia.com/nemo/megatron-bridge/
	// latest/training/hybrid-context-parallel.html).
	CPComm string `json:"cp_comm,omitempty"`
	// EP is the expert-parallel degree of MoE layers (1 = none).
	EP int `json:"ep"`
	// ETP is the expert-tensor-parallel degree: how many ranks split each
	// routed expert's matrices (Megatron-Core's
	// --expert-tensor-parallel-size, MoE parallel folding: the experts'
	// grid etp × ep × edp covers the attention's t·cp·d ranks, expert
	// tensor parallelism innermost). 0 is the default ExpertTP resolves:
	// 1 with expert parallelism (each expert whole on its rank, as
	// Megatron-Bridge's MoE recipes run), t without (the experts split
	// like a dense MLP).
	ETP int `json:"etp,omitempty"`
	// EPDispatcher is how MoE layers exchange tokens over the expert-
	// parallel group, as Megatron-Core's --moe-token-dispatcher-type
	// chooses: "" or "alltoall" sends every routed copy of a token to its
	// expert's rank; "deepep" (the flex dispatcher with DeepEP or HybridEP)
	// sends a token once to each other server holding one of its experts
	// and forwards it there over the server's fabric.
	EPDispatcher string `json:"ep_dispatcher,omitempty"`
	// MicrobatchSize is the number of samples b in one microbatch.
	MicrobatchSize int `json:"microbatch_size"`
	// GlobalBatch is the number of samples B per optimizer step.
	GlobalBatch int `json:"global_batch"`
	// Recompute is the activation recomputation strategy.
	Recompute model.Recompute `json:"recompute"`
	// RecomputeLayers, with Recompute full, is how many layers of each
	// model chunk (each pipeline stage's, each virtual stage's when
	// interleaved) recompute: the chunk's first RecomputeLayers layers
	// keep only their input and rerun their forward pass, the others keep
	// every activation (Megatron-LM's --recompute-granularity full
	// --recompute-method block --recompute-num-layers N). 0 recomputes
	// every layer (--recompute-method uniform --recompute-num-layers 1);
	// a chunk with fewer layers recomputes them all.
	RecomputeLayers int `json:"recompute_layers,omitempty"`
	// RecomputeModules, with Recompute selective, lists what the backward
	// pass reruns instead of keeping its activations, comma-separated in
	// Megatron-Core's names (--recompute-modules: core_attn, moe_act,
	// layernorm, mla_up_proj, mlp, moe, shared_experts; model.
	// ParseRecomputeModules); "" is the attention core alone.
	RecomputeModules string `json:"recompute_modules,omitempty"`
	// Schedule is the pipeline schedule kind.
	Schedule schedule.Kind `json:"schedule"`
	// ZeRO is the ZeRO stage over the data-parallel replicas (0–3; 1 is
	// Megatron-LM's distributed optimizer).
	ZeRO int `json:"zero"`
	// Optimizer names how weights, gradients and optimizer state are kept,
	// as core/cost parses it (sgd, adam, mixed-adam, mixed-adam-fp32-grads;
	// "" is mixed-adam); core/cost holds each one's bytes per parameter.
	Optimizer string `json:"optimizer,omitempty"`
	// SequenceParallel shards the non-tensor-parallel activations over the
	// tensor-parallel group (Korthikanti et al. 2022).
	SequenceParallel bool `json:"sequence_parallel"`
	// ScatterGather sends the pipeline's boundary activations scattered over
	// the tensor-parallel ranks and all-gathers them on arrival (§4.4.1).
	ScatterGather bool `json:"scatter_gather"`
	// FlashAttention runs the attention core fused (Dao et al. 2022): no
	// s×s scores stored, masked blocks of the causal mask skipped.
	FlashAttention bool `json:"flash_attention,omitempty"`
	// AttentionKernel is which fused attention kernels run the core with
	// FlashAttention: "" or "cudnn", cuDNN's fused attention, what
	// Transformer Engine runs on Hopper and later since it prefers it
	// there ("Disabling FlashAttention to give FusedAttention preference
	// on Hopper+ for performance reasons"); "flash2", FlashAttention-2,
	// PyTorch's SDPA flash backend and Transformer Engine's first choice
	// before that preference ("The priority for attention backends ... is:
	// FlashAttention > FusedAttention (cuDNN) > UnfusedDotProductAttention");
	// NVIDIA's 2024 H100 tables ran at about its rates, whichever backend
	// their containers chose (core/cost package doc, "Long sequences"). One
	// of AttentionKernels.
	AttentionKernel string `json:"attention_kernel,omitempty"`
	// FP8ParamGather keeps the linear layers' weights in FP8 when the model
	// trains in FP8 (Megatron-LM's --fp8-param-gather, Transformer
	// Engine's fp8_model_init; every FP8 recipe of Megatron-Bridge and
	// NeMo's performance configs set it): the FP8 copy is the weight, with
	// no bf16 one beside it. Off, TE casts the bf16 weights to FP8 and
	// caches the copies for the step.
	FP8ParamGather bool `json:"fp8_param_gather,omitempty"`
	// UnfusedGradAccumulation adds each microbatch's weight gradients to
	// the accumulated ones in a separate memory-bound pass (PyTorch
	// autograd's accumulation, as Megatron-LM ran before its gradient
	// accumulation fusion of 2022). Off, the weight-gradient GEMM
	// accumulates in place (Megatron-LM's gradient_accumulation_fusion,
	// Transformer Engine's fuse_wgrad_accumulation).
	UnfusedGradAccumulation bool `json:"unfused_grad_accumulation,omitempty"`
	// Overlap says which communication is overlapped with computation.
	Overlap Overlap `json:"overlap"`
}

// Overlap says which communication an execution hides behind computation.
type Overlap struct {
	// GradReduce overlaps the data-parallel gradient reduction with the
	// backward pass (bucketed, as PyTorch DDP and Megatron-LM do).
	GradReduce bool `json:"grad_reduce"`
	// ParamGather overlaps the distributed optimizer's parameter all-gather
	// with the next step's forward pass.
	ParamGather bool `json:"param_gather"`
	// TPComm overlaps tensor-parallel communication with the GEMMs it
	// feeds (Transformer Engine's userbuffers, Megatron's --tp-comm-overlap).
	TPComm bool `json:"tp_comm,omitempty"`
	// TPBackward overlaps the backward collectives of the column-parallel
	// linear layers (QKV and the MLP's first) with their own GEMMs: the
	// input gradient's all-reduce (reduce-scatter with sequence
	// parallelism) with the weight-gradient GEMM and, with sequence
	// parallelism, the re-gather of the saved input shard with the
	// input-gradient GEMM (Megatron-LM's asynchronous tensor-parallel
	// all-reduce, on by default since 2022; not in the 2021 PTD-P runs).
	// TPComm, where set, hides more.
	TPBackward bool `json:"tp_backward,omitempty"`
	// EPComm overlaps a mixture-of-experts layer's expert-parallel token
	// exchange for one microbatch with the computation of another
	// (Megatron-Core's --overlap-moe-expert-parallel-comm, MCore 0.14).
	EPComm bool `json:"ep_comm,omitempty"`
}

// The context-parallel communication types Execution.CPComm takes.
const (
	// CPCommP2P is ring attention, the default.
	CPCommP2P = "p2p"
	// CPCommAllGather all-gathers K and V before the attention.
	CPCommAllGather = "all_gather"
	// CPCommA2A is head-parallel attention behind all-to-alls (Ulysses).
	CPCommA2A = "a2a"
)

// CPComms are the values Execution.CPComm takes ("" first: p2p).
// Megatron-Core's hierarchical "a2a+p2p" is not modelled.
var CPComms = []string{"", CPCommP2P, CPCommAllGather, CPCommA2A}

// CheckCPComm returns an error when s is not one of CPComms, saying what
// it must be (callers name the field).
func CheckCPComm(s string) error {
	if slices.Contains(CPComms, s) {
		return nil
	}
	if s == "a2a+p2p" {
		return fmt.Errorf("hierarchical context parallelism %q is not modelled yet; choose %q, %q or %q", s, CPCommP2P, CPCommAllGather, CPCommA2A)
	}
	return fmt.Errorf("must be one of %q, %q, %q, got %q", CPCommP2P, CPCommAllGather, CPCommA2A, s)
}

// The fused attention kernels Execution.AttentionKernel names.
const (
	// AttentionCuDNN is cuDNN's fused attention, the default.
	AttentionCuDNN = "cudnn"
	// AttentionFlash2 is FlashAttention-2 (Dao 2023).
	AttentionFlash2 = "flash2"
)

// AttentionKernels are the values Execution.AttentionKernel takes (""
// first: cuDNN).
var AttentionKernels = []string{"", AttentionCuDNN, AttentionFlash2}

// CheckAttentionKernel returns an error when s is not one of
// AttentionKernels (callers name the field).
func CheckAttentionKernel(s string) error {
	if slices.Contains(AttentionKernels, s) {
		return nil
	}
	return fmt.Errorf("must be %q or %q, got %q", AttentionCuDNN, AttentionFlash2, s)
}

// MaxDegree bounds every degree and the microbatch size of a valid
// execution (2^15), so that GPUs and d·b cannot overflow.
const MaxDegree = 1 << 15

// GPUs is the number of GPUs the execution occupies: t·p·d·cp. Expert
// parallelism reuses the data-parallel (and context-parallel) GPUs.
func (e Execution) GPUs() int { return e.TP * e.PP * e.DP * e.CP }

// ExpertTP returns the expert-tensor-parallel degree the execution runs
// with: ETP where set, otherwise 1 with expert parallelism and t without.
func (e Execution) ExpertTP() int {
	switch {
	case e.ETP > 0:
		return e.ETP
	case e.EP > 1:
		return 1
	}
	return e.TP
}

// CheckExpertGrid checks the expert tensor parallelism against the
// degrees (tp, cp, dp and ep at least 1): ETP 0 (the default) to
// MaxDegree, and etp × ep dividing the t·cp·d ranks the experts fold
// over; the error names execution.etp.
func (e Execution) CheckExpertGrid() error {
	if e.ETP < 0 || e.ETP > MaxDegree {
		return fmt.Errorf("execution.etp: must be 0 (the default) to %d, got %d", MaxDegree, e.ETP)
	}
	if ranks := e.TP * e.CP * e.DP; ranks%(e.ExpertTP()*e.EP) != 0 {
		return fmt.Errorf("execution.etp: expert tensor parallelism %d × expert parallelism %d = %d must divide tp × cp × dp = %d ranks", e.ExpertTP(), e.EP, e.ExpertTP()*e.EP, ranks)
	}
	return nil
}

// CheckRecomputation checks the recomputation's RecomputeLayers and
// RecomputeModules on their own: 0 (every layer) to MaxDegree layers, set only with full
// recomputation; known modules, each once, set only with selective
// recomputation. The error names the field.
func (e Execution) CheckRecomputation() error {
	switch {
	case e.RecomputeLayers < 0 || e.RecomputeLayers > MaxDegree:
		return fmt.Errorf("execution.recompute_layers: must be 0 (every layer) to %d, got %d", MaxDegree, e.RecomputeLayers)
	case e.RecomputeLayers > 0 && e.Recompute != model.RecomputeFull:
		return fmt.Errorf("execution.recompute_layers: %d layers a chunk recompute only with recompute %q, got recompute %q", e.RecomputeLayers, model.RecomputeFull, e.Recompute)
	case e.RecomputeModules != "" && e.Recompute != model.RecomputeSelective:
		return fmt.Errorf("execution.recompute_modules: %q recompute only with recompute %q, got recompute %q", e.RecomputeModules, model.RecomputeSelective, e.Recompute)
	}
	if _, err := model.ParseRecomputeModules(e.RecomputeModules); err != nil {
		return fmt.Errorf("execution.%w", err)
	}
	return nil
}

// RecomputeText describes the recomputation in a few words: "none",
// "selective", "full", "full, N layers a chunk" with RecomputeLayers, or
// "selective: moe_act, layernorm" with RecomputeModules.
func (e Execution) RecomputeText() string {
	switch {
	case e.Recompute == model.RecomputeFull && e.RecomputeLayers > 0:
		return fmt.Sprintf("full, %d layer%s a chunk", e.RecomputeLayers, plural(e.RecomputeLayers))
	case e.Recompute == model.RecomputeSelective && e.RecomputeModules != "":
		if s, err := model.ParseRecomputeModules(e.RecomputeModules); err == nil {
			return "selective: " + strings.Join(s.Names(), ", ")
		}
	}
	return string(e.Recompute)
}

// plural is "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Microbatches is the number of microbatches m = B/(d·b) per pipeline and
// step, or 0 when the global batch does not divide into them.
func (e Execution) Microbatches() int {
	per := e.DP * e.MicrobatchSize
	if per < 1 || e.GlobalBatch%per != 0 {
		return 0
	}
	return e.GlobalBatch / per
}

// Chunks returns the model chunks each pipeline device holds: Interleave
// under the interleaved schedule, two under a V-shaped one (zb-v, dualpipe-v), one
// otherwise (an unknown schedule: Interleave).
func (e Execution) Chunks() int {
	kind, err := e.Schedule.Info()
	if err != nil {
		return e.Interleave
	}
	return kind.Chunks(e.Interleave)
}

// Validate checks the execution on its own (without a model or cluster)
// and returns the first problem, naming the field and the value.
func (e Execution) Validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{
		{"tp", e.TP}, {"pp", e.PP}, {"dp", e.DP}, {"interleave", e.Interleave},
		{"cp", e.CP}, {"ep", e.EP}, {"microbatch_size", e.MicrobatchSize}, {"global_batch", e.GlobalBatch},
	} {
		if f.v < 1 {
			return fmt.Errorf("execution.%s: must be at least 1, got %d", f.name, f.v)
		}
		if f.v > MaxDegree && f.name != "global_batch" {
			return fmt.Errorf("execution.%s: must be at most %d, got %d", f.name, MaxDegree, f.v)
		}
	}
	if err := e.CheckExpertGrid(); err != nil {
		return err
	}
	if _, err := model.ParseRecompute(string(e.Recompute)); err != nil || e.Recompute == "" {
		return fmt.Errorf("execution.recompute: must be one of none, selective, full; got %q", e.Recompute)
	}
	if err := e.CheckRecomputation(); err != nil {
		return err
	}
	kind, err := e.Schedule.Info()
	if err != nil {
		return fmt.Errorf("execution.schedule: %w", err)
	}
	if e.Interleave > 1 && !kind.Chunked {
		return fmt.Errorf("execution.interleave: %d model chunks per device need a chunked schedule (%q), got %q", e.Interleave, schedule.Interleaved, e.Schedule)
	}
	if err := CheckCPComm(e.CPComm); err != nil {
		return fmt.Errorf("execution.cp_comm: %w", err)
	}
	if err := CheckAttentionKernel(e.AttentionKernel); err != nil {
		return fmt.Errorf("execution.attention_kernel: %w", err)
	}
	if e.ZeRO < 0 || e.ZeRO > 3 {
		return fmt.Errorf("execution.zero: must be 0, 1, 2 or 3, got %d", e.ZeRO)
	}
	if e.Microbatches() == 0 {
		return fmt.Errorf("execution.global_batch: %d samples do not split into microbatches of dp %d × microbatch_size %d = %d samples", e.GlobalBatch, e.DP, e.MicrobatchSize, e.DP*e.MicrobatchSize)
	}
	return e.CheckScheduleMicrobatches(e.Microbatches())
}

// CheckScheduleMicrobatches checks that the schedule runs m microbatches a
// step on pp devices: dualpipe-v needs one a stage, 2·pp
// (schedule.KindInfo.MinMicrobatches), the others one. The error names
// global_batch and the numbers that make m.
func (e Execution) CheckScheduleMicrobatches(m int) error {
	kind, err := e.Schedule.Info()
	if err != nil || m >= kind.MinMicrobatches(e.PP) {
		return nil // an unknown schedule is the schedule field's error
	}
	return fmt.Errorf("execution.global_batch: %s needs at least %d microbatches a step (%d per pipeline device × pp %d), got %d (global batch %d over dp %d × microbatch %d); raise the global batch or lower pp",
		e.Schedule, kind.MinMicrobatches(e.PP), kind.MinMicrobatchesPerDevice, e.PP, m, e.GlobalBatch, e.DP, e.MicrobatchSize)
}
