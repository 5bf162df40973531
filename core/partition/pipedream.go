package partition

import (
	"context"
	"errors"
	"fmt"
	"math"

	"pipeplan/core/hw"
)

// CostModel selects the stage-time, communication and memory formulas of
// the PipeDream partitioner.
type CostModel string

// The PipeDream partitioner's cost models.
const (
	// CostPipeplan is pipeplan's model: the structure of the dissertation
	// §2.4.1 with compute and all-reduce overlapped, T = max(compute, ring
	// all-reduce of 2(r−1)/r·|W| bytes)/r, activations and gradients charged
	// per boundary as 2·a/(B·r) on both sides, and pipeplan's memory model
	// (weight stashing: one weight and activation version per in-flight input).
	CostPipeplan CostModel = "pipeplan"
	// CostPipeDream reproduces PipeDream's original optimizer
	// (optimizer_graph_hierarchical.py): compute plus 4(r−1)/r·|W|/B summed,
	// divided by the lower level's worker count only for a single stage, its
	// quirky row pruning and memory check, activation traffic counted (its
	// --activation_compression_ratio 1).
	CostPipeDream CostModel = "pipedream"
)

// PipeDreamOptions configures the PipeDream partitioner.
type PipeDreamOptions struct {
	// Levels is the topology, innermost first (PipeDream's -n and -b).
	Levels []hw.Level
	// Straight forbids stage replication (--straight_pipeline).
	Straight bool
	// MemoryBytes is the memory per GPU stages must fit in; 0 means unlimited.
	MemoryBytes float64
	// CostModel selects the formulas; "" means CostPipeplan.
	CostModel CostModel
}

// PipeDreamStage is one stage of a PipeDream partition.
type PipeDreamStage struct {
	// FirstLayer and LastLayer are the stage's states (layers of a chain),
	// 0-based, inclusive.
	FirstLayer int `json:"first_layer"`
	LastLayer  int `json:"last_layer"`
	// Replicas is the number of GPUs that replicate the stage.
	Replicas int `json:"replicas"`
	// ComputeSeconds is the stage's forward+backward time for one minibatch on one GPU.
	ComputeSeconds float64 `json:"compute_seconds"`
	// ParameterBytes is the size of the stage's weights.
	ParameterBytes float64 `json:"parameter_bytes"`
	// ActivationBytes is the stage's activation stash for one minibatch.
	ActivationBytes float64 `json:"activation_bytes"`
	// InFlight is the number of inputs in flight on each of its GPUs in
	// steady state: ceil(GPUs from this stage to the end / Replicas) (§2.3.2).
	InFlight int `json:"in_flight"`
	// MemoryBytes is the per-GPU memory of pipeplan's model: InFlight
	// weight versions and activation stashes, plus gradients and momentum.
	MemoryBytes float64 `json:"memory_bytes"`
}

// PipeDreamResult is the optimal PipeDream partition.
type PipeDreamResult struct {
	// Stages are in pipeline order.
	Stages []PipeDreamStage `json:"stages"`
	// BottleneckSeconds is the time of the slowest stage per minibatch, the
	// DP's objective ("Time per stage in pipeline").
	BottleneckSeconds float64 `json:"bottleneck_seconds"`
	// NOAM is the number of optimal active minibatches, ceil(GPUs / input
	// stage replicas) (§2.3.2).
	NOAM int `json:"noam"`
	// DataParallelSeconds is the same cost model's time per minibatch of
	// plain data parallelism over all GPUs (the baseline PipeDream prints).
	DataParallelSeconds float64 `json:"data_parallel_seconds"`
	// SingleStageSeconds is the whole model's compute on one GPU.
	SingleStageSeconds float64 `json:"single_stage_seconds"`
	// GPUs is the number of GPUs of the topology.
	GPUs int `json:"gpus"`
	// CostModel is the cost model used.
	CostModel CostModel `json:"cost_model"`
}

// maxLevelWorkers bounds the workers of one level: the DP keeps a time per
// state and worker count and spends M² steps per split.
const maxLevelWorkers = 1024

