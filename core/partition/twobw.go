package partition

import (
	"context"
	"fmt"
	"math"
	"sort"
)

// TwoBWBlockCost is what the PipeDream-2BW planner knows of one block of a
// model at one per-GPU microbatch size (the profile inputs of dissertation
// §3.3.3).
type TwoBWBlockCost struct {
	// ComputeSeconds is the block's forward plus backward time for one microbatch.
	ComputeSeconds float64
	// WeightBytes is the size of the block's weight parameters (its share of |W|).
	WeightBytes float64
	// ActivationBytes is everything the block stashes between its forward and
	// backward pass for one microbatch (its share of |A_total(b)|).
	ActivationBytes float64
	// InputBytes is the block's input activation for one microbatch: what a
	// stage starting at this block receives and stashes (|A_input(b)|).
	InputBytes float64
}

// TwoBWModel is a chain of blocks whose costs are known for any per-GPU
// microbatch size, so the planner can trade microbatch size for memory.
type TwoBWModel interface {
	// NumBlocks is the number of blocks in the chain.
	NumBlocks() int
	// BlockCost returns the cost of block k (0-based) at microbatch size b >= 1.
	BlockCost(k, b int) TwoBWBlockCost
}

// TwoBWExecution is one of the three executions the 2BW planner considers
// for every (d, p) (dissertation §3.3.3).
type TwoBWExecution int

// The executions of §3.3.3.
const (
	// TwoBWNoPipelining is model and data parallelism without pipelining:
	// one weight version, one activation stash, stages run one after another.
	TwoBWNoPipelining TwoBWExecution = iota
	// TwoBWPipelined is 2BW pipelining with full activation stashes: two
	// weight versions and p in-flight activation stashes.
	TwoBWPipelined
	// TwoBWPipelinedRecompute is 2BW pipelining with activation
	// recomputation: only stage inputs are stashed for in-flight microbatches.
	TwoBWPipelinedRecompute
)

// String names the execution as the CLI and JSON do.
func (e TwoBWExecution) String() string {
	switch e {
	case TwoBWNoPipelining:
		return "no-pipelining"
	case TwoBWPipelined:
		return "2bw"
	case TwoBWPipelinedRecompute:
		return "2bw-recompute"
	}
	return fmt.Sprintf("TwoBWExecution(%d)", int(e))
}

// MarshalText writes the execution's name.
func (e TwoBWExecution) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// UnmarshalText reads an execution's name, as MarshalText writes it.
func (e *TwoBWExecution) UnmarshalText(b []byte) error {
	for _, x := range []TwoBWExecution{TwoBWNoPipelining, TwoBWPipelined, TwoBWPipelinedRecompute} {
		if string(b) == x.String() {
			*e = x
			return nil
		}
	}
	return fmt.Errorf("execution: must be no-pipelining, 2bw or 2bw-recompute, got %q", b)
}

// TwoBWOptions describes the cluster and the training limits of a 2BW plan.
type TwoBWOptions struct {
	// GPUs is the number of workers N; every configuration uses all of them (d·p = N).
	GPUs int
	// GPUsPerServer is the number of GPUs sharing the fast intra-server links.
	GPUsPerServer int
	// IntraServerBandwidthBytesPerSec is B_high, the bandwidth inside a server.
	IntraServerBandwidthBytesPerSec float64
	// InterServerBandwidthBytesPerSec is B_low, the bandwidth between servers.
	InterServerBandwidthBytesPerSec float64
	// MemoryBytes is the memory capacity M of one GPU.
	MemoryBytes float64
	// BatchSize is the maximum safe global batch size B, in samples.
	BatchSize int
	// RecomputeFactor is c_extra, the compute multiplier of recomputation; 0 means 4/3 (§3.3.3).
	RecomputeFactor float64
	// StateBytesPerWeightByte is the gradient and optimizer state kept once
	// per weight byte (e.g. 3 for fp32 Adam: gradient, m, v). The paper's
	// MEMORY(.) counts weight versions only, which is 0 here.
	StateBytesPerWeightByte float64
	// MicrobatchSize fixes the per-GPU microbatch size b; 0 searches it.
	MicrobatchSize int
}

// TwoBWDetail is what the 2BW planner chose for a candidate beyond its
// plan.Execution (TP 1, PP p, DP d, microbatch size b, global batch B; the
// 2bw schedule when pipelined, else 1f1b over one pipeline's stages in
// turn; full recomputation with TwoBWPipelinedRecompute).
type TwoBWDetail struct {
	// Execution is which of the executions of §3.3.3 the candidate is.
	Execution TwoBWExecution `json:"execution"`
	// GradientAccumulation is g: B/(N·b) when pipelined (m = p·g), m otherwise.
	GradientAccumulation int `json:"gradient_accumulation"`
	// IntraServerAllReduce says the orientation chosen puts each stage's
	// replicas inside one server (otherwise each pipeline is packed first).
	IntraServerAllReduce bool `json:"intra_server_all_reduce"`
}

