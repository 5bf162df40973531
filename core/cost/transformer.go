package cost

import (
	"fmt"

	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
)

// Options are the system-side model constants of a prediction; the zero
// value means the documented defaults.
type Options struct {
	// Efficiency overrides DefaultEfficiency for the cluster's GPU.
	Efficiency *EfficiencyCurve
	// Comm overrides DefaultComm.
	Comm *Comm
	// MemoryBandwidthEfficiency is the fraction of peak memory bandwidth
	// memory-bound kernels reach; 0 means DefaultMemoryBandwidthEfficiency.
	MemoryBandwidthEfficiency float64
	// ReserveBytes overrides DefaultReserve(gpu memory) when > 0.
	ReserveBytes float64
	// ExpertSeconds overrides DefaultExpertSeconds (nil: the default; 0
	// leaves the per-expert time out).
	ExpertSeconds *float64
	// EPOverlapExposed overrides DefaultEPOverlapExposed (nil: the
	// default; 0 hides all the overlapped expert exchange can).
	EPOverlapExposed *float64
	// P2PExposed overrides DefaultP2PExposed (nil: the default; 0 hides
	// all of the interleaved schedule's pipeline sends).
	P2PExposed *float64
	// FP8ExpertGEMMFraction overrides FP8ExpertGEMMFraction (nil: the
	// default; 1 runs the routed experts' FP8 GEMMs at the curve's rate).
	FP8ExpertGEMMFraction *float64
}

// TimeBreakdown splits the predicted iteration time; its fields sum to it.
type TimeBreakdown struct {
	// ComputeSeconds is the slowest stage's compute per step (all
	// microbatches; MoE layers' time per local expert included).
	ComputeSeconds float64 `json:"compute_seconds"`
	// TensorParallelSeconds is the slowest stage's tensor-parallel communication per step.
	TensorParallelSeconds float64 `json:"tensor_parallel_seconds"`
	// PipelineP2PSeconds is the slowest stage's point-to-point time per step.
	PipelineP2PSeconds float64 `json:"pipeline_p2p_seconds"`
	// ZeRO3GatherSeconds is the slowest stage's exposed ZeRO-3 weight
	// all-gathers per step (with Overlap.ParamGather, what the prefetch
	// behind the compute does not hide).
	ZeRO3GatherSeconds float64 `json:"zero3_gather_seconds"`
	// BubbleSeconds is the pipeline fill and drain time.
	BubbleSeconds float64 `json:"bubble_seconds"`
	// DataParallelSeconds is the exposed gradient reduction (and embedding
	// all-reduce, and parameter all-gather with the distributed optimizer):
	// all of it, or with overlap what the last microbatch's backward (first
	// microbatch's forward) does not hide.
	DataParallelSeconds float64 `json:"data_parallel_seconds"`
	// OptimizerSeconds is the per-step work on the weights: the optimizer
	// step over the parameters the rank updates (its shard with ZeRO ≥ 1),
	// zeroing the gradient buffers and, in FP8, the weights' casts.
	OptimizerSeconds float64 `json:"optimizer_seconds"`
	// ContextParallelSeconds is the slowest stage's exposed context-
	// parallel exchange per step: the ring's K/V passes the attention
	// compute does not hide, or all of the all-gathers or all-to-alls
	// (plan.Execution.CPComm).
	ContextParallelSeconds float64 `json:"context_parallel_seconds"`
	// ExpertParallelSeconds is the slowest stage's all-to-all dispatch and
	// combine per step.
	ExpertParallelSeconds float64 `json:"expert_parallel_seconds"`
}