// Validate checks the options; errors name the field and the value.
func (o PipeDreamOptions) Validate() error {
	if len(o.Levels) == 0 {
		return fmt.Errorf("levels: need at least one level, got none")
	}
	gpus := 1
	for i, l := range o.Levels {
		if l.Workers < 1 || l.Workers > maxLevelWorkers {
			return fmt.Errorf("levels[%d].workers: must be in [1, %d], got %d", i, maxLevelWorkers, l.Workers)
		}
		if !(l.BandwidthBytesPerSec > 0) || math.IsInf(l.BandwidthBytesPerSec, 0) {
			return fmt.Errorf("levels[%d].bandwidth_bytes_per_sec: must be a positive finite number, got %v", i, l.BandwidthBytesPerSec)
		}
		if gpus *= l.Workers; gpus > 1<<16 {
			return fmt.Errorf("levels[%d].workers: more than %d GPUs in all", i, 1<<16)
		}
	}
	if math.IsNaN(o.MemoryBytes) || math.IsInf(o.MemoryBytes, 0) || o.MemoryBytes < 0 {
		return fmt.Errorf("memory_bytes: must be a finite number >= 0, got %v", o.MemoryBytes)
	}
	switch o.CostModel {
	case "", CostPipeplan, CostPipeDream:
	default:
		return fmt.Errorf("cost_model: must be %q or %q, got %q", CostPipeplan, CostPipeDream, o.CostModel)
	}
	return nil
}

// PipeDream finds the partition of the cuts into stages, with a replica
// count per stage, that minimizes the slowest stage's time per minibatch on
// the hierarchical topology (dissertation §2.4.1): the level-by-level DP
// A(i→j, m), where each level's compute is the level below's best time with
// all its workers. progress, if not nil, counts the DP's work done: the
// rows of the levels below the second-to-last, then the last level's
// states (solveLevels).
func PipeDream(ctx context.Context, c *Cuts, opt PipeDreamOptions, progress Progress) (*PipeDreamResult, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	if c == nil || c.Len() == 0 {
		return nil, fmt.Errorf("cuts: the model has no states")
	}
	if opt.CostModel == "" {
		opt.CostModel = CostPipeplan
	}
	s := newPDSolver(c, opt)
	if err := s.solveLevels(ctx, progress); err != nil {
		return nil, err
	}
	res, err := s.result()
	if err == errNoPartition && opt.MemoryBytes > 0 {
		need, err := minMemoryBytes(ctx, c, opt)
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("memory_bytes: no partition fits in %.0f bytes per GPU; the smallest memory that fits is about %.4g bytes (within 0.1%%)", opt.MemoryBytes, need)
	}
	return res, err
}

// errNoPartition reports that no partition satisfies the constraints.
var errNoPartition = errors.New("levels: no partition exists for this topology and constraints")

// minMemoryBytes finds, to 0.1%, the smallest memory per GPU with which some
// partition fits: doubling, then bisection, each step a full DP.
func minMemoryBytes(ctx context.Context, c *Cuts, opt PipeDreamOptions) (float64, error) {
	feasible := func(mem float64) (bool, error) {
		o := opt
		o.MemoryBytes = mem
		s := newPDSolver(c, o)
		if err := s.solveLevels(ctx, nil); err != nil {
			return false, err
		}
		L := len(o.Levels)
		M := o.Levels[L-1].Workers
		return !math.IsInf(s.final[(s.n-1)*M+M-1], 1), nil
	}
	lo, hi := opt.MemoryBytes, 2*opt.MemoryBytes
	for {
		ok, err := feasible(hi)
		if err != nil {
			return 0, err
		}
		if ok {
			break
		}
		if lo, hi = hi, 2*hi; math.IsInf(hi, 1) {
			return 0, errNoPartition
		}
	}
	for hi-lo > 1e-3*hi {
		mid := lo + (hi-lo)/2
		ok, err := feasible(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}
