// Package plan defines the execution type (Execution: how a model runs) and
// the exported run plan: the one versioned JSON format the CLI, the
// playground, the API and the runner exchange. A plan keeps the three inputs
// apart — the model (application), the cluster (system) and the execution
// with its stages — plus the planner's predictions, so the runner can report
// measured against predicted.
package plan

import (
	"pipeplan/core/hw"
	"pipeplan/core/model"
)

// Version is the schema version this package writes. It also reads
// version-1 plans, converting them on read (see Parse).
const Version = 2

// Plan is one executable training configuration.
type Plan struct {
	// Version is the schema version; always Version when written by this package.
	Version int `json:"version"`
	// Planner names the algorithm that produced the plan
	// ("pipedream", "madpipe", "2bw", "ptdp", or "manual").
	Planner string `json:"planner"`
	// Model is what is trained.
	Model Model `json:"model"`
	// Cluster is where it is trained.
	Cluster Cluster `json:"cluster"`
	// Execution is how the model runs: degrees, microbatching, schedule,
	// recomputation. Its microbatch count m is derived (Execution.Microbatches).
	Execution Execution `json:"execution"`
	// Stages are the pipeline stages in order; with several chunks per
	// device, the PP·Execution.Chunks() model chunks in model order (chunk k
	// runs on device k mod PP, or in a V: schedule.KindInfo.ChunkDevice).
	Stages []Stage `json:"stages"`
	// Predictions are what the planner expects the plan to achieve.
	Predictions Predictions `json:"predictions"`
}

// Model identifies the model: a transformer spec, a layer profile, or both.
type Model struct {
	// Name is informational, e.g. "GPT-3 175B" or "vgg16".
	Name string `json:"name"`
	// NumLayers is the number of layers the stage ranges index (0-based).
	NumLayers int `json:"num_layers"`
	// Transformer is the model's dimensions when it is a transformer.
	Transformer *model.Transformer `json:"transformer,omitempty"`
	// Profile is the per-layer profile when the plan was made from one.
	Profile *model.Profile `json:"profile,omitempty"`
}

// Cluster describes the GPUs the plan runs on.
type Cluster struct {
	// GPU is a gpuprofiles id, e.g. "nvidia-a100-sxm4-80gb".
	GPU string `json:"gpu"`
	// Nodes is the number of servers.
	Nodes int `json:"nodes"`
	// GPUsPerNode is the number of GPUs in each server.
	GPUsPerNode int `json:"gpus_per_node"`
	// Levels is the topology, innermost first, when the planner used one.
	Levels []hw.Level `json:"levels,omitempty"`
}

// GPUs is the total number of GPUs of the cluster.
func (c Cluster) GPUs() int { return c.Nodes * c.GPUsPerNode }

// Stage is a contiguous range of layers and how many devices replicate it.
type Stage struct {
	// FirstLayer is the first layer of the stage (0-based, inclusive).
	FirstLayer int `json:"first_layer"`
	// LastLayer is the last layer of the stage (inclusive); FirstLayer−1
	// for a first or last stage that holds no layers (Empty).
	LastLayer int `json:"last_layer"`
	// Replicas is the number of data-parallel replicas of this stage.
	Replicas int `json:"replicas"`
}

// Empty reports whether the stage holds no layers: a first stage that
// holds only the embedding, or a last that holds only the output layer
// and the loss (Megatron-LM's --account-for-embedding-in-pipeline-split
// and --account-for-loss-in-pipeline-split; cost.MaxChunks).
func (s Stage) Empty() bool { return s.LastLayer < s.FirstLayer }

// Predictions are the planner's estimates for the plan.
type Predictions struct {
	// IterationSeconds is the predicted time of one optimizer step.
	IterationSeconds float64 `json:"iteration_seconds"`
	// SamplesPerSecond is the predicted training throughput.
	SamplesPerSecond float64 `json:"samples_per_second"`
	// TokensPerSecond is SamplesPerSecond × sequence length for transformers.
	TokensPerSecond float64 `json:"tokens_per_second,omitempty"`
	// TFLOPSPerGPU is the achieved model TFLOP/s per GPU (eq. 4.2 FLOPs).
	TFLOPSPerGPU float64 `json:"tflops_per_gpu,omitempty"`
	// MFU is the model FLOPs utilization (achieved / peak).
	MFU float64 `json:"mfu,omitempty"`
	// BubbleFraction is the idle fraction of device time in a step.
	BubbleFraction float64 `json:"bubble_fraction"`
	// BottleneckSeconds is the slowest stage's time per microbatch (PipeDream's objective).
	BottleneckSeconds float64 `json:"bottleneck_seconds,omitempty"`
	// PeakBytesPerGPU is the predicted peak memory of the most loaded GPU.
	PeakBytesPerGPU float64 `json:"peak_bytes_per_gpu"`
	// StagePeakBytes is the predicted peak memory per stage's GPU.
	StagePeakBytes []float64 `json:"stage_peak_bytes,omitempty"`
}