// Memory is the predicted memory of one GPU.
type Memory struct {
	// Stage is the pipeline stage (device index in the pipeline).
	Stage int `json:"stage"`
	// WeightBytes are the weights, all versions the schedule keeps.
	WeightBytes float64 `json:"weight_bytes"`
	// GradientBytes are the gradient buffers.
	GradientBytes float64 `json:"gradient_bytes"`
	// OptimizerBytes is the optimizer state.
	OptimizerBytes float64 `json:"optimizer_bytes"`
	// ActivationBytes are the stashed activations at the schedule's peak plus
	// the working set of the layer being (re)computed.
	ActivationBytes float64 `json:"activation_bytes"`
	// CommBufferBytes are the point-to-point send/receive buffers and, with
	// all-gather context parallelism, one layer's gathered K/V and their
	// gradients.
	CommBufferBytes float64 `json:"comm_buffer_bytes"`
	// FP8WeightBytes are, when training in FP8, Transformer Engine's FP8
	// copies of the linear layers' weights and their transposes
	// (FP8WeightCopyBytesPerParam), kept for the whole step.
	FP8WeightBytes float64 `json:"fp8_weight_bytes,omitempty"`
	// PeakBytes is the sum of the above: what the framework allocates.
	PeakBytes float64 `json:"peak_bytes"`
	// ReserveBytes is kept back for the CUDA context, NCCL and fragmentation.
	ReserveBytes float64 `json:"reserve_bytes"`
	// CapacityBytes is the GPU's memory.
	CapacityBytes float64 `json:"capacity_bytes"`
}

// Fits reports whether PeakBytes + ReserveBytes fit in CapacityBytes.
func (m Memory) Fits() bool { return m.PeakBytes+m.ReserveBytes <= m.CapacityBytes }

// Prediction is the predicted performance and memory of a transformer plan.
type Prediction struct {
	// Params is the parameter count (eq. 4.3).
	Params float64 `json:"params"`
	// FLOPsPerIteration counts the FLOPs executed per step, recomputation
	// included (eq. 4.2 with full recomputation): the basis of TFLOPSPerGPU.
	FLOPsPerIteration float64 `json:"flops_per_iteration"`
	// ModelFLOPsPerIteration counts the FLOPs without recomputation: the basis of MFU.
	ModelFLOPsPerIteration float64 `json:"model_flops_per_iteration"`
	// Microbatches is m, the number of microbatches per pipeline and step.
	Microbatches int `json:"microbatches"`
	// IterationSeconds is the predicted time of one step.
	IterationSeconds float64 `json:"iteration_seconds"`
	// SamplesPerSec is the global batch over the iteration time.
	SamplesPerSec float64 `json:"samples_per_sec"`
	// TokensPerSec is SamplesPerSec × sequence length.
	TokensPerSec float64 `json:"tokens_per_sec"`
	// TFLOPSPerGPU is FLOPsPerIteration / (GPUs × IterationSeconds) / 1e12,
	// the figure the dissertation's Table 4.1 reports.
	TFLOPSPerGPU float64 `json:"tflops_per_gpu"`
	// ModelTFLOPSPerGPU is ModelFLOPsPerIteration / (GPUs × IterationSeconds)
	// / 1e12: model FLOPs, no recomputation, the figure Megatron-LM's README
	// and the Llama 3 paper (Table 4) publish.
	ModelTFLOPSPerGPU float64 `json:"model_tflops_per_gpu"`
	// ActiveParams is the parameters one token uses (Params for dense models).
	ActiveParams float64 `json:"active_params"`
	// MFU is ModelFLOPsPerIteration / (GPUs × IterationSeconds × peak).
	MFU float64 `json:"mfu"`
	// Calibration says, on a GPU on which no published training run fitted
	// or checked the model (calibratedGPUs), that the prediction is
	// uncalibrated, and how held-out published runs on it compared
	// (calibrationCaveat); "" on a calibrated GPU. Caveats lists it with
	// Caveat.
	Calibration string `json:"calibration,omitempty"`
	// BubbleFraction is the schedule's bubble over ideal time (schedule.Kind.Bubble).
	BubbleFraction float64 `json:"bubble_fraction"`
	// Time splits IterationSeconds.
	Time TimeBreakdown `json:"time"`
	// Memory is the most loaded GPU's memory.
	Memory Memory `json:"memory"`
	// StageMemory holds the memory of each pipeline stage's GPUs.
	StageMemory []Memory `json:"stage_memory"`
	// Caveat says why the prediction is less certain than the model's
	// tested accuracy ("" when it is not): a mixture-of-experts model
	// trained in FP8 (fp8ExpertsCaveat).
	Caveat string `json:"caveat,omitempty"`
}