// PlanTwoBW runs PipeDream-2BW's planner (dissertation §3.3.2, Algorithm 1):
// it sweeps every (d, p) with d·p = N, every microbatch size b with B
// divisible by d·b, and the three executions of §3.3.3, drops
// configurations whose MEMORY(.) exceeds M, and returns for every (d, p,
// execution) its best feasible microbatch size, highest THROUGHPUT(.)
// first. Each candidate's prediction has t as BottleneckSeconds, MEMORY(.)
// per stage and of the most loaded GPU, and d·b/t as SamplesPerSecond.
// progress, if not nil, counts the (d, p) pairs done.
func PlanTwoBW(ctx context.Context, m TwoBWModel, opt TwoBWOptions, progress Progress) ([]Candidate, error) {
	if err := opt.validate(); err != nil {
		return nil, err
	}
	if m == nil || m.NumBlocks() < 1 {
		return nil, fmt.Errorf("model: must have at least one block")
	}
	var pairs [][2]int // (d, p) with d·p = N and p <= blocks; (N, 1) always qualifies
	for _, d := range divisors(opt.GPUs) {
		if opt.GPUs/d <= m.NumBlocks() {
			pairs = append(pairs, [2]int{d, opt.GPUs / d})
		}
	}
	ev := newTwoBWEvaluator(m, opt)
	if pre, _ := ev.costs(1); !(pre[m.NumBlocks()].ComputeSeconds > 0) {
		return nil, fmt.Errorf("model: compute time at microbatch 1 must be > 0, got %v s", pre[m.NumBlocks()].ComputeSeconds)
	}
	var cands []Candidate
	smallest := math.Inf(1)
	for i, dp := range pairs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d, p := dp[0], dp[1]
		for _, e := range []TwoBWExecution{TwoBWNoPipelining, TwoBWPipelined, TwoBWPipelinedRecompute} {
			if e != TwoBWNoPipelining && p == 1 {
				continue // one stage: nothing to pipeline
			}
			best, ok := Candidate{}, false
			for _, b := range opt.microbatchSizes(d) {
				c, valid := ev.evaluate(d, p, b, e)
				if !valid {
					continue
				}
				smallest = math.Min(smallest, c.Predictions.PeakBytesPerGPU)
				if c.Predictions.PeakBytesPerGPU > opt.MemoryBytes {
					continue
				}
				if !ok || c.Predictions.SamplesPerSecond > best.Predictions.SamplesPerSecond {
					best, ok = c, true
				}
			}
			if ok {
				cands = append(cands, best)
			}
		}
		if progress != nil {
			progress(i+1, len(pairs))
		}
	}
	if len(cands) == 0 {
		if math.IsInf(smallest, 1) {
			return nil, fmt.Errorf("batch_size: %d admits no configuration on %d GPUs (B must be a multiple of d·b, and of N·b to pipeline)", opt.BatchSize, opt.GPUs)
		}
		return nil, fmt.Errorf("memory_bytes: does not fit: the smallest configuration needs %.4g bytes > %.4g", smallest, opt.MemoryBytes)
	}
	sort.SliceStable(cands, func(i, j int) bool {
		return cands[i].Predictions.SamplesPerSecond > cands[j].Predictions.SamplesPerSecond
	})
	return cands, nil
}

// maxTwoBWGPUs bounds the cluster size of a 2BW plan, as hw.Cluster does.
const maxTwoBWGPUs = 1 << 24

// microbatchSizes returns the b with B a multiple of d·b: the fixed one
// when it qualifies, else all.
func (o TwoBWOptions) microbatchSizes(d int) []int {
	switch {
	case o.BatchSize%d != 0:
		return nil
	case o.MicrobatchSize > 0 && (o.BatchSize/d)%o.MicrobatchSize != 0:
		return nil
	case o.MicrobatchSize > 0:
		return []int{o.MicrobatchSize}
	}
	return divisors(o.BatchSize / d)
}

func (o TwoBWOptions) validate() error {
	positive := []struct {
		name string
		v    float64
	}{
		{"gpus", float64(o.GPUs)},
		{"gpus_per_server", float64(o.GPUsPerServer)},
		{"intra_server_bandwidth_bytes_per_sec", o.IntraServerBandwidthBytesPerSec},
		{"inter_server_bandwidth_bytes_per_sec", o.InterServerBandwidthBytesPerSec},
		{"memory_bytes", o.MemoryBytes},
		{"batch_size", float64(o.BatchSize)},
	}
	if o.BatchSize > MaxGlobalBatch {
		return fmt.Errorf("batch_size: must be <= %d, got %d", MaxGlobalBatch, o.BatchSize)
	}
	if o.MicrobatchSize < 0 {
		return fmt.Errorf("microbatch: must be >= 0 (0 searches it), got %d", o.MicrobatchSize)
	}
	if o.GPUs > maxTwoBWGPUs {
		return fmt.Errorf("gpus: must be <= %d, got %d", maxTwoBWGPUs, o.GPUs)
	}
	for _, f := range positive {
		if !(f.v > 0) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%s: must be a positive number, got %v", f.name, f.v)
		}
	}
	if o.RecomputeFactor != 0 && (!(o.RecomputeFactor >= 1) || math.IsInf(o.RecomputeFactor, 0)) {
		return fmt.Errorf("recompute_factor: must be >= 1 (or 0 for 4/3), got %v", o.RecomputeFactor)
	}
	if !(o.StateBytesPerWeightByte >= 0) || math.IsInf(o.StateBytesPerWeightByte, 0) {
		return fmt.Errorf("state_bytes_per_weight_byte: must be >= 0, got %v", o.StateBytesPerWeightByte)
	}
	return nil
}
