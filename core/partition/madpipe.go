package partition

import (
	"context"
	"fmt"
	"math"
	"slices"

	"pipeplan/core/model"
)

// MadPipeStage is one stage of a MadPipe allocation.
type MadPipeStage struct {
	// FirstLayer and LastLayer are the stage's layers, 0-based, inclusive.
	FirstLayer int `json:"first_layer"`
	LastLayer  int `json:"last_layer"`
	// Processor is the GPU the stage runs on (several stages may share the
	// special processor).
	Processor int `json:"processor"`
	// Special is true for stages on the special processor (§4.2).
	Special bool `json:"special"`
	// ComputeSeconds is the stage's forward plus backward time per microbatch.
	ComputeSeconds float64 `json:"compute_seconds"`
	// Activations is the number of microbatches whose activations the
	// stage keeps at its peak in the schedule.
	Activations int `json:"activations"`
	// MemoryBytes is 𝓜 of the stage with that many activations (§4.2.1):
	// three weight copies, the activations and its communication buffers.
	// On the special processor the stages' peaks need not coincide; the
	// processor's peak is MadPipeProcessor.MemoryBytes.
	MemoryBytes float64 `json:"memory_bytes"`
}

// MadPipeProcessor is the load and peak memory of one GPU in the schedule.
type MadPipeProcessor struct {
	// ComputeSeconds is the processor's busy time per period.
	ComputeSeconds float64 `json:"compute_seconds"`
	// MemoryBytes is its peak memory in the periodic schedule: three copies
	// of its weights, communication buffers and the activations it holds.
	MemoryBytes float64 `json:"memory_bytes"`
}

// MadPipeResult is the outcome of MadPipe: an allocation with one special
// processor and a periodic schedule of it that fits in memory.
type MadPipeResult struct {
	// Stages are in chain order.
	Stages []MadPipeStage `json:"stages"`
	// Processors are indexed by MadPipeStage.Processor.
	Processors []MadPipeProcessor `json:"processors"`
	// PeriodSeconds is the period of the valid schedule (Pattern): the time
	// per microbatch in steady state. This is the honest figure.
	PeriodSeconds float64 `json:"period_seconds"`
	// AllocationPeriodSeconds is the load of the busiest processor or link
	// of the allocation, the period it would reach without memory limits.
	AllocationPeriodSeconds float64 `json:"allocation_period_seconds"`
	// TargetPeriodSeconds is T̂, the target period of Algorithm 1 at which
	// MadPipe-DP estimated memory; phase one predicts max(allocation, T̂).
	TargetPeriodSeconds float64 `json:"target_period_seconds"`
	// Pattern is the periodic schedule, operations of one microbatch in
	// dependency order.
	Pattern []PatternOp `json:"pattern"`
}