// Predict predicts the iteration time, throughput and per-GPU memory of
// training tr on cluster c with execution ex. It returns an error naming the
// field for invalid or inconsistent inputs (t·p·d ≠ GPUs, B not a multiple of
// d·b, ...); a configuration that does not fit in memory is not an error:
// see Prediction.Memory.Fits.
//
// The cost model reads a zero Interleave, CP or EP as 1, an empty Schedule
// as 1f1b (interleaved when Interleave > 1), an empty Recompute as none and
// an empty Optimizer as mixed-adam.
func Predict(tr model.Transformer, c hw.Cluster, ex plan.Execution, opt Options) (Prediction, error) {
	p, err := NewPredictor(tr, c, opt)
	if err != nil {
		return Prediction{}, err
	}
	return p.Predict(ex)
}

// Validate checks execution ex against the model and cluster, with the
// defaults Predict fills in; errors name the field.
func Validate(tr model.Transformer, c hw.Cluster, ex plan.Execution) error {
	ex = WithDefaults(ex)
	for _, d := range []struct {
		name string
		v    int
	}{{"tp", ex.TP}, {"pp", ex.PP}, {"dp", ex.DP}, {"microbatch_size", ex.MicrobatchSize}, {"global_batch", ex.GlobalBatch}, {"interleave", ex.Interleave}, {"cp", ex.CP}, {"ep", ex.EP}} {
		if d.v < 1 {
			return fmt.Errorf("execution.%s: must be >= 1, got %d", d.name, d.v)
		}
	}
	n := c.GPUs()
	if ex.CP > 1 && tr.Seq%(2*ex.CP) != 0 {
		return fmt.Errorf("execution.cp: the sequence %d must split into 2·cp load-balanced chunks, got cp %d", tr.Seq, ex.CP)
	}
	if err := CheckCPComm(tr, ex); err != nil {
		return err
	}
	if ex.EPDispatcher != "" && ex.EPDispatcher != EPAllToAll && ex.EPDispatcher != EPDeepEP {
		return fmt.Errorf("execution.ep_dispatcher: must be %q or %q, got %q", EPAllToAll, EPDeepEP, ex.EPDispatcher)
	}
	if ex.EP > 1 && tr.MoE == nil {
		return fmt.Errorf("execution.ep: expert parallelism needs a mixture-of-experts model, got %d", ex.EP)
	}
	if ex.EP > 1 && (tr.MoE.Experts%ex.EP != 0 || (ex.TP*ex.DP*ex.CP)%ex.EP != 0) {
		return fmt.Errorf("execution.ep: must divide the %d experts and tp·dp·cp = %d, got %d", tr.MoE.Experts, ex.TP*ex.DP*ex.CP, ex.EP)
	}
	if err := checkExpertTP(tr, ex); err != nil {
		return err
	}
	for _, d := range []struct {
		name string
		v    int
	}{{"tp", ex.TP}, {"pp", ex.PP}, {"dp", ex.DP}, {"cp", ex.CP}} {
		if d.v > n {
			return fmt.Errorf("execution.%s: must be <= the cluster's %d GPUs, got %d", d.name, n, d.v)
		}
	}
	if ex.MicrobatchSize > ex.GlobalBatch {
		return fmt.Errorf("execution.microbatch_size: must be <= global_batch %d, got %d", ex.GlobalBatch, ex.MicrobatchSize)
	}
	if ex.Interleave > tr.Layers {
		return fmt.Errorf("execution.interleave: must be <= the %d layers, got %d", tr.Layers, ex.Interleave)
	}
	if ex.TP*ex.PP > n || ex.TP*ex.PP*ex.CP > n || ex.TP*ex.PP*ex.CP*ex.DP != n { // each factor <= n <= 2^24: no overflow
		return fmt.Errorf("execution: tp·pp·cp·dp must equal the cluster's %d GPUs, got %d·%d·%d·%d", n, ex.TP, ex.PP, ex.CP, ex.DP)
	}
	if ex.GlobalBatch%ex.MicrobatchSize != 0 || microbatches(ex)*ex.DP*ex.MicrobatchSize != ex.GlobalBatch {
		return fmt.Errorf("execution.global_batch: must be a multiple of dp·microbatch_size = %d·%d, got %d", ex.DP, ex.MicrobatchSize, ex.GlobalBatch)
	}
	if tr.Heads%ex.TP != 0 {
		return fmt.Errorf("execution.tp: must divide the %d attention heads, got %d", tr.Heads, ex.TP)
	}
	if ex.PP*ex.Chunks() > MaxChunks(tr.Layers) {
		return fmt.Errorf("execution.pp: pp × %d chunks per device must be <= the %d layers + 2 (chunks holding only the embedding or the output layer), got %d·%d", ex.Chunks(), tr.Layers, ex.PP, ex.Chunks())
	}
	if ex.Interleave > 1 && ex.Schedule != schedule.Interleaved {
		return fmt.Errorf("execution.schedule: interleave %d needs the interleaved schedule, got %q", ex.Interleave, ex.Schedule)
	}
	if m := microbatches(ex); ex.Interleave > 1 && m%ex.PP != 0 {
		return fmt.Errorf("execution.global_batch: the interleaved schedule needs the %d microbatches to be a multiple of pp = %d (§4.2.2)", m, ex.PP)
	}
	if _, err := model.ParseRecompute(string(ex.Recompute)); err != nil {
		return fmt.Errorf("execution.%w", err)
	}
	if err := ex.CheckRecomputation(); err != nil {
		return err
	}
	if ex.RecomputeLayers > tr.Layers {
		return fmt.Errorf("execution.recompute_layers: must be at most the %d layers, got %d", tr.Layers, ex.RecomputeLayers)
	}
	if modules, _ := model.ParseRecomputeModules(ex.RecomputeModules); ex.Recompute == model.RecomputeSelective {
		if err := tr.CheckRecomputeModules(modules); err != nil {
			return fmt.Errorf("execution.%w", err)
		}
	}
	if _, err := ParseOptimizer(ex.Optimizer); err != nil {
		return fmt.Errorf("execution.%w", err)
	}
	if ex.ZeRO < 0 || ex.ZeRO > 3 {
		return fmt.Errorf("execution.zero: must be 0, 1, 2 or 3, got %d", ex.ZeRO)
	}
	if err := ex.CheckScheduleMicrobatches(microbatches(ex)); err != nil {
		return err
	}
	if kind, _ := ex.Schedule.Info(); kind.VShaped && !Simulable(ex.PP, microbatches(ex)) {
		return fmt.Errorf("execution.pp: %s is costed by simulating its schedule, at most %d stage-microbatches (pp × the microbatches simulated, min(m, 4·pp)), got pp %d × %d; use fewer stages", ex.Schedule, MaxSimulatedStageMicrobatches, ex.PP, min(microbatches(ex), VSteadyFrom(ex.PP)))
	}
	if _, _, err := ex.Schedule.InFlight(ex.PP, 0, microbatches(ex), ex.Interleave); err != nil {
		return fmt.Errorf("execution.%w", err)
	}
	if _, err := ex.Schedule.Bubble(ex.PP, microbatches(ex), ex.Interleave); err != nil {
		return fmt.Errorf("execution.%w", err)
	}
	return nil
}

