package cost

import (
	"fmt"

	"pipeplan/core/hw"
	"pipeplan/core/model"
)

// Config is the execution side of a transformer plan: the parallel degrees,
// microbatching, schedule and memory-saving choices (dissertation §4.3.1
// notation).
type Config struct {
	// TP is the tensor-parallel size t.
	TP int `json:"tp"`
	// PP is the pipeline-parallel size p.
	PP int `json:"pp"`
	// DP is the data-parallel size d; t·p·d must equal the cluster's GPUs.
	DP int `json:"dp"`
	// Microbatch is the microbatch size b.
	Microbatch int `json:"microbatch"`
	// GlobalBatch is the batch size B; m = B/(d·b) microbatches per pipeline.
	GlobalBatch int `json:"global_batch"`
	// Interleave is the number of model chunks v per device (1 = none; 0 is read as 1).
	Interleave int `json:"interleave"`
	// Schedule is a schedule kind (Schedule1F1B, ...); "" picks 1f1b, or
	// interleaved when Interleave > 1.
	Schedule string `json:"schedule,omitempty"`
	// Recompute is the activation recomputation strategy.
	Recompute model.Recompute `json:"recompute"`
	// SequenceParallel enables sequence parallelism (Korthikanti et al. 2022).
	SequenceParallel bool `json:"sequence_parallel"`
	// ScatterGather enables the scatter/gather optimization of §4.4.1.
	ScatterGather bool `json:"scatter_gather"`
	// Optimizer is the optimizer; "" means MixedAdam.
	Optimizer Optimizer `json:"optimizer,omitempty"`
	// ZeRO is the ZeRO stage over the data-parallel replicas (0–3; 1 is
	// Megatron-LM's distributed optimizer).
	ZeRO int `json:"zero,omitempty"`
}

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
}

// TimeBreakdown splits the predicted iteration time; its fields sum to it.
type TimeBreakdown struct {
	// ComputeSeconds is the slowest stage's compute per step (all microbatches).
	ComputeSeconds float64 `json:"compute_seconds"`
	// TensorParallelSeconds is the slowest stage's tensor-parallel communication per step.
	TensorParallelSeconds float64 `json:"tensor_parallel_seconds"`
	// PipelineP2PSeconds is the slowest stage's point-to-point time per step.
	PipelineP2PSeconds float64 `json:"pipeline_p2p_seconds"`
	// ZeRO3GatherSeconds is the slowest stage's ZeRO-3 weight all-gathers per step.
	ZeRO3GatherSeconds float64 `json:"zero3_gather_seconds"`
	// BubbleSeconds is the pipeline fill and drain time.
	BubbleSeconds float64 `json:"bubble_seconds"`
	// DataParallelSeconds is the gradient all-reduce (and embedding all-reduce) after the flush.
	DataParallelSeconds float64 `json:"data_parallel_seconds"`
	// OptimizerSeconds is the optimizer step.
	OptimizerSeconds float64 `json:"optimizer_seconds"`
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
	// CommBufferBytes are the point-to-point send/receive buffers.
	CommBufferBytes float64 `json:"comm_buffer_bytes"`
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
	// MFU is ModelFLOPsPerIteration / (GPUs × IterationSeconds × peak).
	MFU float64 `json:"mfu"`
	// BubbleFraction is the schedule's bubble over ideal time (BubbleFraction()).
	BubbleFraction float64 `json:"bubble_fraction"`
	// Time splits IterationSeconds.
	Time TimeBreakdown `json:"time"`
	// Memory is the most loaded GPU's memory.
	Memory Memory `json:"memory"`
	// StageMemory holds the memory of each pipeline stage's GPUs.
	StageMemory []Memory `json:"stage_memory"`
}

// Predict predicts the iteration time, throughput and per-GPU memory of
// training tr on cluster c with execution cfg. It returns an error naming the
// field for invalid or inconsistent inputs (t·p·d ≠ GPUs, B not a multiple of
// d·b, ...); a configuration that does not fit in memory is not an error:
// see Prediction.Memory.Fits.
func Predict(tr model.Transformer, c hw.Cluster, cfg Config, opt Options) (Prediction, error) {
	e, err := newEvaluator(tr, c, cfg, opt)
	if err != nil {
		return Prediction{}, err
	}
	return e.predict(), nil
}