// MadPipe partitions a layer chain over workers GPUs with memoryBytes each,
// connected pairwise at bandwidthBytesPerSec (madpipe-2020):
//
//  1. Algorithm 1: a binary search on the target period T̂, each step asking
//     MadPipe-DP (§4.2) for an allocation (contiguous stages on workers-1
//     normal GPUs, any number on one special GPU) of period at most T̂ with
//     memory estimated by 1F1B* at T̂.
//  2. §4.3 (the ILP replaced): modulo list scheduling of each allocation the
//     search found, at the smallest period on a 0.2% grid at which its peak
//     memory, computed from the pattern, fits; the best one is returned.
//
// Phase one under-estimates the special processor's memory (g-1
// activations per stage, §4.2.1) and does not see two of its stages sharing
// a link to one neighbour, so the schedule may need a longer period than T̂.
// When it does, phase one is run again counting g activations on the
// special processor, and once more for contiguous allocations (one stage
// per GPU, whose 1F1B* memory the DP estimates exactly), and the best
// schedule of all the allocations found wins.
//
// progress, if not nil, counts the search's steps: madIterations
// bisection steps per phase-one pass, and as many more for the scheduling.
func MadPipe(ctx context.Context, prof model.Profile, workers int, bandwidthBytesPerSec, memoryBytes float64, progress Progress) (*MadPipeResult, error) {
	if workers < 1 {
		return nil, fmt.Errorf("workers: must be >= 1, got %d", workers)
	}
	if !(memoryBytes > 0) || math.IsInf(memoryBytes, 0) {
		return nil, fmt.Errorf("memory_bytes: must be a finite number > 0, got %v", memoryBytes)
	}
	c, err := newMadChain(prof, bandwidthBytesPerSec)
	if err != nil {
		return nil, err
	}
	if progress == nil {
		progress = func(int, int) {}
	}
	ub := c.totalCompute() + c.totalComm()
	if !(ub > 0) {
		return nil, fmt.Errorf("profile.layers: total compute and communication time must be > 0")
	}
	var found []madCandidate
	var best *MadPipeResult
	lo := c.totalCompute() / float64(workers)
	passes := []madDP{
		{specialOffset: 1}, // the paper's MadPipe-DP
		{specialOffset: 0}, // g activations per special stage
		{contiguous: true}, // 1F1B* on one stage per GPU: exact memory
	}
	total := (len(passes) + 1) * madIterations
	// No stage is empty, so an allocation uses at most one normal GPU per
	// layer and the special one: more GPUs only grow the DP's tables
	// (layers × GPUs), and the answer is the same with this many.
	usable := min(workers, c.layers+1)
	work := 0.0
	for pass, d := range passes {
		d.c, d.workers, d.memory, d.vSteps, d.memCells, d.work = c, usable, memoryBytes, madVSteps, madMemCells, &work
		start := lo
		if pass > 0 {
			// Each pass only makes the DP fail more: start where the
			// first pass succeeded, above where the last one failed.
			start = found[0].target
		}
		more, failed, err := madSearch(ctx, &d, lo, start, func(step int) { progress(pass*madIterations+step, total) })
		if err != nil {
			return nil, err
		}
		lo = failed
		if len(more) == 0 && pass == 0 {
			return nil, madDoesNotFit(c, workers, memoryBytes)
		}
		found = append(found, more...)
		if best = madSchedule(c, more, memoryBytes, ub, best); pass == 0 && best != nil && best.PeriodSeconds <= found[0].target*(1+1e-9) {
			break
		}
	}
	if best != nil {
		progress(total, total)
		return best, nil
	}
	return nil, fmt.Errorf("memory_bytes: no periodic schedule of MadPipe's allocations fits in %.0f bytes", memoryBytes)
}

// The discretization of MadPipe-DP. §5.1 uses 51 values of V over
// [0, U(1,L)+ΣC], 11 of m_P and 101 of t_P, and K = 10 iterations of
// Algorithm 1. Here t_P, m_P and V are exact in every label; labels whose V
// fall within the same 1/madVSteps of the target period, or whose m_P fall
// within the same 1/madMemCells of the memory limit, are pruned as if equal
// (madDP).
const (
	madVSteps     = 4
	madMemCells   = 32
	madIterations = 10
)

// madCandidate is an allocation found by the search with its target period.
type madCandidate struct {
	stages []madStage
	target float64
}

// madSearch is Algorithm 1 of madpipe-2020: a search on T̂ above lo, a
// target at which the DP is known to fail (or U/P). MadPipe-DP(T̂) is
// non-increasing in T̂, so T̂ is an upper bound of the best
// max(MadPipe-DP(T̂), T̂) when the DP finds an allocation of period at most
// T̂, and a lower bound otherwise. Where the paper bisects between U/P and
// U + ΣC, this doubles T̂ from start until the DP succeeds (the DP is slow at
// large T̂, where stages can be long) and then bisects, madIterations times
// as the paper's K. It returns every allocation found, the best (smallest
// T̂) first, and the largest T̂ at which the DP failed; no allocation if
// even T̂ = U + ΣC fits nothing.
// progress receives the bisection steps done.
func madSearch(ctx context.Context, d *madDP, lo, start float64, progress func(step int)) ([]madCandidate, float64, error) {
	ub := d.c.totalCompute() + d.c.totalComm()
	var found []madCandidate
	// A chain without compute has U/P = 0; doubling must start above 0.
	for x := math.Min(math.Max(start, ub/(1<<20)), ub); len(found) == 0; x = math.Min(2*x, ub) {
		a, err := d.feasible(ctx, x)
		if err != nil {
			return nil, lo, err
		}
		if a != nil {
			found = append(found, madCandidate{a, x})
		} else if x >= ub {
			return nil, lo, nil
		} else {
			lo = x
		}
	}
	hi := found[0].target
	for i := 0; i < madIterations && hi-lo > 1e-3*hi; i++ {
		progress(i)
		mid := (lo + hi) / 2
		a, err := d.feasible(ctx, mid)
		if err != nil {
			return nil, lo, err
		}
		if a == nil {
			lo = mid
			continue
		}
		hi = mid
		found = append([]madCandidate{{a, mid}}, found...)
	}
	return found, lo, nil
}