// checkExpertTP checks an execution's expert tensor parallelism (ETP)
// against the model — only for a mixture-of-experts model where set,
// dividing each expert's inner size — and the degrees
// (plan.Execution.CheckExpertGrid: etp·ep dividing the t·cp·d ranks the
// experts fold over, expertGrid).
func checkExpertTP(tr model.Transformer, ex plan.Execution) error {
	if ex.ETP > 0 && tr.MoE == nil {
		return fmt.Errorf("execution.etp: expert tensor parallelism needs a mixture-of-experts model, got %d", ex.ETP)
	}
	if ex.ETP > 0 && tr.ExpertFFN()%ex.ETP != 0 {
		return fmt.Errorf("execution.etp: must divide each expert's inner size %d, got %d", tr.ExpertFFN(), ex.ETP)
	}
	return ex.CheckExpertGrid()
}

// CheckCPComm checks an execution's context-parallel communication type
// (its TP, CP and CPComm): one of plan.CPComms, and for a2a attention
// heads and K/V heads that split over the t·cp ranks (Transformer
// Engine's all-to-all attention gives each of the cp ranks of a
// tensor-parallel shard whole heads: "The number of attention heads needs
// to be divisible by CP size!").
func CheckCPComm(tr model.Transformer, ex plan.Execution) error {
	if err := plan.CheckCPComm(ex.CPComm); err != nil {
		return fmt.Errorf("execution.cp_comm: %w", err)
	}
	if ex.CPComm != plan.CPCommA2A || ex.CP == 1 {
		return nil
	}
	kv := tr.KVHeadCount()
	if tr.MLA != nil {
		kv = tr.Heads // MLA expands its latent into a K and V per head
	}
	if tr.Heads%(ex.TP*ex.CP) != 0 || kv%(ex.TP*ex.CP) != 0 {
		return fmt.Errorf("execution.cp_comm: a2a needs the %d attention heads and %d K/V heads to split over tp·cp = %d·%d ranks; use p2p or all_gather", tr.Heads, kv, ex.TP, ex.CP)
	}
	return nil
}