// Validate checks cfg against the model and cluster; errors name the field.
func (cfg Config) Validate(tr model.Transformer, c hw.Cluster) error {
	cfg = cfg.withDefaults()
	for _, d := range []struct {
		name string
		v    int
	}{{"tp", cfg.TP}, {"pp", cfg.PP}, {"dp", cfg.DP}, {"microbatch", cfg.Microbatch}, {"global_batch", cfg.GlobalBatch}, {"interleave", cfg.Interleave}} {
		if d.v < 1 {
			return fmt.Errorf("config.%s: must be >= 1, got %d", d.name, d.v)
		}
	}
	n := c.GPUs()
	for _, d := range []struct {
		name string
		v    int
	}{{"tp", cfg.TP}, {"pp", cfg.PP}, {"dp", cfg.DP}} {
		if d.v > n {
			return fmt.Errorf("config.%s: must be <= the cluster's %d GPUs, got %d", d.name, n, d.v)
		}
	}
	if cfg.Microbatch > cfg.GlobalBatch {
		return fmt.Errorf("config.microbatch: must be <= global_batch %d, got %d", cfg.GlobalBatch, cfg.Microbatch)
	}
	if cfg.Interleave > tr.Layers {
		return fmt.Errorf("config.interleave: must be <= the %d layers, got %d", tr.Layers, cfg.Interleave)
	}
	if cfg.TP*cfg.PP > n || cfg.TP*cfg.PP*cfg.DP != n { // each factor <= n <= 2^24: no overflow
		return fmt.Errorf("config: tp·pp·dp must equal the cluster's %d GPUs, got %d·%d·%d", n, cfg.TP, cfg.PP, cfg.DP)
	}
	if cfg.GlobalBatch%cfg.Microbatch != 0 || cfg.microbatches()*cfg.DP*cfg.Microbatch != cfg.GlobalBatch {
		return fmt.Errorf("config.global_batch: must be a multiple of dp·microbatch = %d·%d, got %d", cfg.DP, cfg.Microbatch, cfg.GlobalBatch)
	}
	if tr.Heads%cfg.TP != 0 {
		return fmt.Errorf("config.tp: must divide the %d attention heads, got %d", tr.Heads, cfg.TP)
	}
	if cfg.PP*cfg.Interleave > tr.Layers {
		return fmt.Errorf("config.pp: pp·interleave must be <= the %d layers, got %d·%d", tr.Layers, cfg.PP, cfg.Interleave)
	}
	if cfg.Interleave > 1 && cfg.Schedule != "" && cfg.Schedule != ScheduleInterleaved {
		return fmt.Errorf("config.schedule: interleave %d needs the interleaved schedule, got %q", cfg.Interleave, cfg.Schedule)
	}
	if m := cfg.microbatches(); cfg.Interleave > 1 && m%cfg.PP != 0 {
		return fmt.Errorf("config.global_batch: the interleaved schedule needs the %d microbatches to be a multiple of pp = %d (§4.2.2)", m, cfg.PP)
	}
	if _, err := model.ParseRecompute(string(cfg.Recompute)); err != nil {
		return fmt.Errorf("config.%w", err)
	}
	if _, err := ParseOptimizer(string(cfg.Optimizer)); err != nil {
		return fmt.Errorf("config.%w", err)
	}
	if cfg.ZeRO < 0 || cfg.ZeRO > 3 {
		return fmt.Errorf("config.zero: must be 0, 1, 2 or 3, got %d", cfg.ZeRO)
	}
	if _, _, err := InFlight(cfg.schedule(), cfg.PP, 0, cfg.microbatches(), cfg.Interleave); err != nil {
		return fmt.Errorf("config.%w", err)
	}
	return nil
}

// microbatches returns m = B/(d·b), computed without overflowing d·b.
func (cfg Config) microbatches() int {
	return cfg.GlobalBatch / cfg.Microbatch / cfg.DP
}

// withDefaults returns cfg with a zero Interleave read as 1.
func (cfg Config) withDefaults() Config {
	if cfg.Interleave == 0 {
		cfg.Interleave = 1
	}
	return cfg
}

// schedule returns the schedule kind with the default filled in.
func (cfg Config) schedule() string {
	switch {
	case cfg.Schedule != "":
		return cfg.Schedule
	case cfg.Interleave > 1:
		return ScheduleInterleaved
	}
	return Schedule1F1B
}