// madSchedule finds the best valid schedule among the candidates (§4.3 with
// modulo list scheduling in place of the ILP) that beats best, or returns
// best (nil: none fits yet). Each
// distinct allocation is tried at periods from its load upward, in steps of
// 0.2% (at least 1/4096 of maxPeriod), up to maxPeriod, where every stage
// keeps one activation.
func madSchedule(c *madChain, found []madCandidate, memoryBytes, maxPeriod float64, best *MadPipeResult) *MadPipeResult {
	var tried [][]madStage
	for _, cand := range found {
		if slices.ContainsFunc(tried, func(a []madStage) bool { return slices.Equal(a, cand.stages) }) {
			continue
		}
		tried = append(tried, cand.stages)
		pl := madPlace(cand.stages)
		start := math.Max(madAllocationPeriod(c, cand.stages), madLinkPeriod(c, pl))
		for T := math.Max(start, maxPeriod/(1<<20)); best == nil || T < best.PeriodSeconds; T = math.Min(math.Max(T*1.002, T+maxPeriod/4096), maxPeriod) {
			pat, ok := madBuildPattern(c, pl, T)
			if ok && madCheckPattern(pat) == nil {
				mem, act := madMemory(c, pl, pat)
				if madFits(mem, memoryBytes) {
					best = madResult(c, pl, pat, mem, act, start, cand.target)
					break
				}
			}
			if T >= maxPeriod {
				break
			}
		}
	}
	return best
}

// madLinkPeriod is the load of the busiest link: stages on the special
// processor may share a link with the same neighbour, which the DP's
// per-boundary C(k) does not see.
func madLinkPeriod(c *madChain, pl madPlaced) float64 {
	load := map[[2]int]float64{}
	per := 0.0
	for _, op := range madOps(c, pl) {
		if op.Processor < 0 {
			load[op.Link] += op.DurationSeconds
			per = math.Max(per, load[op.Link])
		}
	}
	return per
}

func madFits(mem []float64, limit float64) bool {
	for _, m := range mem {
		if m > limit {
			return false
		}
	}
	return true
}

func madResult(c *madChain, pl madPlaced, pat *madPattern, mem []float64, act []int, allocPeriod, target float64) *MadPipeResult {
	r := &MadPipeResult{
		Processors:              make([]MadPipeProcessor, pl.processors),
		PeriodSeconds:           pat.period,
		AllocationPeriodSeconds: allocPeriod,
		TargetPeriodSeconds:     target,
		Pattern:                 pat.ops,
	}
	for i, s := range pl.stages {
		u := c.compute(s.first, s.last)
		r.Stages = append(r.Stages, MadPipeStage{FirstLayer: s.first, LastLayer: s.last, Processor: pl.processor[i],
			Special: s.special, ComputeSeconds: u, Activations: act[i], MemoryBytes: c.memory(s.first, s.last, act[i])})
		r.Processors[pl.processor[i]].ComputeSeconds += u
	}
	for q := range r.Processors {
		r.Processors[q].MemoryBytes = mem[q]
	}
	return r
}

// madDoesNotFit explains that no allocation fits, with the memory the best
// contiguous split over the workers needs when every stage keeps a single
// activation: MadPipe-DP at T̂ = U + ΣC finds that split (or a better one)
// as soon as the memory allows it.
func madDoesNotFit(c *madChain, workers int, memoryBytes float64) error {
	L := c.layers
	// need[p][l]: least max memory over splits of layers 0..l-1 into p
	// stages, of which there are at most L.
	stages := min(workers, L)
	need := make([][]float64, stages+1)
	for p := range need {
		need[p] = make([]float64, L+1)
		for l := range need[p] {
			need[p][l] = math.Inf(1)
		}
	}
	need[0][0] = 0
	for p := 1; p <= stages; p++ {
		for l := 1; l <= L; l++ {
			for k := 0; k < l; k++ {
				need[p][l] = math.Min(need[p][l], math.Max(need[p-1][k], c.memory(k, l-1, 1)))
			}
		}
	}
	best := math.Inf(1)
	for p := 1; p <= stages; p++ {
		best = math.Min(best, need[p][L])
	}
	return fmt.Errorf("memory_bytes: MadPipe finds no allocation on %d GPUs of %.0f bytes; the best contiguous split keeping one activation per stage needs %.0f bytes per GPU", workers, memoryBytes, best)
}
