package request

import (
	"fmt"

	"pipeplan/core/hw"
	"pipeplan/core/partition"
	"pipeplan/core/plan"
)

// ProfileOptions are the Plan inputs only the layer-profile planners
// (PipeDream, 2BW, MadPipe) read: PipeDream's optimizer choices, an
// explicit topology and the memory the stages must fit in. Every field's
// zero value is the Plan page's behaviour, so a request or a link without
// them plans as before.
type ProfileOptions struct {
	// CostModel selects PipeDream's formulas: "" (pipeplan's) or one of
	// CostModels.
	CostModel string `json:"cost_model,omitempty"`
	// Straight forbids PipeDream's stage replication (one GPU per stage).
	Straight bool `json:"straight,omitempty"`
	// Levels is the topology, innermost first (PipeDream's -n and -b); when
	// given it replaces nodes, gpus_per_node and inter_node_gbps. nil: the
	// nodes of GPUs those fields describe.
	Levels []hw.Level `json:"levels,omitempty"`
	// MemoryBytes is the memory per GPU the stages must fit in: 0 is the
	// GPU's capacity, Unlimited (-1) no limit (PipeDream's original
	// optimizer; MadPipe needs a limit).
	MemoryBytes float64 `json:"memory_bytes,omitempty"`
}

// Unlimited is the ProfileOptions.MemoryBytes that lifts the memory limit.
const Unlimited = -1

// CostModels are PipeDream's cost models ("" = the first).
var CostModels = []string{string(partition.CostPipeplan), string(partition.CostPipeDream)}

// Limits on the explicit topology.
const (
	// MaxLevels bounds the levels of an explicit topology.
	MaxLevels = 8
	// MaxMemoryBytes bounds the memory per GPU (1 PB).
	MaxMemoryBytes = 1e15
	// MaxPipeDreamCostLevels bounds the levels of an explicit topology
	// under PipeDream's own cost model, which prunes no DP row: GNMT-16's
	// 1,495 states took 13.8 s of CPU on 64 × 16 GPUs (two levels), 20 s
	// on eight levels and 27 s on five levels of 4 GPUs (BENCHMARKS.md,
	// "Worst cases"). Its paper and optimizer plan servers of GPUs: two.
	MaxPipeDreamCostLevels = 2
)

// ProfileOnly names the first field o sets that only the profile planners
// read ("" when none): PTD-P plans a transformer spec without them.
func (o ProfileOptions) ProfileOnly() string {
	switch {
	case o.CostModel != "":
		return "plan.cost_model"
	case o.Straight:
		return "plan.straight"
	case o.MemoryBytes != 0:
		return "plan.memory_bytes"
	}
	return ""
}

// validate checks the profile options of a plan run by planner; errors
// name the field and the value.
func (o ProfileOptions) validate(planner string) error {
	if o.CostModel != "" && o.CostModel != CostModels[0] && o.CostModel != CostModels[1] {
		return fieldErr("plan.cost_model", "must be one of %q, got %q", CostModels, o.CostModel)
	}
	if len(o.Levels) > MaxLevels {
		return fieldErr("plan.levels", "must have at most %d levels, got %d", MaxLevels, len(o.Levels))
	}
	if o.CostModel == CostModels[1] && len(o.Levels) > MaxPipeDreamCostLevels {
		return fieldErr("plan.levels", "PipeDream's cost model (plan.cost_model %q) takes at most %d levels (servers of GPUs, as its optimizer), got %d: use pipeplan's cost model for a deeper topology",
			CostModels[1], MaxPipeDreamCostLevels, len(o.Levels))
	}
	gpus := 1
	for i, l := range o.Levels {
		field := fmt.Sprintf("plan.levels[%d]", i)
		if err := intIn(field+".workers", l.Workers, 1, MaxGPUs); err != nil {
			return err
		}
		if bw := l.BandwidthBytesPerSec; !(bw >= MinGBps*1e9 && bw <= MaxGBps*1e9) {
			return fieldErr(field+".bandwidth_bytes_per_sec", "must be in [%g, %g] bytes/s, got %g", MinGBps*1e9, MaxGBps*1e9, bw)
		}
		if gpus *= l.Workers; gpus > MaxGPUs {
			return fieldErr(field+".workers", "the levels hold more than %d GPUs in all, got %d at this level", MaxGPUs, gpus)
		}
	}
	m := o.MemoryBytes
	if m != Unlimited && !(m >= 0 && m <= MaxMemoryBytes) {
		return fieldErr("plan.memory_bytes", "must be %d (unlimited), 0 (the GPU's capacity) or a number of bytes up to %g, got %g", Unlimited, MaxMemoryBytes, m)
	}
	if m == Unlimited && planner == plan.PlannerMadPipe {
		return fieldErr("plan.memory_bytes", "MadPipe needs a memory limit per GPU, got %d (unlimited)", Unlimited)
	}
	return nil
}

// MemoryLimit is the memory per GPU the stages must fit in on a GPU of
// capacity bytes: the capacity, the request's limit, or 0 for unlimited.
func (o ProfileOptions) MemoryLimit(capacity float64) float64 {
	switch {
	case o.MemoryBytes == Unlimited:
		return 0
	case o.MemoryBytes > 0:
		return o.MemoryBytes
	}
	return capacity
}