// microbatches returns m = B/(d·b), computed without overflowing d·b.
func microbatches(ex plan.Execution) int {
	return ex.GlobalBatch / ex.MicrobatchSize / ex.DP
}

// WithDefaults returns ex with the cost model's defaults filled in: a zero
// Interleave, CP or EP read as 1, the schedule 1f1b (interleaved when
// Interleave > 1) when none is named, recomputation none and the optimizer
// mixed-adam when empty, and sequence parallelism and the tensor-parallel
// overlap off where t = 1, as Megatron-LM's arguments.py turns them off
// ("Disabling sequence parallelism because tensor model parallelism is
// disabled"): they change nothing there, and an exported plan should not
// ask an engine for them. It is the execution Predict evaluates.
func WithDefaults(ex plan.Execution) plan.Execution {
	if ex.TP == 1 {
		ex.SequenceParallel, ex.Overlap.TPComm = false, false
	}
	for _, f := range []*int{&ex.Interleave, &ex.CP, &ex.EP} {
		if *f == 0 {
			*f = 1
		}
	}
	if ex.Schedule == "" {
		ex.Schedule = schedule.OneFOneB
		if ex.Interleave > 1 {
			ex.Schedule = schedule.Interleaved
		}
	}
	if ex.Recompute == "" {
		ex.Recompute = model.RecomputeNone
	}
	if ex.Optimizer == "" {
		ex.Optimizer = string(MixedAdam)
	}
	return ex
}

// TimePart is one named part of a TimeBreakdown.
type TimePart struct {
	// Name says what the part is, e.g. "exposed TP comm".
	Name string `json:"name"`
	// Seconds is its time per step.
	Seconds float64 `json:"seconds"`
}

// Parts lists the breakdown's parts in a fixed order (compute first, then
// exposed communication, bubble and optimizer), zero parts included, for
// the CLI's --breakdown and the Plan page's bar.
func (b TimeBreakdown) Parts() []TimePart {
	return []TimePart{
		{"compute", b.ComputeSeconds},
		{"exposed TP comm", b.TensorParallelSeconds},
		{"exposed DP comm", b.DataParallelSeconds},
		{"exposed CP comm", b.ContextParallelSeconds},
		{"EP all-to-all", b.ExpertParallelSeconds},
		{"ZeRO-3 gathers", b.ZeRO3GatherSeconds},
		{"pipeline bubble", b.BubbleSeconds},
		{"pipeline p2p", b.PipelineP2PSeconds},
		{"optimizer", b.OptimizerSeconds},
	}
}
