// Package gavel implements heterogeneity-aware cluster scheduling (Gavel,
// OSDI'20; dissertation ch. 5, cost objectives ch. 6): allocation policies
// solved as linear programs, the round-based mechanism and a trace-driven
// simulator.
package gavel

import "context"

// Job is one training job as a policy sees it.
type Job struct {
	// ID identifies the job (unique within an Instance).
	ID int `json:"id"`
	// JobType is the model string of Gavel's job table, e.g. "ResNet-50 (batch size 64)".
	JobType string `json:"job_type,omitempty"`
	// ScaleFactor is the number of GPUs the job uses at once.
	ScaleFactor int `json:"scale_factor"`
	// PriorityWeight is the job's weight w_m in fairness policies (default 1).
	PriorityWeight float64 `json:"priority_weight"`
	// DurationSeconds is the job's duration on a V100 when generated (informational).
	DurationSeconds float64 `json:"duration_s,omitempty"`
	// NumSteps is the total number of training steps of the job.
	NumSteps float64 `json:"num_steps,omitempty"`
	// StepsRemaining is the number of steps left (the simulator keeps it; 0 = NumSteps).
	StepsRemaining float64 `json:"steps_remaining,omitempty"`
	// ArrivalSeconds is when the job arrived (FIFO order, finish-time fairness).
	ArrivalSeconds float64 `json:"arrival_s,omitempty"`
	// ElapsedSeconds is the time since arrival at the moment of allocation.
	ElapsedSeconds float64 `json:"elapsed_s,omitempty"`
	// SLOSeconds is the job's deadline relative to its arrival; 0 means none.
	SLOSeconds float64 `json:"slo_s,omitempty"`
	// Entity names the user/group of the job for hierarchical policies.
	Entity string `json:"entity,omitempty"`
}

// Pair is a co-located job pair for space sharing: Throughputs[j] holds the
// steps/s of jobs A and B when they share workers of type j ([0,0] if they cannot).
type Pair struct {
	A           int          `json:"a"`
	B           int          `json:"b"`
	Throughputs [][2]float64 `json:"throughputs"`
}

// Instance is one allocation problem: a cluster of worker types and the jobs
// to share it, with their measured throughputs.
type Instance struct {
	// Name is informational.
	Name string `json:"name,omitempty"`
	// WorkerTypes names the GPU types, e.g. ["k80","p100","v100"].
	WorkerTypes []string `json:"worker_types"`
	// NumWorkers is the GPU count per worker type, same order.
	NumWorkers []int `json:"num_workers"`
	// Jobs are the active jobs.
	Jobs []Job `json:"jobs"`
	// Throughputs[i][j] is job i's isolated throughput (steps/s, the whole job
	// on ScaleFactor GPUs) on worker type j; 0 means it cannot run there.
	Throughputs [][]float64 `json:"throughputs"`
	// Pairs are optional co-located pairs (space-sharing policies only).
	Pairs []Pair `json:"pairs,omitempty"`
	// PricePerHour is the price of one GPU-hour per worker type (cost policies).
	PricePerHour []float64 `json:"price_per_hour,omitempty"`
	// EntityWeights weighs the entities of hierarchical policies.
	EntityWeights map[string]float64 `json:"entity_weights,omitempty"`
	// UnconsolidatedThroughputs, if set, makes the heterogeneity-aware
	// policies placement-sensitive (§5.3.1): [i][j] is job i's throughput on
	// worker type j when its GPUs sit on separate servers (Gavel's
	// "_unconsolidated" measurements), 0 where it cannot run so. Throughputs
	// then holds the consolidated values. Single-GPU jobs are always
	// consolidated; their entries are ignored.
	UnconsolidatedThroughputs [][]float64 `json:"unconsolidated_throughputs,omitempty"`
	// GPUsPerServer is the server size per worker type; nil means
	// DefaultGPUsPerServer. Placement-sensitive policies use it: a
	// consolidated job of scale s needs s GPUs in one server (or whole
	// servers when s exceeds the server size), so only so many fit at once.
	GPUsPerServer []int `json:"gpus_per_server,omitempty"`

	// capacityOf maps the worker types of an instance expanded by
	// withPlacements to the type whose GPUs they share; nil means each type
	// owns its GPUs.
	capacityOf []int
	// consolidatedCaps bounds the consolidated columns of an instance
	// expanded by withPlacements, one entry per (column, scale factor).
	consolidatedCaps []consolidatedCap
}

// Allocation is a policy's answer: the fraction of time each job (row) should
// spend on each worker type (column), and for space sharing each pair's.
type Allocation struct {
	// X[i][j] is the time fraction of Instance.Jobs[i] on worker type j.
	X [][]float64 `json:"allocation"`
	// PairX[k][j] is the time fraction of Instance.Pairs[k] on worker type j.
	PairX [][]float64 `json:"pair_allocation,omitempty"`
	// UnconsolidatedX[i][j], set for placement-sensitive instances, is the
	// time fraction of Instance.Jobs[i] on worker type j with its GPUs on
	// separate servers; X[i][j] is then the consolidated time, and the job's
	// time on type j is the sum of both.
	UnconsolidatedX [][]float64 `json:"unconsolidated_allocation,omitempty"`
	// Objective is the optimum in the policy's natural units.
	Objective float64 `json:"objective"`
}

// Policy computes an allocation for an instance (Table 5.1).
type Policy interface {
	// Name is the policy's CLI name, e.g. "max_min_fairness_perf".
	Name() string
	// Allocate solves the policy's optimization problem for inst.
	Allocate(ctx context.Context, inst *Instance) (*Allocation, error)
}
